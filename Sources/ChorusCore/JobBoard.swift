import Foundation

/// Why a job command was refused. Each case reads as a sentence for the person who asked.
public enum JobError: Error, Equatable, Sendable, CustomStringConvertible {
    case noSuchJob(Int64)
    case notInRoom(String)
    case notAllowed(String)
    case illegalMove(Int64, from: Job.Status, to: Job.Status, why: String)
    case noSuchTask(Int64, Int)
    case notAMember(String, room: String)
    case invalid(String)
    case noSuchAsk(Int64)
    /// Said alike of a request that does not exist and one the asker may not see.
    case noSuchRequest(Int64)

    public var description: String {
        switch self {
        case .noSuchJob(let id): return "There is no job \(id) that you can see"
        case .notInRoom(let room): return "You are not a member of \(room)"
        case .notAllowed(let why): return why
        case .illegalMove(let id, let from, let to, let why): return "Job \(id) cannot go from \(from.rawValue) to \(to.rawValue): \(why)"
        case .noSuchTask(let id, let n): return "Job \(id) has no task \(n)"
        case .notAMember(let who, let room): return "\(who) is not a member of \(room): invite them first"
        case .invalid(let why): return why
        case .noSuchAsk(let id): return "There is no open ask \(id) that you can answer"
        case .noSuchRequest(let id): return "There is no request \(id) that you can see"
        }
    }
}

/// The rules of jobs: who may do what, which status moves are legal, and which events each change
/// makes. Every method reads, decides and writes through the store it was made with; the Workspace
/// makes the boards on a transaction's handle and runs one command at a time on its writer, so a
/// decision never races another.
public struct JobBoard: Sendable {
    public let store: any JobStore
    public let now: @Sendable () -> Date

    public init(store: any JobStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.now = now
    }

    /// The outcome of a change: the job as it is now and the events to broadcast.
    public struct Change: Sendable {
        public var job: Job?
        public var events: [Event]
    }

    // MARK: Reading, with visibility

    /// The caller's role in the job's room, or an error that does not reveal the job exists.
    private func access(_ id: Int64, by actor: String) throws -> (Job, Role?) {
        guard let job = try store.job(id) else { throw JobError.noSuchJob(id) }
        guard let room = job.room else {
            guard Account.key(job.creator) == Account.key(actor) else { throw JobError.noSuchJob(id) }
            return (job, .manager)  // your own list: you manage it
        }
        guard let role = try store.role(of: actor, in: room) else { throw JobError.noSuchJob(id) }
        if role == .member, try store.roomSettings(room).visibility == .own, !involves(job, actor) {
            throw JobError.noSuchJob(id)
        }
        return (job, role)
    }

    private func involves(_ job: Job, _ account: String) -> Bool {
        job.isAssigned(to: account) || Account.key(job.creator) == Account.key(account)
    }

    public func job(_ id: Int64, by actor: String) throws -> Job {
        try access(id, by: actor).0
    }

    public func comments(_ id: Int64, by actor: String, limit: Int = 10) throws -> [Comment] {
        _ = try access(id, by: actor)
        return try store.comments(of: id, limit: limit)
    }

    public func activity(_ id: Int64, by actor: String, limit: Int = 15) throws -> [Event] {
        _ = try access(id, by: actor)
        return try store.events(of: id, limit: limit)
    }

    /// Jobs in `room` (or the actor's personal list when nil), newest first, as the actor may see them.
    public func list(in room: String?, filter: JobFilter, by actor: String) throws -> (jobs: [Job], total: Int) {
        var filter = filter
        if let room {
            guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(room) }
            filter.rooms = [room]
            filter.personalOf = nil
            if role == .member, try store.roomSettings(room).visibility == .own { filter.onlyInvolving = actor }
        } else {
            filter.rooms = []
            filter.personalOf = actor
        }
        return (try store.jobs(filter), try store.countJobs(filter))
    }

    /// Open jobs assigned to the actor in every room they belong to, and their personal ones.
    public func mine(_ actor: String, rooms: [String]) throws -> [Job] {
        var filter = JobFilter()
        filter.rooms = rooms
        filter.personalOf = actor
        filter.assignee = actor
        filter.statuses = [.created, .assigned, .inProgress]
        filter.limit = 50
        var jobs = try store.jobs(filter)
        // Personal jobs need not be assigned: they are yours.
        var personal = JobFilter()
        personal.personalOf = actor
        personal.statuses = filter.statuses
        personal.limit = 50
        for job in try store.jobs(personal) where !jobs.contains(where: { $0.id == job.id }) { jobs.append(job) }
        return jobs.sorted { ($0.due ?? .distantFuture, $0.id) < ($1.due ?? .distantFuture, $1.id) }
    }

    /// How many jobs `who` has completed, as `asker` may know it: in `room` (when asked in one), and
    /// across the rooms the asker belongs to (`askerRooms`), so the count reveals nothing of rooms
    /// the asker is not in; the asker's own count includes their personal list.
    public func completed(by who: String, in room: String?, askerRooms: [String], asker: String)
        throws -> (inRoom: Int?, shared: Int, includesPersonal: Bool) {
        var filter = JobFilter()
        filter.assignee = who
        filter.statuses = [.completed]
        var inRoom: Int?
        if let room {
            guard try store.role(of: asker, in: room) != nil else { throw JobError.notInRoom(room) }
            filter.rooms = [room]
            inRoom = try store.countJobs(filter)
        }
        filter.rooms = askerRooms
        let own = Account.key(who) == Account.key(asker)
        filter.personalOf = own ? who : nil
        return (inRoom, try store.countJobs(filter), own)
    }

    // MARK: Changes

    public func add(title: String, description: String = "", assignee: String? = nil, due: Date? = nil,
                    tasks: [String] = [], in room: String?, by actor: String) throws -> Change {
        let title = title.trimmed
        guard !title.isEmpty else { throw JobError.invalid("A job needs a title") }
        guard title.count <= 200 else { throw JobError.invalid("A title is at most 200 characters") }
        if let due, due <= now() { throw JobError.invalid(Self.pastDue) }
        if let room {
            guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(room) }
            if role == .member {
                if try store.roomSettings(room).creators == .managers {
                    throw JobError.notAllowed("Only managers create jobs in \(room)")
                }
                if let assignee, Account.key(assignee) != Account.key(actor) {
                    throw JobError.notAllowed("Only managers assign jobs to others; create it unassigned or assign it to yourself")
                }
            }
            if let assignee { try requireMember(assignee, room) }
        }
        let t = now()
        let job = Job(room: room, title: title, description: description, status: assignee == nil ? .created : .assigned,
                      creator: actor, assignee: assignee, due: due, createdAt: t,
                      tasks: tasks.map { Job.Task(text: $0) })
        var data = ["title": title]
        if let assignee { data["assignee"] = assignee }
        if let due { data["due"] = ISO8601DateFormatter().string(from: due) }
        let concerns = [assignee].compactMap { $0 }.filter { Account.key($0) != Account.key(actor) }
        let event = Event(type: EventType.jobCreated, room: room, job: nil, actor: actor, data: data, at: t, concerns: concerns)
        let (saved, savedEvent) = try store.insertJob(job, event: withAudience(event, job: job))
        return Change(job: saved, events: [savedEvent])
    }

    public func assign(_ id: Int64, to assignee: String, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        try requireManager(role, job, "assign jobs")
        guard job.status.isOpen else {
            throw JobError.illegalMove(id, from: job.status, to: .assigned, why: "it is \(job.status.rawValue); !reopen it first")
        }
        if let room = job.room { try requireMember(assignee, room) }
        if job.isAssigned(to: assignee) { throw JobError.invalid("Job \(id) is already assigned to \(job.assignee!)") }
        let previous = job.assignee
        let from = job.status
        job.assignee = assignee
        if job.status == .created || job.status == .inProgress { job.status = .assigned }
        var data = ["assignee": assignee, "from": from.rawValue, "to": job.status.rawValue]
        if let previous { data["previous"] = previous }
        return try save(job, [event(EventType.jobAssigned, job, actor, data, concerns: [assignee] + (previous.map { [$0] } ?? []))],
                        extraAudience: previous.map { [$0] } ?? [])
    }

    public func unassign(_ id: Int64, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        try requireManager(role, job, "unassign jobs")
        guard let previous = job.assignee else { throw JobError.invalid("Job \(id) is not assigned to anyone") }
        guard job.status.isOpen else {
            throw JobError.illegalMove(id, from: job.status, to: .created, why: "it is \(job.status.rawValue)")
        }
        let from = job.status
        job.assignee = nil
        job.status = .created
        return try save(job, [event(EventType.jobUnassigned, job, actor, ["previous": previous, "from": from.rawValue, "to": "created"],
                                    concerns: [previous])], extraAudience: [previous])
    }

    /// start, done, reopen, cancel: the status machine.
    public func move(_ id: Int64, to target: Job.Status, reason: String? = nil, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        let from = job.status
        let mine = job.isAssigned(to: actor)
        switch target {
        case .inProgress:
            guard role == .manager || mine || job.assignee == nil else {
                throw JobError.notAllowed("Job \(id) is assigned to \(job.assignee!); only they or a manager can start it")
            }
            guard from == .created || from == .assigned else {
                throw JobError.illegalMove(id, from: from, to: target, why: from == .inProgress ? "it is already in progress" : "it is \(from.rawValue); !reopen it first")
            }
            if job.assignee == nil { job.assignee = actor }  // starting an unassigned job takes it
        case .completed:
            guard role == .manager || mine else {
                throw JobError.notAllowed("Job \(id) is \(job.assignee.map { "assigned to \($0)" } ?? "not assigned to you"); only its assignee or a manager can complete it")
            }
            guard from.isOpen else {
                throw JobError.illegalMove(id, from: from, to: target, why: from == .completed ? "it is already completed" : "it was cancelled; !reopen it first")
            }
        case .cancelled:
            try requireManager(role, job, "cancel jobs")
            guard from.isOpen else { throw JobError.illegalMove(id, from: from, to: target, why: "it is already \(from.rawValue)") }
        case .created, .assigned:  // reopen
            // Cancelling was a manager's decision, so only a manager takes it back; the assignee
            // may reopen what they completed.
            if from == .cancelled {
                guard role == .manager else { throw JobError.notAllowed("Job \(id) was cancelled by a manager; only a manager can reopen it") }
            } else {
                guard role == .manager || mine else {
                    throw JobError.notAllowed("Only its assignee or a manager can reopen job \(id)")
                }
            }
            guard !from.isOpen else { throw JobError.illegalMove(id, from: from, to: target, why: "it is still open") }
        }
        job.status = target == .created || target == .assigned ? (job.assignee == nil ? .created : .assigned) : target
        var data = ["from": from.rawValue, "to": job.status.rawValue]
        if let reason, !reason.isEmpty { data["reason"] = String(reason.prefix(Self.maxReasonLength)) }
        var concerns: [String] = []
        if job.status == .completed { concerns.append(job.creator) }
        if job.status == .cancelled || job.status == .created || job.status == .assigned, let a = job.assignee { concerns.append(a) }
        return try save(job, [event(EventType.jobStatus, job, actor, data, concerns: concerns)])
    }

    public enum Field: String, Sendable, CaseIterable { case title, due, description }

    /// What is stored of people's words is bounded; what is longer than a line is split on the wire.
    public static let maxCommentLength = 1000
    public static let maxTaskLength = 200
    public static let maxReasonLength = 300

    /// A due time already past is refused: it was a typo (`today 8:00` at nine) or a job overdue
    /// from birth, and neither should ring reminders at once.
    static let pastDue = "That due time has already passed: give a later one (tomorrow 17:00, fri, in 3d)"

    public func edit(_ id: Int64, title: String? = nil, description: String? = nil, due: Date?? = nil, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        guard role == .manager || Account.key(job.creator) == Account.key(actor) else {
            throw JobError.notAllowed("Only managers and the job's creator can edit job \(id)")
        }
        if case .some(.some(let date)) = due, date <= now() { throw JobError.invalid(Self.pastDue) }
        var data: [String: String] = [:]
        if let title {
            guard !title.isEmpty, title.count <= 200 else { throw JobError.invalid("A title is 1-200 characters") }
            data["field"] = "title"; data["old"] = job.title; data["new"] = title
            job.title = title
        }
        if let description {
            data["field"] = "description"; data["new"] = description
            job.description = description
        }
        if let due {
            data["field"] = "due"; data["new"] = due.map { ISO8601DateFormatter().string(from: $0) } ?? "none"
            job.due = due
        }
        guard !data.isEmpty else { throw JobError.invalid("Nothing to change") }
        return try save(job, [event(EventType.jobEdited, job, actor, data)])
    }

    public func addTask(_ id: Int64, text: String, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        try requireWorker(role, job, actor, "add tasks to")
        let text = text.trimmed
        guard !text.isEmpty else { throw JobError.invalid("A task needs some text") }
        guard text.count <= Self.maxTaskLength else { throw JobError.invalid("A task is at most \(Self.maxTaskLength) characters") }
        guard job.tasks.count < 50 else { throw JobError.invalid("A job has at most 50 tasks") }
        job.tasks.append(Job.Task(text: text))
        return try save(job, [event(EventType.taskAdded, job, actor, ["task": String(job.tasks.count), "text": text])])
    }

    public func completeTask(_ id: Int64, number: Int, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        try requireWorker(role, job, actor, "tick tasks of")
        guard number >= 1, number <= job.tasks.count else { throw JobError.noSuchTask(id, number) }
        guard !job.tasks[number - 1].done else { throw JobError.invalid("Task \(number) of job \(id) is already done") }
        job.tasks[number - 1].done = true
        job.tasks[number - 1].doneBy = actor
        job.tasks[number - 1].doneAt = now()
        return try save(job, [event(EventType.taskDone, job, actor, [
            "task": String(number), "text": job.tasks[number - 1].text,
            "progress": "\(job.tasksDone)/\(job.tasks.count)",
        ])])
    }

    /// Ticks the task whose text is `text` (any case), or the only open one that contains it, as
    /// a checklist is read aloud: `!task done 1 shut off water`.
    public func completeTask(_ id: Int64, text: String, by actor: String) throws -> Change {
        let (job, _) = try access(id, by: actor)
        let wanted = text.trimmed.lowercased()
        let numbered = job.tasks.enumerated().map { (number: $0.offset + 1, task: $0.element) }
        if let exact = numbered.first(where: { $0.task.text.lowercased() == wanted }) {
            return try completeTask(id, number: exact.number, by: actor)
        }
        let near = numbered.filter { !$0.task.done && $0.task.text.lowercased().contains(wanted) }
        guard near.count == 1 else {
            throw JobError.invalid(near.isEmpty ? "Job \(id) has no open task “\(text.trimmed)”: !show \(id) lists them with their numbers"
                                                : "Several tasks of job \(id) say “\(text.trimmed)”: tick one by its number (!show \(id))")
        }
        return try completeTask(id, number: near[0].number, by: actor)
    }

    public func comment(_ id: Int64, text: String, by actor: String) throws -> (Comment, Event) {
        let (job, _) = try access(id, by: actor)
        let text = text.trimmed
        guard !text.isEmpty else { throw JobError.invalid("A comment needs some text") }
        guard text.count <= Self.maxCommentLength else {
            throw JobError.invalid("A comment is at most \(Self.maxCommentLength) characters; say the rest in another")
        }
        let t = now()
        var concerns = [job.creator] + (job.assignee.map { [$0] } ?? [])
        concerns.removeAll { Account.key($0) == Account.key(actor) }
        let e = event(EventType.jobComment, job, actor, ["text": text], concerns: concerns)
        return try store.insertComment(Comment(job: id, author: actor, text: text, at: t), event: e)
    }

    public func addPhoto(_ id: Int64, url: String, caption: String, by actor: String) throws -> Change {
        var (job, role) = try access(id, by: actor)
        try requireWorker(role, job, actor, "add photos to")
        guard let scheme = url.split(separator: ":").first?.lowercased(), scheme == "https" || scheme == "http",
              url.count <= 500, !url.contains(" "), Self.hasHost(url) else {
            throw JobError.invalid("A photo is a link with a host: http(s)://host/…")
        }
        job.photos.append(Job.Photo(url: url, caption: caption, by: actor, at: now()))
        return try save(job, [event(EventType.jobPhoto, job, actor, ["url": url, "caption": caption],
                                    concerns: [job.creator].filter { Account.key($0) != Account.key(actor) })])
    }

    // MARK: Asks

    public func ask(_ kind: Ask.Kind, job id: Int64?, reason: String, in room: String, by actor: String) throws -> (Ask, Event) {
        guard try store.role(of: actor, in: room) != nil else { throw JobError.notInRoom(room) }
        var data = ["kind": kind.rawValue]
        if kind == .reassign {
            guard let id else { throw JobError.invalid("Which job? !ask reassign <id> [reason]") }
            let (job, _) = try access(id, by: actor)
            guard job.room == room else { throw JobError.noSuchJob(id) }
            guard job.isAssigned(to: actor) else { throw JobError.notAllowed("Job \(id) is not assigned to you") }
            // A finished job holds nobody: asking to be taken off it would be approved for nothing.
            guard job.status.isOpen else { throw JobError.invalid("Job \(id) is \(job.status.rawValue): there is nothing to be taken off") }
            data["title"] = job.title
        }
        let t = now()
        if !reason.isEmpty { data["reason"] = reason }
        let e = Event(type: EventType.askOpened, room: room, job: id, actor: actor, data: data, at: t,
                      audience: [actor])
        return try store.insertAsk(Ask(room: room, kind: kind, job: id, by: actor, reason: reason, at: t), event: e)
    }

    /// Answers an open ask. `successor`: who takes over the job of an approved reassignment, checked
    /// before anything is written (the caller then assigns the job).
    public func decide(_ askID: Int64, approve: Bool, note: String, handOverTo successor: String? = nil,
                       by actor: String) throws -> (Ask, Event) {
        guard var ask = try store.ask(askID), ask.state == .open,
              let role = try store.role(of: actor, in: ask.room) else { throw JobError.noSuchAsk(askID) }
        guard role == .manager else { throw JobError.notAllowed("Only managers answer asks") }
        if let successor {
            guard ask.kind == .reassign else {
                throw JobError.invalid("@nick names who takes over a job; ask \(askID) is not a reassignment")
            }
            try requireMember(successor, ask.room)
        }
        ask.state = approve ? .approved : .denied
        ask.decidedBy = actor
        var data = ["kind": ask.kind.rawValue, "ask": String(askID), "state": ask.state.rawValue, "by": ask.by]
        if let id = ask.job, let job = try store.job(id) { data["title"] = job.title }
        if !note.isEmpty { data["note"] = note }
        let e = Event(type: EventType.askDecided, room: ask.room, job: ask.job, actor: actor, data: data,
                      at: now(), concerns: [ask.by], audience: [ask.by])
        return (ask, try store.updateAsk(ask, event: e))
    }

    public func openAsks(in room: String, by actor: String) throws -> [Ask] {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(room) }
        let all = try store.openAsks(in: room)
        return role == .manager ? all : all.filter { Account.key($0.by) == Account.key(actor) }
    }

    /// Someone left the room: their open jobs there go back to unassigned, for anyone to take.
    public func releaseJobs(of account: String, in room: String, by actor: String, reason: String) throws -> [Event] {
        var filter = JobFilter()
        filter.rooms = [room]
        filter.assignee = account
        filter.statuses = [.created, .assigned, .inProgress]
        filter.limit = 1000
        var events: [Event] = []
        for var job in try store.jobs(filter) {
            let from = job.status
            job.assignee = nil
            job.status = .created
            let e = event(EventType.jobUnassigned, job, actor, ["previous": account, "from": from.rawValue, "to": "created", "reason": reason])
            events += try save(job, [e], extraAudience: [account]).events
        }
        return events
    }

    // MARK: Room settings

    public func settings(of room: String) throws -> RoomSettings {
        try store.roomSettings(room)
    }

    public func updateSettings(of room: String, by actor: String, _ change: (inout RoomSettings) -> String) throws -> Event {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(room) }
        guard role == .manager else { throw JobError.notAllowed("Only managers change the room's settings") }
        var settings = try store.roomSettings(room)
        // `visibility own`: the setting and its new value, each a tag of its own for bots.
        let description = change(&settings).split(separator: " ", maxSplits: 1).map(String.init)
        var data = ["setting": description.first ?? ""]
        if description.count > 1 { data["value"] = description[1] }
        let e = Event(type: EventType.roomSettings, room: room, job: nil, actor: actor, data: data, at: now())
        return try store.saveRoomSettings(settings, room: room, event: e)
    }

    // MARK: Helpers

    /// `http(s)://` followed by a host (letters, digits, dots, dashes, an optional port), as a
    /// link people can open: `https://` alone or `http:x` is not one.
    static func hasHost(_ url: String) -> Bool {
        guard let marker = url.range(of: "://") else { return false }
        let authority = url[marker.upperBound...].prefix(while: { $0 != "/" && $0 != "?" && $0 != "#" })
        let host = authority.split(separator: "@").last.map { $0.split(separator: ":").first ?? "" } ?? ""
        return !host.isEmpty && host.allSatisfy { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }
    }

    private func requireManager(_ role: Role?, _ job: Job, _ what: String) throws {
        guard role == .manager else { throw JobError.notAllowed("Only managers \(what)") }
    }

    /// Managers and the assignee work on a job; an unassigned job is open to any member.
    private func requireWorker(_ role: Role?, _ job: Job, _ actor: String, _ what: String) throws {
        guard role == .manager || job.isAssigned(to: actor) || (job.assignee == nil && Account.key(job.creator) == Account.key(actor)) else {
            throw JobError.notAllowed("Only the assignee or a manager can \(what) job \(job.id)")
        }
    }

    private func requireMember(_ account: String, _ room: String) throws {
        guard try store.role(of: account, in: room) != nil else { throw JobError.notAMember(account, room: room) }
    }

    private func event(_ type: String, _ job: Job, _ actor: String, _ data: [String: String], concerns: [String] = []) -> Event {
        var data = data
        data["title"] = data["title"] ?? job.title
        data["status"] = job.status.rawValue
        if let a = job.assignee { data["assignee"] = a }
        return Event(type: type, room: job.room, job: job.id, actor: actor, data: data, at: now(),
                     concerns: concerns.filter { Account.key($0) != Account.key(actor) })
    }

    /// In a room with `own` visibility, members see only events of jobs that involve them (and
    /// `extra`): the one rule for every board's events about a job.
    public func withAudience(_ event: Event, job: Job, extra: [String] = []) throws -> Event {
        guard let room = job.room, try store.roomSettings(room).visibility == .own else { return event }
        var e = event
        e.audience = [job.creator] + (job.assignee.map { [$0] } ?? []) + extra
        return e
    }

    private func save(_ job: Job, _ events: [Event], extraAudience: [String] = []) throws -> Change {
        var job = job
        job.updatedAt = now()
        let events = try events.map { try withAudience($0, job: job, extra: extraAudience) }
        return Change(job: job, events: try store.updateJob(job, events: events))
    }
}
