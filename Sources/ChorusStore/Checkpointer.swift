import Dispatch
import GRDB

/// Copies the write-ahead log back into the database file on its own thread and connection.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1,000 pages of log, fsyncs,
/// and holds that command's reply for 15–20 ms: it made the p99 of commands at 1k/s 20 ms against a
/// p50 of 0.6 ms. A PASSIVE checkpoint from another connection does not take the write lock, so
/// writers go on while it runs.
final class Checkpointer: @unchecked Sendable {
    private let connection: DatabaseQueue
    private let timer: DispatchSourceTimer

    init(path: String, every interval: DispatchTimeInterval = .seconds(1)) throws {
        var config = Configuration()
        config.busyMode = .timeout(5)
        connection = try DatabaseQueue(path: path, configuration: config)
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "chorus.store.checkpoint", qos: .utility))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [connection] in
            _ = try? connection.writeWithoutTransaction { try $0.checkpoint(.passive) }
        }
        timer.resume()
    }

    /// A last full checkpoint, so the log is empty when the server stops.
    func finish() {
        timer.cancel()
        _ = try? connection.writeWithoutTransaction { try $0.checkpoint(.truncate) }
    }

    deinit { timer.cancel() }
}
