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
        for c in [bob, cat] {
            _ = try ask(c, "!contractor on", expecting: "You are a contractor")
            _ = try ask(c, "!contractor skills plumbing", expecting: "Saved.")
        }
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
}
