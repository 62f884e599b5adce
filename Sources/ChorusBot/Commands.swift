import ChorusCore
import ChorusWorkspace
import Foundation

/// One chat command: its names, syntax, who may use it, help, and handler. The table below is the
/// one source of truth: the interpreter dispatches from it, `!help` lists it, and the tests check
/// that every entry has a page in `Commands/` whose example session still runs.
public struct BotCommand: Sendable {
    public enum Audience: Int, Sendable, Comparable {
        case anyone = 0   // any logged-in user, in a room or in private
        case member = 1   // a member of the room
        case manager = 2  // a manager of the room

        public static func < (a: Audience, b: Audience) -> Bool { a.rawValue < b.rawValue }
    }

    public let name: String
    public let aliases: [String]
    /// One line per form, e.g. `!assign <id> <nick>`.
    public let syntax: [String]
    public let summary: String
    public let example: String
    public let audience: Audience
    /// Who may use it, for `!help`, where the rule is narrower than `audience` and the board
    /// enforces it (`!offer`: contractors).
    public var who: String?
    let run: @Sendable (Bot, Invocation, inout Args) throws -> Outcome

    init(name: String, aliases: [String], syntax: [String], summary: String, example: String, audience: Audience, who: String? = nil,
         run: @escaping @Sendable (Bot, Invocation, inout Args) throws -> Outcome) {
        self.name = name
        self.aliases = aliases
        self.syntax = syntax
        self.summary = summary
        self.example = example
        self.audience = audience
        self.who = who
        self.run = run
    }
}

extension Bot {
    public static let commands: [BotCommand] = [
        BotCommand(name: "help", aliases: ["commands"], syntax: ["!help [command]"],
                   summary: "List the commands you may use here, or show one command's syntax and an example.",
                   example: "!help assign", audience: .anyone, run: { try $0.help($1, &$2) }),
        BotCommand(name: "job", aliases: [], syntax: ["!job add <title> [@assignee] [due <when>] [-- <description>]"],
                   summary: "Create a job in this room (or on your personal list, in private). <when>: tomorrow 17:00, fri, in 3d, 2026-12-01.",
                   example: "!job add Fix the sink @bob due fri -- it leaks under the counter", audience: .member,
                   run: { try $0.addJob($1, &$2) }),
        BotCommand(name: "assign", aliases: [], syntax: ["!assign <id> <nick>"],
                   summary: "Give a job to a member of the room; the job becomes assigned and they are told.",
                   example: "!assign 1 bob", audience: .manager, run: { try $0.assign($1, &$2) }),
        BotCommand(name: "unassign", aliases: [], syntax: ["!unassign <id>"],
                   summary: "Take a job back from its assignee; it returns to created.",
                   example: "!unassign 1", audience: .manager, run: { try $0.unassign($1, &$2) }),
        BotCommand(name: "start", aliases: [], syntax: ["!start <id>"],
                   summary: "Mark a job in progress (an unassigned job becomes yours).",
                   example: "!start 1", audience: .member, run: { try $0.move($1, &$2, to: .inProgress, verb: "start") }),
        BotCommand(name: "done", aliases: ["complete"], syntax: ["!done <id>", "!done <chore>"],
                   summary: "Mark a job completed (its creator is told), or do this turn of a chore (it passes to the next person).",
                   example: "!done 1", audience: .member, run: { try $0.move($1, &$2, to: .completed, verb: "done") }),
        BotCommand(name: "reopen", aliases: [], syntax: ["!reopen <id>"],
                   summary: "Reopen a completed or cancelled job.",
                   example: "!reopen 1", audience: .member, run: { try $0.move($1, &$2, to: .assigned, verb: "reopen") }),
        BotCommand(name: "cancel", aliases: [], syntax: ["!cancel <id> [reason]"],
                   summary: "Cancel a job, saying why.",
                   example: "!cancel 1 the landlord will fix it", audience: .manager,
                   run: { try $0.move($1, &$2, to: .cancelled, verb: "cancel") }),
        BotCommand(name: "edit", aliases: [], syntax: ["!edit <id> title|due|description <value>"],
                   summary: "Change a job's title, due time (or `none`) or description.",
                   example: "!edit 1 due tomorrow 9:00", audience: .member, run: { try $0.edit($1, &$2) }),
        BotCommand(name: "task", aliases: [], syntax: ["!task add <id> <text>", "!task done <id> <n>", "!task done <id> <text>"],
                   summary: "Add a checklist item to a job, or tick item n; the job shows its progress.",
                   example: "!task add 1 buy a washer", audience: .member, run: { try $0.task($1, &$2) }),
        BotCommand(name: "comment", aliases: [], syntax: ["!comment <id> <text>"],
                   summary: "Comment on a job; its creator and assignee are told.",
                   example: "!comment 1 how is it going?", audience: .member, run: { try $0.comment($1, &$2) }),
        BotCommand(name: "comments", aliases: [], syntax: ["!comments <id>"],
                   summary: "A job's comments, newest first.",
                   example: "!comments 1", audience: .member, run: { try $0.comments($1, &$2) }),
        BotCommand(name: "show", aliases: [], syntax: ["!show <id>"],
                   summary: "Everything about a job: status, people, due time, description, checklist, photos.",
                   example: "!show 1", audience: .member, run: { try $0.show($1, &$2) }),
        BotCommand(name: "activity", aliases: [], syntax: ["!activity <id>"],
                   summary: "A job's history: every change, who made it and when, newest first.",
                   example: "!activity 1", audience: .member, run: { try $0.activity($1, &$2) }),
        BotCommand(name: "jobs", aliases: [],
                   syntax: ["!jobs [#room] [status:<s>[,<s>]] [assignee:<nick>|mine] [due:<when>|overdue] [created:<when>] [page:<n>] [text]"],
                   summary: "List jobs, newest first, 10 a page. Statuses: created, assigned, in-progress, completed, cancelled, open.",
                   example: "!jobs status:open assignee:bob", audience: .member, run: { try $0.jobs($1, &$2) }),
        BotCommand(name: "photo", aliases: [], syntax: ["!photo <id> <url> [caption]", "!photo <id> [caption]"],
                   summary: "Attach a photo to a job as proof of work: its link, or else the photo you uploaded last (the web client's camera button).",
                   example: "!photo 1 https://example.org/sink.jpg fixed!", audience: .member, run: { try $0.photo($1, &$2) }),
        BotCommand(name: "mine", aliases: [], syntax: ["!mine"],
                   summary: "Your open jobs across all your rooms and your personal list, soonest due first.",
                   example: "!mine", audience: .anyone, run: { try $0.mine($1, &$2) }),
        BotCommand(name: "stats", aliases: [], syntax: ["!stats [nick]"],
                   summary: "How many jobs someone has completed, in this room and in all rooms you share.",
                   example: "!stats bob", audience: .anyone, run: { try $0.stats($1, &$2) }),
        BotCommand(name: "ask", aliases: [], syntax: ["!ask reassign <id> [reason]", "!ask work [note]"],
                   summary: "Ask the room's managers to reassign one of your jobs, or for more work.",
                   example: "!ask work I have a free afternoon", audience: .member, run: { try $0.ask($1, &$2) }),
        BotCommand(name: "approve", aliases: [], syntax: ["!approve <ask> [@nick] [note]"],
                   summary: "Grant a member's ask; they are told. Granting a reassignment hands the job to @nick, or leaves it unassigned.",
                   example: "!approve 1", audience: .manager, run: { try $0.decide($1, &$2, approve: true) }),
        BotCommand(name: "deny", aliases: [], syntax: ["!deny <ask> [note]"],
                   summary: "Turn down a member's ask, with a note.",
                   example: "!deny 1 not this week", audience: .manager, run: { try $0.decide($1, &$2, approve: false) }),
        BotCommand(name: "asks", aliases: [], syntax: ["!asks"],
                   summary: "Open asks in this room (managers see all, members their own).",
                   example: "!asks", audience: .member, run: { try $0.asks($1, &$2) }),
        BotCommand(name: "chore", aliases: [], syntax: [
            "!chore add <name> every <frequency> [at <HH:MM>] [from <when>] [among <nick> <nick> …]",
            "!chore order <chore> <nick> <nick> …", "!chore edit <chore> every <frequency> | at <HH:MM>", "!chore rm <chore>",
        ], summary: "A recurring chore passed round in turn. Frequencies: day, week, 3 days, 2 weeks, mon,thu, weekdays, month; due at 18:00 unless `at` says.",
                   example: "!chore add dishes every day at 20:00 among bob carol", audience: .member, run: { try $0.chore($1, &$2) }),
        BotCommand(name: "chores", aliases: [], syntax: ["!chores"],
                   summary: "The room's chores: how often, whose turn, when due.",
                   example: "!chores", audience: .member, run: { try $0.listChores($1, &$2) }),
        BotCommand(name: "turn", aliases: ["whose"], syntax: ["!turn [chore]"],
                   summary: "Whose turn it is, since when, when it is due and who is next; without a chore, all of the room's.",
                   example: "!turn dishes", audience: .member, run: { try $0.turn($1, &$2) }),
        BotCommand(name: "skip", aliases: ["pass"], syntax: ["!skip <chore> [reason]"],
                   summary: "Pass your turn to the next person without it counting as done (managers may skip anyone's).",
                   example: "!skip dishes away tonight", audience: .member, run: { try $0.skip($1, &$2) }),
        BotCommand(name: "swap", aliases: [], syntax: ["!swap <chore> <nick>"],
                   summary: "Offer to swap places in a chore's rotation with someone; the order changes only when they !accept.",
                   example: "!swap dishes carol", audience: .member, run: { try $0.swap($1, &$2) }),
        BotCommand(name: "accept", aliases: [], syntax: ["!accept [chore]"],
                   summary: "Accept the swap someone offered you.",
                   example: "!accept dishes", audience: .member, run: { try $0.answerSwap($1, &$2, accept: true) }),
        BotCommand(name: "decline", aliases: [], syntax: ["!decline [chore]"],
                   summary: "Turn down the swap someone offered you.",
                   example: "!decline", audience: .member, run: { try $0.answerSwap($1, &$2, accept: false) }),
        BotCommand(name: "away", aliases: [], syntax: ["!away <duration>", "!away until <when>"],
                   summary: "Leave the room's rotations for a while (3d, 2 weeks, until fri): your turns pass on and you get no reminders.",
                   example: "!away until 2026-12-01", audience: .member, run: { try $0.away($1, &$2) }),
        BotCommand(name: "back", aliases: [], syntax: ["!back"],
                   summary: "Rejoin the room's rotations before your away time ends.",
                   example: "!back", audience: .member, run: { try $0.back($1, &$2) }),
        BotCommand(name: "agenda", aliases: ["calendar"], syntax: ["!agenda [days]", "!agenda mine [days]"],
                   summary: "Upcoming turns, day by day: the room's, or yours across all your rooms (7 days unless you say).",
                   example: "!agenda 3", audience: .anyone, run: { try $0.agenda($1, &$2) }),
        BotCommand(name: "list", aliases: [], syntax: [
            "!list <name>", "!list <name> add <item>[, <item>…]", "!list <name> done <item|n>", "!list <name> rm <item|n>",
        ], summary: "Shared lists in the room: groceries, what is in the fridge.",
                   example: "!list groceries add milk, eggs", audience: .member, run: { try $0.list($1, &$2) }),
        BotCommand(name: "lists", aliases: [], syntax: ["!lists"],
                   summary: "The room's shared lists and how many items are open on each.",
                   example: "!lists", audience: .member, run: { try $0.lists($1, &$2) }),
        BotCommand(name: "rooms", aliases: [], syntax: ["!rooms"],
                   summary: "The rooms you belong to and your role in each.",
                   example: "!rooms", audience: .anyone, run: { try $0.rooms($1, &$2) }),
        BotCommand(name: "profile", aliases: ["whois"], syntax: ["!profile [nick]", "!profile set first|last|email <value>", "!profile export"],
                   summary: "Show someone's profile (name, email, rooms you share; a contractor's skills, rate, area and rating), change yours, or download all your data.",
                   example: "!profile set first Alice", audience: .anyone, run: { try $0.profile($1, &$2) }),
        BotCommand(name: "token", aliases: ["tokens"], syntax: ["!token", "!token new [label]", "!token renew <label>", "!token revoke <id>"],
                   summary: "Tokens your bots log in with instead of your password: list them, make one, make one in place of those with its label, end one.",
                   example: "!token new ci", audience: .anyone, run: { try $0.token($1, &$2) }),
        BotCommand(name: "ical", aliases: ["ics"], syntax: ["!ical", "!ical new [#room]", "!ical revoke <id>"],
                   summary: "Calendar feeds for your calendar app: your turns, jobs and plan, or a room's turns and jobs; list, make, end one.",
                   example: "!ical new", audience: .anyone, run: { try $0.ical($1, &$2) }),
        BotCommand(name: "hook", aliases: ["hooks", "webhook", "webhooks"], syntax: [
            "!hooks [#room]", "!hook add #room <url> [event types]", "!hook rm <id>", "!hook log <id>", "!hook replay <id> <event id>",
        ], summary: "A room's webhooks: each event POSTed as signed JSON to a URL of yours, in order, retried until it is taken.",
                   example: "!hook add #kitchen https://example.org/hooks/chorus job", audience: .anyone, who: "managers of the room",
                   run: { try $0.hook($1, &$2) }),
        BotCommand(name: "tz", aliases: ["timezone"], syntax: ["!tz [zone|server]"],
                   summary: "Show or set the time zone your due times are read and shown in, e.g. Europe/Paris.",
                   example: "!tz Europe/Paris", audience: .anyone, run: { try $0.tz($1, &$2) }),
        BotCommand(name: "room", aliases: [], syntax: [
            "!room", "!room add <account> [<account> …]", "!room set open on|off", "!room set visibility all|own", "!room set creators everyone|managers", "!room set echo on|off",
            "!room set market on|off", "!room close",
        ], summary: "Show or change how the room runs jobs; `market on` lets it hear every new service request; `add` makes accounts members, connected or not; `close` deletes the room for good.",
                   example: "!room set visibility own", audience: .member, run: { try $0.room($1, &$2) }),
        BotCommand(name: "contractor", aliases: [], syntax: [
            "!contractor", "!contractor on|off", "!contractor skills <skill>, <skill> …", "!contractor rate <per hour>",
            "!contractor area <place>, <place> …", "!contractor area anywhere", "!contractor bio <text>",
        ], summary: "Become (or stop being) a contractor who takes service requests, and say what you do, for how much, where.",
                   example: "!contractor skills plumbing, electrical", audience: .anyone, run: { try $0.contractor($1, &$2) }),
        BotCommand(name: "request", aliases: [], syntax: [
            "!request add <category> <description> [| when <window>] [| budget <max>] [| at <place>] [| takes <estimate>]",
            "!request show <n>", "!request edit <n> category|description|when|budget|at|takes <value>", "!request cancel <n> <reason>",
            "!request done <n>", "!request confirm <n>", "!request dispute <n> <reason>", "!request msg <n> [@nick] <text>",
        ], summary: "Ask for a hand: contractors with the skill are told and make offers; you hire one, confirm the work and review it.",
                   example: "!request add plumbing Fix the dripping kitchen tap | when sat 9:00-12:00 | budget 80 | at Elm Street 12 | takes 2h",
                   audience: .anyone, run: { try $0.request($1, &$2) }),
        BotCommand(name: "requests", aliases: [], syntax: ["!requests [open|all|mine] [category] [page:<n>]"],
                   summary: "Service requests, newest first, 10 a page: open ones in your skills (contractors), in every category, or your own, current and past.",
                   example: "!requests mine", audience: .anyone, run: { try $0.requests($1, &$2) }),
        BotCommand(name: "offer", aliases: [], syntax: ["!offer <n> <price> [note]"],
                   summary: "Offer your price for an open request (contractors); offering again changes it.",
                   example: "!offer 1 70 can come at 10", audience: .anyone, who: "contractors (!contractor on), on an open request not their own",
                   run: { try $0.offer($1, &$2) }),
        BotCommand(name: "offers", aliases: [], syntax: ["!offers <n>"],
                   summary: "The offers on your request, cheapest first, with each contractor's rating.",
                   example: "!offers 1", audience: .anyone, run: { try $0.offers($1, &$2) }),
        BotCommand(name: "hire", aliases: [], syntax: ["!hire <n> <contractor>"],
                   summary: "Hire someone who offered on your request; the others who offered are told.",
                   example: "!hire 1 bob", audience: .anyone, run: { try $0.hire($1, &$2) }),
        BotCommand(name: "review", aliases: [], syntax: ["!review <n> <1-5> <text>", "!review reply <n> <text>"],
                   summary: "Rate a hire once you confirmed the work (once); the contractor may answer once.",
                   example: "!review 1 5 quick and tidy", audience: .anyone, run: { try $0.review($1, &$2) }),
        BotCommand(name: "modes", aliases: [], syntax: ["!modes"],
                   summary: "The modes you track time in: everyone's (work, study, break, exercise) and your own.",
                   example: "!modes", audience: .anyone, run: { try $0.modes($1, &$2) }),
        BotCommand(name: "mode", aliases: [], syntax: ["!mode add <name>", "!mode rm <name>"],
                   summary: "Make a mode of your own to track time in, or remove one (its time stays).",
                   example: "!mode add reading", audience: .anyone, run: { try $0.mode($1, &$2) }),
        BotCommand(name: "track", aliases: ["timer"], syntax: [
            "!track", "!track start <mode> [note]", "!track start job <n> [note]", "!track switch <mode>", "!track stop [at <HH:MM> [day]]",
            "!track keep", "!track cancel", "!track limit [<duration>|default]", "!track add <mode|job n> <HH:MM>-<HH:MM> [day] [note]",
            "!track edit <entry> start|end|mode|note <value>", "!track rm <entry>", "!track log [today|yesterday|week|month|<day>|<date>|<from>..<to>]",
        ], summary: "Track your time: one timer at a time, entries by hand that never overlap, and the log of them.",
                   example: "!track start study chapter 3", audience: .anyone, run: { try $0.track($1, &$2) }),
        BotCommand(name: "plan", aliases: [], syntax: ["!plan", "!plan add <mode> <days> <HH:MM>-<HH:MM>", "!plan rm <n>", "!plan remind on|off"],
                   summary: "Your weekly schedule (days: mon, mon-fri, sat,sun, weekdays, daily); !report week compares it with what you logged.",
                   example: "!plan add study mon-fri 9:00-12:00", audience: .anyone, run: { try $0.plan($1, &$2) }),
        BotCommand(name: "report", aliases: [], syntax: [
            "!report [day|week|month|<date>|<from>..<to>] [by mode|job|room] [ascii]", "!report [period] #room [by person|job]",
        ], summary: "Where your time went, with a bar chart drawn in text (`ascii` draws with #), this week unless you say; with a #room, the time members logged on its jobs (a member sees their own).",
                   example: "!report week by mode", audience: .anyone, run: { try $0.report($1, &$2) }),
    ]

    /// Every name and alias → its command. A word that named two commands would quietly reach only
    /// one of them (`!list` was both the shared lists and an alias of `!jobs`): the tests check
    /// that `clashes` is empty.
    static let byName: [String: BotCommand] = {
        var map: [String: BotCommand] = [:]
        for c in commands {
            for word in [c.name] + c.aliases where map[word] == nil { map[word] = c }
        }
        return map
    }()

    /// The table's name for the command a line starts with (`!complete 3` → `done`), nil for none:
    /// a bounded set of names, for counting commands.
    public static func commandName(of line: String) -> String? {
        let verb = line.dropFirst().drop(while: { $0 == " " }).prefix(while: { $0 != " " }).lowercased()
        return byName[verb]?.name
    }

    /// The command name or alias a mistyped word was most likely meant as (`tasks` → `task`,
    /// `asign` → `assign`): at most two letters added, dropped, changed or swapped, and fewer than
    /// half the word, so a short word is not taken for another command. Nil when nothing is that close.
    static func nearestName(to word: String) -> String? {
        let typed = Array(word)
        let limit = min(2, (typed.count - 1) / 2)
        guard limit > 0 else { return nil }
        // Of names as close, the one that begins as the word does (`tasks`: `task`, not `asks`).
        return byName.keys
            .map { (name: $0, distance: editDistance(typed, Array($0)), shared: -zip(typed, $0).prefix { $0 == $1 }.count) }
            .filter { $0.distance <= limit }
            .min { ($0.distance, $0.shared, $0.name) < ($1.distance, $1.shared, $1.name) }?.name
    }

    /// The fewest letters added, dropped, changed or swapped with the next to make `a` into `b`
    /// (Damerau's distance, each letter edited once).
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        var before = [Int](), previous = Array(0...b.count)
        for i in a.indices {
            var current = [i + 1]
            for j in b.indices {
                var d = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (a[i] == b[j] ? 0 : 1))
                if i > 0, j > 0, a[i] == b[j - 1], a[i - 1] == b[j] { d = min(d, before[j - 1] + 1) }
                current.append(d)
            }
            (before, previous) = (previous, current)
        }
        return previous[b.count]
    }

    /// Words that name more than one command (as a name or an alias), with the commands they name.
    public static var clashes: [String: [String]] {
        var named: [String: [String]] = [:]
        for c in commands {
            for word in [c.name] + c.aliases { named[word, default: []].append(c.name) }
        }
        return named.filter { $0.value.count > 1 }
    }
}
