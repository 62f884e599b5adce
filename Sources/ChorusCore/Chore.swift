import Foundation

/// How often a chore comes round.
public enum Frequency: Equatable, Sendable, Codable, CustomStringConvertible {
    case days(Int)
    case weeks(Int)
    /// Calendar weekdays, 1 = Sunday … 7 = Saturday.
    case weekdays([Int])
    /// Every month, as typed (`month`): made `monthlyOn` its first due day when a chore takes it.
    /// A chore stored before that keeps it, and stays at month's end once it gets there.
    case monthly
    /// Every month on this day of it, or on a shorter month's last day.
    case monthlyOn(Int)

    static let dayNames = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Reads `day`, `week`, `3 days`, `2 weeks`, `fortnight`, `other day`, `mon,thu`, `month` (and
    /// `daily`, `weekly`, `fortnightly`, `monthly`).
    public static func parse(_ text: String) -> Frequency? {
        let words = text.lowercased().split(separator: " ").map(String.init)
        switch words.count {
        case 1:
            switch words[0] {
            case "day", "daily", "1day": return .days(1)
            case "week", "weekly": return .weeks(1)
            case "fortnight", "fortnightly": return .weeks(2)
            case "month", "monthly": return .monthly
            case "weekday", "weekdays": return .weekdays([2, 3, 4, 5, 6])
            case "weekend", "weekends": return .weekdays([1, 7])
            default:
                let days = words[0].split(separator: ",").map { String($0.prefix(3)) }
                let numbers = days.compactMap { d in dayNames.firstIndex(of: d).map { $0 + 1 } }
                guard !numbers.isEmpty, numbers.count == days.count else { return nil }
                return .weekdays(Array(Set(numbers)).sorted())
            }
        case 2:
            if words[0] == "other" { return words[1] == "day" ? .days(2) : words[1] == "week" ? .weeks(2) : nil }
            guard let n = Int(words[0]), (1...365).contains(n) else { return nil }
            if ["day", "days"].contains(words[1]) { return .days(n) }
            if ["week", "weeks"].contains(words[1]) { return .weeks(n) }
            if ["month", "months"].contains(words[1]) && n == 1 { return .monthly }
            return nil
        default:
            return nil
        }
    }

    /// The words that say how often without `every`: `!chore add bins weekly`.
    public static let adverbs: Set<String> = ["daily", "weekly", "fortnightly", "monthly"]

    public var description: String {
        switch self {
        case .days(1): return "every day"
        case .days(let n): return "every \(n) days"
        case .weeks(1): return "every week"
        case .weeks(let n): return "every \(n) weeks"
        case .weekdays(let days): return "every " + days.map { Frequency.dayNames[$0 - 1] }.joined(separator: ",")
        case .monthly, .monthlyOn: return "every month"
        }
    }

    /// As a chore first due at `due` keeps it: `monthly` becomes `monthlyOn` that day, so that a
    /// chore due on the 30th is due on the 30th again after February's 28th.
    public func anchored(at due: Date, calendar: Calendar) -> Frequency {
        guard case .monthly = self else { return self }
        return .monthlyOn(calendar.component(.day, from: due))
    }

    /// The first due time after `date`: today at `hour:minute` if that is still ahead (and today
    /// is one of the chore's weekdays), else the next day that qualifies.
    public func first(after date: Date, hour: Int, minute: Int, calendar: Calendar) -> Date {
        let today = calendar.startOfDay(for: date)
        if case .monthlyOn = self {
            // Its day this month if still ahead, else next month's: one step on from a month before.
            let aMonthBefore = calendar.date(byAdding: .month, value: -1, to: today) ?? today
            let thisMonths = step(from: aMonthBefore, hour: hour, minute: minute, calendar: calendar)
            return thisMonths > date ? thisMonths : step(from: thisMonths, hour: hour, minute: minute, calendar: calendar)
        }
        for offset in 0...8 {
            guard let day = calendar.date(byAdding: .day, value: offset, to: today),
                  let slot = calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day) else { continue }
            if slot > date && allows(day, calendar) { return slot }
        }
        return date.addingTimeInterval(86_400)
    }

    /// The due time after `due`, one period on: the cadence holds whoever is late. Calendar
    /// arithmetic keeps the wall-clock time across daylight-saving changes.
    public func step(from due: Date, hour: Int, minute: Int, calendar: Calendar) -> Date {
        let day = calendar.startOfDay(for: due)
        let next: Date?
        switch self {
        case .days(let n): next = calendar.date(byAdding: .day, value: n, to: day)
        case .weeks(let n): next = calendar.date(byAdding: .day, value: 7 * n, to: day)
        case .monthly:
            // A chore due on its month's last day stays at month's end (31 Jan, 28 Feb, 31 Mar);
            // adding a month alone took it to the 28th for good after February.
            let isLastDay = calendar.component(.month, from: calendar.date(byAdding: .day, value: 1, to: day) ?? day)
                != calendar.component(.month, from: day)
            if isLastDay, let firstOfNext = calendar.date(byAdding: .day, value: 1, to: day),
               let afterNext = calendar.date(byAdding: .month, value: 1, to: firstOfNext) {
                next = calendar.date(byAdding: .day, value: -1, to: afterNext)
            } else {
                next = calendar.date(byAdding: .month, value: 1, to: day)
            }
        case .monthlyOn(let dayOfMonth):
            let thisMonth = calendar.date(from: calendar.dateComponents([.year, .month], from: day))
            let nextMonth = thisMonth.flatMap { calendar.date(byAdding: .month, value: 1, to: $0) }
            next = nextMonth.flatMap { month in
                let days = calendar.range(of: .day, in: .month, for: month)?.count ?? 28
                return calendar.date(byAdding: .day, value: min(max(dayOfMonth, 1), days) - 1, to: month)
            }
        case .weekdays:
            return first(after: calendar.date(bySettingHour: 23, minute: 59, second: 59, of: day) ?? due,
                         hour: hour, minute: minute, calendar: calendar)
        }
        return next.flatMap { calendar.date(bySettingHour: hour, minute: minute, second: 0, of: $0) } ?? due.addingTimeInterval(86_400)
    }

    private func allows(_ day: Date, _ calendar: Calendar) -> Bool {
        guard case .weekdays(let days) = self else { return true }
        return days.contains(calendar.component(.weekday, from: day))
    }
}

/// A recurring chore in a room, passed round an explicit rotation of accounts.
public struct Chore: Equatable, Sendable {
    public var id: Int64
    public var room: String
    public var name: String
    public var frequency: Frequency
    public var hour: Int
    public var minute: Int
    /// Account names, in turn order.
    public var rotation: [String]
    /// Index into `rotation` of whose turn it is.
    public var current: Int
    public var turnSince: Date
    public var due: Date
    public var createdBy: String
    public var createdAt: Date
    /// Reminder state of the current turn: when the person was last reminded, and whether the room
    /// has been told it is overdue. Both reset when the turn moves on.
    public var lastReminder: Date?
    public var roomToldOverdue = false
    /// A swap asked for and not yet answered: `from` offered their place to `to`.
    public var swapFrom: String?
    public var swapTo: String?
    /// Whose turn this was before it passed over them while they were away: it goes back to them
    /// if they come back (`!back`) before it falls due.
    public var passedOver: String?

    public init(id: Int64 = 0, room: String, name: String, frequency: Frequency, hour: Int, minute: Int, rotation: [String],
                current: Int = 0, turnSince: Date, due: Date, createdBy: String, createdAt: Date) {
        self.id = id
        self.room = room
        self.name = name
        self.frequency = frequency
        self.hour = hour
        self.minute = minute
        self.rotation = rotation
        self.current = current
        self.turnSince = turnSince
        self.due = due
        self.createdBy = createdBy
        self.createdAt = createdAt
    }

    public var key: String { Account.key(name) }
    public var whoseTurn: String { rotation.isEmpty ? "nobody" : rotation[current % rotation.count] }
}

/// A shared list in a room: groceries, what is in the fridge.
public struct SharedList: Equatable, Sendable {
    public struct Item: Equatable, Sendable, Codable {
        public var text: String
        public var done: Bool
        public var by: String
        public init(text: String, done: Bool = false, by: String) {
            self.text = text
            self.done = done
            self.by = by
        }
    }

    public var room: String
    public var name: String
    public var items: [Item]

    public init(room: String, name: String, items: [Item] = []) {
        self.room = room
        self.name = name
        self.items = items
    }
}
