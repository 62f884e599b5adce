import Foundation

/// A piece of work in a room (or on someone's personal list), with a checklist.
public struct Job: Equatable, Sendable {
    public enum Status: String, Sendable, CaseIterable, Codable {
        case created
        case assigned
        case inProgress = "in-progress"
        case completed
        case cancelled

        public var isOpen: Bool { self != .completed && self != .cancelled }
    }

    public struct Task: Equatable, Sendable, Codable {
        public var text: String
        public var done: Bool
        public var doneBy: String?
        public var doneAt: Date?

        public init(text: String, done: Bool = false, doneBy: String? = nil, doneAt: Date? = nil) {
            self.text = text
            self.done = done
            self.doneBy = doneBy
            self.doneAt = doneAt
        }
    }

    /// Proof of work: a link to a picture, with who added it and when.
    public struct Photo: Equatable, Sendable, Codable {
        public var url: String
        public var caption: String
        public var by: String
        public var at: Date

        public init(url: String, caption: String, by: String, at: Date) {
            self.url = url
            self.caption = caption
            self.by = by
            self.at = at
        }
    }

    public var id: Int64
    /// The room key, or nil for a personal job of `creator`.
    public var room: String?
    public var title: String
    public var description: String
    public var status: Status
    /// Account names (as registered), not keys, so they read well in replies.
    public var creator: String
    public var assignee: String?
    public var due: Date?
    public var createdAt: Date
    public var updatedAt: Date
    public var tasks: [Task]
    public var photos: [Photo]

    public init(id: Int64 = 0, room: String?, title: String, description: String = "", status: Status = .created,
                creator: String, assignee: String? = nil, due: Date? = nil, createdAt: Date, updatedAt: Date? = nil,
                tasks: [Task] = [], photos: [Photo] = []) {
        self.id = id
        self.room = room
        self.title = title
        self.description = description
        self.status = status
        self.creator = creator
        self.assignee = assignee
        self.due = due
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
        self.tasks = tasks
        self.photos = photos
    }

    public var tasksDone: Int { tasks.filter(\.done).count }

    public func isAssigned(to account: String) -> Bool {
        assignee.map { Account.key($0) == Account.key(account) } ?? false
    }
}

/// A note on a job: managers ask for progress, members answer.
public struct Comment: Equatable, Sendable {
    public var id: Int64
    public var job: Int64
    public var author: String
    public var text: String
    public var at: Date

    public init(id: Int64 = 0, job: Int64, author: String, text: String, at: Date) {
        self.id = id
        self.job = job
        self.author = author
        self.text = text
        self.at = at
    }
}

/// An ask: what members ask of managers: reassign one of my jobs, or give me more work.
public struct Ask: Equatable, Sendable {
    public enum Kind: String, Sendable { case reassign, work }
    public enum State: String, Sendable { case open, approved, denied }

    public var id: Int64
    public var room: String
    public var kind: Kind
    public var job: Int64?
    public var by: String
    public var reason: String
    public var state: State
    public var decidedBy: String?
    public var at: Date

    public init(id: Int64 = 0, room: String, kind: Kind, job: Int64?, by: String, reason: String,
                state: State = .open, decidedBy: String? = nil, at: Date) {
        self.id = id
        self.room = room
        self.kind = kind
        self.job = job
        self.by = by
        self.reason = reason
        self.state = state
        self.decidedBy = decidedBy
        self.at = at
    }
}

/// How a room runs its jobs.
public struct RoomSettings: Equatable, Sendable {
    public enum Visibility: String, Sendable { case all, own }
    public enum Creators: String, Sendable { case everyone, managers }

    /// `own`: members see only the jobs assigned to them (or that they created); managers see all.
    public var visibility: Visibility = .all
    public var creators: Creators = .everyone
    /// Whether a `!command` line is relayed to the room like any other line.
    public var echoCommands = true
    /// Whether the room hears every new service request (`!room set market on`).
    public var market = false
    /// Whether anyone may join (`!room set open on`), or only its members and those invited
    /// (`off`); nil until a manager chooses, when the server's `rooms` setting decides.
    public var open: Bool?

    /// Whether anyone may join, not only members and those invited: as the managers chose, else
    /// by the server's default (`roomsOpen`) for a room with members (an account made it), and
    /// always for a room only guests are in.
    public static func admitsAnyone(chosen: Bool?, roomsOpen: Bool, hasMembers: Bool) -> Bool {
        chosen ?? (roomsOpen || !hasMembers)
    }

    public init() {}
}
