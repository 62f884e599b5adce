import ChorusIRC
import XCTest

/// The marketplace end to end, over real sockets: a customer, two contractors and an outsider, as
/// bots and people would use it (tags for bots, notices for people, queued lines for the offline).
final class MarketTests: XCTestCase {
    var server: TestServer!

    override func tearDown() {
        server = nil
    }

    func notice(_ c: TestClient, _ what: String, _ match: @escaping (String) -> Bool) throws -> Message {
        try c.take(what) { $0.command == "NOTICE" && $0.source?.hasPrefix("Chorus!") == true && match($0.params.last ?? "") }
    }

    /// `c` becomes a plumber.
    func plumber(_ c: TestClient) throws {
        _ = try ask(c, "!contractor on", expecting: "You are a contractor")
        _ = try ask(c, "!contractor skills plumbing", expecting: "Saved.")
    }

    func ask(_ c: TestClient, _ line: String, expecting prefix: String) throws -> Message {
        c.send("PRIVMSG Chorus :\(line)")
        return try notice(c, "the answer to \(line)") { $0.hasPrefix(prefix) }
    }

    func testACustomerHiresOneOfTwoContractorsAndAnOutsiderSeesNothing() throws {
        server = try TestServer()
        for name in ["ann", "bob", "cat", "dan"] { try server.addAccount(name, "\(name)-password") }
        let tags = ["message-tags", "server-time"]
        let ann = try server.connect(as: "ann", caps: tags)
        let bob = try server.connect(as: "bob", caps: tags)
        var cat = try server.connect(as: "cat", caps: tags)
        let dan = try server.connect(as: "dan", caps: tags)
        for c in [bob, cat] { try plumber(c) }
        _ = try ask(bob, "!contractor area Elm Street", expecting: "Saved.")
        _ = try ask(cat, "!contractor area Harbour Road", expecting: "Saved.")
        // cat is away when the request is posted: it waits for her.
        cat.send("QUIT :out")
        _ = try cat.expect(command: "ERROR")

        let posted = try ask(ann, "!request add plumbing Fix the tap when it drips | budget 80 | at Elm Street 12 | when tomorrow 9:00-12:00",
                             expecting: "Request 1 posted")
        XCTAssertTrue(posted.params[1].contains("1 contractor was told"), posted.params[1])
        let told = try notice(bob, "the new request") { $0.hasPrefix("ann posted request 1 (plumbing): Fix the tap when it drips") }
        XCTAssertEqual(told.tag("chorus/event"), "request.posted")
        XCTAssertEqual(told.tag("chorus/request"), "1")
        XCTAssertEqual(told.tag("chorus/customer"), "ann")
        XCTAssertEqual(told.tag("chorus/budget"), "80")

        // cat serves Harbour Road: the Elm Street request is not hers. A second one, with no place, is.
        _ = try ask(ann, "!request add plumbing Bleed the radiators", expecting: "Request 2 posted")
        cat = try server.connect(as: "cat", caps: tags)
        _ = try notice(cat, "the request kept for her") { $0.hasPrefix("ann posted request 2 (plumbing): Bleed the radiators") }
        _ = try ask(cat, "!requests", expecting: "Open requests in your skills (2)")

        _ = try ask(bob, "!offer 1 70 at ten", expecting: "You offered 70 on request 1")
        let offered = try notice(ann, "bob's offer") { $0.hasPrefix("bob offered 70 on request 1") }
        XCTAssertEqual(offered.tag("chorus/contractor"), "bob")
        XCTAssertEqual(offered.tag("chorus/price"), "70")
        _ = try ask(cat, "!offer 1 55", expecting: "You offered 55 on request 1")
        cat.send("PRIVMSG Chorus :!offers 1")
        let catsView = try cat.collect { $0.command == "NOTICE" && $0.params[1] == "  cat: 55 (no reviews yet)" }
        XCTAssertTrue(catsView.contains { $0.params.last == "Offers on request 1 (plumbing), cheapest first:" })
        XCTAssertFalse(catsView.contains { $0.params.last?.contains("bob: 70") == true }, "an offerer sees her own price only")

        // The outsider: neither the request nor its offers exist for dan, and he cannot offer.
        _ = try ask(dan, "!request show 1", expecting: "There is no request 1 that you can see")
        _ = try ask(dan, "!offers 1", expecting: "There is no request 1 that you can see")
        _ = try ask(dan, "!offer 1 10", expecting: "There is no request 1 that you can see")
        _ = try ask(dan, "!request show 99", expecting: "There is no request 99 that you can see")

        _ = try ask(ann, "!hire 1 bob", expecting: "You hired bob for request 1 at 70")
        let hired = try notice(bob, "the hire") { $0.hasPrefix("ann hired bob for request 1") }
        XCTAssertEqual(hired.tag("chorus/event"), "request.hired")
        XCTAssertEqual(hired.tag("chorus/contractor"), "bob")
        let elsewhere = try notice(cat, "the hire went elsewhere") { $0.hasPrefix("ann hired someone else for request 1") }
        XCTAssertNil(elsewhere.tag("chorus/contractor"), "cat is not told whom")

        _ = try ask(bob, "!request msg 1 Which floor?", expecting: "Sent to ann about request 1")
        let message = try notice(ann, "bob's question") { $0.hasPrefix("bob about request 1 (plumbing): Which floor?") }
        XCTAssertEqual(message.tag("chorus/event"), "request.message")
        _ = try ask(cat, "!request msg 1 Still free?", expecting: "Only the customer and those who offered")

        _ = try ask(bob, "!request done 1", expecting: "Request 1 is done")
        _ = try notice(ann, "the work is done") { $0.hasPrefix("bob finished request 1") }
        _ = try ask(ann, "!request confirm 1", expecting: "Request 1 is confirmed")
        _ = try ask(ann, "!review 1 5 quick and tidy", expecting: "Thank you: bob got 5/5 for request 1.")
        let reviewed = try notice(bob, "the review") { $0.hasPrefix("ann rated request 1 (plumbing) 5/5: quick and tidy") }
        XCTAssertEqual(reviewed.tag("chorus/rating"), "5")
        _ = try ask(dan, "!profile bob", expecting: "bob, member since")
        _ = try notice(dan, "bob's standing") { $0 == "  rating: 5.0★ (1 review) · 1 hire completed" }

        // What ann sees of request 1: the whole story, and the conversation she was part of.
        ann.send("PRIVMSG Chorus :!request show 1")
        let shown = try ann.collect { $0.command == "NOTICE" && $0.params[1].hasPrefix("    ") && $0.params[1].contains("bob → ann: Which floor?") }
        XCTAssertTrue(shown.contains { $0.params[1] == "Request 1 [confirmed] plumbing: Fix the tap when it drips" })
        XCTAssertTrue(shown.contains { $0.params[1].contains("cat: 55") }, "the customer sees every offer")
    }

    /// A contractor told of a request while offline hears of it at login as it is then: edited,
    /// with its new fields; cancelled or hired meanwhile, not at all.
    func testANoticeHeldForAnOfflineContractorSaysWhatTheRequestIsNow() throws {
        server = try TestServer()
        for name in ["ann", "bob"] { try server.addAccount(name, "\(name)-password") }
        let ann = try server.connect(as: "ann")
        var bob = try server.connect(as: "bob")
        try plumber(bob)
        bob.send("QUIT :out")
        _ = try bob.expect(command: "ERROR")

        _ = try ask(ann, "!request add plumbing Fix the tap | budget 80", expecting: "Request 1 posted")
        _ = try ask(ann, "!request edit 1 budget 120", expecting: "Request 1 changed")
        _ = try ask(ann, "!request add plumbing Bleed the radiators", expecting: "Request 2 posted")
        _ = try ask(ann, "!request edit 2 budget 50", expecting: "Request 2 changed")
        _ = try ask(ann, "!request cancel 2 a neighbour did it", expecting: "Request 2 is cancelled")
        _ = try ask(ann, "!request add plumbing Unblock the sink", expecting: "Request 3 posted")

        bob = try server.connect(as: "bob")
        let away = try notice(bob, "the held notices") { $0.hasPrefix("While you were away") }
        // The posting of 1 as it is now, the edit of 1, the posting of 3; nothing of 2.
        XCTAssertEqual(away.params.last, "While you were away (3):", "the cancelled request's posting and edit are not delivered")
        let first = try notice(bob, "request 1 as it is now") { $0.hasPrefix("ann posted request 1") }
        XCTAssertEqual(first.params.last, "ann posted request 1 (plumbing): Fix the tap · budget 120 — !offer 1 <price> [note]")
        _ = try notice(bob, "the edit of request 1") { $0 == "ann changed request 1 (plumbing): budget is now 120" }
        _ = try notice(bob, "request 3") { $0.hasPrefix("ann posted request 3 (plumbing): Unblock the sink") }
        bob.send("PRIVMSG Chorus :!requests")
        let list = try bob.collect { $0.command == "NOTICE" && $0.params.last?.hasPrefix("  1 [open]") == true }
        XCTAssertFalse(list.contains { $0.params.last?.contains("Bleed the radiators") == true })
    }

    /// An open request's cancellation reaches those who offered and the contractors it was posted
    /// to, online; held for someone offline, only for one who had offered.
    func testAnOpenRequestsCancellationReachesThoseItWasPostedTo() throws {
        server = try TestServer()
        for name in ["ann", "bob", "cat", "dan"] { try server.addAccount(name, "\(name)-password") }
        let ann = try server.connect(as: "ann")
        let bob = try server.connect(as: "bob")
        var cat = try server.connect(as: "cat")
        var dan = try server.connect(as: "dan")
        for c in [bob, cat, dan] { try plumber(c) }
        _ = try ask(ann, "!request add plumbing Bleed the radiators", expecting: "Request 1 posted")
        _ = try ask(cat, "!offer 1 30", expecting: "You offered 30")
        for c in [cat, dan] {
            c.send("QUIT :out")
            _ = try c.expect(command: "ERROR")
        }
        let answer = try ask(ann, "!request cancel 1 a neighbour did it", expecting: "Request 1 is cancelled")
        XCTAssertEqual(answer.params.last, "Request 1 is cancelled; cat, bob, dan are told.")
        _ = try notice(bob, "the cancellation, online") { $0 == "ann cancelled request 1 (plumbing): a neighbour did it" }
        cat = try server.connect(as: "cat")
        XCTAssertEqual(try notice(cat, "cat's held notices") { $0.hasPrefix("While you were away") }.params.last, "While you were away (1):")
        _ = try notice(cat, "the cancellation, held for her offer") { $0 == "ann cancelled request 1 (plumbing): a neighbour did it" }
        // dan was told of the posting while online and of nothing held: no "While you were away".
        dan = try server.connect(as: "dan")
        dan.send("PRIVMSG Chorus :!requests")
        let first = try notice(dan, "dan's first notice after login") { _ in true }
        XCTAssertEqual(first.params.last, "Open requests in your skills: none.")
    }

    /// Someone whose offer was not taken learns that, not whom; the customer's history of the
    /// request is the hire, not the "someone else" told to the others, and no line of it offers a
    /// step that is past.
    func testWhoWasHiredIsTheCustomersAndTheHiredsToKnow() throws {
        server = try TestServer()
        for name in ["ann", "bob", "cat"] { try server.addAccount(name, "\(name)-password") }
        let ann = try server.connect(as: "ann")
        let bob = try server.connect(as: "bob")
        let cat = try server.connect(as: "cat")
        for c in [bob, cat] { try plumber(c) }
        _ = try ask(ann, "!request add plumbing Fix the tap", expecting: "Request 1 posted")
        _ = try ask(bob, "!offer 1 70", expecting: "You offered 70")
        _ = try ask(cat, "!offer 1 60", expecting: "You offered 60")
        _ = try ask(ann, "!hire 1 bob", expecting: "You hired bob")

        cat.send("PRIVMSG Chorus :!request show 1")
        let catsView = try cat.collect { $0.command == "NOTICE" && $0.params.last?.hasPrefix("    ") == true && $0.params.last?.contains("hired someone else") == true }
            .drop { $0.params.last?.hasPrefix("Request 1") != true }
        XCTAssertFalse(catsView.contains { $0.params.last?.contains("bob") == true }, "cat is not told whom: \(catsView.map { $0.params.last ?? "" })")
        XCTAssertTrue(catsView.contains { $0.params.last?.contains("went to someone else") == true })
        let mine = try ask(cat, "!requests mine", expecting: "Your requests")
        XCTAssertNotNil(mine)
        let line = try notice(cat, "cat's list") { $0.hasPrefix("  1 [hired]") }
        XCTAssertEqual(line.params.last, "  1 [hired] plumbing: Fix the tap · for ann · went to someone else")

        ann.send("PRIVMSG Chorus :!request show 1")
        let annsView = try ann.collect { $0.command == "NOTICE" && $0.params.last?.contains("ann hired bob") == true }
        let history = annsView.drop { $0.params.last?.hasPrefix("Request 1") != true }.map { $0.params.last ?? "" }
        // "    Tue 1 Dec 21:47 ann hired …": the entry's time (its day one digit or two), then what happened.
        let entry = try Regex(#"    \w{3} \d{1,2} \w{3} \d{2}:\d{2} ann hired bob for request 1 \(plumbing\) at 70"#)
        XCTAssertNotNil(history.last?.wholeMatch(of: entry), "\(history.last ?? "")")
        XCTAssertFalse(history.contains { $0.contains("someone else") }, "\(history)")
        XCTAssertFalse(history.contains { $0.contains(" — !") }, "history offers no steps: \(history)")
    }
}
