import ChorusCore
import Foundation

/// The boards a command runs on, bound to the transaction of its batch: everything a command
/// reads and writes through them is part of that transaction, and nothing else is.
public struct Boards: Sendable {
    /// The transaction's handle.
    public let store: any ChorusStorage
    public let jobs: JobBoard
    public let chores: ChoreBoard
    public let rooms: RoomBoard
    public let market: MarketBoard
    public let time: TimeBoard
    /// The server's time zone (a person's own, from `!tz`, is theirs to read from the store).
    public let timeZone: TimeZone

    public init(store: any ChorusStorage, timeZone: TimeZone, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.jobs = JobBoard(store: store, now: now)
        self.chores = ChoreBoard(store: store, timeZone: timeZone, now: now)
        self.rooms = RoomBoard(store: store, jobs: jobs, chores: chores, now: now)
        self.market = MarketBoard(store: store, now: now)
        self.time = TimeBoard(store: store, jobs: jobs, now: now)
        self.timeZone = timeZone
    }

    /// The earliest time something on any board comes due (a chore's reminder, an open request's
    /// window ending, a timer reaching its owner's limit, a planned block starting), nil if nothing will.
    func nextDue(remindEvery interval: TimeInterval) throws -> Date? {
        try [chores.nextReminder(every: interval), market.nextExpiry(), time.nextNudge(), time.nextPlanStart(serverZone: timeZone)]
            .compactMap { $0 }.min()
    }

    /// Everything due by now on every board: reminders fire, requests whose window passed expire,
    /// timers past their limit and planned blocks that start with no timer running earn a nudge.
    func fireDue(remindEvery interval: TimeInterval) throws -> [Event] {
        // Other processes on the same database fire what is due too: one at a time, each seeing
        // what the one before it did, so nothing fires twice.
        try store.takeDueWork()
        return try chores.fireReminders(every: interval) + market.expire() + time.nudge() + time.planReminders(serverZone: timeZone)
    }
}

/// A change to the team's state, whichever door it came from: a bot command typed in a room, an
/// HTTP action, a test. It reads, decides and writes through the boards it is given, and says what
/// happened; it never throws: a refusal is an outcome, and what it wrote is taken back.
public protocol WorkspaceCommand: Sendable {
    func run(on boards: Boards) -> Outcome
}

/// What a command produced: lines for the asker, events for everyone concerned, and effects the
/// transport carries out once the change is committed (closing a room, ending a token's logins).
public struct Outcome: Sendable {
    public enum Effect: Sendable, Equatable {
        case closeRoom(String)
        /// The room's settings as they are now (the transport keeps what it needs of them).
        case roomSettings(room: String, RoomSettings)
        /// An account is now a member of the room (by key).
        case memberAdded(room: String, account: String)
        /// A member's role or voice, as now stored.
        case membership(Membership)
        /// Connections logged in with this token are closed.
        case revokeToken(Int64)
    }

    public var replies: [String] = []
    /// Room events go to the room; an event without a room (a personal job's) goes to its actor.
    public var events: [Event] = []
    public var effects: [Effect] = []
    /// The asker's time zone (their `!tz`, else the server's), set when the command ran: the
    /// event lines the asker gets show times in it.
    public var timeZone: TimeZone?
    /// True when the command was refused: whatever it wrote before failing is taken back.
    public var refused = false
    /// Why, for machines (an IRCv3 standard reply's code, say), when the refusal has one.
    public var code: String?

    public init(replies: [String] = [], events: [Event] = [], effects: [Effect] = []) {
        self.replies = replies
        self.events = events
        self.effects = effects
    }

    public static func refusal(_ text: String, code: String? = nil) -> Outcome {
        var outcome = Outcome(replies: [text])
        outcome.refused = true
        outcome.code = code
        return outcome
    }

    /// What a command's asker is told when its batch could not be committed.
    public static let notCommitted = Outcome(replies: ["Sorry, that did not work. Nothing was changed."])
}
