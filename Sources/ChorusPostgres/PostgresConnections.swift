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

    /// Runs `body` on a connection of the client's, given back when it returns (closed first if a
    /// statement found it broken, so that the client opens another).
    func with<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        if closed.withLockedValue({ $0 }) { throw PostgresStoreError(closed: "the store is closed") }
        let lease = Lease()
        let logger = self.logger
        let task = Task {
            do {
                try await client.withConnection { connection in
                    let link = PostgresLink(connection, logger: logger)
                    await lease.lend(link)
                    if link.broken && !connection.isClosed { try? await connection.close() }
                }
            } catch {
                lease.fail(error)
            }
        }
        let link: PostgresLink
        do {
            link = try lease.take(within: Self.leaseTimeout)
        } catch {
            task.cancel()  // the client drops the request; a connection it lends after this goes back at once
            throw error
        }
        defer { lease.giveBack() }
        return try body(link)
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

/// One connection lent by a task to a waiting thread, and its return.
private final class Lease: @unchecked Sendable {
    private let lock = NIOLock()
    private let lent = DispatchSemaphore(value: 0)
    private var link: PostgresLink?
    private var failure: (any Error)?
    private var returned: CheckedContinuation<Void, Never>?
    /// The waiting thread stopped waiting (its time ran out): what is lent later goes straight back.
    private var abandoned = false
    private var givenBack = false

    /// Called by the task: hands the connection over and waits until the thread gives it back.
    func lend(_ link: PostgresLink) async {
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

    func fail(_ error: any Error) {
        lock.withLock { failure = error }
        lent.signal()
    }

    func take(within seconds: TimeInterval) throws -> PostgresLink {
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
