import Foundation

/// A calendar feed someone subscribed their calendar app to (`!ical new`): their own turns, jobs
/// and plan, or a room's turns and jobs. The link is signed (`LinkSigner`) and names the feed; the
/// stored row is what `!ical revoke` deletes, so a revoked link stops working on every node.
public struct CalendarFeed: Equatable, Sendable {
    public var id: Int64
    /// The owner's account key.
    public var account: String
    /// A room's key for a room's feed; nil for the person's own.
    public var room: String?
    public var createdAt: Date

    public init(id: Int64 = 0, account: String, room: String?, createdAt: Date) {
        self.id = id
        self.account = Account.key(account)
        self.room = room
        self.createdAt = createdAt
    }

    /// Enough for a person's devices and rooms; a bound on what one account can make the server store.
    public static let maxPerAccount = 10
    /// How long a feed link's signature holds: a calendar app keeps a subscription for years, and
    /// `!ical revoke` ends one at any time.
    public static let linkLifetime: TimeInterval = 10 * 365 * 86_400
}
