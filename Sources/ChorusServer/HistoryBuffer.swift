import ChorusCore
import ChorusWorkspace
import NIOCore

/// Chat lines on their way to the store, gathered so that a burst shares one transaction (on
/// SQLite a transaction per line rewrote the same table and index pages into the log for every
/// message of a quiet room). Reads of history and bot commands flush the waiting lines first, so
/// nothing reads around them; a crash loses at most what waits here, more than it would anyway.
final class HistoryBuffer {
    /// How lines gather before they are handed to the Workspace.
    enum Gathering {
        /// For this long after the first (SQLite's: a write per line would cost it a page rewrite each).
        case wait(TimeAmount)
        /// While the batch before them is written: the first line goes at once, and those that
        /// come while it is written go together next. With other processes on the store every
        /// line's wait is on its way to their clients; a busy writer makes the batches larger.
        case whileOneIsWritten
    }
    static let delay = TimeAmount.milliseconds(20)

    private let gathering: Gathering
    private let loop: EventLoop
    private let workspace: Workspace
    private var pending: [HistoryEntry] = []
    private var flushScheduled = false
    /// Batches handed to the Workspace and not yet written.
    private var writing = 0
    /// Told, on the loop, how each batch went: its lines, and the error when they were not kept.
    private let written: ([HistoryEntry], Error?) -> Void

    init(loop: EventLoop, workspace: Workspace, gathering: Gathering = .wait(HistoryBuffer.delay),
         written: @escaping ([HistoryEntry], Error?) -> Void) {
        self.loop = loop
        self.gathering = gathering
        self.workspace = workspace
        self.written = written
    }

    /// Queues a line; it is written with the others of its batch. On the loop only.
    func record(_ entry: HistoryEntry) {
        pending.append(entry)
        guard !flushScheduled else { return }
        switch gathering {
        case .wait(let delay):
            flushScheduled = true
            // A callback, not `scheduleTask`: no promise, future and closures to make for every
            // batch, which in a quiet room is every line.
            do { try loop.assumeIsolatedUnsafeUnchecked().scheduleCallback(in: delay, handler: self) } catch { flush() }
        case .whileOneIsWritten:
            guard writing == 0 else { return }  // the batch being written hands these on when it is done
            flushScheduled = true
            loop.execute { self.flush() }  // after the rest of this turn's lines
        }
    }

    /// Hands the waiting lines to the Workspace now.
    func flush() {
        flushScheduled = false
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        writing += 1
        let loop = self.loop
        let done = NIOLoopBound({ [self] (error: Error?) in
            writing -= 1
            written(error == nil ? [] : batch, error)
            if case .whileOneIsWritten = gathering, writing == 0, !pending.isEmpty, !flushScheduled { flush() }
        }, eventLoop: loop)
        workspace.write("history", { try $0.appendHistory(batch) }, done: { result in
            loop.execute {
                if case .failure(let error) = result { done.value(error) } else { done.value(nil) }
            }
        })
    }
}

extension HistoryBuffer: NIOScheduledCallbackHandler {
    func handleScheduledCallback(eventLoop: some EventLoop) { flush() }
}
