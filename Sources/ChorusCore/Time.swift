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
    /// When the person's last connection closed while this timer ran: asked about at their next login.
    public var leftAt: Date?

    public init(id: Int64 = 0, account: String, mode: String, job: Int64? = nil, room: String? = nil, start: Date,
                end: Date? = nil, note: String = "", leftAt: Date? = nil) {
        self.id = id
        self.account = account
        self.mode = mode
        self.job = job
        self.room = room
        self.start = start
        self.end = end
        self.note = note
        self.leftAt = leftAt
    }

    public var isRunning: Bool { end == nil }

    /// How long it lasted, or has lasted by `now`.
    public func duration(now: Date) -> TimeInterval { (end ?? now).timeIntervalSince(start) }
}

/// What a report sums by.
public enum TimeGrouping: String, Sendable, CaseIterable {
    case mode, job, room
    /// A room's report: per member.
    case person
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

/// A block of someone's weekly plan: a mode on some days between two times (`study mon-fri 9:00-12:00`).
public struct PlanBlock: Equatable, Sendable {
    public var id: Int64
    public var account: String
    public var mode: String
    /// Calendar weekdays (1 Sunday … 7 Saturday).
    public var days: Set<Int>
    /// Minutes after midnight, in the person's zone; the end is later the same day.
    public var start: Int
    public var end: Int

    public init(id: Int64 = 0, account: String, mode: String, days: Set<Int>, start: Int, end: Int) {
        self.id = id
        self.account = account
        self.mode = mode
        self.days = days
        self.start = start
        self.end = end
    }

    /// Minutes a week.
    public var weeklyMinutes: Int { days.count * (end - start) }
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
    /// The account's weekly plan, in the order it was made.
    func planBlocks(of account: String) throws -> [PlanBlock]
    func insertPlanBlock(_ block: PlanBlock) throws -> PlanBlock
    /// False when the account has no such block.
    func deletePlanBlock(_ id: Int64, of account: String) throws -> Bool

    /// Seconds logged on a room's jobs within [from, to), per account (`byJob` false) or per job,
    /// of everyone or of `account` only; largest first.
    func roomTotals(_ room: String, from: Date, to: Date, now: Date, byJob: Bool, account: String?) throws -> [TimeTotal]

    /// How long the account's timer may run before it earns a nudge, in minutes (nil: the default).
    func timerLimit(of account: String) throws -> Int?
    func setTimerLimit(_ minutes: Int?, of account: String) throws
    /// Running entries past their owner's limit (`defaultMinutes` unless set) and not yet nudged.
    func runningPastLimit(at now: Date, defaultMinutes: Int) throws -> [TimeEntry]
    /// When the first running entry not yet nudged reaches its owner's limit.
    func nextTimerLimit(defaultMinutes: Int) throws -> Date?
    func markNudged(_ id: Int64) throws

    /// `!plan remind on|off`, and until when the account's planned blocks were looked at.
    func setPlanReminders(_ on: Bool, of account: String, from time: Date) throws
    /// Accounts with plan reminders on, and until when their blocks were looked at.
    func planReminderAccounts() throws -> [(account: String, until: Date)]
    func setRemindedUntil(_ time: Date, of account: String) throws

    /// Seconds logged on a job, by everyone, in finished entries.
    func seconds(onJob id: Int64) throws -> Int
    /// Seconds per group within [from, to), each entry cut to the range (a running one lasts
    /// until `now`), computed in the store: largest first.
    func totals(of account: String, from: Date, to: Date, now: Date, by grouping: TimeGrouping) throws -> [TimeTotal]
}

public enum TimeRules {
    /// `mon`, `mon-fri`, `sat,sun`, `weekdays`, `weekends`, `daily` → calendar weekdays (1 Sunday … 7 Saturday).
    public static func days(_ text: String) -> Set<Int>? {
        let names = ["sun": 1, "mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7]
        let order = [2, 3, 4, 5, 6, 7, 1]  // a week runs Monday to Sunday
        switch text.lowercased() {
        case "daily", "everyday", "every-day": return Set(1...7)
        case "weekdays": return [2, 3, 4, 5, 6]
        case "weekends", "weekend": return [1, 7]
        default: break
        }
        var days = Set<Int>()
        for part in text.lowercased().split(separator: ",") {
            let ends = part.split(separator: "-").map { String($0.prefix(3)) }
            guard (1...2).contains(ends.count), let a = names[ends[0]], let b = names[ends.last!],
                  let i = order.firstIndex(of: a), let j = order.firstIndex(of: b), i <= j else { return nil }
            days.formUnion(order[i...j])
        }
        return days.isEmpty ? nil : days
    }

    /// `mon-fri`, `sat,sun`, `daily` for a set of weekdays.
    public static func daysText(_ days: Set<Int>) -> String {
        if days.count == 7 { return "daily" }
        let names = [2: "mon", 3: "tue", 4: "wed", 5: "thu", 6: "fri", 7: "sat", 1: "sun"]
        let order = [2, 3, 4, 5, 6, 7, 1]
        var runs: [String] = []
        var i = 0
        while i < order.count {
            guard days.contains(order[i]) else { i += 1; continue }
            var j = i
            while j + 1 < order.count && days.contains(order[j + 1]) { j += 1 }
            runs.append(j - i >= 2 ? "\(names[order[i]]!)-\(names[order[j]]!)" : (i...j).map { names[order[$0]]! }.joined(separator: ","))
            i = j + 1
        }
        return runs.joined(separator: ",")
    }

    /// How long a timer runs before its owner is nudged, unless they set their own (`!track limit`).
    public static let defaultLimitMinutes = 8 * 60

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
