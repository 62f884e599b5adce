import Foundation

/// Reads the times people type: `tomorrow 17:00`, `fri`, `in 3d`, `2026-12-01`, `today`, `18:30`,
/// `next week`, `none`. A day without a time means 17:00, the end of a working day.
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
            case "min", "mins", "minute", "minutes": component = .minute
            case "h", "hour", "hours": component = .hour
            case "d", "day", "days": component = .day
            case "w", "week", "weeks": component = .weekOfYear
            case "month", "months": component = .month
            default: return nil
            }
            return cal.date(byAdding: component, value: n, to: now).map(Result.date)
        }

        var day: Date?
        var time: (Int, Int)?
        var i = 0
        while i < words.count {
            let w = words[i]
            if let t = Self.time(w) {
                time = t
            } else if w == "today" {
                day = cal.startOfDay(for: now)
            } else if w == "tomorrow" || w == "tmrw" {
                day = cal.date(byAdding: .day, value: 1, to: cal.startOfDay(for: now))
            } else if w == "next", i + 1 < words.count, words[i + 1] == "week" {
                let monday = cal.nextDate(after: now, matching: DateComponents(weekday: 2), matchingPolicy: .nextTime)
                day = monday.map { cal.startOfDay(for: $0) }
                i += 1
            } else if let wd = Self.weekdays[w] {
                // The next such day, today excluded: "fri" on a Friday means next Friday.
                day = cal.nextDate(after: cal.startOfDay(for: now).addingTimeInterval(86_399), matching: DateComponents(weekday: wd),
                                   matchingPolicy: .nextTime).map { cal.startOfDay(for: $0) }
            } else if let d = Self.isoDay(w, cal) {
                day = d
            } else if w == "at" {
                // filler: "fri at 9:00"
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
        return .date(base)
    }

    static func time(_ w: String) -> (Int, Int)? {
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
