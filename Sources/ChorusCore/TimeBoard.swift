import Foundation

/// The rules of tracked time: one timer per person, entries that never overlap, nothing in the
/// future, modes of one's own, and time on a job only on a job one may see. Starts, stops and edits
/// are stored as events with the change, for nobody but the person; time on a room's job is told to
/// the room when its entry closes (`time.logged`), and again if that time is changed or taken back
/// (`time.corrected`).
public struct TimeBoard: Sendable {
    public let store: any Store & JobStore & TimeStore
    public let jobs: JobBoard
    public let now: @Sendable () -> Date

    public init(store: any Store & JobStore & TimeStore, jobs: JobBoard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.jobs = jobs
        self.now = now
    }

    /// What time is spent on: a mode, or a job.
    public enum Target: Equatable, Sendable {
        case mode(String)
        case job(Int64)
    }

    // MARK: Modes

    public func modes(of actor: String) throws -> (presets: [String], own: [String]) {
        (TimeRules.presets, try store.modes(of: actor))
    }

    public func addMode(_ name: String, by actor: String) throws -> String {
        // One word: in `!track start <mode> <note>` the words after it are the note.
        let words = name.split(separator: " ")
        guard words.count <= 1 else {
            throw JobError.invalid("A mode's name is one word (\(words.joined(separator: "-").lowercased())?): the words after it in !track start are its note")
        }
        guard let mode = TimeRules.mode(name) else {
            throw JobError.invalid("“\(name)” is not a mode name: letters, digits and hyphens, up to 24 characters")
        }
        guard try !TimeRules.presets.contains(mode) && !store.modes(of: actor).contains(mode) else {
            throw JobError.invalid("You already have the mode \(mode)")
        }
        guard try store.modes(of: actor).count < 50 else { throw JobError.invalid("At most 50 modes of your own") }
        try store.addMode(mode, of: actor)
        return mode
    }

    public func removeMode(_ name: String, by actor: String) throws -> String {
        let mode = TimeRules.mode(name) ?? name.lowercased()
        if TimeRules.presets.contains(mode) { throw JobError.invalid("\(mode) is one of everyone's modes: it stays") }
        guard try store.removeMode(mode, of: actor) else { throw JobError.invalid("You have no mode \(mode)") }
        return mode
    }

    // MARK: The timer

    /// Starts a timer; one that was running stops first (returned, with its events).
    /// Starts a timer, stopping the one that runs. One that ran under a minute was a slip (`!track
    /// switch` right after a start): it is thrown away rather than kept as a 0m entry (`replaced`).
    public func start(_ target: Target, note: String, by actor: String)
        throws -> (started: TimeEntry, stopped: TimeEntry?, replaced: Bool, events: [Event]) {
        var entry = try self.entry(for: target, note: note, by: actor)
        var events: [Event] = []
        var stopped: TimeEntry?
        var replaced = false
        if var running = try store.runningEntry(of: actor) {
            running.end = max(now(), running.start)
            let (kept, closing) = try close(running)
            events += closing
            replaced = !kept
            stopped = running
        }
        entry.start = now()
        entry = try store.insertEntry(entry)
        events += try store.insertEvents([personal(EventType.timeStarted, entry)])
        return (entry, stopped, replaced, events)
    }

    /// Stops the running timer, now or at a time since it started. One that ran under a minute
    /// was a slip: it is not `kept` as a 0m entry.
    public func stop(at time: Date? = nil, by actor: String) throws -> (entry: TimeEntry, kept: Bool, events: [Event]) {
        guard var running = try store.runningEntry(of: actor) else { throw JobError.invalid("No timer is running. !track start <mode> starts one") }
        let end = time ?? now()
        guard end <= now() else { throw JobError.invalid("That is in the future: a timer stops now or earlier") }
        guard end >= running.start else { throw JobError.invalid("The timer started at a later time than that") }
        running.end = end
        let (kept, events) = try close(running)
        return (running, kept, events)
    }

    /// Ends a timer with the end it is given: stored, or thrown away when it ran under a minute.
    private func close(_ entry: TimeEntry) throws -> (kept: Bool, events: [Event]) {
        guard entry.end!.timeIntervalSince(entry.start) >= 60 else {
            try store.deleteEntry(entry.id)
            return (false, try store.insertEvents([personal(EventType.timeCancelled, entry)]))
        }
        try store.updateEntry(entry)
        return (true, try closed(entry, type: EventType.timeStopped))
    }

    /// Throws the running timer away, as if it never ran.
    public func cancel(by actor: String) throws -> (TimeEntry, Event) {
        guard let running = try store.runningEntry(of: actor) else { throw JobError.invalid("No timer is running") }
        try store.deleteEntry(running.id)
        return (running, try store.insertEvents([personal(EventType.timeCancelled, running)])[0])
    }

    /// The person's last connection closed at `time`: a running timer remembers it, to ask at
    /// their next login whether they were still at it (the first time they left counts).
    public func noteLeft(_ actor: String, at time: Date) throws {
        guard var running = try store.runningEntry(of: actor), running.leftAt == nil else { return }
        running.leftAt = time
        try store.updateEntry(running)
    }

    /// `!track keep`: the timer ran on while they were away; it keeps running and is not asked about again.
    public func keep(by actor: String) throws -> TimeEntry {
        guard var running = try store.runningEntry(of: actor) else { throw JobError.invalid("No timer is running") }
        running.leftAt = nil
        try store.updateEntry(running)
        return running
    }

    public func running(of actor: String) throws -> TimeEntry? {
        try store.runningEntry(of: actor)
    }

    // MARK: Entries by hand

    /// Adds a finished entry; it may not reach into the future nor overlap another.
    public func add(_ target: Target, from start: Date, to end: Date, note: String, by actor: String) throws -> (TimeEntry, [Event]) {
        var entry = try self.entry(for: target, note: note, by: actor)
        entry.start = start
        entry.end = end
        try check(entry)
        entry = try store.insertEntry(entry)
        return (entry, try closed(entry, type: EventType.timeAdded))
    }

    /// A field of an entry its owner may change.
    public enum Field: Sendable {
        case start(Date)
        case end(Date)
        case target(Target)
        case note(String)
    }

    /// Changes a field of an entry. When that changes the time a finished entry gave a room's job,
    /// the room hears it, as it heard the time logged.
    public func edit(_ id: Int64, _ field: Field, by actor: String) throws -> (TimeEntry, [Event]) {
        let before = try own(id, by: actor)
        var entry = before
        let name: String
        switch field {
        case .start(let date): entry.start = date; name = "start"
        case .end(let date):
            guard !entry.isRunning else { throw JobError.invalid("Entry \(id) is running: !track stop at <HH:MM> ends it") }
            entry.end = date; name = "end"
        case .target(let target):
            let made = try self.entry(for: target, note: entry.note, by: actor)
            entry.mode = made.mode; entry.job = made.job; entry.room = made.room; name = "mode"
        case .note(let text): entry.note = try Self.note(text); name = "note"
        }
        try check(entry)
        try store.updateEntry(entry)
        var event = personal(EventType.timeEdited, entry)
        event.data["field"] = name
        return (entry, try store.insertEvents([event] + jobsTold(before: before, after: entry)))
    }

    /// Removes an entry; time it gave a room's job is taken back, and the room hears it.
    public func remove(_ id: Int64, by actor: String) throws -> (TimeEntry, [Event]) {
        let entry = try own(id, by: actor)
        try store.deleteEntry(id)
        return (entry, try store.insertEvents([personal(EventType.timeRemoved, entry)] + jobsTold(before: entry, after: nil)))
    }

    /// The actor's entry `id`; someone else's is answered as if it did not exist.
    public func own(_ id: Int64, by actor: String) throws -> TimeEntry {
        guard let entry = try store.entry(id), Account.key(entry.account) == Account.key(actor) else {
            throw JobError.invalid("You have no entry \(id): !track log shows yours")
        }
        return entry
    }

    // MARK: Reading

    public func entries(of actor: String, from: Date, to: Date) throws -> [TimeEntry] {
        try store.entries(of: actor, from: from, to: to)
    }

    /// Seconds logged on a job by everyone, in finished entries.
    public func seconds(onJob id: Int64) throws -> Int {
        try store.seconds(onJob: id)
    }

    public func totals(of actor: String, from: Date, to: Date, by grouping: TimeGrouping) throws -> [TimeTotal] {
        guard from < to else { throw JobError.invalid("A report's range ends after it starts") }
        return try store.totals(of: actor, from: from, to: to, now: now(), by: grouping)
    }

    /// Time members logged on a room's jobs: a manager sees everyone's, a member their own.
    public func roomTotals(_ room: String, from: Date, to: Date, by grouping: TimeGrouping, by actor: String) throws -> [TimeTotal] {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(try store.roomName(room) ?? room) }
        guard grouping == .person || grouping == .job else { throw JobError.invalid("A room's report is by person or by job") }
        guard from < to else { throw JobError.invalid("A report's range ends after it starts") }
        return try store.roomTotals(room, from: from, to: to, now: now(), byJob: grouping == .job,
                                    account: role == .manager ? nil : actor)
    }

    // MARK: Limits

    /// `!track limit 10h`: how long the actor's timer runs before they are nudged (nil: the default).
    public func setLimit(_ minutes: Int?, by actor: String) throws -> Event {
        if let minutes { guard (15...(24 * 60)).contains(minutes) else { throw JobError.invalid("A limit is between 15m and 24h") } }
        try store.setTimerLimit(minutes, of: actor)
        // An event, stored and told to nobody, so the scheduler looks again at what comes due.
        let event = Event(type: EventType.timeLimit, room: nil, job: nil, actor: actor,
                          data: ["minutes": String(minutes ?? TimeRules.defaultLimitMinutes)], at: now(), reach: .concerned)
        return try store.insertEvents([event])[0]
    }

    public func limit(of actor: String) throws -> Int {
        try store.timerLimit(of: actor) ?? TimeRules.defaultLimitMinutes
    }

    /// Timers past their owner's limit earn one nudge each, told to the owner alone.
    public func nudge() throws -> [Event] {
        var events: [Event] = []
        for entry in try store.runningPastLimit(at: now(), defaultMinutes: TimeRules.defaultLimitMinutes) {
            try store.markNudged(entry.id)
            var event = personal(EventType.timeNudge, entry)
            event.data["minutes"] = String(Int(now().timeIntervalSince(entry.start)) / 60)
            event.concerns = [entry.account]
            events.append(event)
        }
        return events.isEmpty ? [] : try store.insertEvents(events)
    }

    public func nextNudge() throws -> Date? {
        try store.nextTimerLimit(defaultMinutes: TimeRules.defaultLimitMinutes)
    }

    // MARK: The weekly plan

    /// Adds a block to the actor's weekly plan: a mode they have, on some days, between two times
    /// of one day; blocks do not overlap.
    public func addPlan(_ mode: String, days: Set<Int>, from start: Int, to end: Int, by actor: String) throws -> PlanBlock {
        let entry = try self.entry(for: .mode(mode), note: "", by: actor)
        guard start < end, start >= 0, end <= 24 * 60 else { throw JobError.invalid("A block ends after it starts, the same day") }
        let blocks = try store.planBlocks(of: actor)
        guard blocks.count < 100 else { throw JobError.invalid("At most 100 blocks in a plan") }
        if let clash = blocks.first(where: { !$0.days.isDisjoint(with: days) && $0.start < end && start < $0.end }) {
            throw JobError.invalid("That overlaps block \(clash.id) (\(clash.mode) \(TimeRules.daysText(clash.days)))")
        }
        return try store.insertPlanBlock(PlanBlock(account: entry.account, mode: entry.mode, days: days, start: start, end: end))
    }

    public func plan(of actor: String) throws -> [PlanBlock] {
        try store.planBlocks(of: actor)
    }

    public func removePlan(_ id: Int64, by actor: String) throws {
        guard try store.deletePlanBlock(id, of: actor) else { throw JobError.invalid("You have no block \(id) in your plan: !plan lists them") }
    }

    /// Seconds planned per mode within [from, to), day by day in `calendar`'s zone (a day when the
    /// clocks change keeps its blocks at their clock times).
    public func planned(of actor: String, from: Date, to: Date, calendar: Calendar) throws -> [TimeTotal] {
        let blocks = try store.planBlocks(of: actor)
        guard !blocks.isEmpty else { return [] }
        var seconds: [String: Int] = [:]
        var day = calendar.startOfDay(for: from)
        while day < to {
            let weekday = calendar.component(.weekday, from: day)
            for block in blocks where block.days.contains(weekday) {
                let a = calendar.date(bySettingHour: block.start / 60, minute: block.start % 60, second: 0, of: day)!
                let b = block.end == 24 * 60 ? calendar.date(byAdding: .day, value: 1, to: day)!
                    : calendar.date(bySettingHour: block.end / 60, minute: block.end % 60, second: 0, of: day)!
                let overlap = min(b, to).timeIntervalSince(max(a, from))
                if overlap > 0 { seconds[block.mode, default: 0] += Int(overlap) }
            }
            day = calendar.date(byAdding: .day, value: 1, to: day)!
        }
        return seconds.map { TimeTotal(key: $0.key, seconds: $0.value) }.sorted { ($0.seconds, $1.key) > ($1.seconds, $0.key) }
    }

    // MARK: Reminders of the plan

    /// `!plan remind on|off`: a planned block that starts while no timer runs earns a nudge.
    public func setPlanReminders(_ on: Bool, by actor: String) throws -> Event {
        try store.setPlanReminders(on, of: actor, from: now())
        // Stored and told to nobody, so the scheduler looks again at what comes due.
        let event = Event(type: EventType.timePlanReminders, room: nil, job: nil, actor: actor,
                          data: ["on": on ? "yes" : "no"], at: now(), reach: .concerned)
        return try store.insertEvents([event])[0]
    }

    /// The first start of a planned block, after the last one looked at, among people with plan
    /// reminders on, each in their own zone (`serverZone` for those without one).
    public func nextPlanStart(serverZone: TimeZone) throws -> Date? {
        try store.planReminderAccounts().compactMap { account, until in
            try starts(of: account, after: until, upTo: until.addingTimeInterval(8 * 86_400), serverZone: serverZone).first?.0
        }.min()
    }

    /// Blocks that started since they were last looked at, for people with reminders on: each
    /// person whose timer is not running is told of the latest, once.
    public func planReminders(serverZone: TimeZone) throws -> [Event] {
        var events: [Event] = []
        for (account, until) in try store.planReminderAccounts() {
            let started = try starts(of: account, after: until, upTo: now(), serverZone: serverZone)
            try store.setRemindedUntil(now(), of: account)
            guard let (at, block, _) = started.last, try store.runningEntry(of: account) == nil else { continue }
            let clock = { (m: Int) in String(format: "%02d:%02d", m / 60, m % 60) }
            events.append(Event(type: EventType.timePlanned, room: nil, job: nil, actor: block.account,
                                data: ["mode": block.mode, "from": clock(block.start), "to": clock(block.end)],
                                at: at, concerns: [block.account], reach: .concerned))
        }
        return events.isEmpty ? [] : try store.insertEvents(events)
    }

    /// Starts of the account's blocks in (after, upTo], oldest first, with the block and the zone.
    private func starts(of account: String, after: Date, upTo: Date, serverZone: TimeZone) throws -> [(Date, PlanBlock, TimeZone)] {
        let zone = try store.timeZone(of: account, otherwise: serverZone)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let blocks = try store.planBlocks(of: account)
        var found: [(Date, PlanBlock, TimeZone)] = []
        var day = calendar.startOfDay(for: after)
        while day <= upTo {
            let weekday = calendar.component(.weekday, from: day)
            for block in blocks where block.days.contains(weekday) {
                let start = calendar.date(bySettingHour: block.start / 60, minute: block.start % 60, second: 0, of: day)!
                if start > after && start <= upTo { found.append((start, block, zone)) }
            }
            day = calendar.date(byAdding: .day, value: 1, to: day)!
        }
        return found.sorted { $0.0 < $1.0 }
    }

    // MARK: Helpers

    /// An entry for `target`: a mode the actor has, or a job they may see.
    private func entry(for target: Target, note: String, by actor: String) throws -> TimeEntry {
        let account = try store.account(named: actor)?.name ?? actor
        switch target {
        case .mode(let name):
            let mode = TimeRules.mode(name) ?? name
            guard try TimeRules.presets.contains(mode) || store.modes(of: actor).contains(mode) else {
                throw JobError.invalid("Unknown mode \(name): !modes lists yours, !mode add \(name) makes it")
            }
            return TimeEntry(account: account, mode: mode, start: now(), note: try Self.note(note))
        case .job(let id):
            let job = try jobs.job(id, by: actor)
            return TimeEntry(account: account, mode: "job", job: job.id, room: job.room, start: now(), note: try Self.note(note))
        }
    }

    /// The rules every finished or edited entry keeps: it ends after it starts, not in the future,
    /// and overlaps none of the owner's other entries (the clash is named).
    private func check(_ entry: TimeEntry) throws {
        let end = entry.end ?? now()
        // A running timer may have started this very second; a finished entry lasts some time.
        guard entry.isRunning ? entry.start <= end : entry.start < end else { throw JobError.invalid("An entry ends after it starts") }
        guard end <= now(), entry.start <= now() else { throw JobError.invalid("That is in the future: time is logged once it is spent") }
        if let clash = try store.overlapping(entry.account, from: entry.start, to: end, now: now(), excluding: entry.id == 0 ? nil : entry.id).first {
            throw JobError.invalid("That overlaps entry \(clash.id) (\(clash.job.map { "job \($0)" } ?? clash.mode))")
        }
    }

    private static func note(_ text: String) throws -> String {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard t.count <= 200 else { throw JobError.invalid("A note is at most 200 characters") }
        return t
    }

    /// An event of someone's own time: stored, told to nobody (the person has the command's answer).
    private func personal(_ type: String, _ e: TimeEntry) -> Event {
        var data = ["entry": String(e.id), "mode": e.mode, "start": ISO8601DateFormatter().string(from: e.start)]
        if let end = e.end {
            data["end"] = ISO8601DateFormatter().string(from: end)
            data["minutes"] = String(Int(end.timeIntervalSince(e.start)) / 60)
        }
        // Not filed under the job: a job's activity shows time once logged, not someone's every start.
        if let job = e.job { data["job"] = String(job) }
        return Event(type: type, room: nil, job: nil, actor: e.account, data: data, at: now(), reach: .concerned)
    }

    /// The events of an entry that has closed: the person's own, and, for time on a room's job, the
    /// room's `time.logged`.
    private func closed(_ e: TimeEntry, type: String) throws -> [Event] {
        try store.insertEvents([personal(type, e)] + jobsTold(before: nil, after: e))
    }

    /// What a room hears when a finished entry's time on its job changes: `time.logged` for time
    /// a job gains, `time.corrected` (`minutes` now, `previous` before) for a job whose time changed
    /// or went; a running entry's time was never told, and is not now.
    private func jobsTold(before: TimeEntry?, after: TimeEntry?) throws -> [Event] {
        func told(_ e: TimeEntry?) -> (job: Int64, minutes: Int)? {
            guard let e, let job = e.job, e.room != nil, let end = e.end else { return nil }
            return (job, Int(end.timeIntervalSince(e.start)) / 60)
        }
        let was = told(before), now = told(after)
        var events: [Event] = []
        if let was, was.job != now?.job || was.minutes != now?.minutes {
            let minutes = was.job == now?.job ? now!.minutes : 0
            events += try jobEvent(EventType.timeCorrected, was.job, minutes: minutes, previous: was.minutes, by: (before ?? after)!.account)
        }
        if let now, now.job != was?.job {
            events += try jobEvent(EventType.timeLogged, now.job, minutes: now.minutes, previous: nil, by: after!.account)
        }
        return events
    }

    private func jobEvent(_ type: String, _ id: Int64, minutes: Int, previous: Int?, by account: String) throws -> [Event] {
        guard let job = try store.job(id), let room = job.room else { return [] }
        var data = ["minutes": String(minutes), "title": job.title]
        data["previous"] = previous.map(String.init)
        let event = Event(type: type, room: room, job: id, actor: account, data: data, at: now())
        return [try jobs.withAudience(event, job: job, extra: [account])]
    }
}
