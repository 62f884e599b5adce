import Foundation

/// Something that happened, as stored in the activity log and broadcast after its change commits.
///
/// `data` carries the particulars (`from`, `to`, `assignee`, `task`, …) so the chat layer can write
/// both a sentence for people and tags for bots from the same record.
public struct Event: Equatable, Sendable {
    public var id: Int64
    public var type: String
    /// The room key, or nil for a personal job's event.
    public var room: String?
    public var job: Int64?
    public var actor: String
    public var data: [String: String]
    public var at: Date
    /// Accounts to tell directly, besides the room (the new assignee, the creator on completion).
    public var concerns: [String]
    /// nil: every member of the room may see it. Otherwise only managers and these accounts
    /// (a room whose visibility is `own`).
    public var audience: [String]?
    /// Whom it reaches: the room (as its audience allows) and those it concerns, or those it
    /// concerns only.
    public var reach: Reach

    /// Whom an event reaches, decided where it is made and stored with it.
    public enum Reach: String, Sendable {
        /// The room's line (an event with no room: its actor), and those it concerns told directly.
        case room
        /// Those it concerns only (a reminder, a request's news, someone's own time), never the room.
        case concerned
    }

    public init(id: Int64 = 0, type: String, room: String?, job: Int64?, actor: String,
                data: [String: String] = [:], at: Date, concerns: [String] = [], audience: [String]? = nil,
                reach: Reach = .room) {
        self.reach = reach
        self.id = id
        self.type = type
        self.room = room
        self.job = job
        self.actor = actor
        self.data = data
        self.at = at
        self.concerns = concerns
        self.audience = audience
    }
}

public enum EventType {
    public static let jobCreated = "job.created"
    public static let jobAssigned = "job.assigned"
    public static let jobUnassigned = "job.unassigned"
    public static let jobStatus = "job.status"
    public static let jobEdited = "job.edited"
    public static let jobComment = "job.comment"
    public static let jobPhoto = "job.photo"
    public static let taskAdded = "task.added"
    public static let taskDone = "task.done"
    public static let askOpened = "ask.opened"
    public static let askDecided = "ask.decided"
    public static let roomSettings = "room.settings"
    public static let choreAdded = "chore.added"
    public static let choreRemoved = "chore.removed"
    public static let choreOrder = "chore.order"
    public static let turnStarted = "turn.started"
    public static let turnDone = "turn.done"
    public static let turnSkipped = "turn.skipped"
    public static let turnDue = "turn.due"
    public static let turnSwapAsked = "turn.swap.asked"
    public static let turnSwapped = "turn.swapped"
    public static let turnSwapDeclined = "turn.swap.declined"
    public static let choreEdited = "chore.edited"
    public static let memberAway = "member.away"
    public static let memberBack = "member.back"
    public static let turnOverdue = "turn.overdue"
    public static let listItemAdded = "list.item.added"
    public static let listItemDone = "list.item.done"
    public static let listItemRemoved = "list.item.removed"
    public static let memberAdded = "member.added"
    /// A member became a manager, or a manager a member.
    public static let memberRole = "member.role"
    /// Someone who left the room is out of a chore's rotation.
    public static let choreLeft = "chore.left"
    // Service requests: every change of a request, and a message between its two parties.
    public static let requestPosted = "request.posted"
    public static let requestEdited = "request.edited"
    public static let requestCancelled = "request.cancelled"
    public static let requestOffered = "request.offered"
    public static let requestHired = "request.hired"
    public static let requestDone = "request.done"
    public static let requestConfirmed = "request.confirmed"
    public static let requestDisputed = "request.disputed"
    public static let requestReviewed = "request.reviewed"
    public static let requestExpired = "request.expired"
    public static let requestMessage = "request.message"
    // Tracked time: a person's own (told to nobody), and time on a room's job once its entry closes.
    public static let timeStarted = "time.started"
    public static let timeStopped = "time.stopped"
    public static let timeCancelled = "time.cancelled"
    public static let timeAdded = "time.added"
    public static let timeEdited = "time.edited"
    public static let timeRemoved = "time.removed"
    public static let timeLogged = "time.logged"
    /// Time a room's job was told of was changed or taken back: `minutes` now, `previous` before.
    public static let timeCorrected = "time.corrected"
    /// A timer ran past its owner's limit: told to them alone, once.
    public static let timeNudge = "time.nudge"
    public static let timeLimit = "time.limit"
    public static let timePlanReminders = "time.plan.reminders"
    /// A planned block started while no timer ran: told to its owner, if they asked for it.
    public static let timePlanned = "time.planned"

    /// Every type, for what names them (a webhook's filter).
    public static let all: [String] = [
        jobCreated, jobAssigned, jobUnassigned, jobStatus, jobEdited, jobComment, jobPhoto, taskAdded, taskDone, askOpened, askDecided,
        roomSettings, choreAdded, choreRemoved, choreOrder, turnStarted, turnDone, turnSkipped, turnDue, turnSwapAsked, turnSwapped,
        turnSwapDeclined, choreEdited, memberAway, memberBack, turnOverdue, listItemAdded, listItemDone, listItemRemoved, memberAdded,
        memberRole, choreLeft, requestPosted, requestEdited, requestCancelled, requestOffered, requestHired, requestDone,
        requestConfirmed, requestDisputed, requestReviewed, requestExpired, requestMessage, timeStarted, timeStopped, timeCancelled,
        timeAdded, timeEdited, timeRemoved, timeLogged, timeCorrected, timeNudge, timeLimit, timePlanReminders, timePlanned,
    ]
}

/// Who in a room may see an event: the one rule, used for the room's line, its stored history row
/// and the bot's replies alike. Every member, unless the event names an audience (a job in a room
/// whose visibility is `own`): then the room's managers and those accounts.
public struct Audience: Sendable, Equatable {
    /// Account keys, or nil for every member.
    public let keys: Set<String>?

    public init(_ event: Event) {
        keys = event.audience.map { Set($0.map(Account.key)) }
    }

    public func includes(account key: String?, isManager: Bool) -> Bool {
        guard let keys, !isManager else { return true }
        return key.map(keys.contains) ?? false
    }
}
