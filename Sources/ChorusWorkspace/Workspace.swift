import ChorusCore
import Foundation
import Logging
import Synchronization

/// The one door to the team's state. Every change goes through it, whichever transport it came
/// from: a bot command, a chat line or membership the IRC side keeps, a reminder that comes due.
///
/// Changes run in order on one writer thread. Those waiting when the writer is free share one
/// transaction (group commit), each command a savepoint of its own, so a refused command takes
/// back only itself (a batch runs first without savepoints in the database, and again with them
/// only when a refused command had written). Nothing is announced before the commit: then each command's events go to the
/// event sinks, planned once (`Delivery`) with what the change asks of the transports (its effects),
/// and then its outcome to whoever asked.
public final class Workspace: @unchecked Sendable {
    public struct Settings: Sendable {
        /// The server's time zone: chores' due times, and times for people who set none.
        public var timeZone: TimeZone
        /// How often a person whose turn is overdue is reminded.
        public var reminderInterval: TimeInterval
        /// The bot's nick and source (`Chorus!bot@server`): the sender of the rooms' event lines.
        public var serviceNick: String
        public var serviceSource: String

        public init(timeZone: TimeZone, reminderInterval: TimeInterval, serviceNick: String, serviceSource: String) {
            self.timeZone = timeZone
            self.reminderInterval = reminderInterval
            self.serviceNick = serviceNick
            self.serviceSource = serviceSource
        }
    }

    /// The store itself; transactions are opened from it, each with its own handle.
    public let store: any ChorusStorage
    /// Owned here and handed to every transaction (see `StoreCache`), as `keeping` allows.
    public let cache = StoreCache()
    private let keeping: CacheKeeping
    public let settings: Settings
    let now: @Sendable () -> Date
    let wording: any EventWording
    let logger: Logger

    private let writer = DispatchQueue(label: "chorus.workspace.writer")
    private let queue = Mutex(Queue())
    private let sinks = Mutex<[any EventSink]>([])
    private let otherProcesses = Mutex<(any OtherProcesses)?>(nil)
    private let nextDueListener = Mutex<Listener<Date?>?>(nil)
    private let batchListener = Mutex<Listener<Int>?>(nil)
    private let failingWrites = Mutex<String?>(nil)

    /// Why the store refuses writes, while the last batch (or a write in it) failed: `/ready`
    /// answers not ready with it. Nil once a batch is written whole again.
    public var writeTrouble: String? { failingWrites.withLock { $0 } }
    /// Message ids of the rooms' event lines; used on the writer only.
    private var ids = MessageIDs()
    /// Failed batches not yet logged, and when one last was (`batchFailed`); on the writer only.
    private var lastBatchFailureLogged: Date?
    private var unloggedBatchFailures = 0

    private struct Queue: Sendable {
        var work: [Work] = []
        var draining = false
    }

    /// One piece of queued work. `origin` belongs to the caller's thread and is only handed back
    /// to the sinks, which return to that thread: hence unchecked.
    private enum Work: @unchecked Sendable {
        case command(any WorkspaceCommand, origin: AnyObject?, done: (@Sendable (Outcome) -> Void)?)
        case write(String, @Sendable (any ChorusStorage) throws -> Void, done: (@Sendable (Result<Void, Error>) -> Void)?)
        case read(@Sendable (any ChorusStorage) -> Void)
    }

    /// Who can be told events as they happen, where the transport keeps it: those who cannot have
    /// each event queued in its command's transaction. Without it, the transport queues what it
    /// could not deliver.
    let connected: ConnectedAccounts?

    /// `sharedWithOthers`: other processes write the same database (what comes due is taken by
    /// whichever process first looks).
    public init(store: any ChorusStorage, settings: Settings, wording: any EventWording, connected: ConnectedAccounts? = nil,
                sharedWithOthers: Bool = false,
                now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "chorus.workspace")) {
        self.store = store
        self.connected = connected
        self.keeping = CacheKeeping(sharedWithOthers: sharedWithOthers)
        self.settings = settings
        self.wording = wording
        self.now = now
        self.logger = logger
    }

    /// Committed events go to `sink` from now on, after those added before it.
    public func add(_ sink: any EventSink) {
        sinks.withLock { $0.append(sink) }
    }

    /// From now on, each command's direct lines for people connected to other processes are
    /// posted to them in its transaction.
    public func tell(_ others: any OtherProcesses) {
        otherProcesses.withLock { $0 = others }
    }

    /// `listener` is told how many changes each committed transaction held (group commit's batches).
    public func whenBatchCommits(_ listener: @escaping @Sendable (Int) -> Void) {
        batchListener.withLock { $0 = Listener(listener) }
    }

    /// `listener` is told the next due time (nil: nothing is due) whenever it may have changed:
    /// after a change to a chore, after reminders fire, and when asked (`announceNextDue`).
    public func whenNextDueChanges(_ listener: @escaping @Sendable (Date?) -> Void) {
        nextDueListener.withLock { $0 = Listener(listener) }
    }

    // MARK: The door

    /// Runs `command` in the next batch. After the batch commits, the sinks get its events and
    /// outcome (with `origin`), and then `done` gets the outcome, both on the writer thread. A
    /// caller that is answered through its own sink (the IRC side) passes no `done`.
    public func run(_ command: any WorkspaceCommand, origin: AnyObject? = nil, done: (@Sendable (Outcome) -> Void)? = nil) {
        enqueue(.command(command, origin: origin, done: done))
    }

    public func run(_ command: any WorkspaceCommand) async -> Outcome {
        await withCheckedContinuation { continuation in
            run(command) { continuation.resume(returning: $0) }
        }
    }

    /// A write the transport makes for itself (a chat line, a membership, a queued event), in
    /// order with every other change and in the next batch's transaction. A failure is logged and
    /// takes back only this write.
    public func write(_ what: String, _ work: @escaping @Sendable (any ChorusStorage) throws -> Void,
                      done: (@Sendable (Result<Void, Error>) -> Void)? = nil) {
        enqueue(.write(what, work, done: done))
    }

    /// Work that must see every change queued before it and come before every change queued after
    /// it (a room's history for a newcomer, the lines held for someone who logs in). It runs on the
    /// store itself, after the batch before it has committed; `done` gets the result on the writer.
    public func afterWrites<T>(_ work: @escaping @Sendable (any ChorusStorage) throws -> T,
                               done: @escaping @Sendable (Result<T, Error>) -> Void) {
        enqueue(.read { store in done(Result { try work(store) }) })
    }

    public func afterWrites<T: Sendable>(_ work: @escaping @Sendable (any ChorusStorage) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            afterWrites(work) { continuation.resume(with: $0) }
        }
    }

    /// Returns once everything queued so far is written (at shutdown).
    public func waitUntilWritten() {
        writer.sync {}
    }

    // MARK: Things that come due

    /// Does the work of the boards that are due (`Boards.fireDue`), as a change nobody typed, then
    /// tells the listener when the next is; `done` follows, on the writer.
    public func fireDue(done: @escaping @Sendable () -> Void = {}) {
        run(FireDue(interval: settings.reminderInterval)) { [self] outcome in
            if outcome.refused { logger.error("\(outcome.replies.joined(separator: " "))") }
            announceNextDueNow()
            done()
        }
    }

    /// Tells the listener when the next thing comes due, as the store has it written down, once
    /// the changes queued so far are in.
    public func announceNextDue() {
        enqueue(.read { [self] _ in announceNextDueNow() })
    }

    /// Works out again when each board comes due and writes it down, then tells the listener: at
    /// start, and now and then, for changes whose process died between committing them and this.
    public func reckonDue() {
        enqueue(.read { [self] _ in reckonDueNow() })
    }

    private func reckonDueNow() {
        do {
            try store.transaction(cache: freshCache) { tx in
                try Boards(store: tx, timeZone: settings.timeZone, now: now).reckonDue(remindEvery: settings.reminderInterval)
            }
        } catch {
            logger.error("could not work out what comes due next: \(error)")
        }
        announceNextDueNow()
    }

    private func announceNextDueNow() {
        guard let listener = nextDueListener.withLock({ $0 }) else { return }
        do {
            listener.call(try store.nextDue())
        } catch {
            logger.error("could not read what comes due next: \(error)")
        }
    }

    // MARK: The writer

    /// Rooms, memberships, room settings or account settings changed outside the Workspace (another
    /// process committed a change of them): the next transaction reads them again. Called before the
    /// change is delivered to anyone here, so whoever heard of it here and answers gets an answer
    /// that knows it.
    public func roomsChangedOutside() {
        keeping.changedOutside()
    }

    /// The cache for the next transaction: as it is, or without what others may have changed.
    private var freshCache: StoreCache {
        keeping.prepare(cache)
        return cache
    }

    private func enqueue(_ work: Work) {
        let start = queue.withLock { queue in
            queue.work.append(work)
            defer { queue.draining = true }
            return !queue.draining
        }
        if start { writer.async { self.drain() } }
    }

    /// Runs until nothing waits: each turn takes everything queued, commits the changes between two
    /// reads as one batch, and runs each read after the batch before it.
    private func drain() {
        while true {
            let work = queue.withLock { queue in
                defer { queue.work.removeAll(keepingCapacity: true) }
                if queue.work.isEmpty { queue.draining = false }
                return queue.work
            }
            if work.isEmpty { return }
            var batch: [Work] = []
            for item in work {
                if case .read(let read) = item {
                    commit(batch)
                    batch.removeAll()
                    read(store)
                } else {
                    batch.append(item)
                }
            }
            commit(batch)
        }
    }

    /// Logs a failed batch: the first at once, then at most one line a minute with how many more
    /// (a full disk fails every batch, and the log must not fill what is left of it).
    private func batchFailed(_ size: Int, _ error: Error) {
        let t = now()
        if let last = lastBatchFailureLogged, t.timeIntervalSince(last) < 60 {
            unloggedBatchFailures += 1
            return
        }
        logger.error("a batch of \(size) changes failed: \(error)", metadata: ["failed-batches-since-last-report": "\(unloggedBatchFailures)"])
        lastBatchFailureLogged = t
        unloggedBatchFailures = 0
    }

    /// One transaction for the batch; then, in order, each command's deliveries and outcome.
    private func commit(_ batch: [Work]) {
        guard !batch.isEmpty else { return }
        var results: [(index: Int, outcome: Outcome, deliveries: [Delivery])] = []
        /// The transport's writes that failed inside the batch (the rest of it committed).
        var writeFailures: [Int: Error] = [:]
        do {
            // Savepoints in the database only when a refused change wrote before it was refused:
            // most are refused before they write, and on PostgreSQL each savepoint is a round trip.
            var takingBack = TakingBack.byRunningAgain
            var attempt = 1
            while true {
                results = []
                writeFailures = [:]
                do {
                    try runBatch(batch, takingBack, &results, &writeFailures)
                    break
                } catch StoreError.needsSavepoints where takingBack == .byRunningAgain {
                    logger.debug("a batch of \(batch.count) changes runs again with savepoints: a refused one had written")
                    takingBack = .bySavepoint
                } catch StoreError.deadlock where attempt < Self.batchAttempts {
                    // Another process's batch went first; nothing of this one was kept: again, whole.
                    logger.info("a batch of \(batch.count) changes waited on another process's; running it again")
                    attempt += 1
                }
            }
            batchListener.withLock { $0 }?.call(batch.count)
            failingWrites.withLock { $0 = writeFailures.values.first.map { "\($0)" } }
            for (index, item) in batch.enumerated() {
                guard case .write(let what, _, let done) = item else { continue }
                // A write with `done` is its owner's to report.
                guard let done else {
                    if let error = writeFailures[index] { logger.error("could not save \(what): \(error)") }
                    continue
                }
                done(writeFailures[index].map { .failure($0) } ?? .success(()))
            }
        } catch {
            // Nothing of the batch was committed: the transport's own writes are tried again one by
            // one, and the commands' askers are told nothing changed.
            batchFailed(batch.count, error)
            failingWrites.withLock { $0 = "\(error)" }
            results = []
            for (index, item) in batch.enumerated() {
                switch item {
                case .write(let what, let work, let done):
                    do {
                        try store.transaction(cache: freshCache) { try work($0) }
                        done?(.success(()))
                    } catch {
                        if done == nil { logger.error("could not save \(what): \(error)") }
                        done?(.failure(error))
                    }
                case .command:
                    results.append((index, .notCommitted, []))
                case .read:
                    break
                }
            }
        }
        var committed: [Committed] = []
        committed.reserveCapacity(results.count)
        var dueMayHaveChanged = false
        for (index, outcome, deliveries) in results {
            guard case .command(let command, let origin, _) = batch[index] else { continue }
            committed.append(Committed(deliveries: deliveries, outcome: outcome, origin: origin))
            if !(command is FireDue), outcome.movesWhatComesDue || outcome.events.contains(where: \.changesWhatComesDue) {
                dueMayHaveChanged = true
            }
        }
        if !committed.isEmpty {
            for sink in sinks.withLock({ $0 }) { sink.publish(committed) }
        }
        for (index, outcome, _) in results {
            if case .command(_, _, let done?) = batch[index] { done(outcome) }
        }
        if dueMayHaveChanged { reckonDueNow() }
    }

    /// How many times a batch the database stopped to break a deadlock is run in all.
    static let batchAttempts = 3

    /// The batch in one transaction: each change in a savepoint of its own (taken back as
    /// `takingBack` says), the room lines of its commands' events stored at the end. What each
    /// command did, and which of the transport's writes failed (the rest of the batch is kept), go
    /// to `results` and `writeFailures`.
    private func runBatch(_ batch: [Work], _ takingBack: TakingBack,
                          _ results: inout [(index: Int, outcome: Outcome, deliveries: [Delivery])],
                          _ writeFailures: inout [Int: Error]) throws {
        try store.transaction(cache: freshCache) { tx in
            var tail = BatchTail()
            let boards = Boards(store: tx, timeZone: settings.timeZone, now: now)
            for (index, item) in batch.enumerated() {
                switch item {
                case .write(_, let work, _):
                    try tx.savepoint(takingBack) {
                        writeFailures[index] = nil
                        do { try work(tx); return true } catch {
                            writeFailures[index] = error
                            return false
                        }
                    }
                case .command(let command, _, _):
                    var outcome = Outcome.notCommitted
                    var deliveries: [Delivery] = []
                    let before = tail.mark
                    try tx.savepoint(takingBack) {
                        // Run again when another process changed what it read: from the start.
                        tail.takeBack(to: before)
                        deliveries = []
                        outcome = command.run(on: boards)
                        guard !outcome.refused else { return false }
                        do {
                            deliveries = try plan(outcome, tx, &tail)
                            return true
                        } catch {
                            logger.error("could not store a command's events: \(error)")
                            tail.takeBack(to: before)
                            outcome = .notCommitted
                            return false
                        }
                    }
                    results.append((index, outcome, deliveries))
                case .read:
                    preconditionFailure("reads run between batches")
                }
            }
            if !tail.bus.isEmpty, let others = otherProcesses.withLock({ $0 }) { try others.post(tail.bus, in: tx) }
            try tx.appendHistory(tail.lines)
        }
    }

    /// What a batch's commands leave to be stored at its end, each kind in one statement: the room
    /// lines of their events (one call per line cost more than the insert itself), and the bot's
    /// direct lines for people on other processes (a post is two round trips on PostgreSQL, and
    /// holds the log's lock from then to the commit).
    private struct BatchTail {
        var lines: [HistoryEntry] = []
        var bus: [BusMessage] = []

        var mark: (lines: Int, bus: Int) { (lines.count, bus.count) }

        /// Drops what was added since `mark`: a command taken back, or run again.
        mutating func takeBack(to mark: (lines: Int, bus: Int)) {
            lines.removeSubrange(mark.lines...)
            bus.removeSubrange(mark.bus...)
        }
    }

    /// Decides, once, how each event of a command reaches people, and makes each room line, which
    /// the batch stores in its own transaction: a line people read in history was committed with
    /// its event.
    private func plan(_ outcome: Outcome, _ tx: any ChorusStorage, _ tail: inout BatchTail) throws -> [Delivery] {
        let deliveries = try outcome.events.map { event -> Delivery in
            let audience = Audience(event)
            var roomLine: HistoryEntry?
            var tags: [(String, String)]?
            if let room = event.room, event.reach == .room, let name = try tx.roomName(room) {
                let words = wording.roomLine(event, roomName: name)
                tags = words.tags
                let t = now()
                let line = HistoryEntry(conversation: Account.key(room), msgid: ids.next(at: t), time: t, command: "NOTICE",
                                        source: settings.serviceSource, account: settings.serviceNick, target: name,
                                        text: words.text, clientTags: words.serializedTags,
                                        audience: event.audience.map { $0.map(Account.key) })
                tail.lines.append(line)
                roomLine = line
            }
            // A personal job's event has no room to be heard in: its actor is told directly. An
            // event for the people it concerns only (a request's) is not told to its actor, who
            // has the command's answer.
            let told = event.room == nil && event.reach == .room ? event.concerns + [event.actor] : event.concerns
            var direct: [String] = []
            if told.count <= 16 {
                for key in told.map(Account.key) where !direct.contains(key) { direct.append(key) }  // few: an array beats a set
            } else {
                var seen = Set<String>(minimumCapacity: told.count)  // a new request told to a thousand contractors
                for key in told.map(Account.key) where seen.insert(key).inserted { direct.append(key) }
            }
            // Those who cannot hear it now find it waiting when they come back, committed with the change.
            let queued = connected?.notConnected(among: direct) ?? []
            if !queued.isEmpty { try tx.queueEvent(event.id, for: queued) }
            let delivery = Delivery(event: event, audience: audience, roomLine: roomLine, tags: tags, direct: direct,
                                    queued: Set(queued), actorTimeZone: outcome.timeZone)
            tail.bus += try linesForOtherProcesses(delivery, tx)
            return delivery
        }
        // Other processes' members of a room closed here hear who closed it.
        if otherProcesses.withLock({ $0 }) != nil {
            for case .closeRoom(let room, let manager) in outcome.effects {
                tail.bus.append(.closure(RoomClosure(room: room, by: manager, time: now())))
            }
        }
        return deliveries
    }

    /// The direct lines of `delivery` for people connected to other processes, which the batch
    /// posts to those processes in its transaction. Each one leaves it out for a person who heard
    /// the room's line there (`RelayedLine.StandIn`); this process tells its own connections after the commit.
    private func linesForOtherProcesses(_ delivery: Delivery, _ tx: any ChorusStorage) throws -> [BusMessage] {
        // Most events tell nobody directly: they pay for nothing here (nor on SQLite, with no others).
        guard !delivery.direct.isEmpty, let connected, otherProcesses.withLock({ $0 }) != nil else { return [] }
        let keys = connected.connectedElsewhere(among: delivery.direct.filter { !delivery.queued.contains($0) })
        guard !keys.isEmpty else { return [] }
        let event = delivery.event, t = now()
        let words: RoomLineWords
        if let line = delivery.roomLine {
            words = RoomLineWords(text: line.text, tags: [], serializedTags: line.clientTags)
        } else {
            words = wording.directLine(event, roomName: try event.room.flatMap { try tx.roomName($0) })
        }
        return keys.map { key in
            let standIn = delivery.roomLine.map {
                RelayedLine.StandIn(room: $0.conversation, membersHear: delivery.reaches(account: key, isManager: false))
            }
            return BusMessage.line(RelayedLine(msgid: ids.next(at: t), time: t, command: "NOTICE", source: settings.serviceSource,
                                               account: settings.serviceNick, target: key, text: words.text,
                                               clientTags: words.serializedTags, standsInFor: standIn))
        }
    }
}

/// A callback kept behind a lock, in a class of its own. A function value kept in a `Mutex`
/// itself came back from every `withLock { $0 }` wrapped in two more reabstraction thunks (the
/// closure's `inout` value is written back through the generic), so each call walked a chain one
/// link longer per call before it: 900 µs a call after 80,000 calls, and memory without end.
final class Listener<Argument: Sendable>: Sendable {
    let call: @Sendable (Argument) -> Void

    init(_ call: @escaping @Sendable (Argument) -> Void) {
        self.call = call
    }
}
