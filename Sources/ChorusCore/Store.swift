import Foundation

public enum StoreError: Error, Equatable, Sendable {
    case duplicate(String)
    case notFound(String)
}

/// What the domain needs from storage. `ChorusStore` implements it on SQLite; every method is one
/// transaction. Methods are synchronous and may block, so servers call them off their event loops.
public protocol Store: Sendable {
    // Accounts
    func insertAccount(_ account: Account) throws -> Account
    func account(named name: String) throws -> Account?
    func updateAccount(_ account: Account) throws
    func deleteAccount(named name: String) throws -> Bool
    func allAccounts() throws -> [Account]
    /// Every account's key: cheap enough to hold in memory for nick reservation checks.
    func accountKeys() throws -> [String]

    // Tokens bots log in with (`AccountToken`), found by their digest.
    func insertToken(_ token: AccountToken) throws -> AccountToken
    func tokens(of account: String) throws -> [AccountToken]
    func token(withDigest digest: String) throws -> AccountToken?
    /// False when `account` has no token `id`.
    func deleteToken(_ id: Int64, of account: String) throws -> Bool
    func noteTokenUse(_ id: Int64, at time: Date) throws

    // Rooms and memberships
    func allRooms() throws -> [Room]
    func saveRoom(_ room: Room) throws
    func deleteRoom(named name: String) throws
    func allMemberships() throws -> [Membership]
    func memberships(ofAccount account: String) throws -> [Membership]
    func saveMembership(_ membership: Membership) throws
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

/// Group commit: the server runs a burst of commands in one transaction, replying after its commit.
public protocol TransactionBatching: Sendable {
    func inOneTransaction(_ body: () throws -> Void) throws
    /// One step of such a batch, all or nothing: returning false takes back what it wrote.
    func attempt(_ body: () -> Bool) throws
}
