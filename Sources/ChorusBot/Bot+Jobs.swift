import ChorusCore
import ChorusWorkspace
import Foundation

extension Bot {
    static let addUsage = "!job add <title> [@assignee] [due <when>] [-- <description>]"

    func addJob(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        guard let sub = args.next(), sub.lowercased() == "add" || sub.lowercased() == "new" else {
            throw UsageError("Usage: \(Self.addUsage)")
        }
        let room = try self.room(inv, &args, required: false)
        let line = args.rest()
        var head = line
        var description = ""
        if let sep = line.range(of: " -- ") ?? (line.hasPrefix("-- ") ? line.range(of: "-- ") : nil) {
            head = String(line[..<sep.lowerBound])
            description = line[sep.upperBound...].trimmed
        }
        var titleWords: [String] = []
        var assignee: String?
        var due: Date?
        var words = head.split(separator: " ").map(String.init)[...]
        while let w = words.first {
            words = words.dropFirst()
            if w.hasPrefix("@"), w.count > 1 {
                assignee = try account(w, inv)
            } else if w.lowercased() == "due" {
                let phrase = words.joined(separator: " ")
                // The longest run of words that reads as a time; the rest goes back to the title.
                var found: (Date, Int)?
                for n in stride(from: min(words.count, 4), through: 1, by: -1) {
                    if case .date(let d)? = when(inv).parse(words.prefix(n).joined(separator: " "), now: inv.now) {
                        found = (d, n)
                        break
                    }
                }
                guard let (date, used) = found else {
                    // "Read the due diligence report": a "due" that nothing like a time follows is a
                    // word of the title; "due 2026-13-45" or "due fryday" was meant as a time.
                    if !titleWords.isEmpty, let next = words.first, !Self.looksLikeTime(next) {
                        titleWords.append(w)
                        continue
                    }
                    throw UsageError("Cannot read \"\(phrase)\" as a time. Try: \(Self.dueForms)")
                }
                due = try ahead(date, typed: words.prefix(used).joined(separator: " "), inv)
                words = words.dropFirst(used)
            } else {
                titleWords.append(w)
            }
        }
        let title = titleWords.joined(separator: " ")
        guard !title.isEmpty else { throw UsageError("A job needs a title. Usage: \(Self.addUsage)") }
        let change = try board.add(title: title, description: description, assignee: assignee, due: due,
                                   in: room?.key, by: inv.account)
        return announce(change)
    }

    /// Whether a word after "due" was meant as a time: it has a digit or a time's punctuation,
    /// begins like a day or a relative time (`fri`, `fryday`, `tomorrow`, `next`, `in`), or is a
    /// month or a word of the day (`dec`, `noon`, `yesterday`, `last`).
    static func looksLikeTime(_ word: String) -> Bool {
        let w = word.lowercased()
        if w.contains(where: { $0.isNumber || $0 == ":" || $0 == "/" }) { return true }
        let starts = ["mon", "tue", "wed", "thu", "fri", "sat", "sun", "tod", "tom", "ton", "next", "in", "none", "never", "week", "month"]
        let words = ["noon", "midday", "midnight", "yesterday", "last", "this"]
        if starts.contains(where: { w.hasPrefix($0) }) || words.contains(w) || When.months[w] != nil { return true }
        // A day or month name mistyped (`fryday`, `tomorow`, `decmber`): two letters off at most.
        let names = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "today", "tomorrow", "tonight",
                     "yesterday", "noon", "midnight"] + When.months.keys.filter { $0.count > 3 }
        return w.count >= 4 && names.contains { distance(w, $0) <= 2 }
    }

    /// Edits (insertions, deletions, changes of a letter) that turn `a` into `b`.
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let old = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = old
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    /// The forms a due time takes, for the answer to one that cannot be read.
    static let dueForms = "tomorrow 17:00, fri, fri 12:00, noon, in 3d, in 90m, dec 5, 2026-12-01"

    /// A due time as a job takes it: ahead of now. `typed` is what was typed, for the refusal.
    func ahead(_ date: Date, typed: String, _ inv: Invocation) throws -> Date {
        guard date > inv.now else {
            throw UsageError("“\(typed)” is in the past (\(when(inv).format(date, now: inv.now))): a due time is ahead of now")
        }
        return date
    }

    func assign(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!assign <id> <nick>"
        let id = try args.id(usage: usage)
        let who = try account(try args.word("nick", usage: usage), inv)
        return announce(try board.assign(id, to: who, by: inv.account))
    }

    func unassign(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        announce(try board.unassign(try args.id(usage: "!unassign <id>"), by: inv.account))
    }

    func move(_ inv: Invocation, _ args: inout Args, to status: Job.Status, verb: String) throws -> Outcome {
        // `!done dishes`: a chore name is never a number, so a word here means a chore.
        if status == .completed, let word = args.peek, Int64(word.trimmingCharacters(in: CharacterSet(charactersIn: "#jJ"))) == nil {
            return try doChore(inv, &args)
        }
        let id = try args.id(usage: status == .cancelled ? "!cancel <id> [reason]" : "!\(verb) <id>")
        let reason = args.rest()
        let change = try board.move(id, to: status, reason: reason, by: inv.account)
        return announce(change)
    }

    func edit(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!edit <id> title|due|description <value>"
        let id = try args.id(usage: usage)
        let field = try args.word("field (title, due or description)", usage: usage).lowercased()
        let value = args.rest()
        let change: JobBoard.Change
        switch field {
        case "title":
            guard !value.isEmpty else { throw UsageError("Give the new title. Usage: \(usage)") }
            change = try board.edit(id, title: value, by: inv.account)
        case "description", "desc":
            change = try board.edit(id, description: value, by: inv.account)
        case "due":
            guard let parsed = when(inv).parse(value, now: inv.now) else {
                throw UsageError("Cannot read \"\(value)\" as a time. Try: \(Self.dueForms), none")
            }
            switch parsed {
            case .date(let d): change = try board.edit(id, due: .some(try ahead(d, typed: value, inv)), by: inv.account)
            case .none: change = try board.edit(id, due: .some(nil), by: inv.account)
            }
        default:
            throw UsageError("You can edit title, due or description. Usage: \(usage)")
        }
        return announce(change)
    }

    func task(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!task add <id> <text> | !task done <id> <n>|<text>"
        // The job first reads as well: `!task 1 add fridge`, as `!list groceries add milk`.
        var jobFirst: Int64?
        if let w = args.peek, Int64(w.drop { $0 == "#" }) != nil { jobFirst = try args.id(usage: usage) }
        switch try args.word("add or done", usage: usage).lowercased() {
        case "add":
            let id = try jobFirst ?? args.id(usage: usage)
            let text = args.rest()
            guard !text.isEmpty else { throw UsageError("Say what the task is. Usage: \(usage)") }
            return announce(try board.addTask(id, text: text, by: inv.account))
        case "done", "tick":
            let id = try jobFirst ?? args.id(usage: usage)
            let word = try args.word("task number or text", usage: usage)
            guard let n = Int(word) else {
                let text = args.isEmpty ? word : word + " " + args.rest()
                return announce(try board.completeTask(id, text: text, by: inv.account))
            }
            return announce(try board.completeTask(id, number: n, by: inv.account))
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    func comment(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!comment <id> <text>"
        let id = try args.id(usage: usage)
        let text = args.rest()
        guard !text.isEmpty else { throw UsageError("Say something. Usage: \(usage)") }
        let (_, event) = try board.comment(id, text: text, by: inv.account)
        if event.room == nil { return Outcome(replies: [self.text(inv).line(event)]) }
        return Outcome(events: [event])
    }

    func comments(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let id = try args.id(usage: "!comments <id>")
        let job = try board.job(id, by: inv.account)
        let list = try board.comments(id, by: inv.account)
        guard !list.isEmpty else { return Outcome(replies: ["Job \(id) “\(job.title)” has no comments yet: !comment \(id) <text>"]) }
        let t = text(inv)
        return Outcome(replies: ["Comments on job \(id) “\(job.title)”, newest first:"] +
                         list.map { "  \(t.short($0.at)) \($0.author): \($0.text)" })
    }

    func show(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let id = try args.id(usage: "!show <id>")
        let job = try board.job(id, by: inv.account)
        let t = text(inv)
        var lines = ["Job \(job.id): \(job.title)"]
        var facts = ["status \(job.status.rawValue)"]
        facts.append(job.assignee.map { "assigned to \($0)" } ?? "unassigned")
        facts.append("created by \(job.creator) \(t.short(job.createdAt))")
        if let due = job.due { facts.append("due \(t.when.format(due, now: inv.now))" + (job.status.isOpen && due < inv.now ? " (overdue)" : "")) }
        facts.append(job.room.map { "in \(inv.rooms[$0] ?? $0)" } ?? "personal")
        lines.append("  " + facts.joined(separator: " · "))
        if !job.description.isEmpty { lines.append("  \(job.description)") }
        if !job.tasks.isEmpty {
            lines.append("  Checklist \(job.tasksDone)/\(job.tasks.count):")
            for (i, task) in job.tasks.enumerated() {
                lines.append("    [\(task.done ? "x" : " ")] \(i + 1). \(task.text)" + (task.doneBy.map { " (\($0))" } ?? ""))
            }
        }
        for photo in job.photos {
            lines.append("  Photo by \(photo.by): \(photo.url)" + (photo.caption.isEmpty ? "" : " \(photo.caption)"))
        }
        let logged = try time.seconds(onJob: id)
        if logged > 0 { lines.append("  Time logged: \(TimeRules.duration(logged))") }
        return Outcome(replies: lines)
    }

    func activity(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let id = try args.id(usage: "!activity <id>")
        let job = try board.job(id, by: inv.account)
        let events = try board.activity(id, by: inv.account)
        let t = text(inv)
        return Outcome(replies: ["Activity of job \(id) “\(job.title)”, newest first:"] +
                         events.map { "  \(t.short($0.at)) \(t.line($0, withJob: false))" })
    }

    func jobs(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let arguments = args.words.joined(separator: " ")
        let query = try jobQuery(inv, &args)
        var filter = query.filter
        filter.limit = 10
        filter.offset = (query.page - 1) * 10
        let (jobs, total) = try board.list(in: query.room?.key, filter: filter, by: inv.account)
        let place = query.room?.name ?? "your personal list"
        guard !jobs.isEmpty else {
            guard total == 0 else { return Outcome(replies: ["No jobs on page \(query.page) (\(total) in all)."]) }
            // With a status asked for too, the word was meant as a search.
            let hint = filter.statuses == nil ? Self.statusHint(filter.text) : nil
            return Outcome(replies: ["No jobs match in \(place)." + (hint.map { " " + $0 } ?? "")])
        }
        let t = text(inv)
        var lines = ["Jobs in \(place), newest first (\(filter.offset + 1)-\(filter.offset + jobs.count) of \(total)):"]
        lines += jobs.map { "  " + t.summary($0) }
        if filter.offset + jobs.count < total { lines.append("  … more: !jobs page:\(query.page + 1)") }
        // Every page at once, as a spreadsheet, behind a link that expires (the web side).
        if let links {
            let csv = links.jobs(account: inv.account, room: inv.room?.key, arguments: arguments, timeZone: inv.timeZone.identifier, now: inv.now)
            lines.append("  CSV of all \(min(total, JobExport.maxRows)): \(csv)")
        }
        return Outcome(replies: lines)
    }

    /// The jobs `!jobs <arguments>` lists, every page of them (up to `JobExport.maxRows`), for the
    /// web side's spreadsheet.
    public func jobExport(_ inv: Invocation, arguments: String) throws -> JobExport {
        var args = Args(Substring(arguments))
        let query = try jobQuery(inv, &args)
        var filter = query.filter
        filter.limit = JobExport.maxRows
        filter.offset = 0
        let (jobs, total) = try board.list(in: query.room?.key, filter: filter, by: inv.account)
        return JobExport(place: query.room?.name ?? "personal", jobs: jobs, total: total)
    }

    /// What `!jobs`'s words ask for: the room, the filter, the page.
    private func jobQuery(_ inv: Invocation, _ args: inout Args) throws -> (room: Invocation.RoomRef?, filter: JobFilter, page: Int) {
        let room = try self.room(inv, &args, required: false)
        var filter = JobFilter()
        var page = 1
        var words: [String] = []
        let w = when(inv)
        while let word = args.next() {
            let lower = word.lowercased()
            if lower.hasPrefix("status:") {
                var set = Set<Job.Status>()
                for s in lower.dropFirst(7).split(separator: ",") {
                    if s == "open" { set.formUnion([.created, .assigned, .inProgress]) }
                    else if s == "inprogress" || s == "in-progress" || s == "started" { set.insert(.inProgress) }
                    else if let status = Job.Status(rawValue: String(s)) { set.insert(status) }
                    else { throw UsageError("Unknown status \"\(s)\": use created, assigned, in-progress, completed, cancelled or open") }
                }
                filter.statuses = set
            } else if lower.hasPrefix("assignee:") {
                let who = String(word.dropFirst(9))
                filter.assignee = who.lowercased() == "mine" ? inv.account : try account(who, inv)
            } else if lower == "mine" {
                filter.assignee = inv.account
            } else if lower.hasPrefix("due:") || lower.hasPrefix("created:") {
                let isDue = lower.hasPrefix("due:")
                let value = String(lower.drop(while: { $0 != ":" }).dropFirst()).replacingOccurrences(of: "_", with: " ")
                if isDue && value == "overdue" {
                    filter.dueTo = inv.now
                    filter.statuses = filter.statuses ?? [.created, .assigned, .inProgress]
                    continue
                }
                guard let range = isDue ? Self.range(value, w, now: inv.now) : Self.pastRange(value, w, now: inv.now) else {
                    throw UsageError("Cannot read \"\(value)\" as a day or range: try today, tomorrow, fri, 2026-12-01, week, overdue")
                }
                if isDue { filter.dueFrom = range.0; filter.dueTo = range.1 } else { filter.createdFrom = range.0; filter.createdTo = range.1 }
            } else if lower.hasPrefix("page:") {
                guard let n = Int(lower.dropFirst(5)), (1...100_000).contains(n) else {
                    throw UsageError("\"\(word)\" is not a page: pages are numbered from 1, e.g. page:2")
                }
                page = n
            } else if let colon = lower.firstIndex(of: ":"), colon != lower.startIndex,
                      lower[..<colon].allSatisfy({ $0.isLetter }) {
                // A filter this command does not know is refused, not searched for as text.
                throw UsageError("Unknown filter \"\(lower[..<colon]):\": use status:, assignee:, due:, created: or page:, or words to search titles")
            } else {
                words.append(word)
            }
        }
        if !words.isEmpty { filter.text = words.joined(separator: " ") }
        return (room, filter, page)
    }

    /// Words are searched for in titles; a newcomer's `!jobs done` means a status, and is told so
    /// when nothing matched.
    static func statusHint(_ text: String?) -> String? {
        guard let text, !text.contains(" ") else { return nil }
        let status: String
        switch text.lowercased() {
        case "done", "completed", "finished", "closed": status = "completed"
        case "open", "todo", "pending": status = "open"
        case "cancelled", "canceled": status = "cancelled"
        case "started", "doing", "in-progress", "inprogress": status = "in-progress"
        case "assigned": status = "assigned"
        case "created", "new": status = "created"
        case "all", "every", "any": return "(\"\(text)\" was searched for in titles: !jobs alone lists jobs of every status)"
        default: return nil
        }
        return "(\"\(text)\" was searched for in titles: for \(status) jobs, !jobs status:\(status))"
    }

    /// A day (or week) that has passed, for `created:`: `wed` is the last Wednesday (today if it is
    /// one), `yesterday` is there, and `week` is the seven days up to today.
    static func pastRange(_ text: String, _ w: When, now: Date) -> (Date, Date)? {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = w.timeZone
        let today = cal.startOfDay(for: now)
        func day(_ offset: Int) -> (Date, Date) {
            let start = cal.date(byAdding: .day, value: offset, to: today)!
            return (start, cal.date(byAdding: .day, value: 1, to: start)!)
        }
        switch text {
        case "today": return day(0)
        case "yesterday": return day(-1)
        case "week", "this week", "last week": return (cal.date(byAdding: .day, value: -6, to: today)!, day(0).1)
        default:
            if let weekday = When.weekdays[text] {
                return day(-((cal.component(.weekday, from: today) - weekday + 7) % 7))
            }
            return range(text, w, now: now)  // a date
        }
    }

    /// A day to come (`today`, `fri`, `2026-12-01`) or `week` as [start, end), for `due:`.
    static func range(_ text: String, _ w: When, now: Date) -> (Date, Date)? {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = w.timeZone
        if text == "week" || text == "this week" {
            let start = cal.startOfDay(for: now)
            return (start, cal.date(byAdding: .day, value: 7, to: start)!)
        }
        guard case .date(let d)? = w.parse(text, now: now) else { return nil }
        let start = cal.startOfDay(for: d)
        return (start, cal.date(byAdding: .day, value: 1, to: start)!)
    }

    func photo(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!photo <id> [<url>] [caption]"
        let id = try args.id(usage: usage)
        // A link given, or else the photo the asker uploaded last (the web client's camera button,
        // or any client's draft/FILEHOST upload).
        let url: String
        if let word = args.peek, word.contains("://") || (args.words.count == 1 && !word.contains(" ") && word.contains(".")) {
            url = try args.word("link", usage: usage)
        } else {
            url = try uploadedPhoto(inv)
        }
        return announce(try board.addPhoto(id, url: url, caption: args.rest(), by: inv.account))
    }

    /// The link of the asker's latest upload, if it is recent.
    private func uploadedPhoto(_ inv: Invocation) throws -> String {
        guard let links else { throw UsageError("Give the photo's link: this server has no web side to upload to. Usage: !photo <id> <url> [caption]") }
        guard let photo = try accounts.latestPhoto(of: inv.account, since: inv.now - Photo.recentUpload) else {
            throw UsageError("You have uploaded no photo in the last hour: upload one first (the camera button of the web client), or give its link. Usage: !photo <id> [<url>] [caption]")
        }
        return links.photo(photo)
    }

    func mine(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let jobs = try board.mine(inv.account, rooms: Array(inv.rooms.keys))
        guard !jobs.isEmpty else { return Outcome(replies: ["You have no open jobs. !ask work in a room to get some."]) }
        let t = text(inv)
        return Outcome(replies: ["Your open jobs (\(jobs.count)), soonest due first:"] +
                         jobs.map { "  " + t.summary($0, showRoom: true) })
    }

    /// `1 job`, `3 jobs`.
    static func jobs(_ n: Int) -> String { n == 1 ? "1 job" : "\(n) jobs" }

    func stats(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let who = try args.next().map { try account($0, inv) } ?? inv.account
        let count = try board.completed(by: who, in: inv.room?.key, askerRooms: Array(inv.rooms.keys), asker: inv.account)
        // Your own count is said to you: "you have", in all your rooms and on your personal list.
        let (subject, everywhere) = count.includesPersonal ? ("You have", "all your rooms and on your personal list")
                                                           : ("\(who) has", "all the rooms you share")
        var lines: [String] = []
        if let room = inv.room, let n = count.inRoom { lines.append("\(subject) completed \(Self.jobs(n)) in \(room.name).") }
        lines.append("\(subject) completed \(Self.jobs(count.shared)) in \(everywhere).")
        return Outcome(replies: lines)
    }
}
