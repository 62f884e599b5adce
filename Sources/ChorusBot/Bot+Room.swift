import ChorusCore
import ChorusWorkspace
import Foundation

extension Bot {
    func ask(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!ask reassign <id> [reason] | !ask work [note]"
        let room = try self.room(inv, &args, required: true)!
        switch try args.word("reassign or work", usage: usage).lowercased() {
        case "reassign":
            let id = try args.id(usage: usage)
            let (ask, event) = try board.ask(.reassign, job: id, reason: args.rest(), in: room.key, by: inv.account)
            return Outcome(replies: ["Ask \(ask.id) sent to the managers of \(room.name)."], events: [event])
        case "work":
            let (ask, event) = try board.ask(.work, job: nil, reason: args.rest(), in: room.key, by: inv.account)
            return Outcome(replies: ["Ask \(ask.id) sent to the managers of \(room.name)."], events: [event])
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    func decide(_ inv: Invocation, _ args: inout Args, approve: Bool) throws -> Outcome {
        let usage = approve ? "!approve <ask> [@nick] [note]" : "!deny <ask> [note]"
        let word = try args.word("ask number", usage: usage)
        guard let id = Int64(word) else { throw UsageError("\"\(word)\" is not an ask number. Usage: \(usage)") }
        var successor: String?
        if approve, let next = args.peek, next.hasPrefix("@") {
            _ = args.next()
            successor = try account(next, inv)
        }
        let (ask, event) = try board.decide(id, approve: approve, note: args.rest(), handOverTo: successor, by: inv.account)
        var result = Outcome(events: [event])
        guard approve, ask.kind == .reassign, let jobID = ask.job else { return result }
        // Granting a reassignment releases the asker: the job goes to the named member, or back to
        // unassigned for anyone to take. If it has moved on since the ask, it is left alone.
        let job = try board.store.job(jobID)
        if let job, job.status.isOpen, job.isAssigned(to: ask.by) {
            let change = try successor.map { try board.assign(jobID, to: $0, by: inv.account) } ?? board.unassign(jobID, by: inv.account)
            result.events += change.events
        } else {
            // Say what did not happen, rather than an "approved" that changed nothing.
            let now = job.map { !$0.status.isOpen ? "is \($0.status.rawValue)" : "is \($0.assignee.map { "with \($0)" } ?? "unassigned")" } ?? "is gone"
            result.replies.append("Job \(jobID) \(now) since the ask: it is left as it is\(successor.map { ", not given to \($0)" } ?? "").")
        }
        return result
    }

    func asks(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let room = try self.room(inv, &args, required: true)!
        let open = try board.openAsks(in: room.key, by: inv.account)
        guard !open.isEmpty else { return Outcome(replies: ["No open asks in \(room.name)."]) }
        let t = text(inv)
        return Outcome(replies: ["Open asks in \(room.name):"] + open.map { r in
            let what = r.kind == .reassign ? "reassignment of job \(r.job ?? 0)" : "more work"
            return "  \(r.id). \(r.by) asks for \(what)" + (r.reason.isEmpty ? "" : ": \(r.reason)") + " (\(t.short(r.at)))"
        })
    }

    func room(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!room | !room add <account> … | !room set open on|off | !room set visibility all|own | !room set creators everyone|managers | !room set echo on|off | !room set market on|off | !room close"
        let room = try self.room(inv, &args, required: true)!
        guard let sub = args.next()?.lowercased() else {
            let s = try board.settings(of: room.key)
            let open = RoomSettings.admitsAnyone(chosen: s.open, roomsOpen: inv.roomsOpenByDefault, hasMembers: true)  // the asker is one
            return Outcome(replies: [
                "\(room.name): open \(open ? "on" : "off") (\(open ? "anyone may join" : "members and those invited join")), visibility \(s.visibility.rawValue) (who sees which jobs), creators \(s.creators.rawValue) (who creates jobs), echo \(s.echoCommands ? "on" : "off") (commands shown to the room), market \(s.market ? "on" : "off") (new service requests heard here).",
            ])
        }
        switch sub {
        case "set":
            let key = try args.word("setting", usage: usage).lowercased()
            let value = try args.word("value", usage: usage).lowercased()
            let event: Event
            switch (key, value) {
            case ("visibility", "all"), ("visibility", "own"):
                event = try board.updateSettings(of: room.key, by: inv.account) { $0.visibility = .init(rawValue: value)!; return "visibility \(value)" }
            case ("creators", "everyone"), ("creators", "managers"):
                event = try board.updateSettings(of: room.key, by: inv.account) { $0.creators = .init(rawValue: value)!; return "creators \(value)" }
            case ("echo", "on"), ("echo", "off"):
                event = try board.updateSettings(of: room.key, by: inv.account) { $0.echoCommands = value == "on"; return "echo \(value)" }
            case ("open", "on"), ("open", "off"):
                event = try board.updateSettings(of: room.key, by: inv.account) { $0.open = value == "on"; return "open \(value)" }
            case ("market", "on"), ("market", "off"):
                event = try board.updateSettings(of: room.key, by: inv.account) { $0.market = value == "on"; return "market \(value)" }
            default:
                throw UsageError("Usage: \(usage)")
            }
            return Outcome(events: [event], effects: [.roomSettings(room: room.key, try board.settings(of: room.key))])
        case "add":
            // Several at once (`!room add bob cat`): each is added or told why not, as alone.
            var names = [try args.word("account", usage: usage)]
            while let next = args.next() { names.append(next) }
            var outcome = Outcome()
            for who in names {
                let name = who.hasPrefix("@") ? String(who.dropFirst()) : who
                do {
                    let (membership, event) = try rooms.add(inv.onlineAccounts[Account.key(name)] ?? name, to: room.key, by: inv.account)
                    outcome.events.append(event)
                    outcome.effects.append(.memberAdded(room: membership.room, account: membership.account))
                } catch JobError.invalid(let why) where names.count > 1 {
                    outcome.replies.append(why)
                }
            }
            return outcome
        case "close", "delete":
            try rooms.close(room.key, by: inv.account)
            return Outcome(replies: ["\(room.name) is closed: its members, settings and jobs are gone."], effects: [.closeRoom(room.key, by: inv.nick)])
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    func help(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        if let name = args.next()?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "!")) {
            guard let c = Self.byName[name] else { throw UsageError("There is no command !\(name). Type !help for the list.") }
            var lines = c.syntax.map { "Usage: \($0)" }
            lines.append(c.summary)
            lines.append("Example: \(c.example)")
            let who = c.who ?? ["anyone logged in", "members of the room", "the room's managers"][c.audience.rawValue]
            lines.append("Who: \(who)." + (c.aliases.isEmpty ? "" : " Also: " + c.aliases.map { "!" + $0 }.joined(separator: " ")))
            return Outcome(replies: lines)
        }
        let role: Role? = try inv.room.flatMap { try board.store.role(of: inv.account, in: $0.key) }
        let level: BotCommand.Audience = inv.room == nil ? .manager : role == .manager ? .manager : role == .member ? .member : .anyone
        let usable = Self.commands.filter { $0.audience <= level }.map { "!" + $0.name }
        let place = inv.room.map { " in \($0.name)" } ?? " (in private: name a room, e.g. !jobs #kitchen, or work on your personal list)"
        return Outcome(replies: ["Commands you can use\(place): " + usable.joined(separator: " "),
                                   "!help <command> shows its syntax and an example."])
    }
}
