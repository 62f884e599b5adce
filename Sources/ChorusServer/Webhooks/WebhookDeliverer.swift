import AsyncHTTPClient
import ChorusCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// Delivers rooms' webhooks (`Webhook`): each hook's events after its position, in order, one
/// POST each, signed; a failure is tried again later (`Webhook.backoff`) before anything after it,
/// so a receiver that was down gets every event, in order, once it is back. The events table is
/// the outbox and the hook's position is stored with each batch, so a restart or, with several
/// processes, another one (a hook is leased to one at a time) carries on where it stopped.
///
/// Runs on tasks of its own, beside the Workspace: a slow or dead receiver never slows a command.
/// A batch's POSTs run on the hook's own event loop, one from the answer to the last (`OrderedPosts`).
/// The store is synchronous (a PostgreSQL store's calls wait for a task of its own to lend them a
/// connection), so its calls run on NIO's thread pool, never on the tasks' few threads.
final class WebhookDeliverer: Sendable {
    private let store: any ChorusStorage
    private let wording: IRCEventWording
    private let allowPrivate: Bool
    private let retryBase: TimeInterval
    private let logger: Logger
    /// Events younger than this are left for the next pass where several processes share the
    /// database: one that took an earlier id may not have committed yet.
    private let settling: TimeInterval
    private let node = "\(ProcessInfo.processInfo.hostName)/\(getpid())/\(UInt32.random(in: 0...UInt32.max))"
    /// Rung when events were committed here, and `passEvery` after the last pass: a pass follows
    /// each ring, and rings while a pass runs make one more after it.
    private let doorbell = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    private let running = NIOLockedValueBox<Task<Void, Never>?>(nil)
    private let hooked = NIOLockedValueBox(HookedRooms())
    private let passCount = NIOLockedValueBox(0)
    /// How many passes have begun (each reads every hook).
    var passes: Int { passCount.withLockedValue { $0 } }
    private let clients = NIOLockedValueBox<[Int64: KeptClient]>([:])

    /// How long a process holds a hook it delivers: renewed each pass, taken by another after.
    static let lease: TimeInterval = 60
    /// Events one pass sends a hook at most, and the time one request may take.
    static let batch = 500
    static let timeout: TimeAmount = .seconds(10)

    init(store: any ChorusStorage, wording: IRCEventWording, allowPrivate: Bool, retryBase: TimeInterval, shared: Bool, logger: Logger) {
        self.store = store
        self.wording = wording
        self.allowPrivate = allowPrivate
        self.retryBase = retryBase
        self.settling = shared ? 2 : 0
        self.logger = logger
    }

    /// Other processes' events and retries that come due are looked for this often.
    static let passEvery: Duration = .seconds(2)

    func start() {
        doorbell.continuation.yield()  // a first pass at once: what was left undelivered at the last stop
        running.withLockedValue { $0 = Task { await self.run() } }
    }

    /// Events were committed here in `rooms` (by key): a pass at once rather than at the next,
    /// when one of them has a hook. Most rooms have none, and a pass reads every hook.
    func wake(rooms: Set<String>) {
        guard rings(for: rooms) else { return }
        doorbell.continuation.yield()
    }

    /// Whether events in `rooms` start a pass at once.
    func rings(for rooms: Set<String>) -> Bool {
        hooked.withLockedValue { $0.anyOf(rooms) }
    }

    /// A hook was added here to `room`: its events ring from now on, not only once a pass has read it.
    func hookAdded(in room: String) {
        hooked.withLockedValue { $0.add(room) }
    }

    /// The rooms with a hook, as the last pass read them, and those given one here since that
    /// read began. Unknown before the first pass: every room rings.
    private struct HookedRooms {
        private var rooms: Set<String>?
        private var addedDuringRead: Set<String> = []

        func anyOf(_ some: Set<String>) -> Bool {
            rooms.map { !$0.isDisjoint(with: some) } ?? true
        }

        mutating func add(_ room: String) {
            rooms?.insert(room)
            addedDuringRead.insert(room)
        }

        mutating func readBegins() {
            addedDuringRead = []
        }

        mutating func read(_ hooks: [Webhook]) {
            rooms = Set(hooks.map(\.room)).union(addedDuringRead)
        }
    }

    func stop() {
        running.withLockedValue { $0?.cancel() }
        doorbell.continuation.finish()
        for kept in clients.withLockedValue({ let all = $0.values; $0 = [:]; return all }) { _ = kept.client.shutdown() }
    }

    /// A pass at each ring of the doorbell, and `passEvery` after the last one at the latest (other
    /// processes' events, retries that come due). Nothing runs between: an idle server's deliverer
    /// wakes every `passEvery`, not ten times a second to look at a flag.
    private func run() async {
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        for await _ in doorbell.stream {
            if Task.isCancelled { return }
            await pass()
            timer?.cancel()
            let doorbell = doorbell.continuation
            timer = Task {
                guard (try? await Task.sleep(for: Self.passEvery)) != nil else { return }  // cancelled: a later pass set its own
                doorbell.yield()
            }
        }
    }

    /// A store call, on the thread pool.
    private func db<T: Sendable>(_ body: @escaping @Sendable (any ChorusStorage) throws -> T) async throws -> T {
        let store = self.store
        return try await NIOThreadPool.singleton.runIfActive { try body(store) }
    }

    /// Hooks delivered at once, each in order: enough for receivers that are slow, few enough
    /// for the store's connections.
    static let parallel = 4

    private func pass() async {
        let hooks: [Webhook]
        passCount.withLockedValue { $0 += 1 }
        hooked.withLockedValue { $0.readBegins() }
        do {
            hooks = try await db { try $0.allWebhooks() }
        } catch {
            logger.warning("cannot read the webhooks", metadata: ["error": "\(error)"])
            return
        }
        hooked.withLockedValue { $0.read(hooks) }
        // Clients of hooks that are gone are closed.
        let ids = Set(hooks.map(\.id))
        for kept in clients.withLockedValue({ kept in
            let gone = kept.filter { !ids.contains($0.key) }
            for id in gone.keys { kept[id] = nil }
            return gone.values
        }) { try? await kept.client.shutdown() }
        let now = Date()
        var due = hooks.filter { ($0.nextAttempt ?? .distantPast) <= now }[...]
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<Self.parallel {
                guard let hook = due.popFirst() else { break }
                group.addTask { await self.deliver(hook) }
            }
            while await group.next() != nil {
                guard let hook = due.popFirst() else { continue }
                group.addTask { await self.deliver(hook) }
            }
        }
    }

    /// Sends the hook what came after its position, in order, until one fails.
    private func deliver(_ listed: Webhook) async {
        let node = self.node
        do {
            let waiting = try await db { try !$0.events(inRoom: listed.room, after: listed.deliveredThrough, limit: 1).isEmpty }
            guard waiting, try await db({ try $0.claimWebhook(listed.id, node: node, until: Date().addingTimeInterval(Self.lease), now: Date()) })
            else { return }
        } catch {
            logger.warning("webhook not delivered", metadata: ["hook": "\(listed.id)", "error": "\(error)"])
            return
        }
        do {
            try await deliverClaimed(listed.id)
        } catch {
            logger.warning("webhook not delivered", metadata: ["hook": "\(listed.id)", "error": "\(error)"])
        }
        // Given back even when the delivery was cancelled (the server stopping, `stop()`): a lease
        // kept would hold the hook from every process, this one's next run too, for a minute.
        let store = self.store
        let released = await Task.detached {
            try await NIOThreadPool.singleton.runIfActive { try store.releaseWebhook(listed.id, node: node) }
        }.result
        if case .failure(let error) = released {
            logger.warning("webhook lease not given back", metadata: ["hook": "\(listed.id)", "error": "\(error)"])
        }
    }

    /// Batch after batch while events come (those committed while one batch was sent make the
    /// next), for at most `holding`: the next pass goes on.
    /// How far the hook got is written once a batch (with its last delivery, for `!hook log`),
    /// so a crash may send again what its last batch had sent; `X-Chorus-Event-Id` tells.
    private func deliverClaimed(_ id: Int64) async throws {
        // As it stands now that it is ours: another process may have moved it on.
        guard var hook = try await db({ try $0.webhook(id) }) else { return }
        var client: KeptClient?
        var roomName = hook.room
        let began = Date()
        while Date().timeIntervalSince(began) < Self.holding {
            let after = hook.deliveredThrough, room = hook.room, horizon = Date().addingTimeInterval(-settling)
            // The settled ones only, up to the first that is not: the position never passes an event.
            let events = Array(try await db { try $0.events(inRoom: room, after: after, limit: Self.batch) }.prefix { $0.at <= horizon })
            guard let last = events.last else { return }
            guard let first = events.first(where: hook.takes) else {
                // None of them is the hook's: passed over, no request made.
                let passed = WebhookAttempt(hook: id, event: last.id, type: "", at: Date(), status: nil, error: nil, milliseconds: 0)
                try await db { try $0.noteWebhookAttempt(passed, position: last.id, nextAttempt: nil) }
                hook.deliveredThrough = last.id
                continue
            }
            if client == nil {
                do {
                    client = try await self.client(for: hook)
                } catch {
                    try await note(hook, failed: WebhookAttempt(hook: id, event: first.id, type: first.type, at: Date(), status: nil,
                                                                error: "\(error)", milliseconds: 0))
                    return
                }
                roomName = try await db { try $0.roomName(room) } ?? room
            }
            let (wording, name) = (self.wording, roomName)
            let passage = try await OrderedPosts.send(events, to: hook, client: client!.client, on: client!.loop, timeout: Self.timeout) { event in
                var body: [UInt8] = []
                APIEvent.write(event, room: name, text: wording.sentence(event, roomName: name), to: &body)
                return body
            }.get()
            let (position, delivered, failed) = (passage.position, passage.delivered, passage.failed)
            if position != after {
                let reached = position
                let done = delivered ?? WebhookAttempt(hook: id, event: reached, type: "", at: Date(), status: nil, error: nil, milliseconds: 0)
                try await db { try $0.noteWebhookAttempt(done, position: reached, nextAttempt: nil) }
                hook.deliveredThrough = reached
                if delivered != nil { hook.failures = 0 }
            }
            if let failed {
                try await note(hook, failed: failed)
                return
            }
            // What comes meanwhile makes the next batch: a batch of one event a turn would write
            // the hook's position as often as events come.
            if events.count < Self.batch { try? await Task.sleep(for: Self.gathering) }
        }
    }

    /// A hook's client, kept across passes (its connection stays open for the next events) and
    /// made anew, its host resolved and checked again, once `resolveEvery` has passed.
    private func client(for hook: Webhook) async throws -> KeptClient {
        if let kept = clients.withLockedValue({ $0[hook.id] }), kept.url == hook.url, kept.until > Date() { return kept }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: try await OutboundTarget(hook.url, allowPrivate: allowPrivate, timeout: Self.timeout).configuration)
        let fresh = KeptClient(client: client, loop: client.eventLoopGroup.next(), url: hook.url, until: Date().addingTimeInterval(Self.resolveEvery))
        let old = clients.withLockedValue { kept in
            defer { kept[hook.id] = fresh }
            return kept[hook.id]
        }
        try? await old?.client.shutdown()
        return fresh
    }

    private struct KeptClient {
        let client: HTTPClient
        /// Where the hook's requests run, one after another (`OrderedPosts`).
        let loop: EventLoop
        let url: String
        let until: Date
    }

    /// How long a hook's host, once checked, is connected to before it is resolved again.
    static let resolveEvery: TimeInterval = 60

    /// How long one process goes on with a hook before it lets the next pass (or process) have it.
    static let holding: TimeInterval = 5
    /// How long a batch that was not full waits before the next is read.
    static let gathering: Duration = .milliseconds(20)

    /// A failed attempt: counted, and the next one put off (`Webhook.backoff`).
    private func note(_ hook: Webhook, failed: WebhookAttempt) async throws {
        let next = Date().addingTimeInterval(Webhook.backoff(after: hook.failures + 1, base: retryBase))
        try await db { try $0.noteWebhookAttempt(failed, position: hook.deliveredThrough, nextAttempt: next) }
    }
}
