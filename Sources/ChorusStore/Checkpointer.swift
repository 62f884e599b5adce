import Dispatch
import Foundation
import GRDB
import Synchronization

/// Copies the write-ahead log back into the database file on its own thread and connection.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 pages of log, fsyncs,
/// and holds that command's reply for 15–20 ms: it made the p99 of commands at 1k/s 20 ms against a
/// p50 of 0.6 ms. A PASSIVE checkpoint from another connection does not take the write lock, so
/// writers go on while it runs.
///
/// A passive checkpoint alone never lets the log start over while commits keep coming: SQLite
/// rewinds the log only when a write begins with every frame already copied, and a busy writer
/// has always added frames since. The log then grew without end (400 MB after 100k commands).
/// So once the log passes `restartFrames`, the writer itself copies the few frames left and
/// rewinds (RESTART): the passive passes do the bulk of the work, the writer pauses 4–7 ms (mostly
/// the database file's fsync) every 2 s at 1k commands/s, and the log stays under ~100 MB.
///
/// A pass runs only when the log changed since the last one: an idle server took two file locks
/// and a read of the log's index every second for nothing.
final class Checkpointer: @unchecked Sendable {
    private let connection: DatabaseQueue
    private let writer: any DatabaseWriter
    private let restartFrames: Int
    private let timer: DispatchSourceTimer
    private let logPath: String
    /// The log's size and modification time at the last pass; touched on the timer's queue only.
    private var logSeen: LogStamp?
    /// Passive passes run so far, for the tests.
    let passes = Atomic<Int>(0)

    init(path: String, writer: any DatabaseWriter, every interval: DispatchTimeInterval = .seconds(1),
         restartFrames: Int = 16384) throws {
        var config = Configuration()
        config.busyMode = .timeout(5)
        connection = try DatabaseQueue(path: path, configuration: config)
        self.writer = writer
        self.restartFrames = restartFrames
        self.logPath = path + "-wal"
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "chorus.store.checkpoint", qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.checkpoint() }
        timer.resume()
    }

    /// Copies the log without stopping the writer, then rewinds it if it is long. The passive pass
    /// is repeated while it had much to copy, so the writer's own pass (RESTART) finds little left.
    func checkpoint() {
        // A commit from any connection or process appends to the log and so moves its time (a
        // commit within the same clock tick as the last pass, at the same size, waits for the next).
        let stamp = LogStamp(path: logPath)
        guard stamp == nil || stamp != logSeen else { return }
        logSeen = stamp
        var frames = 0
        for _ in 0..<4 {
            let started = DispatchTime.now().uptimeNanoseconds
            guard let (log, _) = try? connection.writeWithoutTransaction({ try $0.checkpoint(.passive) }) else { return }
            passes.add(1, ordering: .relaxed)
            frames = log
            if DispatchTime.now().uptimeNanoseconds - started < 5_000_000 { break }
        }
        guard frames > restartFrames else { return }
        _ = try? writer.writeWithoutTransaction { try $0.checkpoint(.restart) }
    }

    /// A last full checkpoint, so the log is empty when the server stops.
    func finish() {
        timer.cancel()
        _ = try? connection.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    }

    deinit { timer.cancel() }
}

/// What `stat` says of a file that changes whenever it is written to.
private struct LogStamp: Equatable {
    let size: Int
    let seconds: Int
    let nanoseconds: Int

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int(info.st_size)
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
    }
}
