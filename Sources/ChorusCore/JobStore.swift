import Foundation

/// Which jobs a list asks for. Every field narrows; nil fields do not.
public struct JobFilter: Equatable, Sendable {
    /// Room keys to look in; empty with `personalOf` for personal jobs.
    public var rooms: [String] = []
    /// Include the personal jobs of this account.
    public var personalOf: String?
    public var statuses: Set<Job.Status>?
    public var assignee: String?
    /// Only jobs assigned to or created by this account (a member in a room with `own` visibility).
    public var onlyInvolving: String?
    public var dueFrom: Date?, dueTo: Date?
    public var createdFrom: Date?, createdTo: Date?
    public var text: String?
    public var limit = 10
    public var offset = 0

    public init() {}
}

/// What the job rules need from storage. Each write method is one transaction that stores the
/// change together with its events; the events come back with their ids.
public protocol JobStore: Sendable {
    func role(of account: String, in room: String) throws -> Role?
    func roomSettings(_ room: String) throws -> RoomSettings
    func saveRoomSettings(_ settings: RoomSettings, room: String, event: Event) throws -> Event

    func job(_ id: Int64) throws -> Job?
    func insertJob(_ job: Job, event: Event) throws -> (Job, Event)
    func updateJob(_ job: Job, events: [Event]) throws -> [Event]
    func jobs(_ filter: JobFilter) throws -> [Job]
    func countJobs(_ filter: JobFilter) throws -> Int

    func insertComment(_ comment: Comment, event: Event) throws -> (Comment, Event)
    /// Newest first.
    func comments(of job: Int64, limit: Int) throws -> [Comment]
    /// Newest first.
    func events(of job: Int64, limit: Int) throws -> [Event]

    func insertAsk(_ ask: Ask, event: Event) throws -> (Ask, Event)
    func ask(_ id: Int64) throws -> Ask?
    func updateAsk(_ ask: Ask, event: Event) throws -> Event
    func openAsks(in room: String) throws -> [Ask]

    /// The account's time zone identifier (`Europe/Paris`), nil for the server's.
    func timeZone(of account: String) throws -> String?
    /// `timeZone(of:)`; on a transaction's handle also the account's role in `room`, read in the
    /// same statement and kept for the checks that follow: nearly every command in a room reads
    /// both, and on PostgreSQL each read is a round trip.
    func timeZone(of account: String, readingRoleIn room: String?) throws -> String?
    func setTimeZone(_ identifier: String?, of account: String) throws

    /// Events that go with no other change of this protocol's (a member added to a room).
    func insertEvents(_ events: [Event]) throws -> [Event]

    /// Events for an account that was offline when they happened, oldest first, and forget them.
    func takeQueuedEvents(for account: String) throws -> [Event]
    /// Keeps the event for each of `accounts` (keys) until they take it.
    func queueEvent(_ eventID: Int64, for accounts: [String]) throws

    /// Events after `position` (an event id), oldest first, at most `limit`: those of `rooms`
    /// (keys), those `account` (a key) is concerned by, and those without a room it made. Who
    /// may read each is the caller's to decide (`Audience`); this only narrows the search.
    func events(after position: Int64, rooms: [String], account: String, limit: Int) throws -> [Event]
    /// The ids of the events after `position`, at most `limit`: where one is missing.
    func eventIDs(after position: Int64, limit: Int) throws -> [Int64]
}

/// What the chore and list rules need from storage; each write stores its events in the same transaction.
public protocol ChoreStore: Sendable {
    /// The room's remembered members (account names), in the order they joined.
    func members(of room: String) throws -> [String]
    /// Until when a member is away from a room's rotations (nil: present).
    func awayUntil(_ account: String, in room: String) throws -> Date?
    func setAway(_ account: String, in room: String, until: Date?, events: [Event]) throws -> [Event]
    func chore(named name: String, in room: String) throws -> Chore?
    func chores(in room: String) throws -> [Chore]
    /// Every chore of every room (the reminder scheduler's view).
    func allChores() throws -> [Chore]
    func insertChore(_ chore: Chore, events: [Event]) throws -> (Chore, [Event])
    func updateChore(_ chore: Chore, events: [Event]) throws -> [Event]
    func deleteChore(_ chore: Chore, event: Event) throws -> Event
    func list(named name: String, in room: String) throws -> SharedList?
    func lists(in room: String) throws -> [SharedList]
    func saveList(_ list: SharedList, events: [Event]) throws -> [Event]
}

/// Everything the server stores: accounts, rooms and history, jobs, chores and lists.
extension JobStore {
    /// The zone `account` chose with `!tz`, or `otherwise` (the server's) when none or unknown.
    public func timeZone(of account: String, otherwise: TimeZone) throws -> TimeZone {
        try timeZone(of: account).flatMap(TimeZone.init(identifier:)) ?? otherwise
    }
}

public typealias ChorusStorage = Store & JobStore & ChoreStore & MarketStore & TimeStore & WebhookStore & Transactional
