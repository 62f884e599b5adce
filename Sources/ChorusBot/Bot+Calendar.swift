import ChorusCore
import ChorusWorkspace
import Foundation

/// `!ical`: calendar feeds a calendar app subscribes to, and what a feed holds.
extension Bot {
    static let icalUsage = "!ical | !ical new [#room] | !ical revoke <id>"

    func ical(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        switch args.next()?.lowercased() {
        case nil, "list":
            let feeds = try accounts.calendarFeeds(of: inv.account)
            guard !feeds.isEmpty else { return Outcome(replies: ["You have no calendar feeds. !ical new makes one for your calendar app."]) }
            let at = when(inv)
            return Outcome(replies: ["Your calendar feeds (\(feeds.count)):"] + feeds.map { feed in
                "  \(feed.id) \(feed.room.map { inv.rooms[$0] ?? $0 } ?? "yours") — made \(at.format(feed.createdAt, now: inv.now))"
            })
        case "new":
            // Whoever holds the link reads the calendar: it is shown where only the asker sees it.
            guard inv.inPrivate else {
                throw UsageError("A feed's link is a secret: make it in a private message to me, not in a room. Nothing was made.")
            }
            guard let links else { throw UsageError("Calendar feeds are served by the web side, which is off on this server.") }
            let room = try self.room(inv, &args, required: false)
            guard args.isEmpty else { throw UsageError("Usage: \(Self.icalUsage)") }
            guard try accounts.calendarFeeds(of: inv.account).count < CalendarFeed.maxPerAccount else {
                throw UsageError("You have \(CalendarFeed.maxPerAccount) calendar feeds already: !ical revoke <id> ends one.")
            }
            let feed = try accounts.insertCalendarFeed(CalendarFeed(account: inv.account, room: room?.key, createdAt: inv.now))
            let what = room.map { "\($0.name)'s turns and jobs" } ?? "your turns, jobs and plan"
            return Outcome(replies: [
                "Calendar \(feed.id) (\(what)): \(links.calendar(account: inv.account, feed: feed.id, now: inv.now))",
                "Subscribe to it in your calendar app (add a calendar from a URL). Anyone with the link can read it: !ical revoke \(feed.id) ends it.",
            ])
        case "revoke", "rm":
            guard let word = args.next() else { throw UsageError("Missing feed id. Usage: \(Self.icalUsage)") }
            guard let id = Int64(word), id > 0 else { throw UsageError("\"\(word)\" is not a feed id (a number). Usage: \(Self.icalUsage)") }
            guard try accounts.deleteCalendarFeed(id, of: inv.account) else {
                throw UsageError("You have no calendar feed \(id): !ical lists yours")
            }
            return Outcome(replies: ["Calendar \(id) is revoked: its link no longer works."])
        case let other?:
            throw UsageError("Unknown !ical action \"\(other)\". Usage: \(Self.icalUsage)")
        }
    }

    /// How far ahead a feed shows turns (the agenda's reach).
    static let calendarDays = 62

    /// What a feed holds as `inv`'s account may see it now, in `inv`'s zone: the turns the rotation
    /// will give (so a skip or a swap moves them), open jobs with a due time, and, in a person's own
    /// feed, their weekly plan.
    public func calendar(_ inv: Invocation, room: Invocation.RoomRef?, title: String) throws -> ICalendar {
        var entries: [ICalendar.Entry] = []
        let rooms = room.map { [$0.key] } ?? Array(inv.rooms.keys)
        for (due, chore, person) in try chores.agenda(in: rooms, days: Self.calendarDays, only: room == nil ? inv.account : nil) {
            let place = room == nil ? " (\(inv.rooms[chore.room] ?? chore.room))" : ""
            entries.append(ICalendar.Entry(
                uid: "turn-\(chore.id)-\(Int(due.timeIntervalSince1970))@chorus", sequence: Self.sequence(max(chore.createdAt, chore.turnSince)),
                start: due, minutes: 30, summary: "\(chore.name) — \(person)\(place)",
                description: "\(person)'s turn for \(chore.name) (\(chore.frequency)). !done \(chore.name) when it is done."))
        }
        let open: Set<Job.Status> = [.created, .assigned, .inProgress]
        let jobs: [Job]
        if let room {
            var filter = JobFilter()
            filter.statuses = open
            filter.dueFrom = inv.now.addingTimeInterval(-30 * 86_400)
            filter.limit = 500
            jobs = try board.list(in: room.key, filter: filter, by: inv.account).jobs
        } else {
            jobs = try board.mine(inv.account, rooms: Array(inv.rooms.keys))
        }
        for job in jobs {
            guard let due = job.due, open.contains(job.status) else { continue }
            let place = job.room.map { inv.rooms[$0] ?? $0 } ?? "personal"
            entries.append(ICalendar.Entry(
                uid: "job-\(job.id)@chorus", sequence: Self.sequence(job.updatedAt), start: due, minutes: 30,
                summary: "Due: \(job.title) (job \(job.id)\(job.assignee.map { ", \($0)" } ?? ""))",
                description: [job.description, "Job \(job.id) in \(place), \(job.status.rawValue)."].filter { !$0.isEmpty }.joined(separator: "\n")))
        }
        if room == nil {
            entries += try plannedBlocks(inv)
        }
        return ICalendar(name: title, timeZone: inv.timeZone, entries: entries, now: inv.now)
    }

    /// Each block of the weekly plan, repeating on its days from this week on.
    private func plannedBlocks(_ inv: Invocation) throws -> [ICalendar.Entry] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = inv.timeZone
        let today = calendar.startOfDay(for: inv.now)
        return try time.plan(of: inv.account).compactMap { block -> ICalendar.Entry? in
            // The first of its days on or after a week ago: an occurrence of the rule, as DTSTART must be.
            guard let day = (0..<7).lazy.compactMap({ calendar.date(byAdding: .day, value: $0 - 7, to: today) })
                .first(where: { block.days.contains(calendar.component(.weekday, from: $0)) }),
                  let start = calendar.date(bySettingHour: block.start / 60, minute: block.start % 60, second: 0, of: day) else { return nil }
            return ICalendar.Entry(uid: "plan-\(block.id)@chorus", sequence: 0, start: start, minutes: block.end - block.start,
                                   summary: "Plan: \(block.mode)", description: "Planned in your week (!plan).", weekly: block.days)
        }
    }

    /// Seconds since 2020 of a change: goes up with each change, and fits the 32 bits calendar apps expect.
    private static func sequence(_ changed: Date) -> Int {
        max(0, Int(changed.timeIntervalSince1970) - 1_577_836_800)
    }
}
