import Crypto
import Foundation

/// A room's webhook (`!hook add`): each event of the room that its managers hear, of the types it
/// asks for, POSTed as JSON to `url`, signed with `secret`, in the order of the events. What has
/// been delivered is a position in the events (`deliveredThrough`), so the stored events are the
/// outbox: a receiver that is down gets everything, in order, once it is back.
public struct Webhook: Equatable, Sendable {
    public var id: Int64
    /// The room's key.
    public var room: String
    public var url: String
    /// Event types (`job.created`) or families (`job`); empty for every event.
    public var types: [String]
    /// What the signature is made with; shown once, to the manager who adds the hook.
    public var secret: String
    public var createdBy: String
    public var createdAt: Date
    /// The id of the last event delivered (or passed over: not of the hook's types).
    public var deliveredThrough: Int64
    /// Failed attempts at the next event since the last delivery, when to try again, and why the
    /// last one failed.
    public var failures = 0
    public var nextAttempt: Date?
    public var lastError: String?
    public var failingSince: Date?

    public init(id: Int64 = 0, room: String, url: String, types: [String], secret: String, createdBy: String, createdAt: Date,
                deliveredThrough: Int64) {
        self.id = id
        self.room = room
        self.url = url
        self.types = types
        self.secret = secret
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.deliveredThrough = deliveredThrough
    }

    public static let maxPerRoom = 10
    public static let maxURLLength = 500

    /// Whether the hook asked for events of this type.
    public func wants(_ type: String) -> Bool {
        types.isEmpty || types.contains { $0 == type || type.hasPrefix($0 + ".") }
    }

    /// Whether the event goes to this hook: its type, and what the hook's maker may hear of the room.
    public func takes(_ event: Event) -> Bool {
        wants(event.type) && event.reach == .room && Audience(event).includes(account: Account.key(createdBy), isManager: true)
    }

    /// `X-Chorus-Signature`: `t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, the Stripe
    /// style, so a receiver can refuse a replayed delivery by its age.
    public static func signature(of body: [UInt8], at time: Date, secret: String) -> String {
        let stamp = String(Int(time.timeIntervalSince1970))
        let mac = HMAC<SHA256>.authenticationCode(for: Array((stamp + ".").utf8) + body, using: SymmetricKey(data: Data(secret.utf8)))
        return "t=\(stamp),v1=" + Hex.lowercase(mac)
    }

    /// How long after `failures` failed attempts the next comes: 5 s doubling, at most an hour,
    /// retried for as long as the hook exists.
    public static func backoff(after failures: Int, base: TimeInterval) -> TimeInterval {
        min(3_600, base * pow(2, Double(max(0, min(failures, 20) - 1))))
    }
}

/// One attempt at delivering an event to a hook, as `!hook log` shows it.
public struct WebhookAttempt: Equatable, Sendable {
    public var hook: Int64
    public var event: Int64
    public var type: String
    public var at: Date
    /// The receiver's HTTP status, or nil when there was no answer.
    public var status: Int?
    public var error: String?
    public var milliseconds: Int

    public init(hook: Int64, event: Int64, type: String, at: Date, status: Int?, error: String?, milliseconds: Int) {
        self.hook = hook
        self.event = event
        self.type = type
        self.at = at
        self.status = status
        self.error = error
        self.milliseconds = milliseconds
    }

    public var delivered: Bool { error == nil && (status.map { (200..<300).contains($0) } ?? false) }

    /// Attempts kept a hook, newest last.
    public static let kept = 50
}

/// What the webhooks need from storage.
public protocol WebhookStore: Sendable {
    func insertWebhook(_ hook: Webhook) throws -> Webhook
    func webhooks(in room: String) throws -> [Webhook]
    func allWebhooks() throws -> [Webhook]
    func webhook(_ id: Int64) throws -> Webhook?
    /// False when `room` has no hook `id`.
    func deleteWebhook(_ id: Int64, in room: String) throws -> Bool
    /// Takes the hook for `node` until `until`, unless another node holds it: one node delivers a
    /// hook's events at a time, and another takes over when that one stops renewing.
    func claimWebhook(_ id: Int64, node: String, until: Date, now: Date) throws -> Bool
    func releaseWebhook(_ id: Int64, node: String) throws
    /// Notes an attempt; a delivered one moves the hook's position to its event and clears the
    /// failures, a failed one counts and sets when to try again.
    func noteWebhookAttempt(_ attempt: WebhookAttempt, position: Int64, nextAttempt: Date?) throws
    /// Moves the hook's position: `!hook replay` sends again what came after it.
    func setWebhookPosition(_ id: Int64, to position: Int64) throws
    func webhookAttempts(of id: Int64, limit: Int) throws -> [WebhookAttempt]
    /// A room's events after `position`, oldest first.
    func events(inRoom room: String, after position: Int64, limit: Int) throws -> [Event]
    /// The id of the newest event, 0 with none: where a new hook starts.
    func lastEventID() throws -> Int64
}
