import ChorusCore
import Dispatch
import Foundation
import Logging
import NIOCore

/// The lines other processes on the same database committed, delivered to this process's clients:
/// read from the store's log in the order they were committed, from where this process started,
/// after each wake-up the database sends and at least once a second, so a lost wake-up delays a
/// line and never loses it (Synapse's workers read their stream the same way).
final class ClusterFeed: @unchecked Sendable {
    private let log: any SharedLog
    private let deliver: @Sendable ([HistoryEntry]) -> Void
    private let logger: Logger
    /// Reads one at a time, off the event loops.
    private let queue = DispatchQueue(label: "chorus.cluster-feed")
    // On `queue` only.
    private var position: Int64 = 0
    private var reading = false
    private var again = false
    private var stopped = false
    private var timer: DispatchSourceTimer?

    static let pollInterval = DispatchTimeInterval.seconds(1)
    static let batch = 1000

    init(log: any SharedLog, logger: Logger, deliver: @escaping @Sendable ([HistoryEntry]) -> Void) {
        self.log = log
        self.logger = logger
        self.deliver = deliver
    }

    /// From now on: what was committed before the start is history, not news.
    func start() throws {
        let start = try log.logPosition()
        queue.sync { position = start }
        log.whenLinesCommitted { [weak self] in self?.wake() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        timer.setEventHandler { [weak self] in self?.read() }
        timer.resume()
        queue.sync { self.timer = timer }
    }

    func stop() {
        queue.sync {
            stopped = true
            timer?.cancel()
            timer = nil
        }
    }

    private func wake() {
        queue.async { self.read() }
    }

    /// Reads everything after `position`, a batch at a time, and hands it to `deliver`.
    private func read() {
        guard !stopped else { return }
        do {
            while true {
                let (lines, next) = try log.lines(after: position, limit: Self.batch)
                position = next
                if !lines.isEmpty { deliver(lines) }
                if lines.count < Self.batch { break }
            }
        } catch {
            // The database is away: the next poll reads from the same place.
            logger.warning("cannot read other processes' lines yet", metadata: ["error": "\(error)"])
        }
    }
}
