import Synchronization

/// What nearly every command reads and seldom changes: roles, room settings and names, time zones,
/// and jobs as last read. Owned by the Workspace, not the store: the Workspace hands it to each
/// transaction it opens, the store's writes through that transaction forget what they touch, and a
/// rolled-back transaction or savepoint forgets everything (it may have read its own writes).
/// Three of a `!comment`'s five reads in a profile of the writer were of these.
public final class StoreCache: Sendable {
    public struct Entries: Sendable {
        public var roles: [String: Role?] = [:]
        public var settings: [String: RoomSettings] = [:]
        public var roomNames: [String: String?] = [:]
        public var timeZones: [String: String?] = [:]
        /// Reading a job builds a GRDB row and its column index: a quarter of a `!comment`'s
        /// instructions before this cache. Bounded: emptied when it holds `maxJobs`.
        public var jobs: [Int64: Job] = [:]
        public static let maxJobs = 4096

        public static func roleKey(_ account: String, _ room: String) -> String {
            Account.key(room) + " " + Account.key(account)
        }
    }

    private let entries = Mutex(Entries())

    public init() {}

    /// Reads or changes the entries (one lock, held only for `body`).
    public func with<T>(_ body: (inout Entries) -> T) -> T {
        entries.withLock { body(&$0) }
    }

    /// A job as this transaction last read it, or `read` and keep it (the table starts over when
    /// it holds `maxJobs`). Only a transaction's handle may use this: a reader's snapshot may be
    /// older than a write that has already forgotten the job.
    public func job(_ id: Int64, read: () throws -> Job?) rethrows -> Job? {
        if let known = with({ $0.jobs[id] }) { return known }
        guard let job = try read() else { return nil }
        with { memo in
            if memo.jobs.count >= Entries.maxJobs { memo.jobs.removeAll(keepingCapacity: true) }
            memo.jobs[id] = job
        }
        return job
    }

    // One reader for each kind of entry, each its own code: one generic over a key path
    // instantiated the key path on every read, an eighth of a `!comment`'s time on the writer.

    public func role(_ key: String, read: () throws -> Role?) rethrows -> Role? {
        if let known = with({ $0.roles[key] }) { return known }
        let role = try read()
        with { $0.roles[key] = .some(role) }
        return role
    }

    public func settings(_ key: String, read: () throws -> RoomSettings) rethrows -> RoomSettings {
        if let known = with({ $0.settings[key] }) { return known }
        let settings = try read()
        with { $0.settings[key] = settings }
        return settings
    }

    public func roomName(_ key: String, read: () throws -> String?) rethrows -> String? {
        if let known = with({ $0.roomNames[key] }) { return known }
        let name = try read()
        with { $0.roomNames[key] = .some(name) }
        return name
    }

    public func timeZone(_ key: String, read: () throws -> String?) rethrows -> String? {
        if let known = with({ $0.timeZones[key] }) { return known }
        let zone = try read()
        with { $0.timeZones[key] = .some(zone) }
        return zone
    }

    public func forgetAll() {
        entries.withLock { $0 = Entries() }
    }

    /// Forgets the jobs, keeping the rest: another process may have changed any job since.
    public func forgetJobs() {
        entries.withLock { $0.jobs.removeAll(keepingCapacity: true) }
    }
}
