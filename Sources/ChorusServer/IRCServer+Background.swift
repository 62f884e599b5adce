import ChorusCore
import NIOCore

/// Work off the loop: blocking reads and hashing on the thread pool, writes through the
/// Workspace's one writer, and the history lines that wait to be written in batches.
extension IRCServer {
    /// Blocking work (hashing, reads) on the thread pool; the result comes back on the loop.
    func background<T>(_ work: @escaping () throws -> T) -> EventLoopFuture<T> {
        threadPool.runIfActive(eventLoop: loop, work)
    }

    /// A write of the server's own (a membership, a room's modes), through the Workspace: in order
    /// after every change queued before it; errors are logged.
    func persist(_ what: String, _ work: @escaping @Sendable (any ChorusStorage) throws -> Void) {
        workspace.write(what, work)
    }

    /// Work that must see every change queued before it (history lines waiting here included) and
    /// come before every change queued after it; the result comes back on the loop.
    func readAfterWrites<T>(_ work: @escaping @Sendable (any ChorusStorage) throws -> T) -> EventLoopFuture<T> {
        flushHistory()
        let promise = loop.makePromise(of: T.self)
        workspace.afterWrites(work) { promise.completeWith($0) }
        return promise.futureResult
    }

    /// Queues a history line (a room's or a private one) to be written with the others of its batch.
    func record(_ entry: HistoryEntry) {
        if !entry.conversation.hasPrefix("@") { rooms[entry.conversation]?.hasHistory = true }
        history.record(entry)
    }

    /// Sends the history lines waiting for their batch to the Workspace now (before a read or a
    /// command that must come after them).
    func flushHistory() {
        history.flush()
    }
}
