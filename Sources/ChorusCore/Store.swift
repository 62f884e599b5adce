import Foundation

public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    case duplicate(String)
    case notFound(String)
    /// A savepoint asked of a handle that is not in a transaction.
    case notInTransaction
    /// Another process changed the row between this transaction's read of it and its write (a
    /// store shared by several processes): the savepoint runs its command again, on what is there now.
    case conflict(String)
    /// The database stopped the transaction to break a deadlock with another process's: nothing of
    /// it was kept, and it may be run again whole.
    case deadlock
    /// A savepoint taken `.byRunningAgain` was refused after it wrote: the transaction was left
    /// with writes that only a real savepoint could take back alone. Nothing of it is kept; run it
    /// again whole with `.bySavepoint`.
    case needsSavepoints

    public var description: String {
        switch self {
        case .duplicate(let what): "\(what) already exists"
        case .notFound(let what): "\(what) was not found"
        case .notInTransaction: "a savepoint needs a transaction"
        case .conflict(let what): "\(what) was changed elsewhere at the same moment; try again"
        case .deadlock: "the database stopped this change to let another go first; try again"
        case .needsSavepoints: "a refused change wrote first; the batch runs again with savepoints"
        }
    }
}

/// What the domain needs from storage. `ChorusStore` implements it on SQLite; every method is one
/// transaction, or part of the caller's on a transaction's handle (`Transactional`). Methods are synchronous and may block, so servers call them off their event loops.
public protocol Store: Sendable {
    /// Throws when the database cannot be read (a health check).
    func probe() throws
    /// Lets go of the database (files, connections) once the server is done with it; a
    /// transaction's handle has nothing of its own to let go.
    func close()

    // Due work: the store keeps, for each `DueBoard`, when its work next comes due (nil: never),
    // so that any process sharing the database may take it when it does.
    /// On a transaction's handle: the boards due by `time` (or never looked at) that no other
    /// process is doing now, each held until this transaction ends; a board another process holds
    /// is skipped, not waited for. What is read after it includes the work of whoever held it before.
    func takeDueBoards(dueBy time: Date) throws -> [DueBoard]
    /// On a transaction's handle: waits until no other process holds these boards, then holds them
    /// until this transaction ends (to write when they come due, from what is stored now).
    func holdDueBoards(_ boards: [DueBoard]) throws
    /// When each board comes due, as written down (a board never looked at is due at once).
    func dueTimes() throws -> [DueBoard: Date?]
    func setNextDue(of board: DueBoard, to time: Date?) throws
    /// The earliest time a board comes due, nil if none will.
    func nextDue() throws -> Date?

    // Accounts
    func insertAccount(_ account: Account) throws -> Account
    func account(named name: String) throws -> Account?
    func updateAccount(_ account: Account) throws
    /// Retires the account (`AccountData`): false if there is no live account of that name.
    func deleteAccount(named name: String) throws -> Bool
    /// Deletes what `AccountData.erased` names of a retired account; false if there is no retired
    /// account of that name.
    func eraseAccount(named name: String) throws -> Bool
    /// When the account of that name was deleted, if it was: the name is never given again.
    func accountDeleted(named name: String) throws -> Date?
    /// The keys of accounts deleted after `time`, for a running server to end their sessions.
    func accountsDeleted(after time: Date) throws -> [String]
    /// Every row that names the account (`AccountData.tables`), nil if there is no such account.
    func exportAccount(named name: String) throws -> AccountData?
    /// Live accounts, by key.
    func allAccounts() throws -> [Account]
    /// Every live account's key: cheap enough to hold in memory for nick reservation checks.
    func accountKeys() throws -> [String]

    // Tokens bots log in with (`AccountToken`), found by their digest.
    func insertToken(_ token: AccountToken) throws -> AccountToken
    func tokens(of account: String) throws -> [AccountToken]
    func token(withDigest digest: String) throws -> AccountToken?
    /// False when `account` has no token `id`.
    func deleteToken(_ id: Int64, of account: String) throws -> Bool
    func noteTokenUse(_ id: Int64, at time: Date) throws

    /// The secret stored under `name` (the key links are signed with), storing `proposed` first
    /// when there is none: every process on the database signs and checks with the same one.
    func sharedKey(_ name: String, proposing proposed: Data) throws -> Data

    // Calendar feeds (`CalendarFeed`), found by their id.
    func insertCalendarFeed(_ feed: CalendarFeed) throws -> CalendarFeed
    func calendarFeeds(of account: String) throws -> [CalendarFeed]
    func calendarFeed(_ id: Int64) throws -> CalendarFeed?
    /// False when `account` has no feed `id`.
    func deleteCalendarFeed(_ id: Int64, of account: String) throws -> Bool

    // Uploaded pictures (`Photo`), found by their id.
    func insertPhoto(_ photo: Photo) throws -> Photo
    func photo(_ id: Int64) throws -> Photo?
    /// The account's latest upload since `time` (without its bytes), for `!photo <job>`.
    func latestPhoto(of account: String, since time: Date) throws -> Photo?
    func photosUploaded(by account: String, since time: Date) throws -> Int

    // Devices' Web Push subscriptions (`PushSubscription`), one an endpoint.
    /// Keeps the subscription, or updates the one with its endpoint (a device subscribing again,
    /// or under another account): the saved row.
    func savePushSubscription(_ subscription: PushSubscription) throws -> PushSubscription
    func pushSubscriptions(of account: String) throws -> [PushSubscription]
    /// False when `account` has no subscription at `endpoint`.
    func deletePushSubscription(endpoint: String, of account: String) throws -> Bool
    /// The keys of the accounts with at least one subscription.
    func accountsWithPushSubscriptions() throws -> [String]
    /// A subscription the push service says is gone (404, 410).
    func deletePushSubscription(_ id: Int64) throws

    // What each account has seen (keys: `Account.key`)
    /// When the account's last connection ended; nil if none has.
    func lastSeen(of account: String) throws -> Date?
    func setLastSeen(of account: String, at time: Date) throws
    /// The time of the last line the account has read in `target` (a room's key, a folded nick).
    func readMarker(of account: String, in target: String) throws -> Date?
    /// Moves the marker forward (never back); returns the marker as stored after.
    func markRead(of account: String, in target: String, at time: Date) throws -> Date
    func allReadMarkers() throws -> [(account: String, target: String, at: Date)]

    // Rooms and memberships
    func allRooms() throws -> [Room]
    /// The display name of the room with key `key` (`#Kitchen` for `#kitchen`), nil if there is none.
    func roomName(_ key: String) throws -> String?
    func saveRoom(_ room: Room) throws
    func deleteRoom(named name: String) throws
    func allMemberships() throws -> [Membership]
    func memberships(ofAccount account: String) throws -> [Membership]
    func saveMembership(_ membership: Membership) throws
    /// On a transaction's handle: waits until no other process is deciding who manages the room,
    /// then holds it until this transaction ends, so that of two people coming into a room nobody
    /// manages on two processes at once, the second sees the first's role. Roles read before it
    /// are read again after it. Outside a transaction it holds nothing.
    func holdRoom(_ key: String) throws
    func deleteMembership(room: String, account: String) throws

    // History
    func appendHistory(_ entries: [HistoryEntry]) throws
    /// Entries of one conversation in time order (oldest first), as `reader` may see them.
    func history(of conversation: String, _ query: HistoryQuery, reader: HistoryReader) throws -> [HistoryEntry]
    /// The conversations among `conversations` with a line between two times, and the time of their latest line.
    func historyTargets(among conversations: [String], from: Date, to: Date, limit: Int) throws -> [(conversation: String, latest: Date, target: String)]
    /// Keeps a stored private line (by msgid) for an account that was not connected when it came.
    func holdPrivateLine(_ msgid: String, for account: String) throws
    /// The latest `limit` lines held for `account`, oldest first, and how many were held in all;
    /// none is held any longer.
    func takeHeldPrivateLines(for account: String, limit: Int) throws -> (lines: [HistoryEntry], held: Int)
}

extension Store {
    public func history(of conversation: String, _ query: HistoryQuery) throws -> [HistoryEntry] {
        try history(of: conversation, query, reader: .everything)
    }
}

/// Transactions with an explicit handle. `transaction` hands its body the store bound to the
/// transaction: everything read or written through that handle is part of it, and nothing finds the
/// transaction any other way (no thread identity, no global). The Workspace opens one per batch of
/// commands (group commit) and runs each command in a savepoint of its own.
public protocol Transactional: Sendable {
    /// Runs `body` in one write transaction and commits when it returns; a throw rolls it back.
    /// Reads of roles, settings, room names, time zones and jobs go through `cache` (nil: none).
    /// On a handle that is already in a transaction, `body` simply joins it.
    func transaction<T>(cache: StoreCache?, _ body: (any ChorusStorage) throws -> T) throws -> T
    /// On a transaction's handle: runs `body` as a savepoint. When it returns false (a refused
    /// command) or throws, what it wrote is taken back and the rest of the transaction goes on
    /// (`.byRunningAgain`: or the whole transaction must be run again, below).
    /// When another process changed a row `body` read before `body` wrote it (`StoreError.conflict`),
    /// what it wrote is taken back and `body` runs again: it must be safe to run more than once.
    func savepoint(_ takingBack: TakingBack, _ body: () throws -> Bool) throws
}

/// How a savepoint takes back what a refused command wrote.
public enum TakingBack: Sendable {
    /// A savepoint in the database around each one: a refused command is taken back alone.
    case bySavepoint
    /// No savepoint in the database. A refused command that wrote nothing is simply dropped (most
    /// are refused before they write); one that did throws `StoreError.needsSavepoints`, and the
    /// caller runs the whole transaction again `.bySavepoint`. On PostgreSQL a savepoint is a
    /// round trip, and most of a command's time.
    case byRunningAgain
}
