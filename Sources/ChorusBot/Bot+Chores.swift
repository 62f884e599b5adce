import ChorusCore
import ChorusWorkspace
import Foundation

extension Bot {
    static let choreUsage = "!chore add <name> every <frequency> [at <HH:MM>] [from <when>] [among <nick> <nick> …] | !chore order <chore> <nick> … | !chore edit <chore> every <frequency> | at <HH:MM> | !chore rm <chore>"

    func chore(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        // `#room` before or after the verb, in private: `!chore add #kitchen …` as `!job add #kitchen …`.
        let named = args.peek?.hasPrefix("#") == true ? try self.room(inv, &args, required: true) : nil
        let verb = try args.word("add, order or rm", usage: Self.choreUsage).lowercased()
        let room = try named ?? self.room(inv, &args, required: true)!
        switch verb {
        case "add", "new":
            let name = try args.word("chore name", usage: Self.choreUsage)
            let frequency: Frequency
            switch args.next()?.lowercased() {
            case "every"?:
                frequency = try Self.frequency(&args, until: ["at", "from", "among"])
            case let word? where Frequency.adverbs.contains(word):
                frequency = Frequency.parse(word)!
            default:
                throw UsageError("Say how often: \(Self.choreUsage)")
            }
            var hour = 18, minute = 0
            var start: Date?
            var among: [String]?
            while let w = args.next()?.lowercased() {
                switch w {
                case "at":
                    let t = try args.word("time of day", usage: Self.choreUsage)
                    guard let time = When.time(t.lowercased()) else { throw UsageError("\"\(t)\" is not a time of day like 20:00 or 8pm") }
                    (hour, minute) = time
                case "from":
                    var words: [String] = []
                    while let p = args.peek, p.lowercased() != "among", p.lowercased() != "at" { words.append(args.next()!) }
                    guard case .date(let d)? = when(inv).parse(words.joined(separator: " "), now: inv.now) else {
                        throw UsageError("Cannot read \"\(words.joined(separator: " "))\" as a day: try tomorrow, mon, 2026-12-01")
                    }
                    start = d
                case "among":
                    among = []
                    while let p = args.next() { among!.append(try account(p, inv)) }
                default:
                    throw UsageError("Usage: \(Self.choreUsage)")
                }
            }
            let (_, events) = try chores.add(name: name, frequency: frequency, hour: hour, minute: minute, from: start,
                                             among: among, in: room.key, by: inv.account)
            return Outcome(events: events)
        case "order":
            let name = try args.word("chore name", usage: Self.choreUsage)
            var people: [String] = []
            while let p = args.next() { people.append(try account(p, inv)) }
            return Outcome(events: try chores.reorder(name, rotation: people, in: room.key, by: inv.account).1)
        case "edit":
            let name = try args.word("chore name", usage: Self.choreUsage)
            var frequency: Frequency?
            var time: (Int, Int)?
            while let w = args.next()?.lowercased() {
                if w == "every" {
                    frequency = try Self.frequency(&args, until: ["at"])
                } else if Frequency.adverbs.contains(w) {
                    frequency = Frequency.parse(w)
                } else if w == "at" {
                    let t = try args.word("time of day", usage: Self.choreUsage)
                    guard let parsed = When.time(t.lowercased()) else { throw UsageError("\"\(t)\" is not a time of day like 20:00 or 8pm") }
                    time = parsed
                } else {
                    throw UsageError("Usage: \(Self.choreUsage)")
                }
            }
            guard frequency != nil || time != nil else { throw UsageError("Say what changes: !chore edit \(name) every <frequency> | at <HH:MM>") }
            return Outcome(events: try chores.edit(name, frequency: frequency, hour: time?.0, minute: time?.1, in: room.key, by: inv.account))
        case "rm", "remove", "delete":
            let name = try args.word("chore name", usage: Self.choreUsage)
            return Outcome(events: [try chores.remove(name, in: room.key, by: inv.account)])
        default:
            throw UsageError("Usage: \(Self.choreUsage)")
        }
    }

    func doChore(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        let name = try args.word("chore", usage: "!done <chore>")
        return Outcome(events: try chores.done(name, in: room.key, by: inv.account).1)
    }

    func skip(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        let name = try args.word("chore", usage: "!skip <chore> [reason]")
        return Outcome(events: try chores.skip(name, reason: args.rest(), in: room.key, by: inv.account).1)
    }

    func swap(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!swap <chore> <nick>"
        let room = try self.room(inv, &args, required: true)!
        let name = try args.word("chore", usage: usage)
        let other = try account(try args.word("nick", usage: usage), inv)
        return Outcome(events: [try chores.askSwap(name, with: other, in: room.key, by: inv.account)])
    }

    func answerSwap(_ inv: Invocation, _ args: inout Args, accept: Bool) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        return Outcome(events: try chores.answerSwap(args.next(), accept: accept, in: room.key, by: inv.account))
    }

    func away(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!away <duration> | !away until <when>"
        let room = try self.room(inv, &args, required: true)!
        let typed = args.rest()
        var words = typed
        guard !words.isEmpty else { throw UsageError("For how long? Usage: \(usage), e.g. !away 3d or !away until fri") }
        if words.lowercased().hasPrefix("until ") { words = String(words.dropFirst(6)) } else if !words.lowercased().hasPrefix("in ") { words = "in " + words }
        guard case .date(let until)? = when(inv).parse(words, now: inv.now) else {
            throw UsageError("Cannot read \"\(typed)\" as a time: try 3d, 2 weeks, until fri, until 2026-12-01")
        }
        return Outcome(events: try chores.away(until: until, in: room.key, by: inv.account))
    }

    func back(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        return Outcome(events: try chores.back(in: room.key, by: inv.account))
    }

    func turnLine(_ c: Chore, _ inv: Invocation) throws -> String {
        let t = text(inv)
        let late = c.due < inv.now ? " (overdue)" : ""
        let next = try chores.nextUp(c)
        return "\(c.name): \(c.whoseTurn)'s turn since \(t.short(c.turnSince)), due \(t.short(c.due))\(late)" +
            (next == c.whoseTurn ? "" : "; next \(next)")
    }

    func turn(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        if let name = args.next() {
            return Outcome(replies: [try turnLine(try chores.turn(name, in: room.key, by: inv.account), inv)])
        }
        let all = try chores.chores(in: room.key, by: inv.account)
        guard !all.isEmpty else { return Outcome(replies: ["No chores in \(room.name) yet: !help chore"]) }
        return Outcome(replies: try all.map { try turnLine($0, inv) })
    }

    func listChores(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        let all = try chores.chores(in: room.key, by: inv.account)
        guard !all.isEmpty else { return Outcome(replies: ["No chores in \(room.name) yet: !help chore"]) }
        let t = text(inv)
        return Outcome(replies: ["Chores in \(room.name):"] + all.map { c in
            "  \(c.name), \(c.frequency) at \(String(format: "%02d:%02d", c.hour, c.minute)): \(c.rotation.joined(separator: " → ")); now \(c.whoseTurn), due \(t.short(c.due))"
        })
    }

    func agenda(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        var mine = false
        var days = 7
        while let w = args.next() {
            if w.lowercased() == "mine" { mine = true } else if let n = Int(w), (1...62).contains(n) { days = n } else {
                throw UsageError("Usage: !agenda [days] | !agenda mine [days] (days: 1-62)")
            }
        }
        let rooms: [String]
        if mine || inv.room == nil {
            mine = true
            rooms = Array(inv.rooms.keys)
        } else {
            rooms = [inv.room!.key]
            guard try board.store.role(of: inv.account, in: rooms[0]) != nil else { throw JobError.notInRoom(inv.room!.name) }
        }
        let items = try chores.agenda(in: rooms, days: days, only: mine ? inv.account : nil)
        let place = mine ? "Your turns" : "Turns in \(inv.room!.name)"
        guard !items.isEmpty else { return Outcome(replies: ["\(place): nothing in the next \(days) days."]) }
        let t = text(inv)
        var lines = ["\(place), next \(days) days:"]
        var lastDay = ""
        for (due, chore, person) in items {
            let stamp = t.short(due)
            let day = String(stamp.split(separator: " ").prefix(3).joined(separator: " "))
            let time = String(stamp.split(separator: " ").last ?? "")
            let roomName = mine ? " (\(inv.rooms[chore.room] ?? chore.room))" : ""
            lines.append((day == lastDay ? "              " : "  " + day.padding(toLength: 12, withPad: " ", startingAt: 0)) +
                         "\(time) \(chore.name) — \(person)\(roomName)")
            lastDay = day
        }
        return Outcome(replies: lines)
    }

    func list(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!list <name> [add <item>, <item> | done <item|n> | rm <item|n>]"
        let room = try self.room(inv, &args, required: true)!
        let name = try args.word("list name", usage: usage)
        guard let sub = args.next()?.lowercased() else {
            let list = try chores.list(name, in: room.key, by: inv.account)
            guard !list.items.isEmpty else { return Outcome(replies: ["The \(list.name) list is empty: !list \(list.name) add <item>"]) }
            let open = list.items.filter { !$0.done }.count
            return Outcome(replies: ["\(list.name) (\(open) to do):"] + list.items.enumerated().map { i, item in
                "  \(i + 1). [\(item.done ? "x" : " ")] \(item.text)"
            })
        }
        let rest = args.rest()
        switch sub {
        case "add":
            return Outcome(events: try chores.addItems(rest.split(separator: ",").map(String.init), to: name, in: room.key, by: inv.account))
        case "done", "tick", "got":
            guard !rest.isEmpty else { throw UsageError("Which item? Usage: \(usage)") }
            return Outcome(events: try chores.completeItem(rest, on: name, in: room.key, by: inv.account))
        case "rm", "remove", "del":
            guard !rest.isEmpty else { throw UsageError("Which item? Usage: \(usage)") }
            return Outcome(events: try chores.removeItem(rest, from: name, in: room.key, by: inv.account))
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    func lists(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        let all = try chores.lists(in: room.key, by: inv.account)
        guard !all.isEmpty else { return Outcome(replies: ["No lists in \(room.name) yet: !list groceries add milk"]) }
        return Outcome(replies: ["Lists in \(room.name): " + all.map { "\($0.name) (\($0.items.filter { !$0.done }.count) to do)" }.joined(separator: ", ")])
    }

    /// The words after `every`, up to the next of `stops`, as a frequency.
    private static func frequency(_ args: inout Args, until stops: Set<String>) throws -> Frequency {
        var words: [String] = []
        while let w = args.peek, !stops.contains(w.lowercased()) { words.append(args.next()!) }
        guard !words.isEmpty else { throw UsageError("Say how often after every: day, week, 3 days, 2 weeks, fortnight, mon,thu, weekdays, month") }
        guard let frequency = Frequency.parse(words.joined(separator: " ")) else {
            throw UsageError("Cannot read \"\(words.joined(separator: " "))\" as a frequency: day, week, 3 days, 2 weeks, fortnight, mon,thu, weekdays, month")
        }
        return frequency
    }
}
