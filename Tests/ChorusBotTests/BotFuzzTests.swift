import ChorusBot
import ChorusCore
import ChorusStore
import ChorusTestSupport
import ChorusWorkspace
import Foundation
import Testing

/// Nothing a user types can crash the interpreter: random command lines built from real command
/// words and awkward arguments, against a real (in-memory) store. Every line gets an answer.
@Suite struct BotFuzzTests {
    @Test func randomCommandLinesAlwaysGetAnAnswer() throws {
        let store = try TestStore.fresh()
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        for name in ["ann", "ben"] { _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0)) }
        try store.saveRoom(Room(name: "#r", createdAt: t0))
        try store.saveMembership(Membership(room: "#r", account: "ann", role: .manager, since: t0))
        try store.saveMembership(Membership(room: "#r", account: "ben", role: .member, since: t0))
        let bot = Bot(boards: Boards(store: store, timeZone: TimeZone(identifier: "UTC")!, now: { t0 }))
        let verbs = Bot.commands.flatMap { [$0.name] + $0.aliases } + ["", "x", "!"]
        let words = ["add", "done", "rm", "set", "1", "2", "0", "-1", "99999999999999999999", "#r", "#nope", "@ben", "ben", "me",
                     "due", "every", "day", "at", "25:99", "among", "from", "until", "--", ":", "status:open", "page:9223372036854775807",
                     "visibility", "own", "é", "\u{301}", "2026-02-31", "in", "3d", "mine", "close", "order", "edit", ",", "x,y"]
        var rng = SystemRandomNumberGenerator()
        for i in 0..<3000 {
            let verb = verbs.randomElement(using: &rng)!
            let args = (0..<Int.random(in: 0...6, using: &rng)).map { _ in words.randomElement(using: &rng)! }
            let line = "!" + ([verb] + args).joined(separator: " ")
            let asker = i % 3 == 0 ? "ben" : "ann"
            let inv = Invocation(account: asker, nick: asker, room: i % 5 == 0 ? nil : .init(key: "#r", name: "#r"),
                                 rooms: ["#r": "#r"], onlineAccounts: ["ben": "ben", "ann": "ann"],
                                 timeZone: TimeZone(identifier: "UTC")!, now: t0)
            let result = bot.run(line, inv)
            #expect(!(result.replies.isEmpty && result.events.isEmpty && result.effects.isEmpty), "no answer to \(line)")
        }
    }
}
