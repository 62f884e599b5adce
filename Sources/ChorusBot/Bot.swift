import ChorusCore
import ChorusWorkspace
import Foundation

/// A line of the command language as the Workspace runs it: read and carried out by a `Bot` on the
/// boards of the transaction it runs in.
public struct BotLine: WorkspaceCommand {
    public let text: String
    public let invocation: Invocation
    let newSecret: @Sendable () -> String
    let links: ReportLinks?

    public init(_ text: String, _ invocation: Invocation, newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() },
                links: ReportLinks? = nil) {
        self.text = text
        self.invocation = invocation
        self.newSecret = newSecret
        self.links = links
    }

    public func run(on boards: Boards) -> Outcome {
        Bot(boards: boards, newSecret: newSecret, links: links).run(text, invocation)
    }
}

/// The command interpreter: `!verb args` → a command from the table → a board call → replies and
/// events. It never throws and never crashes on input: every refusal is a one-line reply.
public struct Bot: Sendable {
    public let board: JobBoard
    public let chores: ChoreBoard
    public let rooms: RoomBoard
    public let market: MarketBoard
    public let time: TimeBoard
    public let accounts: any Store
    /// Rooms' webhooks (`!hook`).
    let hooks: any WebhookStore
    /// Where new token secrets come from: the system's secure random source, or a fixed sequence in tests.
    let newSecret: @Sendable () -> String
    /// Links to reports as pictures, when the server has a web side.
    let links: ReportLinks?

    /// The interpreter for one transaction's boards.
    public init(boards: Boards, newSecret: @escaping @Sendable () -> String = { AccountToken.newSecret() },
                links: ReportLinks? = nil) {
        self.links = links
        self.board = boards.jobs
        self.chores = boards.chores
        self.rooms = boards.rooms
        self.market = boards.market
        self.time = boards.time
        self.accounts = boards.store
        self.hooks = boards.store
        self.newSecret = newSecret
    }

    /// True for lines the bot should read: `!` followed by a letter (so `!!!` and `! ` stay chat).
    public static func isCommand(_ text: String) -> Bool {
        guard text.hasPrefix("!"), let second = text.dropFirst().first else { return false }
        return second.isLetter
    }

    public func run(_ text: String, _ invocation: Invocation) -> Outcome {
        var inv = invocation
        inv.serverTimeZone = invocation.timeZone
        // Times are read and shown in the asker's own time zone when they set one (!tz).
        if let id = try? board.store.timeZone(of: inv.account, readingRoleIn: inv.room?.key), let zone = TimeZone(identifier: id) { inv.timeZone = zone }
        let body = text.dropFirst().drop(while: { $0 == " " })
        let verbEnd = body.firstIndex(of: " ") ?? body.endIndex
        let verb = body[..<verbEnd].lowercased()
        var args = Args(body[verbEnd...])
        guard let command = Self.byName[verb] else {
            let guess = Self.nearestName(to: verb).map { " Did you mean !\($0)?" } ?? ""
            return .refusal("Unknown command !\(verb).\(guess) Type !help for the commands you can use here.", code: "UNKNOWN_COMMAND")
        }
        do {
            if command.audience > .anyone, let room = inv.room {
                try rooms.require(command.audience == .manager ? .manager : .member, of: inv.account, in: room.key,
                                  for: "!\(command.name)")
            }
            var result = try command.run(self, inv, &args)
            result.timeZone = inv.timeZone
            return result
        } catch let error as UsageError {
            return .refusal(error.description)
        } catch let error as JobError {
            return .refusal(error.description)
        } catch {
            return .refusal("Sorry, that did not work (\(error)). Nothing was changed.")
        }
    }

    // MARK: Helpers

    func when(_ inv: Invocation) -> When { When(timeZone: inv.timeZone) }

    func text(_ inv: Invocation) -> EventText {
        EventText(when: when(inv), now: inv.now, roomName: { inv.rooms[$0] ?? $0 })
    }

    /// `@bob`, `bob` → the account behind that nick, or an account of that name.
    func account(_ word: String, _ inv: Invocation) throws -> String {
        var name = word.hasPrefix("@") ? String(word.dropFirst()) : word
        if name.lowercased() == "me" { name = inv.nick }
        if let online = inv.onlineAccounts[Account.key(name)] { return online }
        if let stored = try accounts.account(named: name) { return stored.name }
        throw UsageError("\(name) is not a registered account")
    }

    /// The room a private command names with a leading `#room`, or the room it was typed in.
    func room(_ inv: Invocation, _ args: inout Args, required: Bool) throws -> Invocation.RoomRef? {
        if let first = args.peek, first.hasPrefix("#") {
            _ = args.next()
            let key = Account.key(first)
            guard let name = inv.rooms[key] else { throw JobError.notInRoom(first) }
            return .init(key: key, name: name)
        }
        if let room = inv.room { return room }
        if required { throw UsageError("Name the room: this command needs one, e.g. #kitchen") }
        return nil
    }

    func announce(_ change: JobBoard.Change, reply: String? = nil) -> Outcome {
        Outcome(replies: reply.map { [$0] } ?? [], events: change.events)
    }
}
