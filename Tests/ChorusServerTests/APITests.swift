import ChorusCore
import ChorusIRC
@testable import ChorusServer
import Foundation
import XCTest

/// The JSON API over real HTTP (the plain web listener a TLS proxy would sit in front of): a
/// token's account runs commands and reads the events it would hear over IRC, by position.
final class APITests: XCTestCase {
    var server: TestServer!

    override func setUpWithError() throws {
        server = try TestServer(configure: { $0.webPlain = .init(host: "127.0.0.1", port: 0) })
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
    }

    override func tearDown() {
        server = nil
    }

    /// A token for `account`, as `!token new` makes one.
    func token(_ account: String) throws -> String {
        let secret = AccountToken.newSecret()
        _ = try server.server.store.issueToken(for: account, label: "api", secret: secret, at: Date())
        return secret
    }

    /// alice's room #flat, with bob added, and alice's connection (after `lines`, said in the room).
    func flat(_ lines: String...) throws -> TestClient {
        let alice = try server.connect(as: "alice")
        alice.send("JOIN #flat")
        alice.send("PRIVMSG #flat :!room add bob")
        for line in lines { alice.send("PRIVMSG #flat :\(line)") }
        return alice
    }

    struct Answer {
        var status: Int
        var headers: [String: String]
        var json: [String: Any]
        var text = ""
    }

    /// One request on a connection of its own (`Connection: close`), its answer read whole.
    func call(_ method: String, _ path: String, token: String?, body: String? = nil, waiting: TimeInterval = 5) throws -> Answer {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + (body ?? "")
        let client = try TestClient(port: server.webPlainPort, tls: false)
        client.sendRaw(Array(request.utf8))
        let text = client.drainRaw(for: waiting).joined(separator: "\n")
        guard let blank = text.range(of: "\n\n"), let statusLine = text.split(separator: "\n").first,
              let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else {
            throw TestError.failed("no HTTP answer: \(text)")
        }
        var headers: [String: String] = [:]
        for line in text[..<blank.lowerBound].split(separator: "\n").dropFirst() {
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let body = text[blank.upperBound...]
        let json = (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
        return Answer(status: status, headers: headers, json: json, text: String(body))
    }

    /// #flat where members see their own jobs only: alice's job 1, and job 2 given to bob.
    func ownVisibilityFlat() throws -> TestClient {
        let alice = try flat("!room set visibility own")
        try alice.take("visibility") { ($0.params.last ?? "").contains("visibility") && ($0.params.last ?? "").contains("own") }
        alice.send("PRIVMSG #flat :!job add Plan the surprise party")
        try alice.take("job 1") { ($0.params.last ?? "").contains("created job 1") }
        alice.send("PRIVMSG #flat :!job add Take the bins out @bob")
        try alice.take("job 2") { ($0.params.last ?? "").contains("created job 2") }
        return alice
    }

    func events(_ answer: Answer) -> [[String: Any]] { answer.json["events"] as? [[String: Any]] ?? [] }

    func testATokensAccountRunsACommandInItsRoomAndReadsTheEventsItHears() throws {
        let alice = try flat()
        try alice.take("bob added") { ($0.params.last ?? "").contains("added bob") }
        let bob = try token("bob")

        let me = try call("GET", "/api/v1/me", token: bob)
        XCTAssertEqual(me.status, 200)
        XCTAssertEqual(me.json["account"] as? String, "bob")
        XCTAssertEqual((me.json["rooms"] as? [[String: Any]])?.first?["name"] as? String, "#flat")
        // The account's own: its profile, and its tokens without their secrets.
        XCTAssertNotNil((me.json["profile"] as? [String: Any])?["since"] as? String)
        XCTAssertNil((me.json["profile"] as? [String: Any])?["email"], "no email set")
        let tokens = try XCTUnwrap(me.json["tokens"] as? [[String: Any]])
        XCTAssertEqual(tokens.map { $0["label"] as? String }, ["api"])
        XCTAssertFalse("\(me.json)".contains(bob), "a token's secret is never read back")

        let made = try call("POST", "/api/v1/commands", token: bob, body: ##"{"room": "#flat", "text": "!job add Fix the sink"}"##)
        XCTAssertEqual(made.status, 200, "\(made.json)")
        let event = try XCTUnwrap(events(made).first)
        XCTAssertEqual(event["type"] as? String, EventType.jobCreated)
        XCTAssertEqual(event["room"] as? String, "#flat")
        XCTAssertEqual(event["text"] as? String, "bob created job 1 “Fix the sink”")
        let id = try XCTUnwrap(event["id"] as? Int)
        // The room hears it as if bob had typed it.
        try alice.take("the room's line") { $0.command == "NOTICE" && $0.params.first == "#flat" && ($0.params.last ?? "").hasPrefix("bob created job 1") }

        let feed = try call("GET", "/api/v1/events?after=0", token: bob)
        XCTAssertEqual(feed.status, 200)
        XCTAssertTrue(events(feed).contains { $0["id"] as? Int == id && $0["type"] as? String == EventType.jobCreated })
        XCTAssertEqual(feed.json["next"] as? Int, events(feed).last?["id"] as? Int)
        XCTAssertEqual(feed.json["more"] as? Bool, false)
        let after = try call("GET", "/api/v1/events?after=\(id)", token: bob)
        XCTAssertEqual(events(after).count, 0, "nothing twice")
    }

    func testTheFeedHoldsOnlyWhatTheAccountWouldHear() throws {
        try server.addAccount("carol", "carol-password")
        let alice = try ownVisibilityFlat()
        alice.send("JOIN #other")
        alice.send("PRIVMSG #other :!job add Elsewhere")
        try alice.take("job 3") { ($0.params.last ?? "").contains("created job 3") }

        // bob, a member where members see their own jobs only: job 2, not job 1 nor #other's.
        let bob = try call("GET", "/api/v1/events?after=0", token: try token("bob"))
        let jobs = events(bob).compactMap { $0["job"] as? Int }
        XCTAssertTrue(jobs.contains(2), "\(bob.json)")
        XCTAssertFalse(jobs.contains(1), "another's job in an own-visibility room")
        XCTAssertFalse(jobs.contains(3), "a room bob is not in")
        // carol is in no room: nothing.
        XCTAssertEqual(events(try call("GET", "/api/v1/events", token: try token("carol"))).count, 0)
        // alice manages both rooms: all three.
        let all = events(try call("GET", "/api/v1/events?after=0", token: try token("alice"))).compactMap { $0["job"] as? Int }
        XCTAssertEqual(Set(all), [1, 2, 3])
    }

    /// The same feed over IRC, for a bot that speaks IRC: `CHATHISTORY AFTER Chorus msgid=e<id>`.
    func testTheFeedOverIRCHoldsTheSameEventsByTheSameIDs() throws {
        let alice = try ownVisibilityFlat()
        let api = events(try call("GET", "/api/v1/events?after=0", token: try token("bob"))).compactMap { $0["id"] as? Int }

        let bob = try server.connect(as: "bob", caps: ["message-tags", "batch", "draft/chathistory", "server-time"])
        /// The lines of the next chathistory batch, live lines around it left out.
        func feed(after position: Int) throws -> [Message] {
            bob.send("CHATHISTORY AFTER Chorus msgid=e\(position) 100")
            let page = try bob.collect { $0.command == "BATCH" && $0.params.first?.hasPrefix("-") == true }
            guard let start = page.last(where: { $0.command == "BATCH" && $0.params.first?.hasPrefix("+") == true }) else { return [] }
            XCTAssertEqual(Array(start.params.dropFirst()), ["chathistory", "Chorus"])
            let id = String(start.params[0].dropFirst())
            return page.filter { $0.command == "NOTICE" && $0.tag("batch") == id }
        }
        let lines = try feed(after: 0)
        XCTAssertEqual(lines.compactMap { $0.tag("chorus/event-id").flatMap(Int.init) }, api, "the API's events, in its order")
        XCTAssertEqual(lines.map { $0.tag("msgid") }, api.map { "e\($0)" }, "each line's msgid is its position")
        XCTAssertFalse(lines.contains { $0.tag("chorus/job") == "1" }, "another's job in an own-visibility room")
        XCTAssertTrue(lines.contains { $0.tag("chorus/job") == "2" && ($0.params.last ?? "").contains("Take the bins out") })

        // Asked after the last one: nothing, until a new event; then exactly it.
        let last = try XCTUnwrap(api.last)
        XCTAssertEqual(try feed(after: last).count, 0)
        alice.send("PRIVMSG #flat :!assign 1 bob")
        try alice.take("assigned") { ($0.params.last ?? "").contains("assigned job 1") }
        XCTAssertEqual(try feed(after: last).map { $0.tag("chorus/event") }, ["job.assigned"])

        bob.send("CHATHISTORY LATEST Chorus * 10")
        let refused = try bob.expect("the refusal") { $0.command == "FAIL" }
        XCTAssertEqual(Array(refused.params.prefix(4)), ["CHATHISTORY", "INVALID_PARAMS", "LATEST", "Chorus"])
        bob.send("CHATHISTORY AFTER Chorus msgid=41 10")
        XCTAssertEqual(try bob.expect("the refusal") { $0.command == "FAIL" }.params[1], "INVALID_PARAMS")
    }

    /// The OpenAPI document names every route API.md documents, and each route it names is there
    /// (and wants a token).
    func testTheOpenAPIDocumentNamesEveryRouteAndOnlyThose() throws {
        let document = try call("GET", "/api/v1/openapi.json", token: nil)
        XCTAssertEqual(document.status, 200)
        XCTAssertEqual(document.json["openapi"] as? String, "3.1.0")
        let paths = try XCTUnwrap(document.json["paths"] as? [String: [String: Any]])
        for (path, operations) in paths where path != "/api/v1/openapi.json" {
            let concrete = path.replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(of: "{name}", with: "bob")
            for method in operations.keys {
                let answer = try call(method.uppercased(), concrete, token: nil, body: method == "post" ? "{}" : nil)
                XCTAssertEqual(answer.status, 401, "\(method) \(path) is a route that wants a token")
            }
        }
        let reference = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("API.md"), encoding: .utf8)
        let route = try NSRegularExpression(pattern: "`(GET|POST) (/api/v1/[^`?]+)")
        var documented: [(String, String)] = []
        for heading in reference.split(separator: "\n").map(String.init) where heading.hasPrefix("## `") {
            for match in route.matches(in: heading, range: NSRange(heading.startIndex..., in: heading)) {
                let part = { (i: Int) in String(heading[Range(match.range(at: i), in: heading)!]) }
                documented.append((part(1).lowercased(), part(2)))
            }
        }
        XCTAssertGreaterThan(documented.count, 12)
        for (method, path) in documented {
            let named = path.replacingOccurrences(of: "ID", with: "{id}").replacingOccurrences(of: "NAME", with: "{name}")
            XCTAssertNotNil(paths[named]?[method], "API.md's \(method) \(path) is in openapi.json")
        }
    }

    func testJobsAreReadAsTheBoardShowsThem() throws {
        let alice = try flat("!room set visibility own", "!job add Plan the surprise party", "!job add Take the bins out @bob",
                             "!comment 2 before eight")
        try alice.take("the comment") { ($0.params.last ?? "").contains("commented on job 2") }
        let bob = try token("bob")

        let list = try call("GET", "/api/v1/jobs?room=%23flat", token: bob)
        XCTAssertEqual(list.status, 200, "\(list.json)")
        let jobs = list.json["jobs"] as? [[String: Any]] ?? []
        XCTAssertEqual(jobs.compactMap { $0["id"] as? Int }, [2], "bob holds job 2; job 1 is alice's own")
        XCTAssertEqual(jobs.first?["room"] as? String, "#flat")
        XCTAssertEqual(list.json["total"] as? Int, 1)

        let detail = try call("GET", "/api/v1/jobs/2", token: bob)
        XCTAssertEqual((detail.json["job"] as? [String: Any])?["assignee"] as? String, "bob")
        XCTAssertEqual((detail.json["comments"] as? [[String: Any]])?.first?["text"] as? String, "before eight")
        XCTAssertTrue((detail.json["activity"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == EventType.jobCreated })
        // Another's job in an own-visibility room is answered as one that does not exist.
        let hidden = try call("GET", "/api/v1/jobs/1", token: bob)
        XCTAssertEqual(hidden.status, 404)
        let missing = try call("GET", "/api/v1/jobs/99", token: bob).json["message"] as? String
        XCTAssertEqual(hidden.json["message"] as? String, missing?.replacingOccurrences(of: "99", with: "1"))
        // alice manages the room: both, and filters as !jobs has them.
        let open = try call("GET", "/api/v1/jobs?room=%23flat&status=open&assignee=bob", token: try token("alice"))
        XCTAssertEqual((open.json["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }, [2])
        XCTAssertEqual(try call("GET", "/api/v1/jobs?room=%23flat&status=someday", token: bob).status, 400)
        XCTAssertEqual(try call("GET", "/api/v1/jobs?room=%23elsewhere", token: bob).status, 404)
    }

    func testChoresAndListsAreReadByTheRoomsMembers() throws {
        let alice = try flat("!chore add bins every week at 19:00 among alice bob", "!list groceries add milk, bread")
        try alice.take("the list") { ($0.params.last ?? "").contains("added bread") }
        let bob = try token("bob")

        let chores = try call("GET", "/api/v1/chores?room=%23flat", token: bob)
        XCTAssertEqual(chores.status, 200, "\(chores.json)")
        let bins = try XCTUnwrap((chores.json["chores"] as? [[String: Any]])?.first)
        XCTAssertEqual(bins["name"] as? String, "bins")
        XCTAssertEqual(bins["turn"] as? String, "alice")
        XCTAssertEqual(bins["rotation"] as? [String], ["alice", "bob"])
        XCTAssertEqual(bins["every"] as? String, "every week")

        let lists = try call("GET", "/api/v1/lists?room=%23flat", token: bob)
        let groceries = try XCTUnwrap((lists.json["lists"] as? [[String: Any]])?.first)
        XCTAssertEqual((groceries["items"] as? [[String: Any]])?.compactMap { $0["text"] as? String }, ["milk", "bread"])

        // The agenda: bob's own turns across his rooms, or the room's for everyone.
        let mine = try call("GET", "/api/v1/agenda?days=21", token: bob).json["turns"] as? [[String: Any]] ?? []
        XCTAssertFalse(mine.isEmpty)
        XCTAssertTrue(mine.allSatisfy { $0["person"] as? String == "bob" && $0["chore"] as? String == "bins" && $0["room"] as? String == "#flat" }, "\(mine)")
        let room = try call("GET", "/api/v1/agenda?days=21&room=%23flat", token: bob).json["turns"] as? [[String: Any]] ?? []
        XCTAssertEqual(Set(room.compactMap { $0["person"] as? String }), ["alice", "bob"])
        XCTAssertEqual(try call("GET", "/api/v1/agenda?days=90", token: bob).status, 400)

        try server.addAccount("carol", "carol-password")
        XCTAssertEqual(try call("GET", "/api/v1/chores?room=%23flat", token: try token("carol")).status, 404, "not a member")
        XCTAssertEqual(try call("GET", "/api/v1/agenda?room=%23flat", token: try token("carol")).status, 404, "not a member")
        XCTAssertEqual(try call("GET", "/api/v1/lists", token: bob).status, 400, "which room")
    }

    func testAFeedReadInPagesAcrossARestartHasEveryEventOnce() throws {
        let alice = try token("alice")
        for title in ["one", "two", "three", "four", "five"] {
            XCTAssertEqual(try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!job add \##(title)"}"##).status, 200)
        }
        let first = try call("GET", "/api/v1/events?after=0&limit=2", token: alice)
        XCTAssertEqual(events(first).count, 2)
        XCTAssertEqual(first.json["more"] as? Bool, true)
        var seen = events(first).compactMap { $0["data"] as? [String: String] }.compactMap { $0["title"] }
        var next = try XCTUnwrap(first.json["next"] as? Int)

        try server.restart()
        for _ in 0..<5 {
            let page = try call("GET", "/api/v1/events?after=\(next)&limit=2", token: alice)
            seen += events(page).compactMap { $0["data"] as? [String: String] }.compactMap { $0["title"] }
            next = try XCTUnwrap(page.json["next"] as? Int)
            if page.json["more"] as? Bool != true { break }
        }
        XCTAssertEqual(seen, ["one", "two", "three", "four", "five"])
    }

    func testAFeedRequestWaitsForTheNextEvent() throws {
        let alice = try token("alice")
        let started = Date()
        let waited = expectation(description: "the waiting request is answered")
        final class Box: @unchecked Sendable { var answer: Answer? }
        let feed = Box()
        DispatchQueue.global().async {
            feed.answer = try? self.call("GET", "/api/v1/events?after=0&wait=20", token: alice, waiting: 25)
            waited.fulfill()
        }
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!job add Now"}"##).status, 200)
        wait(for: [waited], timeout: 25)
        XCTAssertEqual(events(try XCTUnwrap(feed.answer)).first?["type"] as? String, EventType.jobCreated)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "answered when the event came, not at the end of the wait")
    }

    func testBadTokensAndBadRequestsGetTheirCodes() throws {
        let alice = try token("alice")
        let none = try call("GET", "/api/v1/me", token: nil)
        XCTAssertEqual(none.status, 401)
        XCTAssertEqual(none.json["code"] as? String, "ACCOUNT_REQUIRED")
        XCTAssertNotNil(none.headers["www-authenticate"])
        // A forged token and a revoked one say the same: nothing about whether the account exists.
        let forged = try call("GET", "/api/v1/me", token: AccountToken.newSecret())
        XCTAssertEqual(forged.status, 401)
        let revoked = try token("bob")
        let tokens = try server.server.store.tokens(of: "bob")
        _ = try server.server.store.deleteToken(try XCTUnwrap(tokens.first).id, of: "bob")
        let gone = try call("GET", "/api/v1/me", token: revoked)
        XCTAssertEqual(gone.status, 401)
        XCTAssertEqual(gone.json["message"] as? String, forged.json["message"] as? String)

        XCTAssertEqual(try call("POST", "/api/v1/commands", token: alice, body: "{not json").json["code"] as? String, "INVALID_PARAMS")
        XCTAssertEqual(try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "hello"}"##).status, 400)
        let twoLines = try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!jobs\r\nQUIT"}"##)
        XCTAssertEqual(twoLines.status, 400, "a command is one line")
        XCTAssertEqual(twoLines.json["code"] as? String, "INVALID_PARAMS")
        let stranger = try call("POST", "/api/v1/commands", token: alice, body: ##"{"room": "#nowhere", "text": "!jobs"}"##)
        XCTAssertEqual(stranger.status, 404)
        XCTAssertEqual(stranger.json["code"] as? String, "NO_SUCH_ROOM")
        let refused = try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!done 99"}"##)
        XCTAssertEqual(refused.status, 422, "\(refused.json)")
        XCTAssertNotNil(refused.json["message"] as? String)
        let unknown = try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!frobnicate"}"##)
        XCTAssertEqual(unknown.status, 422)
        XCTAssertEqual(unknown.json["code"] as? String, "UNKNOWN_COMMAND")
        let wrongMethod = try call("GET", "/api/v1/commands", token: alice)
        XCTAssertEqual(wrongMethod.status, 405)
        XCTAssertEqual(wrongMethod.json["code"] as? String, "METHOD_NOT_ALLOWED")
        XCTAssertEqual(wrongMethod.headers["allow"], "POST")
        XCTAssertEqual(try call("DELETE", "/api/v1/jobs", token: alice).status, 405)
        XCTAssertEqual(try call("GET", "/api/v1/jobs/seven", token: alice).status, 404)
        XCTAssertEqual(try call("GET", "/api/v1/jobs/7/more", token: alice).status, 404)
        XCTAssertEqual(try call("GET", "/api/v1/nothing", token: alice).status, 404)
        let badLimit = try call("GET", "/api/v1/events?limit=100000", token: alice)
        XCTAssertEqual(badLimit.status, 400)
        XCTAssertTrue((badLimit.json["message"] as? String ?? "").contains("limit"))

        // A token known to the server, revoked with !token revoke: refused at once.
        let id = try XCTUnwrap(try server.server.store.tokens(of: "alice").first).id
        XCTAssertEqual(try call("POST", "/api/v1/commands", token: alice, body: ##"{"text": "!token revoke \##(id)"}"##).status, 200)
        XCTAssertEqual(try call("GET", "/api/v1/me", token: alice).status, 401)
    }

    func testARunawayScriptMeetsTooManyRequests() throws {
        server = try TestServer(configure: {
            $0.webPlain = .init(host: "127.0.0.1", port: 0)
            $0.apiRequestsPerSecond = 20  // 40 at once, then 20 a second
        })
        try server.addAccount("alice", "alice-password")
        let alice = try token("alice")
        // Requests pipelined on one connection, faster than a token may make them.
        let one = "GET /api/v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(alice)\r\n\r\n"
        let client = try TestClient(port: server.webPlainPort, tls: false)
        client.sendRaw(Array(String(repeating: one, count: 200).utf8))
        let text = client.drainRaw(for: 3).joined(separator: "\n")
        XCTAssertTrue(text.contains("HTTP/1.1 429"), "no 429 among the answers")
        XCTAssertTrue(text.contains("Retry-After: "))
        XCTAssertTrue(text.contains("HTTP/1.1 200"))
    }
}
