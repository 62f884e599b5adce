import ChorusCore
import ChorusWorkspace
import NIOCore

/// Changes of a room's stored state (its topic, its modes and bans, its members' roles, a member
/// KICKed) are said to anyone only once stored. A write the store refuses (a full disk, a lost
/// database) is the changer's to hear, as `FAIL <verb> CANNOT_SAVE`; the room hears nothing, and
/// nothing changed. One change of a room's own state is saved at a time, and the next is worked out
/// from what it left, so two managers' changes at once are both kept.
extension IRCServer {
    /// A change of a member's stored membership (KICK, MODE ±o/±v) through the room's rules
    /// (`RoomBoard`): `tell` runs once it is committed, before the change's events. A refusal by
    /// the rules (a live operator whom the room does not have as a manager) or a failed write is
    /// the changer's alone to hear.
    func changeMembership(_ change: MembershipChange, in room: LiveRoom, reply: Reply, then tell: @escaping () -> Void) {
        reply.wait(for: perform(change, for: reply, committed: tell)) { result in
            let outcome = (try? result.get()) ?? .notCommitted
            guard outcome.refused else { return }
            if outcome.couldNotSave {
                self.logger.error("could not save a membership of \(room.name): \(outcome.replies.joined(separator: " "))")
                reply.fail("CANNOT_SAVE", context: [room.name], "The server could not save that, so nothing changed; try again later")
            } else {
                reply.numeric(.chanOPrivsNeeded, room.name, outcome.replies.joined(separator: " "))
            }
        }
    }

    /// `change` works the change out on a copy of the room (its refusals said as it goes) and
    /// returns what to tell once it is saved, or nil when there is nothing to save.
    func changeStoredRoom(_ room: LiveRoom, _ what: String, reply: Reply, _ change: @escaping (inout Room) -> (() -> Void)?) {
        let finished = loop.makePromise(of: Void.self)
        reply.wait(for: finished.futureResult) { _ in }
        room.storedChanges.append { next in
            var updated = room.room
            guard let tell = change(&updated) else {
                finished.succeed(())
                return next()
            }
            let stored = updated
            let saved = self.loop.makePromise(of: Void.self)
            self.workspace.write(what, { try $0.saveRoom(stored) }, done: { saved.completeWith($0) })
            saved.futureResult.whenComplete { result in
                switch result {
                case .success:
                    room.room = stored
                    room.noteChangedHere()
                    tell()
                case .failure(let error):
                    self.logger.error("could not save \(what) of \(room.name): \(error)")
                    reply.fail("CANNOT_SAVE", context: [room.name], "The server could not save that, so nothing changed; try again later")
                }
                finished.succeed(())
                next()
            }
        }
        saveNextStoredChange(of: room)
    }

    private func saveNextStoredChange(of room: LiveRoom) {
        guard !room.savingStoredChange, !room.storedChanges.isEmpty else { return }
        room.savingStoredChange = true
        let change = room.storedChanges.removeFirst()
        change {
            room.savingStoredChange = false
            self.saveNextStoredChange(of: room)
        }
    }
}
