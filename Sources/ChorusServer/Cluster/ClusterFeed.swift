import ChorusCore
import Dispatch
import Foundation
import Logging
import NIOCore

/// What other processes on the same database committed (lines, and their users' comings and
/// goings), delivered to this process's clients: read from the store's log in the order it was
/// committed, from where this process started, after each wake-up the database sends and at least once a second, so a lost wake-up delays a
/// line and never loses it (Synapse's workers read their stream the same way). Rooms another
/// process changed are read again and handed on after what the log held when they were read.
final class ClusterFeed: @unchecked Sendable {
    private let log: any SharedLog
    private let deliver: @Sendable ([SharedChange]) -> Void
    private let deliverRooms: @Sendable ([RoomSnapshot]) -> Void
    /// Told at a wake-up that says another process changed rooms or account settings, before
    /// anything of it is read or delivered.
    private let roomsChangedOutside: @Sendable () -> Void
    private let logger: Logger
    /// Reads one at a time, off the event loops.
    private let queue = DispatchQueue(label: "chorus.cluster-feed")
    // On `queue` only.
    private var position: Int64 = 0
    /// Rooms changed: the store's clock at the last look, and the changes seen since a margin before it.
    private var roomsLookedAt: Int64?
    private var roomChangesSeen: [String: Int64] = [:]
    private var stopped = false
    private var readWaiting = false
    private var roomsWoken = false
    private var timer: DispatchSourceTimer?
    /// Who waits until the lines up to a position are handed to `deliver`, latest position last.
    private var waiting: [(through: Int64, then: @Sendable () -> Void)] = []
    /// How far back each look at changed rooms reaches: a change is stamped when written, and its
    /// transaction may commit up to a statement's time limit later.
    static let roomMargin: Int64 = 30_000

    static let pollInterval = DispatchTimeInterval.seconds(1)
    static let gather = DispatchTimeInterval.milliseconds(1)
    static let batch = 1000

    /// Reads after `position`: what was committed up to it is history, or known already, not news.
    init(log: any SharedLog, from position: Int64, logger: Logger, deliver: @escaping @Sendable ([SharedChange]) -> Void,
         deliverRooms: @escaping @Sendable ([RoomSnapshot]) -> Void, roomsChangedOutside: @escaping @Sendable () -> Void = {}) {
        self.log = log
        self.position = position
        self.logger = logger
        self.deliver = deliver
        self.deliverRooms = deliverRooms
        self.roomsChangedOutside = roomsChangedOutside
    }

    /// For tests: runs once on the feed's thread, between its next read of the log and its read of
    /// the rooms.
    func onceBeforeReadingRooms(_ hook: @escaping @Sendable () -> Void) {
        queue.sync { beforeReadingRooms = hook }
    }
    private var beforeReadingRooms: (@Sendable () -> Void)?

    func start() {
        // Rooms changed from a margin before now: the server read the rooms just before.
        let now = try? log.roomsChanged(since: nil).now
        queue.sync { roomsLookedAt = now }
        log.whenCommitted { [weak self] news in self?.hear(news) }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
        timer.setEventHandler { [weak self] in self?.read(rooms: true) }
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

    /// Lines or bus messages a statement appended right after what this process has read are
    /// delivered as they came; anything else is a reason to read the log (a notification lost while the listening
    /// connection was away shows as a gap, and is read).
    private func hear(_ news: LogNews) {
        guard case .appended(let after, let last, let lines, let messages) = news else {
            if case .look(let rooms) = news {
                if rooms { roomsChangedOutside() }
                wake(rooms: rooms)
            }
            return
        }
        queue.async {
            guard !self.stopped, last > self.position else { return }
            guard after == self.position else { return self.wake(rooms: false) }
            self.position = last
            if !lines.isEmpty || !messages.isEmpty { self.deliver(lines.map { .line($0) } + messages.map { .bus($0) }) }
            self.tellWaiting()
        }
    }

    /// Calls `then` once every line up to `position` has been handed to `deliver` (at once if
    /// they have been): after `deliver`'s calls for them, in the order the two were made.
    func afterDelivering(through position: Int64, _ then: @escaping @Sendable () -> Void) {
        queue.async {
            self.waiting.append((position, then))
            self.waiting.sort { $0.through < $1.through }
            self.tellWaiting()
        }
    }

    private func tellWaiting() {
        while let first = waiting.first, first.through <= position {
            waiting.removeFirst()
            first.then()
        }
    }

    /// A read waits `gather` after a wake-up, and the wake-ups that come meanwhile join it: one
    /// read for the commits of several processes at once (each read is a round trip, and its
    /// thread hops cost more than the reading).
    private func wake(rooms: Bool) {
        queue.async {
            self.roomsWoken = self.roomsWoken || rooms
            guard !self.readWaiting else { return }
            self.readWaiting = true
            self.queue.asyncAfter(deadline: .now() + Self.gather) {
                self.readWaiting = false
                let rooms = self.roomsWoken
                self.roomsWoken = false
                self.read(rooms: rooms)
            }
        }
    }

    /// Reads everything after `position` and, with `rooms`, the rooms changed (on a wake-up that
    /// says so, and every poll).
    private func read(rooms: Bool) {
        guard !stopped else { return }
        do {
            try readLog()
            guard rooms else { return }
            if let hook = beforeReadingRooms {
                beforeReadingRooms = nil
                hook()
            }
            let (snapshots, seen) = try readRooms()
            if !snapshots.isEmpty {
                roomsChangedOutside()  // its wake-up may have been lost
                // What was committed before the rooms were read goes first. A PART commits its
                // presence before the membership's end: a device here follows the PART, and is
                // not taken out by the end as if kicked.
                try readLog()
                deliverRooms(snapshots)
            }
            roomsLookedAt = seen.now
            for (room, at) in seen.changes { roomChangesSeen[room] = at }
            roomChangesSeen = roomChangesSeen.filter { $0.value > seen.now - Self.roomMargin }
        } catch {
            // The database is away: the next poll reads from the same place.
            logger.warning("cannot read other processes' lines yet", metadata: ["error": "\(error)"])
        }
    }

    /// Reads the log after `position`, a batch at a time, and hands it to `deliver`.
    private func readLog() throws {
        while true {
            let (changes, next, more) = try log.changes(after: position, limit: Self.batch)
            position = next
            if !changes.isEmpty { deliver(changes) }
            tellWaiting()
            if !more { break }
        }
    }

    /// Reads again each room another process changed since the last look (a margin before it),
    /// once per change; the changes read and the store's clock are noted once the rooms are handed on.
    private func readRooms() throws -> (snapshots: [RoomSnapshot], seen: (changes: [(String, Int64)], now: Int64)) {
        let since = roomsLookedAt.map { $0 - Self.roomMargin }
        let (changed, now) = try log.roomsChanged(since: since)
        var snapshots: [RoomSnapshot] = [], seen: [(String, Int64)] = []
        for (room, at) in changed where roomChangesSeen[room] != at {
            snapshots.append(try snapshot(of: room))
            seen.append((room, at))
        }
        return (snapshots, (seen, now))
    }

    private func snapshot(of room: String) throws -> RoomSnapshot {
        let mark = RoomMarks.now
        return RoomSnapshot(key: room, stored: try log.storedRoom(room), mark: mark)
    }

    /// Reads `room` once more, for a snapshot this process had changed the room after: handed on
    /// after what the log held by then, as any snapshot. Tried again a poll later while the
    /// database is away.
    func readAgain(_ room: String) {
        queue.async {
            guard !self.stopped else { return }
            do {
                let snapshot = try self.snapshot(of: room)
                try self.readLog()
                self.deliverRooms([snapshot])
            } catch {
                self.logger.warning("cannot read a room again yet", metadata: ["room": "\(room)", "error": "\(error)"])
                self.queue.asyncAfter(deadline: .now() + Self.pollInterval) { self.readAgain(room) }
            }
        }
    }
}
