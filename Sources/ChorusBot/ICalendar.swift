import Foundation

/// A calendar as RFC 5545 writes it (iCalendar, `.ics`): what a calendar feed (`!ical`) serves.
/// Times are written in the reader's zone, with that zone's rules (`VTIMEZONE`) in the document,
/// so a turn at 20:00 in Paris stays at 20:00 across a change of daylight saving time.
public struct ICalendar: Sendable {
    public struct Entry: Sendable, Equatable {
        /// Stable across reads: a calendar app updates the entry it already has.
        public var uid: String
        /// Goes up when the entry changes (RFC 5545 §3.8.7.4).
        public var sequence: Int
        public var start: Date
        public var minutes: Int
        public var summary: String
        public var description: String?
        /// Weekdays (1 Sunday … 7 Saturday) a weekly entry repeats on; empty for a single one.
        public var weekly: Set<Int> = []
    }

    public var name: String
    public var timeZone: TimeZone
    public var entries: [Entry]
    /// When the document is made (`DTSTAMP`).
    public var now: Date

    /// The document, lines ending in CRLF and folded at 75 octets.
    public var text: String {
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Chorus//Chorus chat server//EN", "CALSCALE:GREGORIAN", "METHOD:PUBLISH",
            "X-WR-CALNAME:" + Self.escaped(name), "X-WR-TIMEZONE:" + timeZone.identifier,
        ]
        if !isUTC { lines += zoneRules() }
        for entry in entries.sorted(by: { ($0.start, $0.uid) < ($1.start, $1.uid) }) {
            lines += ["BEGIN:VEVENT", "UID:" + entry.uid, "SEQUENCE:\(entry.sequence)", "DTSTAMP:" + Self.utc(now),
                      "DTSTART" + local(entry.start), "DURATION:PT\(entry.minutes)M", "SUMMARY:" + Self.escaped(entry.summary)]
            if let description = entry.description, !description.isEmpty { lines.append("DESCRIPTION:" + Self.escaped(description)) }
            if !entry.weekly.isEmpty {
                let days = entry.weekly.sorted().map { Self.weekdayCodes[$0 - 1] }.joined(separator: ",")
                lines.append("RRULE:FREQ=WEEKLY;BYDAY=" + days)
            }
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.map(Self.folded).joined(separator: "\r\n") + "\r\n"
    }

    private static let weekdayCodes = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]

    private var isUTC: Bool { timeZone.secondsFromGMT() == 0 && timeZone.nextDaylightSavingTimeTransition(after: now) == nil }

    /// `;TZID=Europe/Paris:20261123T200000`, or `:20261123T190000Z` in UTC.
    private func local(_ date: Date) -> String {
        isUTC ? ":" + Self.utc(date) : ";TZID=\(timeZone.identifier):" + Self.stamp(date, offset: timeZone.secondsFromGMT(for: date))
    }

    /// The zone's observances over the years a feed reaches (a year back, two ahead): one
    /// `STANDARD` or `DAYLIGHT` per change of offset, each starting at its local time before the
    /// change, and the observance in force before the first change.
    private func zoneRules() -> [String] {
        var changes: [Date] = []
        var cursor = now.addingTimeInterval(-366 * 86_400)
        let end = now.addingTimeInterval(2 * 366 * 86_400)
        while let next = timeZone.nextDaylightSavingTimeTransition(after: cursor), next < end, changes.count < 10 {
            changes.append(next)
            cursor = next
        }
        let first = changes.first ?? now
        let before = first.addingTimeInterval(-1)
        var lines = ["BEGIN:VTIMEZONE", "TZID:" + timeZone.identifier]
        lines += observance(daylight: timeZone.isDaylightSavingTime(for: before), onset: "19700101T000000",
                            from: timeZone.secondsFromGMT(for: before), to: timeZone.secondsFromGMT(for: before), at: before)
        for change in changes {
            let from = timeZone.secondsFromGMT(for: change.addingTimeInterval(-1)), to = timeZone.secondsFromGMT(for: change)
            lines += observance(daylight: timeZone.isDaylightSavingTime(for: change), onset: Self.stamp(change, offset: from),
                                from: from, to: to, at: change)
        }
        lines.append("END:VTIMEZONE")
        return lines
    }

    private func observance(daylight: Bool, onset: String, from: Int, to: Int, at date: Date) -> [String] {
        let kind = daylight ? "DAYLIGHT" : "STANDARD"
        var lines = ["BEGIN:" + kind, "DTSTART:" + onset, "TZOFFSETFROM:" + Self.offset(from), "TZOFFSETTO:" + Self.offset(to)]
        if let name = timeZone.abbreviation(for: date) { lines.append("TZNAME:" + Self.escaped(name)) }
        lines.append("END:" + kind)
        return lines
    }

    /// `+0100`, `-0330`.
    private static func offset(_ seconds: Int) -> String {
        let minutes = abs(seconds) / 60
        return (seconds < 0 ? "-" : "+") + String(format: "%02d%02d", minutes / 60, minutes % 60)
    }

    private static func utc(_ date: Date) -> String { stamp(date, offset: 0) + "Z" }

    /// `20261123T200000` at `offset` seconds from UTC.
    private static func stamp(_ date: Date, offset: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset)!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!)
    }

    /// TEXT as RFC 5545 §3.3.11 escapes it.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A line of at most 75 octets, the rest on lines that begin with a space (§3.1), never
    /// splitting a character's UTF-8 bytes.
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var out = "", width = 0, limit = 75
        for character in line {
            let size = character.utf8.count
            if width + size > limit {
                out += "\r\n "
                width = 0
                limit = 74  // the leading space counts
            }
            out.append(character)
            width += size
        }
        return out
    }
}
