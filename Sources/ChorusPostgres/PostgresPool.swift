import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// A fixed number of connections, opened as they are first needed, each used by one caller at a
/// time; a caller waits for one to come back. A connection found broken is closed and replaced by
/// a new one on the next call, so the store recovers by itself once the database is back.
final class PostgresPool: @unchecked Sendable {
    let location: PostgresLocation
    private let size: Int
    private let logger: Logger
    /// NIO's shared loops: the store's connections wait on them, never the server's own loops.
    private let group = MultiThreadedEventLoopGroup.singleton
    /// This process among those sharing the database: the lines it writes carry it.
    let node = "\(ProcessInfo.processInfo.hostName)/\(getpid())/\(UInt32.random(in: 0...UInt32.max))"
    private let lock = NSCondition()
    private var idle: [PostgresLink] = []
    /// The connection that LISTENs, apart from the pool, and what it wakes.
    private var listener: PostgresConnection?
    private var listeners: [(channel: String, wake: @Sendable (String) -> Void)] = []
    private var open = 0
    private var closed = false

    init(location: PostgresLocation, size: Int, logger: Logger) throws {
        self.location = location
        self.size = max(1, size)
        self.logger = logger
        // The first connection now, so an unreachable database is reported at start.
        give(try connect())
    }

    func with<T>(_ body: (PostgresLink) throws -> T) throws -> T {
        let link = try take()
        defer { give(link) }
        return try body(link)
    }

    private func take() throws -> PostgresLink {
        lock.lock()
        while true {
            if closed { lock.unlock(); throw PostgresStoreError(closed: "the store is closed") }
            if let link = idle.popLast() {
                // One the server ended while it waited here (a restart, an administrator) is replaced.
                if link.connection.isClosed {
                    open -= 1
                    continue
                }
                lock.unlock()
                return link
            }
            if open < size {
                open += 1
                lock.unlock()
                do {
                    return try connect()
                } catch {
                    lock.lock(); open -= 1; lock.signal(); lock.unlock()
                    throw error
                }
            }
            lock.wait()
        }
    }

    private func give(_ link: PostgresLink) {
        lock.lock()
        defer { lock.signal(); lock.unlock() }
        if link.broken || closed {
            open -= 1
            // The connection is kept until it has closed: one let go open is a leak (and a
            // postgres-nio assertion in debug builds).
            let closing: EventLoopFuture<Void> = link.connection.close()
            closing.whenComplete { _ in withExtendedLifetime(link) {} }
        } else {
            idle.append(link)
        }
    }

    private func connect() throws -> PostgresLink {
        do {
            let connection = try PostgresConnection.connect(on: group.next(), configuration: location.configuration,
                                                            id: Int.random(in: 0..<Int.max), logger: logger).wait()
            let link = PostgresLink(connection, logger: logger)
            do {
                if let schema = location.schema {
                    try link.execute("SET search_path TO \(PostgresLocation.quotedIdentifier(schema))")
                }
                // What this connection writes is this process's: the room triggers note it, and
                // wake this installation's processes on its channel.
                try link.execute("SELECT set_config('chorus.node', ?, false), set_config('chorus.channel', ?, false)",
                                 [node, location.channel])
            } catch {
                let closing: EventLoopFuture<Void> = connection.close()
                try? closing.wait()
                throw error
            }
            return link
        } catch let error as PostgresStoreError {
            throw error
        } catch {
            throw PostgresLocation.Unreachable(location: location.description, reason: PostgresStoreError(error).description)
        }
    }

    /// Calls `wake` on each NOTIFY on `channel` from another process (the payload names the
    /// sender), from a connection of its own that is opened again (every 2 s until it is) whenever
    /// it is lost.
    func listen(_ channel: String, _ wake: @escaping @Sendable (_ payload: String) -> Void) {
        lock.lock()
        listeners.append((channel, wake))
        lock.unlock()
        openListener()
    }

    private func openListener() {
        lock.lock()
        let wanted = listeners
        let closed = self.closed
        lock.unlock()
        guard !closed, !wanted.isEmpty else { return }
        do {
            let connection = try PostgresConnection.connect(on: group.next(), configuration: location.configuration,
                                                            id: Int.random(in: 0..<Int.max), logger: logger).wait()
            let node = self.node
            for (channel, wake) in wanted {
                // A notification this process sent itself is news only to the others.
                connection.addListener(channel: channel) { _, note in if note.payload != node { wake(note.payload) } }
                _ = try connection.query(PostgresQuery(unsafeSQL: "LISTEN \(PostgresLocation.quotedIdentifier(channel))"), logger: logger).wait()
            }
            lock.lock()
            if self.closed {
                lock.unlock()
                try? connection.close().wait()
                return
            }
            listener = connection
            lock.unlock()
            // What was committed while no one listened is found by the readers' polls.
            connection.closeFuture.whenComplete { _ in
                self.lock.lock()
                self.listener = nil
                self.lock.unlock()
                self.retryListener()
            }
        } catch {
            logger.warning("cannot LISTEN for other processes' lines; reading them every poll only", metadata: ["error": "\(PostgresStoreError(error))"])
            retryListener()
        }
    }

    private func retryListener() {
        group.next().scheduleTask(in: .seconds(2)) { DispatchQueue.global().async { self.openListener() } }
    }

    func close() {
        lock.lock()
        guard !closed else { return lock.unlock() }
        closed = true
        let links = idle
        idle = []
        open -= links.count
        let listening = listener
        listener = nil
        lock.broadcast()
        lock.unlock()
        if let listening { try? listening.close().wait() }
        for link in links {
            let closing: EventLoopFuture<Void> = link.connection.close()
            try? closing.wait()
        }
    }
}
