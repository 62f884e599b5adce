import Foundation

/// Reads the times people type: `tomorrow 17:00`, `fri`, `fri 12:00`, `in 3d`, `in 90m`, `2026-12-01`,
/// `dec 5`, `today`, `18:30`, `noon`, `next week`, `last fri`, `none`. A day without a time means
/// 17:00, the end of a working day. Days in the past are read too (`yesterday`, `last fri`): the
/// caller says whether it takes them.
public struct When: Sendable {
    public var timeZone: TimeZone
    public var defaultHour = 17

    public init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    public enum Result: Equatable {
        case date(Date)
        case none  // "none": clear the due date
    }

    private var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        c.firstWeekday = 2
        return c
    }

    static let weekdays: [String: Int] = [
        "sun": 1, "sunday": 1, "mon": 2, "monday": 2, "tue": 3, "tues": 3, "tuesday": 3, "wed": 4, "wednesday": 4,
        "thu": 5, "thur": 5, "thurs": 5, "thursday": 5, "fri": 6, "friday": 6, "sat": 7, "saturday": 7,
    ]

    /// Parses `text` relative to `now`; nil when it is not a time.
    public func parse(_ text: String, now: Date) -> Result? {
        let words = text.lowercased().split(separator: " ").map(String.init)
        guard !words.isEmpty else { return nil }
        if words == ["none"] || words == ["never"] { return Result.none }
        let cal = calendar

        // in <n><unit> | in <n> <unit>
        if words[0] == "in" {
            let rest = words.dropFirst().joined()
            let digits = rest.prefix(while: \.isNumber)
            let unit = rest.dropFirst(digits.count)
            guard let n = Int(digits), n > 0, n <= 10_000 else { return nil }
            let component: Calendar.Component
            switch unit {
            case "m", "min", "mins", "minute", "minutes": component = .minute
            case "h", "hr", "hrs", "hour", "hours": component = .hour
            case "d", "day", "days": component = .day
            case "w", "week", "weeks": component = .weekOfYear
            case "month", "months": component = .month
            default: return nil
            }
            return cal.date(byAdding: component, value: n, to: now).map(Result.date)
        }

        var day: Date?
        var time: (Int, Int)?
        var weekdayNamed = false
        var i = 0
        while i < words.count {
            let w = words[i]
            let following = i + 1 < words.count ? words[i + 1] : nil
            if let t = Self.time(w) {
                time = t
            } else if w == "today" || w == "tonight" {
                day = cal.startOfDay(for: now)
            } else if w == "tomorrow" || w == "tmrw" {
                day = cal.date(byAdding: .day, value: 1, to: cal.startOfDay(for: now))
            } else if w == "yesterday" {
                day = cal.date(byAdding: .day, value: -1, to: cal.startOfDay(for: now))
            } else if w == "next", following == "week" {
                let monday = cal.nextDate(after: now, matching: DateComponents(weekday: 2), matchingPolicy: .nextTime)
                day = monday.map { cal.startOfDay(for: $0) }
                i += 1
            } else if w == "last", let following, let wd = Self.weekdays[following] {
                // The latest such day before today: "last fri" on a Friday is a week ago.
                let back = (cal.component(.weekday, from: now) - wd + 6) % 7 + 1
                day = cal.date(byAdding: .day, value: -back, to: cal.startOfDay(for: now))
                i += 1
            } else if w == "this" || w == "on", let following, Self.weekdays[following] != nil {
                // filler: "this fri", "on fri"
            } else if let wd = Self.weekdays[w] {
                // The next such day; today when a time still ahead today is given (see below).
                day = cal.nextDate(after: cal.startOfDay(for: now).addingTimeInterval(86_399), matching: DateComponents(weekday: wd),
                                   matchingPolicy: .nextTime).map { cal.startOfDay(for: $0) }
                weekdayNamed = cal.component(.weekday, from: now) == wd
            } else if let d = Self.isoDay(w, cal) {
                day = d
            } else if let (d, used) = Self.monthDay(words[i...], now: now, cal) {
                day = d
                i += used - 1
            } else if w == "at" || w == "by" {
                // filler: "fri at 9:00", "by noon"
            } else {
                return nil
            }
            i += 1
        }
        if day == nil && time == nil { return nil }
        var base = day ?? cal.startOfDay(for: now)
        let (h, m) = time ?? (defaultHour, 0)
        base = cal.date(bySettingHour: h, minute: m, second: 0, of: base) ?? base
        // A bare time already past today means tomorrow.
        if day == nil, base <= now { base = cal.date(byAdding: .day, value: 1, to: base) ?? base }
        // Today's weekday with a time still ahead today means today: "fri 12:00" on a Friday
        // morning. Without a time it means a week on, as "fri" alone always has.
        if weekdayNamed, time != nil, let today = cal.date(byAdding: .day, value: -7, to: base), today > now { base = today }
        return .date(base)
    }

    static let months: [String: Int] = [
        "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
        "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
        "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
    ]

    /// `dec 5`, `5 dec`, `december 5th`, `5 dec 2027`: the day, and how many words it took. Without
    /// a year, the nearest such day: within the last four months it is this year's (and so in the
    /// past), further back it is next year's.
    static func monthDay(_ words: ArraySlice<String>, now: Date, _ cal: Calendar) -> (Date, Int)? {
        let start = words.startIndex
        guard words.count >= 2 else { return nil }
        let first = words[start], second = words[start + 1]
        let month: Int, dayText: String
        if let m = months[first] { month = m; dayText = second } else if let m = months[second] { month = m; dayText = first } else { return nil }
        let digits = dayText.hasSuffix("st") || dayText.hasSuffix("nd") || dayText.hasSuffix("rd") || dayText.hasSuffix("th")
            ? String(dayText.dropLast(2)) : dayText
        guard let d = Int(digits), (1...31).contains(d) else { return nil }
        var used = 2
        var year = cal.component(.year, from: now)
        var yearGiven = false
        if words.count >= 3, let y = Int(words[start + 2]), (2000...2200).contains(y) {
            year = y
            yearGiven = true
            used = 3
        }
        func date(_ year: Int) -> Date? {
            guard let date = cal.date(from: DateComponents(year: year, month: month, day: d)), cal.component(.day, from: date) == d else { return nil }
            return date
        }
        guard var result = date(year) else { return nil }
        if !yearGiven, let fourMonthsAgo = cal.date(byAdding: .month, value: -4, to: cal.startOfDay(for: now)), result < fourMonthsAgo,
           let next = date(year + 1) {
            result = next
        }
        return (result, used)
    }

    static func time(_ w: String) -> (Int, Int)? {
        if w == "noon" || w == "midday" { return (12, 0) }
        if w == "midnight" { return (23, 59) }  // the end of the day named, not its start
        var text = w
        var pm = false, am = false
        if text.hasSuffix("pm") { pm = true; text.removeLast(2) } else if text.hasSuffix("am") { am = true; text.removeLast(2) }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let h = Int(parts[0]), parts.count == 2 || am || pm else { return nil }
        let m = parts.count == 2 ? Int(parts[1]) : 0
        guard let m, (0...59).contains(m), parts.count == 1 || parts[1].count == 2 else { return nil }
        var hour = h
        if pm || am {
            guard (1...12).contains(h) else { return nil }
            hour = h % 12 + (pm ? 12 : 0)
        }
        guard (0...23).contains(hour) else { return nil }
        return (hour, m)
    }

    static func isoDay(_ w: String, _ cal: Calendar) -> Date? {
        let parts = w.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, let y = Int(parts[0]), let mo = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(mo), (1...31).contains(d) else { return nil }
        let date = cal.date(from: DateComponents(year: y, month: mo, day: d))
        // Reject 2026-02-31 rather than roll it into March.
        guard let date, cal.component(.day, from: date) == d else { return nil }
        return date
    }

    /// `Fri 27 Nov 17:00`, with the year when it is not this year's.
    public func format(_ date: Date, now: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = timeZone
        f.dateFormat = calendar.component(.year, from: date) == calendar.component(.year, from: now) ? "EEE d MMM HH:mm" : "EEE d MMM yyyy HH:mm"
        return f.string(from: date)
    }
}
