import ChorusCore
import Foundation
import NIOCore

/// The event feed by position (`GET /api/v1/events`): what the account would hear over IRC,
/// oldest first, held back on PostgreSQL where an id may still be missing, and waited for with
/// `wait=`.
extension WebAPI {
    /// The caller's events after a position, oldest first; with `wait`, held until one comes.
    func events(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let after = try request.integer("after", default: 0, in: 0...Int64.max)
        let limit = Int(try request.integer("limit", default: 100, in: 1...Int64(Self.maxEvents)))
        let wait = Int(try request.integer("wait", default: 0, in: 0...Int64(Self.maxWait)))
        let promise = server.loop.makePromise(of: WebResponse.self)
        let waiter = FeedWaiter(caller: caller, after: after, limit: limit, promise: promise,
                                until: wait > 0 ? .now() + .seconds(Int64(wait)) : nil)
        look(waiter)
        return promise.futureResult
    }

    /// Reads the waiter's events; answers if there are any or it may wait no longer, else keeps it.
    private func look(_ waiter: FeedWaiter) {
        heard(by: waiter.caller, after: waiter.after, limit: waiter.limit).whenComplete { result in
            switch result {
            case .failure(let error):
                waiter.promise.succeed(self.errorResponse(APIError(.serviceUnavailable, "TEMPORARILY_UNAVAILABLE", "The store does not answer: \(error)")))
            case .success(let page):
                if page.events.isEmpty, !page.more, let until = waiter.until, NIODeadline.now() < until {
                    waiter.after = page.next
                    self.keep(waiter)
                    return
                }
                waiter.promise.succeed(self.json(.ok, bytes: APIFeed(events: page.events, next: page.next, more: page.more, described: self.described).json))
            }
        }
    }

    /// One page of the feed, for the API and for IRC's `CHATHISTORY AFTER <bot>` alike: the events
    /// the caller hears after a position, the position to ask after next (past the events passed
    /// over too), and whether more are there now.
    func heard(by caller: Caller, after: Int64, limit: Int) -> EventLoopFuture<(events: [Event], next: Int64, more: Bool)> {
        // What the caller may hear, as the server's rooms stand now.
        var managed: Set<String> = []
        var member: [String] = []
        for room in server.rooms.values {
            guard let membership = room.memberships[caller.key] else { continue }
            member.append(room.key)
            if membership.role == .manager { managed.insert(room.key) }
        }
        let store = server.store
        // A few more than the page, for events the caller may not hear; where many are passed over
        // the page comes back short with `more` set. (Twice the page read each row of a catch-up
        // twice, half of them thrown away.)
        let scan = limit + 16
        let shared = server.cluster != nil
        return server.background { () -> ([Event], [Int64]) in
            let found = try store.events(after: after, rooms: member, account: caller.key, limit: scan)
            // Several processes take ids as they go and commit in another order: the ids of all
            // events show where one may still be missing.
            let span = Int(min(10_000, (found.last?.id ?? after) - after + 1))
            let ids = shared ? try store.eventIDs(after: after, limit: span) : []
            return (found, ids)
        }.map { found, ids in
            let horizon = shared ? self.settled(ids, after: after) : .max
            let (events, next, more) = self.feed(found, after: after, limit: limit, scanned: scan, horizon: horizon,
                                                 caller: caller, members: Set(member), managed: managed)
            return (events, next, more)
        }
    }

    /// The last id up to which every event is there (or has been missing longer than any
    /// transaction takes: a command taken back). An id missing for less may be a transaction of
    /// another process, still open, that took it before a later one committed.
    private func settled(_ ids: [Int64], after: Int64) -> Int64 {
        let now = NIODeadline.now()
        var expected = after + 1
        for id in ids {
            if id > expected {
                let first = gapsSeen[expected] ?? now
                gapsSeen[expected] = first
                if now - first < Self.gapPatience { return expected - 1 }
            }
            expected = id + 1
        }
        if gapsSeen.count > 1000 { gapsSeen = gapsSeen.filter { now - $0.value < Self.gapPatience * 2 } }
        return ids.last ?? after
    }

    /// Of the events found, those the caller hears, up to the limit and the horizon; the position to
    /// ask after next (past the events passed over too); whether more are there now.
    private func feed(_ found: [Event], after: Int64, limit: Int, scanned: Int, horizon: Int64, caller: Caller,
                      members: Set<String>, managed: Set<String>) -> ([Event], Int64, Bool) {
        var heard: [Event] = []
        var next = after
        for event in found {
            guard event.id <= horizon else { return (heard, next, false) }
            guard heard.count < limit else { return (heard, next, true) }
            next = event.id
            if hears(event, caller: caller, members: members, managed: managed) { heard.append(event) }
        }
        return (heard, next, found.count == scanned)
    }

    /// The rule IRC delivers by: a room's line reaches its members as its audience allows, and
    /// those it concerns are told directly (the actor too, for an event with no room).
    private func hears(_ event: Event, caller: Caller, members: Set<String>, managed: Set<String>) -> Bool {
        if let room = event.room, event.reach == .room, members.contains(room),
           Audience(event).includes(account: caller.key, isManager: managed.contains(room)) { return true }
        if event.concerns.contains(where: { Account.key($0) == caller.key }) { return true }
        return event.room == nil && event.reach == .room && Account.key(event.actor) == caller.key
    }

    private func keep(_ waiter: FeedWaiter) {
        waiting.append(waiter)
        guard waitTicker == nil else { return }
        // Events committed by other processes wake nobody here: the waiting look again each second.
        waitTicker = server.loop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [weak self] _ in
            self?.wake()
        }
    }

    /// Committed events (this process's, or a second gone by): the waiting look again.
    func wake() {
        guard !waiting.isEmpty else { return }
        let all = waiting
        waiting = []
        if waitTicker != nil {
            waitTicker?.cancel()
            waitTicker = nil
        }
        for waiter in all { look(waiter) }
    }
}

/// A feed request waiting for events (`wait=`).
final class FeedWaiter {
    let caller: WebAPI.Caller
    var after: Int64
    let limit: Int
    let promise: EventLoopPromise<WebResponse>
    let until: NIODeadline?

    init(caller: WebAPI.Caller, after: Int64, limit: Int, promise: EventLoopPromise<WebResponse>, until: NIODeadline?) {
        self.caller = caller
        self.after = after
        self.limit = limit
        self.promise = promise
        self.until = until
    }
}
