import ChorusCore
import Foundation

/// Writes events and jobs as the one-line sentences people read, and events as the tags bots read.
public struct EventText: Sendable {
    public let when: When
    public let now: Date
    public let roomName: @Sendable (String) -> String

    public init(when: When, now: Date, roomName: @escaping @Sendable (String) -> String) {
        self.when = when
        self.now = now
        self.roomName = roomName
    }

    public func short(_ date: Date) -> String { when.format(date, now: now) }

    private func dueText(_ iso: String?) -> String? {
        guard let iso, let d = ISO8601DateFormatter().date(from: iso) else { return nil }
        return short(d)
    }

    /// `alice assigned job 12 “Fix the sink” to bob`. Without `hints`, as history reads: what
    /// happened, without the next step it offered then.
    public func line(_ e: Event, withJob: Bool = true, hints: Bool = true) -> String {
        let d = e.data
        let job = e.job.map { withJob ? "job \($0) “\(d["title"] ?? "")”" : "job \($0)" } ?? "a job"
        let itJob = withJob ? job : "it"
        switch e.type {
        case EventType.jobCreated:
            var s = "\(e.actor) created \(job)"
            if let a = d["assignee"] { s += " for \(a)" }
            if let due = dueText(d["due"]) { s += ", due \(due)" }
            return s
        case EventType.jobAssigned:
            return "\(e.actor) assigned \(itJob) to \(d["assignee"] ?? "?")" + (d["previous"].map { " (was \($0))" } ?? "")
        case EventType.jobUnassigned:
            if let reason = d["reason"] { return "\(itJob.prefix(1).uppercased() + itJob.dropFirst()) is unassigned: \(reason)" }
            return "\(e.actor) unassigned \(itJob)" + (d["previous"].map { " (was \($0))" } ?? "")
        case EventType.jobStatus:
            let verb: String
            switch d["to"] {
            case "in-progress": verb = "started"
            case "completed": verb = "completed"
            case "cancelled": verb = "cancelled"
            default: verb = "reopened"
            }
            return "\(e.actor) \(verb) \(itJob) (\(d["from"] ?? "?") → \(d["to"] ?? "?"))" + (d["reason"].map { ": \($0)" } ?? "")
        case EventType.jobEdited:
            let field = d["field"] ?? "details"
            if field == "due" { return "\(e.actor) set the due time of \(itJob) to \(dueText(d["new"]) ?? "none")" }
            if field == "description" { return "\(e.actor) changed the description of \(itJob)" }
            return "\(e.actor) renamed job \(e.job ?? 0) from “\(d["old"] ?? "")” to “\(d["new"] ?? "")”"
        case EventType.jobComment:
            return "\(e.actor) commented on \(itJob): \(d["text"] ?? "")"
        case EventType.jobPhoto:
            return "\(e.actor) added a photo to \(itJob): \(d["url"] ?? "")" + ((d["caption"] ?? "").isEmpty ? "" : " \(d["caption"]!)")
        case EventType.taskAdded:
            return "\(e.actor) added task \(d["task"] ?? "?") to \(itJob): \(d["text"] ?? "")"
        case EventType.taskDone:
            return "\(e.actor) ticked task \(d["task"] ?? "?") of \(itJob): \(d["text"] ?? "") (\(d["progress"] ?? ""))"
        case EventType.askOpened:
            let what = d["kind"] == "reassign" ? "to be taken off \(job)" : "for more work"
            let n = d["ask"] ?? "?"
            return "\(e.actor) asks \(what)" + (d["reason"].map { ": \($0)" } ?? "") + " — ask \(n): !approve \(n) or !deny \(n)"
        case EventType.askDecided:
            let what = d["kind"] == "reassign" ? "reassignment of \(job)" : "more work"
            return "\(e.actor) \(d["state"] ?? "answered") \(d["by"] ?? "someone")'s ask \(d["ask"] ?? "") for \(what)" +
                (d["note"].map { ": \($0)" } ?? "")
        case EventType.choreAdded:
            return "\(e.actor) added the chore \(d["chore"] ?? "?"), \(d["frequency"] ?? "") at \(d["at"] ?? "?"): " +
                (d["rotation"] ?? "").split(separator: " ").joined(separator: " → ")
        case EventType.choreRemoved:
            return "\(e.actor) removed the chore \(d["chore"] ?? "?")"
        case EventType.choreOrder:
            return "\(e.actor) set the \(d["chore"] ?? "?") rotation: " + (d["rotation"] ?? "").split(separator: " ").joined(separator: " → ")
        case EventType.turnStarted:
            // "then" names someone else: alone in a rotation (or with everyone else away) there is no one to name.
            let then = d["next"].flatMap { $0 == d["turn"] ? nil : " (then \($0))" } ?? ""
            return "It is \(d["turn"] ?? "?")'s turn for \(d["chore"] ?? "?"), due \(dueText(d["due"]) ?? "?")\(then)"
        case EventType.turnDone:
            let covering = d["covered"].map { ", covering for \($0)" } ?? ""
            return "\(e.actor) did \(d["chore"] ?? "?")\(covering)" + (d["late"] != nil ? " (late)" : "")
        case EventType.turnSwapAsked:
            let chore = d["chore"] ?? "?"
            return "\(e.actor) asks \(d["with"] ?? "?") to swap places for \(chore) — \(d["with"] ?? "?"): !accept \(chore) or !decline \(chore)"
        case EventType.turnSwapped:
            return "\(e.actor) and \(d["with"] ?? "?") swapped places for \(d["chore"] ?? "?"): " +
                (d["rotation"] ?? "").split(separator: " ").joined(separator: " → ")
        case EventType.turnSwapDeclined:
            return "\(e.actor) declined to swap \(d["chore"] ?? "?") with \(d["with"] ?? "?")"
        case EventType.choreEdited:
            return "\(e.actor) changed \(d["chore"] ?? "?"): \(d["frequency"] ?? "") at \(d["at"] ?? "?")"
        case EventType.memberAway:
            return "\(e.actor) is away until \(dueText(d["until"]) ?? "?"): their turns until then pass to the next person"
        case EventType.memberBack:
            return "\(e.actor) is back and in the rotations again"
        case EventType.turnDue:
            return "Your turn: \(d["chore"] ?? "?") in \(e.room.map(roomName) ?? "?") is due now (\(dueText(d["due"]) ?? "?")). !done \(d["chore"] ?? "") when it is"
        case EventType.turnOverdue:
            if e.reach == .concerned {
                return "Reminder: \(d["chore"] ?? "?") in \(e.room.map(roomName) ?? "?") is overdue since \(dueText(d["due"]) ?? "?"). !done \(d["chore"] ?? "") or !skip \(d["chore"] ?? "")"
            }
            return "\(d["chore"] ?? "?") is overdue: \(d["turn"] ?? "?")'s turn, due \(dueText(d["due"]) ?? "?")"
        case EventType.turnSkipped:
            let whose = d["turn"].map { $0 == e.actor ? "their" : "\($0)'s" } ?? "the"
            return "\(e.actor) skipped \(whose) turn for \(d["chore"] ?? "?")" + (d["reason"].map { ": \($0)" } ?? "")
        case EventType.listItemAdded:
            return "\(e.actor) added \(d["item"] ?? "?") to the \(d["list"] ?? "?") list"
        case EventType.listItemDone:
            return "\(e.actor) ticked \(d["item"] ?? "?") on the \(d["list"] ?? "?") list"
        case EventType.listItemRemoved:
            return "\(e.actor) removed \(d["item"] ?? "?") from the \(d["list"] ?? "?") list"
        case EventType.memberRole:
            let role = d["role"] == Role.manager.rawValue ? "a manager" : "a member"
            return "\(e.actor) made \(d["member"] ?? "?") \(role) of \(e.room.map(roomName) ?? "the room")"
        case EventType.memberAdded:
            return "\(e.actor) added \(d["member"] ?? "?") to \(e.room.map(roomName) ?? "the room")"
        case EventType.choreLeft:
            return "\(d["member"] ?? "?") is out of the \(d["chore"] ?? "?") rotation: " +
                ((d["rotation"] ?? "").isEmpty ? "nobody is left in it" : (d["rotation"] ?? "").split(separator: " ").joined(separator: " → "))
        case EventType.timeLogged:
            let minutes = Int(d["minutes"] ?? "") ?? 0
            return "\(e.actor) logged \(TimeRules.duration(minutes * 60)) on \(itJob)"
        case EventType.timeCorrected:
            let minutes = Int(d["minutes"] ?? "") ?? 0, previous = Int(d["previous"] ?? "") ?? 0
            if minutes == 0 { return "\(e.actor) took back the \(TimeRules.duration(previous * 60)) they logged on \(itJob)" }
            return "\(e.actor) corrected their time on \(itJob) to \(TimeRules.duration(minutes * 60)) (it was \(TimeRules.duration(previous * 60)))"
        case EventType.timeNudge:
            let what = d["job"].map { "Your timer on job \($0)" } ?? "Your \(d["mode"] ?? "") timer"
            return "\(what) has been running for \(TimeRules.duration((Int(d["minutes"] ?? "") ?? 0) * 60)): " +
                "!track stop, or !track stop at <HH:MM> if you stopped earlier"
        case EventType.timePlanned:
            let mode = d["mode"] ?? "?"
            return "Your plan says \(mode) from \(d["from"] ?? "?") to \(d["to"] ?? "?"), and no timer runs: !track start \(mode)"
        case let type where type.hasPrefix("time."):
            return "\(e.actor): \(type) \(d["mode"] ?? "")"
        case let type where type.hasPrefix("request."):
            return requestLine(e, hints: hints)
        case EventType.roomSettings:
            return "\(e.actor) set \(d["setting"] ?? "a setting")\(d["value"].map { " " + $0 } ?? "") in \(e.room.map(roomName) ?? "the room")"
        default:
            return "\(e.actor): \(e.type)"
        }
    }

    /// A service request's event: `alice posted request 3 (plumbing): Fix the tap · budget 80`,
    /// with the next step after a `—` while the request still stands where the event left it.
    private func requestLine(_ e: Event, hints: Bool) -> String {
        let d = e.data
        let n = d["request"] ?? "?"
        let what = "request \(n) (\(d["category"] ?? "?"))"
        /// The hint, only while the request's status (as the event carries it) is still `status`.
        func hinted(_ sentence: String, _ hint: String, while status: ServiceRequest.Status?) -> String {
            guard hints, status.map({ d["status"] == $0.rawValue }) ?? true else { return sentence }
            return sentence + " — " + hint
        }
        switch e.type {
        case EventType.requestPosted:
            var s = "\(e.actor) posted \(what): \(d["description"] ?? "")"
            for (key, label) in [("budget", "budget "), ("at", "at "), ("when", ""), ("takes", "takes ")] {
                if let v = d[key] { s += " · \(label)\(v)" }
            }
            return hinted(s, "!offer \(n) <price> [note]", while: .open)
        case EventType.requestEdited:
            return "\(e.actor) changed \(what): \(d["field"] ?? "?") is now \(d["value"] ?? "?")"
        case EventType.requestCancelled:
            return "\(e.actor) cancelled \(what): \(d["reason"] ?? "")"
        case EventType.requestOffered:
            return hinted("\(e.actor) \(d["changed"] == nil ? "offered" : "changed their offer to") \(d["price"] ?? "?") on \(what)" +
                          (d["note"].map { ": \($0)" } ?? ""), "!offers \(n), !hire \(n) \(e.actor)", while: .open)
        case EventType.requestHired:
            if d["outcome"] == "taken" { return "\(e.actor) hired someone else for \(what): thank you for your offer" }
            return hinted("\(e.actor) hired \(d["contractor"] ?? "?") for \(what) at \(d["price"] ?? "?")",
                          "!request done \(n) once it is finished", while: .hired)
        case EventType.requestDone:
            return hinted("\(e.actor) finished \(what)", "!request confirm \(n), or !request dispute \(n) <what is wrong>", while: .done)
        case EventType.requestConfirmed:
            return "\(e.actor) confirmed \(what) is done"
        case EventType.requestDisputed:
            return hinted("\(e.actor) disputed \(what): \(d["reason"] ?? "")",
                          "!request done \(n) once it is put right, or !request cancel \(n) <reason>", while: .disputed)
        case EventType.requestReviewed:
            if let reply = d["reply"] { return "\(e.actor) answered the review of \(what): \(reply)" }
            return hinted("\(e.actor) rated \(what) \(d["rating"] ?? "?")/5: \(d["text"] ?? "")", "!review reply \(n) <text> answers it", while: nil)
        case EventType.requestExpired:
            return "\(what.prefix(1).uppercased() + what.dropFirst()) expired: its window passed without a hire"
        case EventType.requestMessage:
            return hinted("\(e.actor) about \(what): \(d["text"] ?? "")", "!request msg \(n) <text> answers", while: nil)
        default:
            return "\(e.actor): \(e.type) \(what)"
        }
    }

    /// `12 [in-progress] Fix the sink → bob · due Fri 27 Nov 17:00 · 2/5`
    public func summary(_ job: Job, showRoom: Bool = false) -> String {
        var s = "\(job.id) [\(job.status.rawValue)] \(job.title)"
        if let a = job.assignee { s += " → \(a)" }
        if let due = job.due { s += " · due \(short(due))" + (job.status.isOpen && due < now ? " (overdue)" : "") }
        if !job.tasks.isEmpty { s += " · \(job.tasksDone)/\(job.tasks.count)" }
        if showRoom { s += " · " + (job.room.map(roomName) ?? "personal") }
        return s
    }

    /// Machine-readable tags for an event line (IRCv3 message-tags, vendor prefix `chorus/`).
    public static func tags(_ e: Event, roomName: String?) -> [(String, String)] {
        var tags: [(String, String)] = [("chorus/event", e.type), ("chorus/actor", e.actor), ("chorus/event-id", String(e.id))]
        if let job = e.job { tags.append(("chorus/job", String(job))) }
        if let roomName { tags.append(("chorus/room", roomName)) }
        // An event has a handful of fields: look each up among the tagged ones, rather than
        // looking every tagged name up in the event (20 hashes and 20 new strings per event).
        var fields: [(Int, String, String)] = []
        for (key, value) in e.data {
            if let i = taggedIndex[key] { fields.append((i, taggedFields[i].tag, value)) }
        }
        fields.sort { $0.0 < $1.0 }
        for (_, tag, value) in fields { tags.append((tag, value)) }
        return tags
    }

    /// The event fields bots read as tags, in the order they are written.
    private static let taggedFields: [(key: String, tag: String)] = [
        "status", "from", "to", "assignee", "previous", "task", "progress", "ask", "state", "kind", "due", "url",
        "chore", "turn", "next", "covered", "list", "item", "with", "until",
        "request", "customer", "contractor", "category", "price", "budget", "rating", "minutes", "setting", "value",
    ].map { ($0, "chorus/" + $0) }
    private static let taggedIndex: [String: Int] = Dictionary(uniqueKeysWithValues: taggedFields.enumerated().map { ($1.key, $0) })
}
