import ChorusCore
import ChorusWorkspace
import NIOCore

/// Chat lines on their way to the store, kept for `delay` so that a burst shares one transaction:
/// a transaction per line rewrote the same table and index pages into the log for every message
/// of a quiet room. Reads of history and bot commands flush the waiting lines first, so nothing
/// reads around them; a crash loses at most this much more history than it would anyway.
final class HistoryBuffer {
    /// SQLite's wait: a write per line would cost it a page rewrite each.
    static let delay = TimeAmount.milliseconds(20)
    /// With other processes on the store, the wait is on every line's way to their clients, and
    /// PostgreSQL's writes are cheap to share anyway: a busy writer gathers the next batch itself.
    static let sharedDelay = TimeAmount.milliseconds(2)

    private let delay: TimeAmount
    private let loop: EventLoop
    private let workspace: Workspace
    private var pending: [HistoryEntry] = []
    private var flushScheduled = false
    /// Told, on the loop, how each batch went: its lines, and the error when they were not kept.
    private let written: ([HistoryEntry], Error?) -> Void

    init(loop: EventLoop, workspace: Workspace, delay: TimeAmount = HistoryBuffer.delay, written: @escaping ([HistoryEntry], Error?) -> Void) {
        self.loop = loop
        self.delay = delay
        self.workspace = workspace
        self.written = written
    }

    /// Queues a line; it is written with the others of its batch. On the loop only.
    func record(_ entry: HistoryEntry) {
        pending.append(entry)
        if !flushScheduled {
            flushScheduled = true
            loop.scheduleTask(in: delay) { self.flush() }
        }
    }

    /// Hands the waiting lines to the Workspace now.
    func flush() {
        flushScheduled = false
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        let loop = self.loop
        let report = NIOLoopBound(written, eventLoop: loop)
        workspace.write("history", { try $0.appendHistory(batch) }, done: { result in
            loop.execute {
                if case .failure(let error) = result { report.value(batch, error) } else { report.value([], nil) }
            }
        })
    }
}
