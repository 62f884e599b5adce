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
    let now: @Sendable () -> Date

    public init(store: any ChorusStorage, timeZone: TimeZone, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.now = now
        self.jobs = JobBoard(store: store, now: now)
        self.chores = ChoreBoard(store: store, timeZone: timeZone, now: now)
        self.rooms = RoomBoard(store: store, jobs: jobs, chores: chores, now: now)
        self.market = MarketBoard(store: store, now: now)
        self.time = TimeBoard(store: store, jobs: jobs, now: now)
        self.timeZone = timeZone
    }

    /// When `board`'s work next comes due, from what is stored now; nil if it never will.
    func nextDue(of board: DueBoard, remindEvery interval: TimeInterval) throws -> Date? {
        switch board {
        case .chores: try chores.nextReminder(every: interval)
        case .requests: try market.nextExpiry()
        case .timers: try time.nextNudge()
        case .plans: try time.nextPlanStart(serverZone: timeZone)
        }
    }

    /// The work of every board that is due and that no other process is doing: reminders fire,
    /// requests whose window passed expire, timers past their limit and planned blocks that start
    /// with no timer running earn a nudge. Each board done is written down with when it next is due.
    func fireDue(remindEvery interval: TimeInterval) throws -> [Event] {
        var events: [Event] = []
        for board in try store.takeDueBoards(dueBy: now()) {
            switch board {
            case .chores: events += try chores.fireReminders(every: interval)
            case .requests: events += try market.expire()
            case .timers: events += try time.nudge()
            case .plans: events += try time.planReminders(serverZone: timeZone)
            }
            // Never sooner than a second from now: a board that cannot do what it says is due
            // must not keep the server busy trying.
            let next = try nextDue(of: board, remindEvery: interval).map { max($0, now().addingTimeInterval(1)) }
            try store.setNextDue(of: board, to: next)
        }
        return events
    }

    /// Writes down again when each board comes due, from what is stored now: after a change that
    /// may move it, and now and then in case such a change was committed by a process that died
    /// before it could do this.
    func reckonDue(remindEvery interval: TimeInterval) throws {
        try store.holdDueBoards(DueBoard.allCases)
        let written = try store.dueTimes()
        for board in DueBoard.allCases {
            let next = try nextDue(of: board, remindEvery: interval)
            if let stored = written[board], Self.sameMillisecond(stored, next) { continue }  // nothing to write
            try store.setNextDue(of: board, to: next)
        }
    }

    /// Stores keep times to the millisecond.
    private static func sameMillisecond(_ a: Date?, _ b: Date?) -> Bool {
        a.map { ($0.timeIntervalSince1970 * 1000).rounded() } == b.map { ($0.timeIntervalSince1970 * 1000).rounded() }
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
        /// The room (by key) was closed by the nick given.
        case closeRoom(String, by: String)
        /// The room's settings as they are now (the transport keeps what it needs of them).
        case roomSettings(room: String, RoomSettings)
        /// An account is now a member of the room (by key).
        case memberAdded(room: String, account: String)
        /// A member's role or voice, as now stored.
        case membership(Membership)
        /// Connections logged in with this token are closed.
        case revokeToken(Int64)
        /// The room (by key) has a new webhook: its events are delivered from now on.
        case webhookAdded(room: String)
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
    /// The command changed when something comes due without an event saying so (a planned block
    /// added, a time zone changed): the Workspace works it out again.
    public var movesWhatComesDue = false

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

    /// What a command's asker is told when its batch could not be committed: a refusal, so no
    /// caller takes it for done.
    /// The code of a refusal that is the store's, not the rules': the write failed, nothing changed.
    public static let cannotSave = "CANNOT_SAVE"

    /// Whether nothing changed because the store could not write, rather than by a rule.
    public var couldNotSave: Bool { refused && (code == Self.cannotSave || code == "TEMPORARILY_UNAVAILABLE") }

    public static let notCommitted = Outcome.refusal("Sorry, that did not work. Nothing was changed.", code: "TEMPORARILY_UNAVAILABLE")
}
