import Dispatch
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO

/// The store's connections: postgres-nio's `PostgresClient` (its pool opens connections as they are
/// needed, keeps them alive, replaces those lost and closes idle ones), lent to the store's
/// synchronous callers. A caller's thread waits while a task leases a connection from the client;
/// the task holds the lease until the caller gives the connection back.
///
/// The store stays synchronous because its callers are: the Workspace's one writer thread runs a
/// batch of commands in one transaction, and each statement is a round trip that thread waits for
/// anyway. Bridging once per transaction (the lease) and once per statement (`PostgresLink`) costs
/// less than a suspension point in every store method and its callers.
final class PostgresConnections: Sendable {
    let location: PostgresLocation
    /// This process among those sharing the database: the lines it writes carry it.
    let node: String
    private let client: PostgresClient
    private let logger: Logger
    /// The client's `run()`, for as long as the store is open: the client is this store's own.
    private let running: Task<Void, Never>
    private let listening = NIOLockedValueBox<[Task<Void, Never>]>([])
    private let closed = NIOLockedValueBox(false)
    /// Leases kept a moment for the next caller (`keep`), the last used last, and how many callers
    /// wait for a new one from the client.
    private let idle = NIOLockedValueBox<(leases: [Lease], waiting: Int)>(([], 0))
    /// Gives back what lingered when no caller came.
    private let sweeper: Task<Void, Never>

    /// How long a caller waits for a connection (the database down, or every connection busy)
    /// before it is told so: a command refused in seconds beats one that hangs.
    static let leaseTimeout: TimeInterval = 10

    init(location: PostgresLocation, size: Int, logger: Logger) throws {
        self.location = location
        self.logger = logger
        let node = "\(ProcessInfo.processInfo.hostName)/\(getpid())/\(UInt32.random(in: 0...UInt32.max))"
        self.node = node
        // One connection of its own first, so an unreachable database is said at start, at once
        // (the client would keep trying, quietly, for a minute).
        try Self.probe(location, logger: logger)
        // What a connection writes is this process's: the room triggers note it, and wake this
        // installation's processes on its channel (settings given at connection, not a round trip).
        var settings = [("chorus.node", node), ("chorus.channel", location.channel)]
        if let schema = location.schema { settings.append(("search_path", PostgresLocation.quotedIdentifier(schema))) }
        var configuration = try location.clientConfiguration(settings: settings)
        configuration.options.maximumConnections = max(1, size) + 1  // and one that LISTENs
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
        let idle = self.idle
        sweeper = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                for lease in idle.withLockedValue({ Self.takeStale(from: &$0.leases) }) { lease.giveBack() }
            }
        }
    }

    private static func probe(_ location: PostgresLocation, logger: Logger) throws {
        do {
            let connection = try PostgresConnection.connect(on: PostgresClient.defaultEventLoopGroup.next(), configuration: try location.configuration,
                                                            id: 0, logger: logger).wait()
            try? connection.close().wait()
        } catch let error as PostgresLocation.BadLocation {
            throw error
        } catch {
            throw PostgresLocation.Unreachable(location: location.description, reason: PostgresStoreError(error).description)
        }
    }

    /// Runs `body` on a connection of the client's (closed first if a statement found it broken,
    /// so that the client opens another).
    ///
    /// When the connection is found gone before anything of `body` was answered, and what was
    /// lost left nothing behind (a restart or an administrator ended it while it waited, kept here
    /// or in the client's pool), `body` runs again on another: every connection open then may be
    /// gone alike.
    func with<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        var attempt = 1
        while true {
            let lease = try take()
            defer { keep(lease) }
            let answeredBefore = lease.link.answers
            do {
                return try body(lease.link)
            } catch where attempt < Self.attemptsOnLostConnection && lease.link.broken
                && lease.link.lostWithoutEffect && lease.link.answers == answeredBefore {
                // A moment for the client to see its other connections' end too: one given back
                // broken may otherwise be lent again before the client knows it is closed.
                Thread.sleep(forTimeInterval: 0.02 * Double(attempt))
                attempt += 1
            }
        }
    }

    /// How many connections a call tries when each is found gone before anything ran.
    static let attemptsOnLostConnection = 5

    /// A lease that was used in the last `linger` (the writer's, between two batches), else a new one.
    private func take() throws -> Lease {
        while true {
            let kept = try idle.withLockedValue { idle -> Lease? in
                if closed.withLockedValue({ $0 }) { throw PostgresStoreError(closed: "the store is closed") }
                if let lease = idle.leases.popLast() { return lease }
                idle.waiting += 1  // from now on a lease that is done goes back to the client, for this caller
                return nil
            }
            guard let lease = kept else { break }
            // One the server ended while it waited here (a restart, an administrator) goes back.
            if !lease.link.connection.isClosed { return lease }
            lease.giveBack()
        }
        defer { idle.withLockedValue { $0.waiting -= 1 } }
        return try Lease(from: client, logger: logger, within: Self.leaseTimeout)
    }

    /// Keeps a lease a moment for the next caller (a lease costs a task and a turn of the client's
    /// pool: a third of a millisecond, measured, against a batch's few). It goes back to the client
    /// now when a caller waits for one there (every connection may be out: a kept lease would make
    /// that caller wait for the sweep), when it is broken, or when the store closes; the others
    /// once unused for `linger`.
    private func keep(_ lease: Lease) {
        lease.lastUsed = .now()
        let giveBack = idle.withLockedValue { idle -> [Lease] in
            if lease.link.broken || idle.waiting > 0 || closed.withLockedValue({ $0 }) { return [lease] }
            idle.leases.append(lease)
            return Self.takeStale(from: &idle.leases)
        }
        for old in giveBack { old.giveBack() }
    }

    /// How long a lease is kept unused before its connection goes back to the client's pool, where
    /// it is kept alive (or closed when idle for long).
    static let linger: DispatchTimeInterval = .seconds(1)

    private static func takeStale(from idle: inout [Lease]) -> [Lease] {
        let cutoff = DispatchTime.now() - Self.linger
        let stale = idle.filter { $0.lastUsed < cutoff }
        if !stale.isEmpty { idle.removeAll { $0.lastUsed < cutoff } }
        return stale
    }

    /// Calls `wake` on each NOTIFY on `channel` from another process (the payload names the
    /// sender), on a connection leased for as long as it lasts, and leased again (every 2 s until
    /// one is) whenever it is lost. What is committed while no one listens is found by polls.
    func listen(_ channel: String, _ wake: @escaping @Sendable (_ payload: String) -> Void) {
        let (client, logger, node) = (self.client, self.logger, self.node)
        let task = Task {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: channel) { notifications in
                            for try await note in notifications where note.payload != node { wake(note.payload) }
                        }
                    }
                } catch where !Task.isCancelled {
                    logger.warning("cannot LISTEN for other processes' lines; reading them every poll only",
                                   metadata: ["error": "\(PostgresStoreError(error))"])
                } catch {}
                try? await Task.sleep(for: .seconds(2))
            }
        }
        listening.withLockedValue { $0.append(task) }
    }

    /// Stops the listeners and the client, which closes its connections. Calls after this throw.
    func close() {
        guard !closed.withLockedValue({ let was = $0; $0 = true; return was }) else { return }
        sweeper.cancel()
        for lease in idle.withLockedValue({ let all = $0.leases; $0.leases = []; return all }) { lease.giveBack() }
        for task in listening.withLockedValue({ $0 }) { task.cancel() }
        running.cancel()
        let stopped = DispatchSemaphore(value: 0)
        let running = self.running
        Task {
            await running.value
            stopped.signal()
        }
        if stopped.wait(timeout: .now() + 5) == .timedOut {
            logger.warning("PostgreSQL connections still closing after 5 s")
        }
    }
}

/// One connection lent by a task (holding the client's lease) to the store's threads, until it is
/// given back.
private final class Lease: @unchecked Sendable {
    private(set) var link: PostgresLink!
    /// When the last caller was done with it (guarded by the idle list's lock).
    var lastUsed = DispatchTime.now()
    private let lock = NIOLock()
    private let lent = DispatchSemaphore(value: 0)
    private var failure: (any Error)?
    private var returned: CheckedContinuation<Void, Never>?
    /// The waiting thread stopped waiting (its time ran out): what is lent later goes straight back.
    private var abandoned = false
    private var givenBack = false

    /// Asks the client for a connection and waits at most `seconds` for it.
    init(from client: PostgresClient, logger: Logger, within seconds: TimeInterval) throws {
        let task = Task { [self] in
            do {
                try await client.withConnection { connection in
                    let link = PostgresLink(connection, logger: logger)
                    await lend(link)
                    if link.broken && !connection.isClosed { try? await connection.close() }
                }
            } catch {
                fail(error)
            }
        }
        do {
            link = try take(within: seconds)
        } catch {
            task.cancel()  // the client drops the request; a connection it lends after this goes back at once
            throw error
        }
    }

    /// Called by the task: hands the connection over and waits until it is given back.
    private func lend(_ link: PostgresLink) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let keep = lock.withLock { () -> Bool in
                guard !abandoned else { return false }
                self.link = link
                returned = continuation
                return true
            }
            if keep { lent.signal() } else { continuation.resume() }
        }
    }

    private func fail(_ error: any Error) {
        lock.withLock { failure = error }
        lent.signal()
    }

    private func take(within seconds: TimeInterval) throws -> PostgresLink {
        if lent.wait(timeout: .now() + seconds) == .timedOut {
            let lentLate = lock.withLock { () -> PostgresLink? in
                if link == nil && failure == nil { abandoned = true }
                return link
            }
            if let lentLate { return lentLate }  // lent just as the time ran out
            if let failure = lock.withLock({ failure }) { throw PostgresStoreError(failure) }
            throw PostgresStoreError(closed: "no connection within \(Int(seconds)) s")
        }
        return try lock.withLock {
            if let link { return link }
            throw failure.map { PostgresStoreError($0) } ?? PostgresStoreError(closed: "no connection")
        }
    }

    func giveBack() {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !givenBack else { return nil }
            givenBack = true
            return returned
        }
        continuation?.resume()
    }
}
