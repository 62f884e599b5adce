import AsyncHTTPClient
import ChorusCore
import Foundation
import NIOCore
import NIOHTTP1

/// A batch of one hook's events, POSTed in order on one event loop of the hook's client: each
/// POST starts from the completion of the one before, so nothing hops between threads from one
/// delivery to the next. (Awaiting each POST from a task cost three hops a delivery, and on a busy
/// machine each hop waits for a core: the hook fell seconds behind at 1,000 events a second.)
/// Its state is touched on `loop` only.
final class OrderedPosts: @unchecked Sendable {
    /// How far the batch got: the position to store (past the events not the hook's), the last
    /// delivery, and the attempt that failed, if one did (nothing after it was sent).
    struct Passage {
        var position: Int64
        var delivered: WebhookAttempt?
        var failed: WebhookAttempt?
    }

    private let events: [Event]
    private let hook: Webhook
    private let body: (Event) -> [UInt8]
    private let client: HTTPClient
    private let timeout: TimeAmount
    /// The hook's URL, read once a batch.
    private let url: URL?
    private let loop: EventLoop
    private let done: EventLoopPromise<Passage>
    private var passage: Passage
    private var next = 0

    /// Sends `events` (those the hook takes; the others are passed over) and answers how far it got.
    /// `loop` is the hook's own, the same for every batch: the answers are handled there, and the
    /// client's pool makes the kept connection on it. (Asking for the connection on that loop too,
    /// `.delegateAndChannel`, gets one made for the request alone and closed after it.)
    static func send(_ events: [Event], to hook: Webhook, client: HTTPClient, on loop: EventLoop, timeout: TimeAmount,
                     body: @escaping (Event) -> [UInt8]) -> EventLoopFuture<Passage> {
        let posts = OrderedPosts(events, hook, client, loop, timeout, body)
        posts.loop.execute { posts.step() }
        return posts.done.futureResult
    }

    private init(_ events: [Event], _ hook: Webhook, _ client: HTTPClient, _ loop: EventLoop, _ timeout: TimeAmount,
                 _ body: @escaping (Event) -> [UInt8]) {
        self.events = events
        self.hook = hook
        url = URL(string: hook.url)
        self.body = body
        self.client = client
        self.timeout = timeout
        self.loop = loop
        done = loop.makePromise()
        passage = Passage(position: hook.deliveredThrough)
    }

    private func step() {
        while next < events.count, !hook.takes(events[next]) {
            passage.position = events[next].id  // not the hook's: passed over
            next += 1
        }
        guard next < events.count else { return done.succeed(passage) }
        let event = events[next]
        next += 1
        post(event).whenSuccess { attempt in
            guard attempt.delivered else {
                self.passage.failed = attempt
                return self.done.succeed(self.passage)
            }
            self.passage.position = event.id
            self.passage.delivered = attempt
            // On the loop's next turn: the client puts the connection back in its pool once this
            // answer is handled, and a request made before that would open another one.
            self.loop.execute { self.step() }
        }
    }

    /// One event, POSTed: the attempt, delivered (a 2xx in time) or not. Never fails.
    private func post(_ event: Event) -> EventLoopFuture<WebhookAttempt> {
        let bytes = body(event)
        let started = Date()
        var attempt = WebhookAttempt(hook: hook.id, event: event.id, type: event.type, at: started, status: nil, error: nil, milliseconds: 0)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "User-Agent", value: "Chorus-Webhook")
        headers.add(name: "X-Chorus-Hook", value: String(hook.id))
        headers.add(name: "X-Chorus-Event", value: event.type)
        headers.add(name: "X-Chorus-Event-Id", value: String(event.id))
        headers.add(name: "X-Chorus-Signature", value: Webhook.signature(of: bytes, at: started, secret: hook.secret))
        let answer: EventLoopFuture<Int>
        do {
            guard let url else { throw HTTPClientError.invalidURL }
            let request = try HTTPClient.Request(url: url, method: .POST, headers: headers, body: .bytes(bytes))
            answer = client.execute(request: request, delegate: StatusOnly(), eventLoop: .delegate(on: loop),
                                    deadline: .now() + timeout).futureResult
        } catch {
            answer = loop.makeFailedFuture(error)
        }
        return answer.map { status in
            attempt.status = status
            if !attempt.delivered { attempt.error = "HTTP \(status)" }
            return attempt
        }.recover { error in
            attempt.error = Self.describe(error)
            return attempt
        }.map { attempt in
            var timed = attempt
            timed.milliseconds = Int(Date().timeIntervalSince(started) * 1000)
            return timed
        }
    }

    private static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError { return "\(client)" }
        if let io = error as? IOError { return io.description }
        return "\(error)"
    }
}

/// A receiver's answer: its status only. What its body says is read and let go, a part at a time.
private final class StatusOnly: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = Int
    private var status = 0

    func didReceiveHead(task: HTTPClient.Task<Int>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Int>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Int>) throws -> Int { status }
}
