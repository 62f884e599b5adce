import ChorusIRC
import XCTest

/// The bot in a live server: tags for bots, who hears which event, offline delivery, room closing.
final class BotTests: XCTestCase {
    var server: TestServer!
    var clients: [String: TestClient] = [:]

    override func setUpWithError() throws {
        server = try TestServer()
        for nick in ["mona", "mel", "max", "oz"] {
            try server.addAccount(nick, "\(nick)-password")
        }
    }

    // XCTest keeps every test case object until the run ends: drop the server here, or its
    // connections stay open and its data folder stays in the temporary directory.
    override func tearDown() {
        clients.removeAll()
        server = nil
    }

    @discardableResult
    func login(_ nick: String, caps: [String] = []) throws -> TestClient {
        let c = try server.connect()
        try c.register(nick, caps: caps, sasl: (nick, "\(nick)-password"))
        clients[nick] = c
        return c
    }

    /// An event too long for one line comes on two with the same tags; the second says it
    /// continues. A room setting's change names the setting and its value as tags.
    func testASplitEventMarksItsContinuationAndSettingsAreTagged() throws {
        let mona = try login("mona", caps: ["message-tags"])
        try mona.join("#shop")
        let mel = try login("mel", caps: ["message-tags"])
        try mel.join("#shop")
        mona.send("PRIVMSG #shop :!job add Stock the fridge")
        _ = try mel.expect(command: "NOTICE", "#shop")
        mona.send("PRIVMSG #shop :!comment 1 " + String(repeating: "milk eggs butter ", count: 28))
        let first = try mel.expect(command: "NOTICE", "#shop")
        let second = try mel.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(first.tag("chorus/event"), "job.comment")
        XCTAssertNil(first.tag("chorus/continued"))
        XCTAssertEqual(second.tag("chorus/event-id"), first.tag("chorus/event-id"))
        XCTAssertEqual(second.tag("chorus/continued"), "1")
        XCTAssertTrue(second.params[1].hasPrefix("milk") || second.params[1].hasPrefix("eggs") || second.params[1].hasPrefix("butter"),
                      second.params[1])

        mona.send("PRIVMSG #shop :!room set visibility own")
        let setting = try mel.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(setting.tag("chorus/event"), "room.settings")
        XCTAssertEqual(setting.tag("chorus/setting"), "visibility")
        XCTAssertEqual(setting.tag("chorus/value"), "own")
        XCTAssertEqual(setting.params[1], "mona set visibility own in #shop")
    }

    func testEventsCarryTagsForBotsAndLabelsForTheAsker() throws {
        let mona = try login("mona", caps: ["message-tags", "labeled-response", "batch"])
        try mona.join("#shop")
        let mel = try login("mel", caps: ["message-tags", "server-time"])
        try mel.join("#shop")
        mona.send("@label=L1 PRIVMSG #shop :!job add Stock the fridge @mel due 2030-12-02")
        let event = try mel.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(event.tag("chorus/event"), "job.created")
        XCTAssertEqual(event.tag("chorus/job"), "1")
        XCTAssertEqual(event.tag("chorus/actor"), "mona")
        XCTAssertEqual(event.tag("chorus/assignee"), "mel")
        XCTAssertNotNil(event.tag("msgid"))
        XCTAssertNotNil(event.tag("time"))
        XCTAssertTrue(event.source!.hasPrefix("Chorus!"))
        // The asker's copy is the reply to its labeled line (one line: the label sits on it).
        let own = try mona.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(own.tag("label"), "L1")
        // Several lines come in a labeled batch.
        mona.send("@label=L2 PRIVMSG #shop :!show 1")
        let open = try mona.expect(command: "BATCH")
        XCTAssertEqual(open.tag("label"), "L2")
        let inBatch = try mona.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(inBatch.tag("batch"), String(open.params[0].dropFirst()))

        mel.send("PRIVMSG #shop :!done 1")
        let status = try mel.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(status.tag("chorus/event"), "job.status")
        XCTAssertEqual(status.tag("chorus/from"), "assigned")
        XCTAssertEqual(status.tag("chorus/to"), "completed")
    }

    /// A script sends its commands without waiting: they go to the writer together, and its answers
    /// still come in the order of its lines; a plain line waits for the commands before it.
    func testCommandsSentTogetherAreAnsweredInOrder() throws {
        let mona = try login("mona", caps: ["message-tags", "labeled-response"])
        try mona.join("#shop")
        let mel = try login("mel")
        try mel.join("#shop")
        let lines = ["@label=a1 PRIVMSG #shop :!job add One", "@label=a2 PRIVMSG #shop :!job add Two",
                     "@label=a3 PRIVMSG #shop :!frob", "@label=a4 PRIVMSG #shop :hello",
                     "@label=a5 PRIVMSG #shop :!job add Three"]
        mona.sendRaw(Array(lines.map { $0 + "\r\n" }.joined().utf8))

        let answers = try mona.collect { $0.tag("label") == "a5" }.compactMap { $0.tag("label") }
        XCTAssertEqual(answers, ["a1", "a2", "a3", "a4", "a5"])
        // The second command went to the writer before the first was answered: both lines reached
        // the room before either event. "hello" waited for the commands read before it.
        let seen = try mel.collect { $0.params.last?.contains("created job 3") ?? false }.compactMap { m -> String? in
            guard let text = m.params.last, m.command == "PRIVMSG" || m.command == "NOTICE", m.params.first == "#shop" else { return nil }
            return text.contains("created job") ? "job " + String(text.split(separator: " ").last { $0.first?.isNumber ?? false } ?? "?") : text
        }
        XCTAssertEqual(seen.prefix(2), ["!job add One", "!job add Two"])
        XCTAssertEqual(seen.filter { $0.hasPrefix("job ") || $0 == "hello" }, ["job 1", "job 2", "hello", "job 3"])
    }

    /// A script joins a room it makes and sends its first command in the same write: the command
    /// waits for the membership, as every line after a JOIN does.
    func testACommandRightBehindTheJoinThatMakesTheRoomRunsInIt() throws {
        let mona = try login("mona", caps: ["labeled-response"])
        for n in 1...3 {
            mona.sendRaw(Array("JOIN #new\(n)\r\n@label=c\(n) PRIVMSG #new\(n) :!job add Paint wall \(n)\r\n".utf8))
            let answer = try mona.take("the command's answer") { $0.tag("label") == "c\(n)" }
            XCTAssertEqual(answer.command, "NOTICE", "\(answer)")
            XCTAssertTrue(answer.params.last?.contains("created job \(n)") ?? false, "\(answer)")
        }
    }

    func testVisibilityOwnFiltersTheBroadcast() throws {
        let mona = try login("mona"), mel = try login("mel"), max = try login("max")
        try mona.join("#shop"); try mel.join("#shop"); try max.join("#shop")
        mona.send("PRIVMSG #shop :!room set visibility own")
        try max.expect(command: "NOTICE", "#shop")
        mona.send("PRIVMSG #shop :!job add Secret @mel")
        try mel.expect(command: "NOTICE", "#shop")
        try mona.expect(command: "NOTICE", "#shop")
        mona.send("PRIVMSG #shop :!job add Public @max")
        let maxSees = try max.expect(command: "NOTICE", "#shop")
        XCTAssertTrue(maxSees.params[1].contains("Public"), "max sees his job's event and not mel's: \(maxSees.params[1])")
        max.send("PRIVMSG #shop :!jobs")
        let list = try max.collect(until: { $0.params.last?.contains("[assigned]") == true })
        XCTAssertFalse(list.contains { $0.params.last?.contains("Secret") == true })

        // The events are in the room's history, and history keeps the same rule: mel pages back her
        // job's event and not max's, the manager sees both.
        func eventsInHistory(_ nick: String) throws -> [String] {
            // A second session of the account, under another nick.
            let c = try server.connect()
            try c.register(nick + "_", caps: ["draft/chathistory", "batch", "server-time", "message-tags"],
                           sasl: (nick, "\(nick)-password"))
            c.send("CHATHISTORY LATEST #shop * 50")
            let page = try c.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
            return page.filter { $0.command == "NOTICE" }.compactMap { $0.tag("chorus/job") }
        }
        XCTAssertEqual(try eventsInHistory("mel"), ["1"])
        XCTAssertEqual(try eventsInHistory("max"), ["2"])
        XCTAssertEqual(try eventsInHistory("mona"), ["1", "2"])
        // A client without chathistory gets the same filtered lines replayed when it joins.
        mel.send("PART #shop")
        try mel.expect(command: "PART", "#shop")
        mel.send("JOIN #shop")
        try mel.expect(command: "366")
        let replay = mel.drain(for: 0.5).filter { $0.command == "NOTICE" }.map { $0.params[1] }
        XCTAssertTrue(replay.contains { $0.contains("Secret") }, "replay: \(replay)")
        XCTAssertFalse(replay.contains { $0.contains("Public") }, "replay: \(replay)")
    }

    /// Where members see only their own jobs, the line that made a hidden job must not show its
    /// title to them either: command lines reach only the managers, live and in history.
    func testVisibilityOwnKeepsCommandLinesFromMembers() throws {
        let mona = try login("mona"), mel = try login("mel"), max = try login("max")
        try mona.join("#shop"); try mel.join("#shop"); try max.join("#shop")
        mona.send("PRIVMSG #shop :!room set visibility own")
        try max.expect(command: "NOTICE", "#shop")
        try mel.expect(command: "NOTICE", "#shop")
        mona.send("PRIVMSG #shop :!job add Secret raise for mel @mel")
        mona.send("PRIVMSG #shop :plain words")
        let maxSaw = try max.collect(until: { $0.params.last == "plain words" })
        XCTAssertFalse(maxSaw.contains { $0.params.last?.contains("Secret") == true }, "\(maxSaw.map(\.params))")
        let melSaw = try mel.collect(until: { $0.params.last == "plain words" })
        XCTAssertEqual(melSaw.filter { $0.params.last?.contains("Secret") == true }.map(\.command), ["NOTICE"],
                       "mel reads the event about her job, not the command line")

        func linesInHistory(_ nick: String) throws -> [String] {
            let c = try server.connect()
            try c.register(nick + "_", caps: ["draft/chathistory", "batch"], sasl: (nick, "\(nick)-password"))
            c.send("CHATHISTORY LATEST #shop * 50")
            let page = try c.collect(until: { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true })
            return page.filter { $0.command == "PRIVMSG" }.compactMap { $0.params.last }
        }
        XCTAssertEqual(try linesInHistory("max"), ["!room set visibility own", "plain words"], "typed while the room was open")
        XCTAssertEqual(try linesInHistory("mona"), ["!room set visibility own", "!job add Secret raise for mel @mel", "plain words"])
    }

    /// Leaving a room gives back the work held there: the room hears the turn pass on and the job
    /// come free, and the leaver, back in the room later, is no longer reminded of it.
    func testLeavingARoomPassesTheTurnAndFreesTheJobs() throws {
        let mona = try login("mona"), mel = try login("mel"), max = try login("max")
        try mona.join("#shop"); try mel.join("#shop"); try max.join("#shop")
        mona.send("PRIVMSG #shop :!chore add sweep every day at 18:00 among mel max")
        try max.expect("turn started") { $0.params.last?.hasPrefix("It is mel's turn for sweep") == true }
        mona.send("PRIVMSG #shop :!job add Count the till @mel")
        try max.expect("created") { $0.params.last?.contains("Count the till") == true }
        mel.send("PART #shop :bye")
        try max.expect(command: "PART", "#shop", "bye")
        try max.expect("out of rotation") { $0.params.last == "mel is out of the sweep rotation: max" }
        try max.expect("turn passes") { $0.params.last?.hasPrefix("It is max's turn for sweep") == true }
        try max.expect("job freed") { $0.params.last == "Job 1 “Count the till” is unassigned: mel left #shop" }
        max.send("PRIVMSG #shop :!start 1")
        try max.expect("max takes it") { $0.params.last?.contains("max started job 1") == true }

        // A kick does the same, said as the manager's act.
        mel.send("JOIN #shop")
        try mel.expect(command: "366")
        mona.send("PRIVMSG #shop :!chore order sweep max mel")
        try mona.expect("order") { $0.params.last?.hasPrefix("It is max's turn") == true }
        mona.send("KICK #shop mel :enough")
        try max.expect(command: "KICK")
        try max.expect("out of rotation") { $0.params.last == "mel is out of the sweep rotation: max" }
        max.send("PRIVMSG #shop :!turn sweep")
        let turn = try max.expect(command: "NOTICE", "#shop")
        XCTAssertTrue(turn.params[1].contains("max"), turn.params[1])
    }

    /// A manager adds someone who is not connected (INVITE to their account's name, or !room add):
    /// they are in the room at their next login, and at once if they are connected.
    func testAManagerAddsAnAccountThatIsNotConnected() throws {
        let mona = try login("mona")
        try mona.join("#shop")
        mona.send("INVITE mel #shop")
        try mona.expect(command: "341", "mel", "#shop")
        try mona.expect("told") { $0.params.last == "mona added mel to #shop" }
        mona.send("INVITE mel #shop")
        let again = try mona.expect(command: "NOTICE", "mona")
        XCTAssertTrue(again.params[1].contains("mel is already a member of #shop"), again.params[1])
        mona.send("INVITE nobody #shop")
        try mona.expect(command: "401", "nobody")
        // Made from the shell a moment ago, before the server's list of accounts is read again.
        _ = try server.server.accounts.register(name: "newcomer", password: "newcomer-password")
        mona.send("INVITE newcomer #shop")
        try mona.expect(command: "341", "newcomer", "#shop")

        // The notice kept for mel may come in the login's burst, before the JOIN or after it.
        let mel = try server.connect()
        var seen = try mel.register("mel", sasl: ("mel", "mel-password"))
        clients["mel"] = mel
        seen += try mel.collect(until: { $0.command == "JOIN" && $0.params.first == "#shop" })
        XCTAssertTrue(seen.last?.source?.hasPrefix("mel!") == true)
        if !seen.contains(where: { $0.command == "NOTICE" && $0.params[1] == "mona added mel to #shop" }) {
            // At once: on PostgreSQL a login's reads once waited a second for a connection kept idle.
            seen += [try mel.expect("the notice kept for mel", timeout: 1) { $0.command == "NOTICE" && $0.params[1] == "mona added mel to #shop" }]
        }
        let added = seen.filter { $0.command == "NOTICE" }.map { $0.params[1] }
        XCTAssertTrue(added.contains { $0.contains("mona added mel to #shop") }, "told while away: \(added)")

        // Connected: !room add puts every connection of the account in the room at once.
        let max = try login("max")
        mona.send("PRIVMSG #shop :!room add max")
        try max.expect(command: "JOIN", "#shop")
        try mel.expect("told") { $0.params.last == "mona added max to #shop" }
    }

    /// MODE +o is remembered by the room's rules and the room hears who became a manager.
    func testOppingSomeoneMakesThemAManagerForGood() throws {
        let mona = try login("mona"), mel = try login("mel")
        try mona.join("#shop"); try mel.join("#shop")
        mona.send("MODE #shop +o mel")
        try mel.expect(command: "MODE", "#shop", "+o", "mel")
        try mel.expect("told") { $0.command == "NOTICE" && $0.params.last == "mona made mel a manager of #shop" }
        mel.send("QUIT")
        try mona.expect(command: "QUIT")
        let back = try login("mel")
        let names = try back.expect(command: "353")
        XCTAssertTrue(names.params.last?.contains("@mel") == true, "a manager again after logging in: \(names.params)")
        back.send("PRIVMSG #shop :!assign 1 mona")
        let answer = try back.expect(command: "NOTICE", "#shop")
        XCTAssertFalse(answer.params[1].contains("for the room's managers"), answer.params[1])
    }

    /// The bot's answers to one person carry the same account tag as its room events.
    func testAnswersCarryTheBotsAccountTag() throws {
        let mona = try login("mona", caps: ["account-tag"])
        try mona.join("#shop")
        mona.send("PRIVMSG #shop :!jobs")
        let answer = try mona.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(answer.tag("account"), "Chorus")
        mona.send("PRIVMSG #shop :!job add Count the till")
        let event = try mona.expect(command: "NOTICE", "#shop")
        XCTAssertEqual(event.tag("account"), answer.tag("account"))
    }

    /// A bot that rejoins reads the replayed events with the tags it read live.
    func testReplayedEventsKeepTheirTags() throws {
        let mona = try login("mona")
        try mona.join("#shop")
        mona.send("PRIVMSG #shop :!job add Count the till")
        try mona.expect("created") { $0.params.last?.contains("Count the till") == true }
        let bot = try login("oz", caps: ["message-tags"])
        bot.send("JOIN #shop")
        let replayed = try bot.expect("replayed event") { $0.command == "NOTICE" && $0.params.last?.contains("Count the till") == true }
        XCTAssertEqual(replayed.tag("chorus/event"), "job.created")
        XCTAssertEqual(replayed.tag("chorus/job"), "1")
    }

    func testApprovingAReassignmentHandsTheJobOnAndARefusalChangesNothing() throws {
        let mona = try login("mona"), mel = try login("mel"), max = try login("max", caps: ["message-tags"])
        try mona.join("#shop"); try mel.join("#shop"); try max.join("#shop")
        mona.send("PRIVMSG #shop :!job add Count the till @mel")
        try mel.expect(command: "NOTICE", "#shop")
        mel.send("PRIVMSG #shop :!ask reassign 1 I leave early")
        try mona.expect("ask") { $0.params.last?.contains("ask 1") == true }
        mel.send("PRIVMSG #shop :!ask work")
        try mona.expect("ask") { $0.params.last?.contains("ask 2") == true }
        // Approving ask 2 (not a reassignment) with @max is refused as a whole: the ask stays open.
        mona.send("PRIVMSG #shop :!approve 2 @max")
        try mona.expect(command: "NOTICE", "#shop", "@nick names who takes over a job; ask 2 is not a reassignment")
        mona.send("PRIVMSG #shop :!asks")
        let open = try mona.collect(until: { $0.params.last?.contains("more work") == true })
        XCTAssertTrue(open.contains { $0.params.last?.contains("2. mel asks for more work") == true })

        mona.send("PRIVMSG #shop :!approve 1 @max")
        let handed = try max.expect("assignment") { $0.tag("chorus/event") == "job.assigned" }
        XCTAssertEqual(handed.tag("chorus/assignee"), "max")
        XCTAssertEqual(handed.tag("chorus/previous"), "mel")
    }

    func testPersonalJobsAnswerWithTheEventAndItsTags() throws {
        let mona = try login("mona", caps: ["message-tags"])
        // Times are read and shown in the asker's zone: 10:00 in Tokyo is 01:00 UTC.
        mona.send("PRIVMSG Chorus :!tz Asia/Tokyo")
        try mona.expect(command: "NOTICE", "mona")
        mona.send("PRIVMSG Chorus :!job add Renew passport due 2030-12-02 10:00")
        let created = try mona.expect(command: "NOTICE", "mona")
        XCTAssertEqual(created.tag("chorus/event"), "job.created")
        XCTAssertNil(created.tag("chorus/room"))
        XCTAssertEqual(created.tag("chorus/due"), "2030-12-02T01:00:00Z")
        let id = try XCTUnwrap(created.tag("chorus/job"))
        XCTAssertTrue(created.params[1].contains("Renew passport"), created.params[1])
        XCTAssertTrue(created.params[1].contains("10:00"), "shown in the asker's zone: \(created.params[1])")
        mona.send("PRIVMSG Chorus :!done \(id)")
        let done = try mona.expect(command: "NOTICE", "mona")
        XCTAssertEqual(done.tag("chorus/event"), "job.status")
        XCTAssertEqual(done.tag("chorus/to"), "completed")
    }

    func testAnOutsiderCannotSeeOrTouchARoomsJobs() throws {
        let mona = try login("mona"), oz = try login("oz")
        try mona.join("#shop")
        try oz.join("#elsewhere")
        mona.send("PRIVMSG #shop :!job add Count the till")
        try mona.expect(command: "NOTICE", "#shop")
        for command in ["!show 1", "!comment 1 hello", "!done 1", "!activity 1", "!assign 1 oz", "!photo 1 https://x.example/a.png"] {
            oz.send("PRIVMSG #elsewhere :\(command)")
            let answer = try oz.expect(command: "NOTICE", "#elsewhere")
            XCTAssertEqual(answer.params[1], "There is no job 1 that you can see", command)
        }
        oz.send("PRIVMSG Chorus :!jobs #shop")
        try oz.expect(command: "NOTICE", "oz", "You are not a member of #shop")
        XCTAssertFalse(mona.drain(for: 0.3).contains { $0.command == "NOTICE" && $0.params[0] == "#shop" }, "nothing happened in #shop")
    }

    func testPeopleAwayAreToldWhenTheyComeBack() throws {
        let mona = try login("mona")
        try mona.join("#shop")
        mona.send("INVITE mel #shop")
        try mona.expect(command: "341", "mel", "#shop")  // mel is not connected: a manager's INVITE makes her a member
        let mel = try login("mel")
        try mel.expect(command: "JOIN", "#shop")
        try mel.expect("told") { $0.command == "NOTICE" && $0.params.last == "mona added mel to #shop" }
        mel.send("QUIT")
        try mona.expect(command: "QUIT")
        mona.send("PRIVMSG #shop :!job add Close the shop @mel due tomorrow 18:00")
        try mona.expect(command: "NOTICE", "#shop")
        mona.send("PRIVMSG #shop :!comment 1 keys are under the mat")
        try mona.expect(command: "NOTICE", "#shop")

        let back = try login("mel")
        try back.expect(command: "JOIN", "#shop")
        try back.expect("away header") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("While you were away (2)") == true }
        let first = try back.expect(command: "NOTICE", "mel")
        XCTAssertTrue(first.params[1].contains("created job 1 “Close the shop” for mel"))
        let second = try back.expect(command: "NOTICE", "mel")
        XCTAssertTrue(second.params[1].contains("keys are under the mat"))
        // Delivered once only.
        back.send("QUIT")
        let again = try login("mel")
        XCTAssertFalse(again.drain(for: 0.4).contains { $0.params.last?.hasPrefix("While you were away") == true })
    }

    func testOnlyThePersonWhoseTurnItIsIsToldAndTagsNameTheChore() throws {
        let mona = try login("mona", caps: ["message-tags"]), mel = try login("mel"), max = try login("max")
        try mona.join("#flat"); try mel.join("#flat"); try max.join("#flat")
        mel.send("PART #flat :off to the shops")
        try mona.expect(command: "PART", "#flat")
        mel.send("JOIN #flat")
        try mel.expect(command: "366")
        mel.send("QUIT")
        try mona.expect(command: "QUIT")
        mona.send("PRIVMSG #flat :!chore add dishes every day at 20:00 among mel max")
        let started = try mona.expect("turn.started") { $0.tag("chorus/event") == "turn.started" }
        XCTAssertEqual(started.tag("chorus/chore"), "dishes")
        XCTAssertEqual(started.tag("chorus/turn"), "mel")
        XCTAssertEqual(started.tag("chorus/next"), "max")
        // max is in the room and sees the room's line, but gets nothing addressed to him.
        XCTAssertFalse(max.drain(for: 0.3).contains { $0.command == "NOTICE" && $0.params[0] == "max" })
        // mel was away: told once, on coming back.
        let back = try login("mel")
        try back.expect("turn reminder") { $0.command == "NOTICE" && $0.params == ["mel", $0.params[1]] && $0.params[1].hasPrefix("It is mel's turn for dishes") }
    }

    /// A labeled command whose one line is split to fit the wire (a long comment's event) answers
    /// with a labeled batch, as several lines do: a client matches every piece to its command.
    func testALongLineSplitInALabeledReplyComesAsABatch() throws {
        let mona = try login("mona", caps: ["labeled-response", "batch", "message-tags"])
        try mona.join("#shop")
        let title = "Restock the shelves " + (0..<20).map { "aisle\($0)" }.joined(separator: " ")  // ~150 bytes
        mona.send("PRIVMSG #shop :!job add \(title)")
        try mona.expect(command: "NOTICE", "#shop")
        // Within a client's 512 bytes; with the title in the event, more than a line holds.
        let comment = (0..<60).map { "word\($0)" }.joined(separator: " ")
        mona.send("@label=L7 PRIVMSG #shop :!comment 1 \(comment)")
        let open = try mona.expect(command: "BATCH")
        XCTAssertEqual(open.tag("label"), "L7")
        XCTAssertEqual(open.params.dropFirst().first, "labeled-response")
        let id = String(open.params[0].dropFirst())
        let lines = try mona.collect(until: { $0.command == "BATCH" })
        let pieces = lines.filter { $0.command == "NOTICE" }
        XCTAssertGreaterThan(pieces.count, 1, "the event is split")
        XCTAssertTrue(pieces.allSatisfy { $0.tag("batch") == id && $0.tag("label") == nil })
    }

    func testTheAnswerToARoomCommandShowsInThatRoomForTheAskerAlone() throws {
        let mona = try login("mona"), mel = try login("mel")
        try mona.join("#shop")
        try mel.join("#shop")
        mona.send("PRIVMSG #shop :!jobs")
        let answer = try mona.expect(command: "NOTICE", "#shop", "No jobs match in #shop.")
        XCTAssertTrue(answer.source?.hasPrefix("Chorus!") == true)
        XCTAssertNil(answer.tag("chorus/event"), "an answer is not an event")
        XCTAssertFalse(mel.drain(for: 0.3).contains { $0.command == "NOTICE" && $0.params.last == "No jobs match in #shop." },
                       "the other members do not get it")
        // In private, the answer comes in private.
        mona.send("PRIVMSG Chorus :!jobs #shop")
        try mona.expect(command: "NOTICE", "mona", "No jobs match in #shop.")
    }

    func testPrivateCommandsGuestsAndEchoOff() throws {
        let guest = try server.connect()
        try guest.register("guest")
        try guest.join("#open")
        guest.send("PRIVMSG #open :!jobs")
        let refusal = try guest.expect(command: "NOTICE", "#open")
        XCTAssertTrue(refusal.params[1].hasPrefix("Log in to use commands"))

        let mona = try login("mona")
        try mona.join("#shop")
        mona.send("PRIVMSG Chorus :jobs #shop")
        try mona.expect(command: "NOTICE", "mona", "No jobs match in #shop.")
        mona.send("PRIVMSG Chorus :!jobs #nowhere")
        try mona.expect(command: "NOTICE", "mona", "You are not a member of #nowhere")
        mona.send("PRIVMSG Chorus :!job add #shop Order bags")
        try mona.expect(command: "NOTICE", "#shop")

        let mel = try login("mel")
        try mel.join("#shop")
        mona.send("PRIVMSG #shop :!room set echo off")
        try mel.expect("echo off") { $0.command == "NOTICE" && $0.params.last?.contains("set echo off") == true }
        mona.send("PRIVMSG #shop :!jobs")
        mona.send("PRIVMSG #shop :plain chat still flows")
        let next = try mel.expect(command: "PRIVMSG", "#shop")
        XCTAssertEqual(next.params[1], "plain chat still flows", "the !jobs line was not relayed")
    }

    func testManagerClosesARoomForGood() throws {
        let mona = try login("mona"), mel = try login("mel")
        try mona.join("#temp")
        try mel.join("#temp")
        mona.send("PRIVMSG #temp :!job add Pack up")
        try mel.expect(command: "NOTICE", "#temp")
        mel.send("PRIVMSG #temp :!room close")
        try mel.expect(command: "NOTICE", "#temp", "Only the room's managers can close it")
        mona.send("PRIVMSG #temp :!room close")
        let kick = try mel.expect(command: "KICK", "#temp", "mel")
        XCTAssertTrue(kick.params[2].contains("Room closed"))
        try server.restart()
        let again = try login("mona")
        again.send("LIST")
        let list = try again.collect(until: { $0.command == "323" })
        XCTAssertFalse(list.contains { $0.command == "322" }, "the room is gone after a restart")
        again.send("PRIVMSG Chorus :!show 1")
        try again.expect(command: "NOTICE", "mona", "There is no job 1 that you can see")
    }
}
