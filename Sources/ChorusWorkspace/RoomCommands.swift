import ChorusCore
import Foundation

/// Someone left a room (PART, or KICK by `actor`): the room's rules take them out of its work.
/// The transport has already shown them leaving; this is what it means for what they held.
public struct LeaveRoom: WorkspaceCommand {
    public let account: String
    public let room: String
    public let actor: String

    public init(account: String, room: String, by actor: String) {
        self.account = account
        self.room = room
        self.actor = actor
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            return Outcome(events: try boards.rooms.leave(account, room: room, by: actor))
        } catch {
            return .refusal("\(error)")
        }
    }
}

/// A manager adds an account to a room, whether or not it is connected.
public struct AddMember: WorkspaceCommand {
    public let account: String
    public let room: String
    public let actor: String

    public init(account: String, room: String, by actor: String) {
        self.account = account
        self.room = room
        self.actor = actor
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            let (membership, event) = try boards.rooms.add(account, to: room, by: actor)
            return Outcome(events: [event], effects: [.memberAdded(room: membership.room, account: membership.account)])
        } catch let error as JobError {
            return .refusal(error.description)
        } catch {
            return .refusal("Sorry, that did not work (\(error)). Nothing was changed.")
        }
    }
}
