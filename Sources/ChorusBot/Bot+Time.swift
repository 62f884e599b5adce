import ChorusCore
import ChorusWorkspace
import Foundation

/// Tracked time: modes, the timer, entries by hand, the log and reports with bars drawn in text.
/// Times are read and shown in the person's zone (`!tz`); `TimeBoard` decides.
extension Bot {
    // MARK: !modes, !mode

    func modes(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let (presets, own) = try time.modes(of: inv.account)
        return Outcome(replies: ["Modes: \(presets.joined(separator: ", "))" +
                                 (own.isEmpty ? ". Make your own with !mode add <name>." : "; yours: \(own.joined(separator: ", "))")])
    }

    func mode(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!mode add <name> | !mode rm <name>"
        switch try args.word("add or rm", usage: usage).lowercased() {
        case "add", "new":
            guard !args.isEmpty else { throw UsageError("Missing mode name. Usage: \(usage)") }
            let mode = try time.addMode(args.rest(), by: inv.account)
            return Outcome(replies: ["Mode \(mode) is yours: !track start \(mode)"])
        case "rm", "remove", "delete":
            let mode = try time.removeMode(try args.word("mode name", usage: usage), by: inv.account)
            return Outcome(replies: ["Mode \(mode) removed; the time logged in it stays."])
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    // MARK: !track

    func track(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!track [start|switch|stop|cancel|add|edit|rm|log] …"
        let clock = Clock(inv)
        guard let sub = args.next()?.lowercased() else { return Outcome(replies: [try status(inv, clock)]) }
        switch sub {
        case "start", "switch":
            let target = try self.target(&args, usage: "!track \(sub) <mode> [note] | !track \(sub) job <n> [note]")
            let (entry, stopped, replaced, events) = try time.start(target, note: args.rest(), by: inv.account)
            var line = "\(what(entry)) started at \(clock.time(entry.start))."
            if let stopped {
                let before = replaced ? "\(what(stopped)) (under a minute) is not kept" : "\(what(stopped)) stopped (\(TimeRules.duration(Int(stopped.duration(now: inv.now)))))"
                line = before + "; " + line.prefix(1).lowercased() + line.dropFirst()
            }
            return Outcome(replies: [line], events: events)
        case "stop":
            var at: Date?
            if let word = args.next() {
                let text = word.lowercased() == "at" ? try args.word("time", usage: "!track stop [at <HH:MM> [day]]") : word
                at = try clock.today(at: text)
                // `at 16:10 yesterday`: the time the login question offered, on the day it named.
                if let dayWord = args.next() {
                    guard let day = try clock.pastDay(dayWord) else { throw UsageError("“\(dayWord)” is not a day: yesterday, fri, 2026-11-20") }
                    at = clock.calendar.date(bySettingHour: clock.calendar.component(.hour, from: at!),
                                             minute: clock.calendar.component(.minute, from: at!), second: 0, of: day)
                }
            }
            let (entry, kept, events) = try time.stop(at: at, by: inv.account)
            let stopped = kept ? "\(what(entry)) stopped at \(clock.time(entry.end!)): \(TimeRules.duration(Int(entry.duration(now: inv.now)))) (entry \(entry.id))"
                               : "\(what(entry)) (under a minute) is not kept"
            return Outcome(replies: ["\(stopped). Today: \(TimeRules.duration(try today(inv, clock)))."], events: events)
        case "limit":
            guard let word = args.next()?.lowercased() else {
                return Outcome(replies: ["Your timer nudges you once after \(TimeRules.duration(try time.limit(of: inv.account) * 60)). !track limit 10h changes it."])
            }
            let minutes = word == "default" ? nil : try Self.minutes(word)
            let event = try time.setLimit(minutes, by: inv.account)
            return Outcome(replies: ["A timer now nudges you once after \(TimeRules.duration((minutes ?? TimeRules.defaultLimitMinutes) * 60))."],
                           events: [event])
        case "keep":
            let entry = try time.keep(by: inv.account)
            return Outcome(replies: ["\(what(entry)) keeps running since \(clock.time(entry.start)) (\(TimeRules.duration(Int(entry.duration(now: inv.now)))))."])
        case "cancel":
            let (entry, event) = try time.cancel(by: inv.account)
            return Outcome(replies: ["\(what(entry)) since \(clock.time(entry.start)) is thrown away."], events: [event])
        case "add":
            let addUsage = "!track add <mode|job n> <HH:MM>-<HH:MM> [day] [note]"
            let target = try self.target(&args, usage: addUsage)
            let range = try args.word("times, e.g. 9:00-10:30", usage: addUsage)
            var day = clock.startOfDay(inv.now)
            if let word = args.peek, let d = try clock.pastDay(word) { _ = args.next(); day = d }
            let (start, end) = try clock.range(range, on: day)
            let (entry, events) = try time.add(target, from: start, to: end, note: args.rest(), by: inv.account)
            return Outcome(replies: ["Entry \(entry.id): \(what(entry)) \(clock.span(entry)) (\(TimeRules.duration(Int(entry.duration(now: inv.now)))))."],
                           events: events)
        case "edit":
            let editUsage = "!track edit <entry> start|end <HH:MM> [day] | mode <mode|job n> | note <text>"
            let id = try entryNumber(&args, usage: editUsage)
            let entry = try time.own(id, by: inv.account)
            let field: TimeBoard.Field
            let name = try args.word("field", usage: editUsage).lowercased()
            switch name {
            case "start", "end":
                let text = try args.word("time", usage: editUsage)
                guard let (h, m) = When.time(text) else { throw UsageError("“\(text)” is not a time: HH:MM. Usage: \(editUsage)") }
                // On the entry's own day unless a day is given; an end before the start is the next morning.
                var day = clock.startOfDay(entry.start)
                if let word = args.peek, let d = try clock.pastDay(word) { _ = args.next(); day = d }
                var date = clock.calendar.date(bySettingHour: h, minute: m, second: 0, of: day)!
                if name == "end", date < entry.start, args.isEmpty { date = clock.add(days: 1, to: date) }
                field = name == "start" ? .start(date) : .end(date)
            case "mode":
                field = .target(try self.target(&args, usage: editUsage))
            case "note":
                field = .note(args.rest())
            default:
                throw UsageError("You can change start, end, mode or note. Usage: \(editUsage)")
            }
            let (edited, events) = try time.edit(entry.id, field, by: inv.account)
            return Outcome(replies: ["Entry \(edited.id): \(what(edited)) \(clock.span(edited))."], events: events)
        case "rm", "remove", "delete":
            let id = try entryNumber(&args, usage: "!track rm <entry>")
            let (entry, events) = try time.remove(id, by: inv.account)
            return Outcome(replies: ["Entry \(entry.id) (\(what(entry)) \(clock.span(entry))) removed."], events: events)
        case "log":
            let period = args.rest()
            let (from, to, title) = try clock.period(period.isEmpty ? "today" : period)
            return Outcome(replies: try log(inv, clock, from: from, to: to, title: title))
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    /// What a person who comes back is asked about a timer that ran on after their last
    /// connection closed, or nil when there is nothing to ask.
    func awayQuestion(for account: String, zone: TimeZone, now: Date) throws -> String? {
        guard let running = try time.running(of: account), let left = running.leftAt else { return nil }
        let clock = Clock(zone: zone, now: now)
        let leftDay = clock.startOfDay(left) == clock.startOfDay(now) ? "" : " " + clock.dayWord(left)
        let since = (clock.startOfDay(running.start) == clock.startOfDay(now) ? "" : clock.day(running.start) + " ") + clock.time(running.start)
        return "\(what(running)) has been running since \(since) (you left at \(clock.time(left))\(leftDay)): " +
            "!track stop at \(clock.time(left))\(leftDay), or !track keep"
    }

    private func status(_ inv: Invocation, _ clock: Clock) throws -> String {
        let today = TimeRules.duration(try self.today(inv, clock))
        guard let running = try time.running(of: inv.account) else { return "No timer is running. Today: \(today). !track start <mode> starts one." }
        return "\(what(running)) running since \(clock.time(running.start)) (\(TimeRules.duration(Int(running.duration(now: inv.now))))). Today: \(today)."
    }

    private func today(_ inv: Invocation, _ clock: Clock) throws -> Int {
        let start = clock.startOfDay(inv.now)
        return try time.totals(of: inv.account, from: start, to: clock.add(days: 1, to: start), by: .mode).reduce(0) { $0 + $1.seconds }
    }

    private func log(_ inv: Invocation, _ clock: Clock, from: Date, to: Date, title: String) throws -> [String] {
        let entries = try time.entries(of: inv.account, from: from, to: to)
        guard !entries.isEmpty else { return ["Nothing logged \(title)."] }
        var lines = ["Your time \(title):"]
        var total = 0
        for e in entries {
            let seconds = Int(min(e.end ?? inv.now, to).timeIntervalSince(max(e.start, from)))
            total += seconds
            lines.append("  \(e.id). \(clock.span(e)) \(TimeRules.duration(seconds)) \(what(e))" + (e.note.isEmpty ? "" : " — \(e.note)"))
        }
        lines.append("  Total: \(TimeRules.duration(total))")
        return lines
    }

    // MARK: !report

    static let reportUsage = "!report [day|week|month|<date>|<from>..<to>] [by mode|job|room] [ascii]"

    func report(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let arguments = args.words.joined(separator: " ")
        let report = try timeReport(inv, &args)
        guard !report.rows.isEmpty else { return Outcome(replies: [report.empty]) }
        var lines = ["\(report.heading) (total \(TimeRules.duration(report.total))):"]
            + Bars(ascii: report.ascii).lines(report.rows.map { ($0.label, $0.seconds, $0.note) }, total: report.total)
            + report.footer.map { "  " + $0 }
        // The same report as a picture and a spreadsheet, behind links that expire (the web side).
        if let links {
            let (chart, csv) = links.report(account: inv.account, arguments: arguments, timeZone: inv.timeZone.identifier, now: inv.now)
            lines.append("  Chart: \(chart) · CSV: \(csv)")
        }
        return Outcome(replies: lines)
    }

    /// `!report`'s figures for `arguments` (what follows `!report`), before they are drawn as text
    /// bars, an SVG chart or CSV.
    public func timeReport(_ inv: Invocation, arguments: String) throws -> TimeReport {
        var args = Args(Substring(arguments))
        return try timeReport(inv, &args)
    }

    func timeReport(_ inv: Invocation, _ args: inout Args) throws -> TimeReport {
        let usage = Self.reportUsage
        let clock = Clock(inv)
        var words: [String] = []
        var chosen: TimeGrouping?
        var ascii = false
        var room: Invocation.RoomRef?
        while let word = args.next() {
            switch word.lowercased() {
            case "by":
                let g = try args.word("mode, job, room or person", usage: usage).lowercased()
                guard let parsed = TimeGrouping(rawValue: g) else { throw UsageError("By mode, job, room or person. Usage: \(usage)") }
                chosen = parsed
            case "ascii": ascii = true
            default:
                if word.hasPrefix("#") {
                    guard let name = inv.rooms[Account.key(word)] else { throw JobError.notInRoom(word) }
                    room = .init(key: Account.key(word), name: name)
                } else {
                    words.append(word)
                }
            }
        }
        let (from, to, title) = try clock.period(words.isEmpty ? "week" : words.joined(separator: " "))
        if let room { return try roomReport(room, from: from, to: to, title: title, grouping: chosen ?? .person, ascii: ascii, inv) }
        let grouping = chosen ?? .mode
        guard grouping != .person else { throw UsageError("By person is for a room's report: !report week #room by person") }
        let totals = try time.totals(of: inv.account, from: from, to: to, by: grouping)
        var report = TimeReport(heading: "Your time \(title), by \(grouping.rawValue)", empty: "Nothing logged \(title).", ascii: ascii)
        report.rows = totals.map { total in
            switch grouping {
            case .mode, .person: return .init(label: total.key, seconds: total.seconds)
            case .job:
                guard let id = Int64(total.key) else { return .init(label: "no job", seconds: total.seconds) }
                return .init(label: jobLabel(id), seconds: total.seconds)
            case .room: return .init(label: total.key.isEmpty ? "personal" : (inv.rooms[total.key] ?? total.key), seconds: total.seconds)
            }
        }
        // Time on jobs is kept under the mode "job": by mode, each job is a row of its own, named.
        if grouping == .mode, let onJobs = report.rows.firstIndex(where: { $0.label == "job" }) {
            report.rows.remove(at: onJobs)
            report.rows += try time.totals(of: inv.account, from: from, to: to, by: .job).compactMap { total in
                Int64(total.key).map { .init(label: jobLabel($0), seconds: total.seconds) }
            }
            report.rows.sort { ($0.seconds, $1.label) > ($1.seconds, $0.label) }
        }
        guard !report.rows.isEmpty else { return report }
        let sum = report.total
        // Against the weekly plan, by mode: every planned mode has a row, logged or not.
        // The plan up to now: a week in progress is compared with what was planned so far.
        let soFar = min(to, inv.now)
        let planned = grouping == .mode && from < soFar ? try time.planned(of: inv.account, from: from, to: soFar, calendar: clock.calendar) : []
        guard !planned.isEmpty else { return report }
        let plan = Dictionary(uniqueKeysWithValues: planned.map { ($0.key, $0.seconds) })
        report.rows += planned.filter { p in !report.rows.contains { $0.label == p.key } }.map { .init(label: $0.key, seconds: 0) }
        for i in report.rows.indices {
            report.rows[i].planned = plan[report.rows[i].label]
            report.rows[i].note = plan[report.rows[i].label].map { " · planned \(TimeRules.duration($0))" } ?? " · not planned"
        }
        let planTotal = planned.reduce(0) { $0 + $1.seconds }
        // How far apart, mode by mode: two hours of exercise do not make up for two planned hours
        // of study. In the whole minutes the rows show, so that the figures add up (3h 15m against
        // 1h 30m is 1h 45m over, whatever seconds each holds).
        var apart: [String] = []
        for row in report.rows {
            guard let plannedSeconds = row.planned else { continue }
            let off = (row.seconds / 60 - plannedSeconds / 60) * 60
            if abs(off) >= 60 { apart.append("\(row.label) \(TimeRules.duration(abs(off))) \(off < 0 ? "short" : "over")") }
        }
        let outside = report.rows.filter { $0.planned == nil }.reduce(0) { $0 + $1.seconds / 60 * 60 }
        if outside >= 60 { apart.append("\(TimeRules.duration(outside)) outside the plan") }
        let verdict = apart.isEmpty ? "as planned" : apart.joined(separator: ", ")
        report.footer = ["Planned \(soFar < to ? "so far " : "")\(TimeRules.duration(planTotal)), logged \(TimeRules.duration(sum)): \(verdict)."]
        return report
    }

    /// Time logged on a room's jobs: a manager's report covers every member, a member's their own.
    private func roomReport(_ room: Invocation.RoomRef, from: Date, to: Date, title: String, grouping: TimeGrouping, ascii: Bool,
                            _ inv: Invocation) throws -> TimeReport {
        let totals = try time.roomTotals(room.key, from: from, to: to, by: grouping, by: inv.account)
        let whose = try rooms.require(.member, of: inv.account, in: room.key, for: "!report") == .manager ? "Time on \(room.name)'s jobs"
                                                                                                       : "Your time on \(room.name)'s jobs"
        var report = TimeReport(heading: "\(whose) \(title), by \(grouping.rawValue)", empty: "\(whose) \(title): none logged.", ascii: ascii)
        report.rows = totals.map { total in
            guard grouping == .job, let id = Int64(total.key) else { return .init(label: total.key, seconds: total.seconds) }
            return .init(label: jobLabel(id), seconds: total.seconds)
        }
        return report
    }

    /// `job 3 Fix the sink`, as a report's row names it.
    private func jobLabel(_ id: Int64) -> String {
        "job \(id) " + (((try? board.store.job(id)) ?? nil)?.title ?? "")
    }

    // MARK: !plan

    func plan(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!plan | !plan add <mode> <days> <HH:MM>-<HH:MM> | !plan rm <n> | !plan remind on|off"
        switch args.next()?.lowercased() {
        case nil, "list":
            let blocks = try time.plan(of: inv.account)
            guard !blocks.isEmpty else { return Outcome(replies: ["Your week has no plan yet: !plan add study mon-fri 9:00-12:00"]) }
            let week = blocks.reduce(0) { $0 + $1.weeklyMinutes }
            return Outcome(replies: ["Your weekly plan (\(TimeRules.duration(week * 60)) a week):"] + blocks.map { b in
                "  \(b.id). \(b.mode) \(TimeRules.daysText(b.days)) \(Self.clock(b.start))-\(Self.clock(b.end)) (\(TimeRules.duration(b.weeklyMinutes * 60)) a week)"
            })
        case "add":
            let mode = try args.word("mode", usage: usage)
            let dayWord = try args.word("days (mon-fri, sat,sun, daily)", usage: usage)
            guard let days = TimeRules.days(dayWord) else { throw UsageError("“\(dayWord)” is not days: mon, mon-fri, sat,sun, weekdays, daily") }
            let range = try args.word("times", usage: usage)
            let parts = range.split(separator: "-").map(String.init)
            guard parts.count == 2, let a = When.time(parts[0]), let b = parts[1] == "24:00" ? (24, 0) : When.time(parts[1]) else {
                throw UsageError("“\(range)” is not a time range: HH:MM-HH:MM, e.g. 9:00-12:00")
            }
            let block = try time.addPlan(mode, days: days, from: a.0 * 60 + a.1, to: b.0 * 60 + b.1, by: inv.account)
            var outcome = Outcome(replies: ["Block \(block.id): \(block.mode) \(TimeRules.daysText(block.days)) \(Self.clock(block.start))-\(Self.clock(block.end)) (\(TimeRules.duration(block.weeklyMinutes * 60)) a week). !report week compares."])
            outcome.movesWhatComesDue = true
            return outcome
        case "remind":
            let word = try args.word("on or off", usage: usage).lowercased()
            guard word == "on" || word == "off" else { throw UsageError("Usage: \(usage)") }
            let event = try time.setPlanReminders(word == "on", by: inv.account)
            return Outcome(replies: [word == "on" ? "A planned block that starts while no timer runs now earns you a nudge."
                                                  : "No more nudges from your plan."], events: [event])
        case "rm", "remove", "delete":
            guard let word = args.next(), let id = Int64(word) else { throw UsageError("Which block? Usage: \(usage)") }
            try time.removePlan(id, by: inv.account)
            var outcome = Outcome(replies: ["Block \(id) is out of your plan."])
            outcome.movesWhatComesDue = true
            return outcome
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    /// `10h`, `90m`, `8h30m`, `8h30` → minutes.
    static func minutes(_ text: String) throws -> Int {
        let t = text.lowercased()
        var total = 0, digits = "", unitSeen = false
        for ch in t {
            if ch.isNumber { digits.append(ch); continue }
            guard let n = Int(digits), ch == "h" || ch == "m" else { throw UsageError("“\(text)” is not a duration: 10h, 90m, 8h30m") }
            total += ch == "h" ? n * 60 : n
            digits = ""
            unitSeen = true
        }
        if !digits.isEmpty {
            guard unitSeen, let n = Int(digits) else { throw UsageError("“\(text)” is not a duration: 10h, 90m, 8h30m") }
            total += n
        }
        guard total > 0, total < 100_000 else { throw UsageError("“\(text)” is not a duration: 10h, 90m, 8h30m") }
        return total
    }

    /// `09:00` for 540 minutes.
    static func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    // MARK: Helpers

    /// `study`, `job 12`.
    private func target(_ args: inout Args, usage: String) throws -> TimeBoard.Target {
        let word = try args.word("mode or job", usage: usage)
        if word.lowercased() == "job" {
            guard let id = args.next().flatMap({ Int64($0.hasPrefix("#") ? String($0.dropFirst()) : $0) }), id > 0 else {
                throw UsageError("Which job? Usage: \(usage)")
            }
            return .job(id)
        }
        return .mode(word)
    }

    private func entryNumber(_ args: inout Args, usage: String) throws -> Int64 {
        guard let w = args.next() else { throw UsageError("Missing entry number. Usage: \(usage)") }
        guard let n = Int64(w), n > 0 else { throw UsageError("“\(w)” is not an entry number. Usage: \(usage)") }
        return n
    }

    /// `study`, `job 12 “Fix the sink”`.
    private func what(_ e: TimeEntry) -> String {
        guard let id = e.job else { return e.mode }
        guard let title = (try? board.store.job(id))??.title else { return "job \(id)" }
        return "job \(id) “\(title)”"
    }
}

/// Days, weeks and clock times in one person's zone: what `!track` and `!report` read and show.
struct Clock {
    let calendar: Calendar
    let now: Date

    init(_ inv: Invocation) {
        self.init(zone: inv.timeZone, now: inv.now)
    }

    init(zone: TimeZone, now: Date) {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = zone
        c.firstWeekday = 2
        calendar = c
        self.now = now
    }

    /// How `pastDay` reads a day back: `yesterday`, or `2026-11-20`.
    func dayWord(_ date: Date) -> String {
        if startOfDay(date) == add(days: -1, to: startOfDay(now)) { return "yesterday" }
        let c = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", c.year!, c.month!, c.day!)
    }

    func startOfDay(_ date: Date) -> Date { calendar.startOfDay(for: date) }
    func add(days: Int, to date: Date) -> Date { calendar.date(byAdding: .day, value: days, to: date)! }

    /// `14:02`
    func time(_ date: Date) -> String {
        let c = calendar.dateComponents([.hour, .minute], from: date)
        return String(format: "%02d:%02d", c.hour!, c.minute!)
    }

    /// `Mon 23 Nov`
    func day(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = calendar.timeZone
        f.dateFormat = calendar.component(.year, from: date) == calendar.component(.year, from: now) ? "EEE d MMM" : "EEE d MMM yyyy"
        return f.string(from: date)
    }

    /// `Mon 23 Nov 09:00–10:30`, or `… 09:00–now` while running.
    func span(_ e: TimeEntry) -> String {
        "\(day(e.start)) \(time(e.start))–" + (e.end.map(time) ?? "now")
    }

    /// `HH:MM` today; refused when it is not a time.
    func today(at text: String) throws -> Date {
        guard let (h, m) = When.time(text) else { throw UsageError("“\(text)” is not a time: HH:MM, e.g. 16:10") }
        return calendar.date(bySettingHour: h, minute: m, second: 0, of: now)!
    }

    /// `today`, `yesterday`, `tomorrow`, `mon` (the latest Monday, today included), `2026-11-20`;
    /// nil if the word is not a day (it is then the start of a note).
    func pastDay(_ word: String) throws -> Date? {
        let w = word.lowercased()
        let today = startOfDay(now)
        if w == "today" { return today }
        if w == "yesterday" { return add(days: -1, to: today) }
        // A day ahead is still a day, not the start of a note: what is logged on it is refused as the future.
        if w == "tomorrow" { return add(days: 1, to: today) }
        if let d = When.isoDay(w, calendar) { return d }
        let days = ["mon": 2, "tue": 3, "wed": 4, "thu": 5, "fri": 6, "sat": 7, "sun": 1]
        if let wd = days[String(w.prefix(3))], w.count <= 9, "monday tuesday wednesday thursday friday saturday sunday".contains(w) {
            let back = (calendar.component(.weekday, from: today) - wd + 7) % 7
            return add(days: -back, to: today)
        }
        return nil
    }

    /// `9:00-10:30` on `day`; an end before the start is the next morning.
    func range(_ text: String, on day: Date) throws -> (Date, Date) {
        let parts = text.split(separator: "-").map(String.init)
        guard parts.count == 2, let a = When.time(parts[0]), let b = When.time(parts[1]) else {
            throw UsageError("“\(text)” is not a time range: HH:MM-HH:MM, e.g. 9:00-10:30")
        }
        let start = calendar.date(bySettingHour: a.0, minute: a.1, second: 0, of: day)!
        var end = calendar.date(bySettingHour: b.0, minute: b.1, second: 0, of: day)!
        if end < start { end = calendar.date(bySettingHour: b.0, minute: b.1, second: 0, of: add(days: 1, to: day))! }
        return (start, end)
    }

    /// A period and how to say it: `today`, `yesterday`, `day`, `week` (Monday on), `month`,
    /// `year`, `2026-11-20`, `2026-11-01..2026-11-15` (both days included).
    func period(_ text: String) throws -> (Date, Date, String) {
        let w = text.lowercased().trimmingCharacters(in: .whitespaces)
        let today = startOfDay(now)
        switch w {
        case "today", "day": return (today, add(days: 1, to: today), "today")
        case "yesterday": return (add(days: -1, to: today), today, "yesterday")
        case "week":
            let start = calendar.dateInterval(of: .weekOfYear, for: now)!.start
            return (start, add(days: 7, to: start), "this week (from \(day(start)))")
        case "month":
            let i = calendar.dateInterval(of: .month, for: now)!
            return (i.start, i.end, "this month")
        case "year":
            let i = calendar.dateInterval(of: .year, for: now)!
            return (i.start, i.end, "this year")
        default:
            if let range = w.range(of: "..") {
                guard let a = When.isoDay(String(w[..<range.lowerBound]), calendar),
                      let b = When.isoDay(String(w[range.upperBound...]), calendar) else {
                    throw UsageError("“\(text)” is not a period: from..to as dates, e.g. 2026-11-01..2026-11-15")
                }
                guard a <= b else { throw UsageError("“\(text)” ends before it starts: the earlier date comes first") }
                return (a, add(days: 1, to: b), "from \(day(a)) to \(day(b))")
            }
            if let d = try pastDay(w) { return (d, add(days: 1, to: d), "on \(day(d))") }
            throw UsageError("“\(text)” is not a period: today, yesterday, week, month, year, a date or from..to")
        }
    }
}

/// Bars drawn in text, one line a row, readable in any client: Unicode blocks to an eighth of a
/// character, or `#` for terminals without them.
