import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// A client coming into a room without `draft/chathistory` is sent the room's latest lines first,
/// then what is said from then on: never a line twice, never out of order.
extension IRCServer {
    /// What a client entering a room is replayed (clients without `draft/chathistory`).
    enum Replay {
        /// The room's last lines: a join.
        case latest
        /// What the account has not seen, since its last connection ended: a login's return.
        case unseen
        /// Nothing: another connection of the account was reading the room all along.
        case none
    }

    /// How long a replay waits for this process to deliver the other processes' lines it read
    /// (`afterDeliveringOthersLines`) before it is written all the same.
    static let replayWaitLimit = TimeAmount.seconds(2)

    func replayHistory(_ room: LiveRoom, to client: Client, _ replay: Replay) {
        guard config.historyReplayLines > 0, room.hasHistory, !client.caps.contains(.chathistory), replay != .none else { return }
        let key = room.key, limit = config.historyReplayLines, reader = room.historyReader(for: client)
        let account = replay == .unseen ? client.account?.key : nil
        let log = cluster?.log
        // Lines said from now on reach the client after the replay, not in the middle of it. The
        // read sees exactly this process's lines before the join: the writer runs in order, and
        // later lines are written after this read.
        replayReading(for: client)
        readAfterWrites { store -> (entries: [HistoryEntry], more: Bool, lastLine: Int64?) in
            // One line more than replayed tells whether earlier ones were left out.
            // From the millisecond the last connection ended, that one included: a line said in
            // it may come twice, but none is lost.
            let since = try account.flatMap { try store.lastSeen(of: $0) }?.addingTimeInterval(-0.001)
            let entries = try store.history(of: key, .latest(after: since.map { .time($0) }, limit: limit + 1), reader: reader)
            return (Array(entries.suffix(limit)), entries.count > limit, try log?.lastLinePosition())
        }.whenComplete { result in
            guard case .success(let read) = result else { return self.replayRead(for: client) }
            // Other processes' lines may be read here before this process delivers them live: the
            // replay waits until it has, and leaves out those it held for the client meanwhile.
            self.afterDeliveringOthersLines(through: read.lastLine) {
                defer { self.replayRead(for: client) }
                guard !client.closing, room.contains(client) else { return }
                var entries = read.entries
                if let live = self.heldFromElsewhere[ObjectIdentifier(client)] { entries.removeAll { live.contains($0.msgid) } }
                self.writeReplay(entries, more: read.more, of: room, to: client)
            }
        }
    }

    /// Runs `body` once this process has delivered every other process's line up to `position`
    /// (nil: there are no other processes), or after `replayWaitLimit`: a feed held up by the
    /// database does not hold up the caller for long.
    private func afterDeliveringOthersLines(through position: Int64?, _ body: @escaping () -> Void) {
        guard let position, let feed = cluster?.feed else { return body() }
        let once = NIOLoopBoundBox<(() -> Void)?>(body, eventLoop: loop)
        let run: @Sendable () -> Void = {
            let body = once.value
            once.value = nil
            body?()
        }
        let limit = loop.scheduleTask(in: Self.replayWaitLimit, run)
        feed.afterDelivering(through: position) {
            self.loop.execute {
                limit.cancel()
                run()
            }
        }
    }

    private func writeReplay(_ entries: [HistoryEntry], more: Bool, of room: LiveRoom, to client: Client) {
        guard !entries.isEmpty else { return }
        let caps = client.caps
        let stamp = !caps.contains(.serverTime)
        let batch = caps.contains(.batch) ? client.nextBatchID() : nil
        // One buffer, one write: a buffer and a write per line were a quarter of the replay's cost.
        var out: [UInt8] = []
        out.reserveCapacity(entries.count * 128)
        if let batch {
            Outgoing(Message(source: name, "BATCH", ["+" + batch, "chathistory", room.name]), time: now()).write(for: caps, to: &out)
        }
        if more {
            let note = "Earlier lines of \(room.name) are not replayed here: a client with draft/chathistory, or the web client, shows them."
            Outgoing(Message(source: name, "NOTICE", [room.name, note]), time: entries[0].time).write(for: caps, batch: batch, to: &out)
        }
        for e in entries {
            Outgoing(replaying: e, to: e.target, stampingText: stamp).write(for: caps, batch: batch, to: &out)
        }
        if let batch {
            Outgoing(Message(source: name, "BATCH", ["-" + batch]), time: now()).write(for: caps, to: &out)
        }
        writeAnswer(allocator.buffer(bytes: out), to: client)
    }
}
