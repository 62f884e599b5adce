import Foundation

/// A stretch of someone's time in one mode, or on one job: running while it has no end.
public struct TimeEntry: Equatable, Sendable {
    public var id: Int64
    /// The account's name.
    public var account: String
    /// Folded (`study`); for time on a job, `job`.
    public var mode: String
    public var job: Int64?
    /// The job's room key (nil for a personal job or a mode).
    public var room: String?
    public var start: Date
    public var end: Date?
    public var note: String

    public init(id: Int64 = 0, account: String, mode: String, job: Int64? = nil, room: String? = nil, start: Date,
                end: Date? = nil, note: String = "") {
        self.id = id
        self.account = account
        self.mode = mode
        self.job = job
        self.room = room
        self.start = start
        self.end = end
        self.note = note
    }

    public var isRunning: Bool { end == nil }

    /// How long it lasted, or has lasted by `now`.
    public func duration(now: Date) -> TimeInterval { (end ?? now).timeIntervalSince(start) }
}

/// What a report sums by.
public enum TimeGrouping: String, Sendable, CaseIterable {
    case mode, job, room
}

/// One row of a report: a mode, a job or a room, and its seconds.
public struct TimeTotal: Equatable, Sendable {
    /// The mode's name, the job's number, or the room's key (`personal` when none).
    public var key: String
    public var seconds: Int

    public init(key: String, seconds: Int) {
        self.key = key
        self.seconds = seconds
    }
}

/// What the time rules need from storage.
public protocol TimeStore: Sendable {
    /// The account's own modes, besides the presets.
    func modes(of account: String) throws -> [String]
    func addMode(_ mode: String, of account: String) throws
    /// False when the account had no such mode.
    func removeMode(_ mode: String, of account: String) throws -> Bool

    func insertEntry(_ entry: TimeEntry) throws -> TimeEntry
    func updateEntry(_ entry: TimeEntry) throws
    func deleteEntry(_ id: Int64) throws
    func entry(_ id: Int64) throws -> TimeEntry?
    /// The account's running entry, if any (there is at most one).
    func runningEntry(of account: String) throws -> TimeEntry?
    /// Entries that overlap [start, end) (a running one lasts until `now`), other than `excluding`.
    func overlapping(_ account: String, from start: Date, to end: Date, now: Date, excluding: Int64?) throws -> [TimeEntry]
    /// The account's entries that overlap [from, to), oldest first.
    func entries(of account: String, from: Date, to: Date) throws -> [TimeEntry]
    /// Seconds logged on a job, by everyone, in finished entries.
    func seconds(onJob id: Int64) throws -> Int
    /// Seconds per group within [from, to), each entry cut to the range (a running one lasts
    /// until `now`), computed in the store: largest first.
    func totals(of account: String, from: Date, to: Date, now: Date, by grouping: TimeGrouping) throws -> [TimeTotal]
}

public enum TimeRules {
    /// The modes everyone has.
    public static let presets = ["work", "study", "break", "exercise"]

    /// A mode's name as stored, or nil: letters, digits and hyphens, up to 24 characters, with a letter.
    public static func mode(_ text: String) -> String? {
        let m = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard (1...24).contains(m.count), m.contains(where: \.isLetter),
              m.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }), m != "job" else { return nil }
        return m
    }

    /// `2h 05m`, `45m`, `0m`.
    public static func duration(_ seconds: Int) -> String {
        let minutes = max(0, seconds) / 60
        return minutes >= 60 ? String(format: "%dh %02dm", minutes / 60, minutes % 60) : "\(minutes)m"
    }
}
