import ChorusBot
import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusTestSupport
import Foundation
import NIOConcurrencyHelpers
import XCTest

/// Calendar feeds (`!ical`), read over HTTPS and parsed by Python's `icalendar`, a parser written
/// apart from ours (Debian's python3-icalendar; `.ci/run` installs it).
final class CalendarFeedTests: XCTestCase {
    /// Skipped before it starts where the parser is missing (a skip thrown inside an assertion's
    /// expression would count as a failure), except in CI, where it must be there.
    override func setUpWithError() throws {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = [Self.python, "-c", "import icalendar"]
        probe.standardError = FileHandle.nullDevice
        try probe.run()
        probe.waitUntilExit()
        guard probe.terminationStatus != 0 else { return }
        if ProcessInfo.processInfo.environment["CI"] == nil { throw XCTSkip("Python's icalendar is not installed (apt-get install python3-icalendar)") }
        XCTFail("Python's icalendar is not installed")
    }

    func testAPersonsFeedHoldsTheirTurnsJobsAndPlanAndFollowsASkip() throws {
        let server = try TestServer { $0.web = .init(host: "127.0.0.1", port: 0) }
        let (ann, ben) = try kitchen(server)
        ben.send("PRIVMSG Chorus :!tz Europe/Paris")
        try ben.expect("the zone") { $0.command == "NOTICE" && $0.params.last?.contains("Europe/Paris") == true }
        ann.send("PRIVMSG #kitchen :!chore add dishes every day at 20:00 among ben ann")
        try ann.expect("the chore") { $0.command == "NOTICE" && $0.params.last?.contains("added the chore dishes") == true }
        ann.send("PRIVMSG #kitchen :!job add Fix the sink, again @ben due in 2d")
        try ann.expect("the job") { $0.command == "NOTICE" && $0.params.last?.contains("created job 1") == true }
        ben.send("PRIVMSG Chorus :!plan add study mon-fri 9:00-12:00")
        try ben.expect("the plan") { $0.command == "NOTICE" && $0.params.last?.contains("Block 1") == true }

        let link = try newFeed(ben, "!ical new")
        let feed = try read(link, server)
        XCTAssertEqual(feed.status, 200)
        XCTAssertEqual(feed.type, "text/calendar; charset=utf-8")
        XCTAssertTrue(feed.crlf, "every line ends in CRLF")
        XCTAssertLessThanOrEqual(feed.longest, 75, "lines are folded at 75 octets")
        XCTAssertEqual(feed.zones, ["Europe/Paris"])
        let events = try XCTUnwrap(feed.events)
        let turns = events.filter { $0.uid.hasPrefix("turn-") }
        XCTAssertFalse(turns.isEmpty)
        XCTAssertTrue(turns.allSatisfy { $0.summary == "dishes — ben (#kitchen)" }, "\(turns)")
        // 20:00 on the server's clock (UTC in tests) is 21:00 or 20:00 in Paris, with its offset.
        XCTAssertTrue(turns.allSatisfy { $0.start.hasSuffix("T21:00:00+01:00") || $0.start.hasSuffix("T22:00:00+02:00") }, "\(turns)")
        let job = try XCTUnwrap(events.first { $0.uid == "job-1@chorus" }, "\(events)")
        XCTAssertEqual(job.summary, "Due: Fix the sink, again (job 1, ben)")
        let plan = try XCTUnwrap(events.first { $0.uid == "plan-1@chorus" }, "\(events)")
        XCTAssertEqual(plan.rrule, "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR")
        XCTAssertTrue(plan.start.hasSuffix("T09:00:00+01:00"), plan.start)

        // Ben skips today's turn: it goes to ann, and his calendar no longer holds it.
        let today = try XCTUnwrap(turns.min { $0.start < $1.start })
        ben.send("PRIVMSG #kitchen :!skip dishes")
        try ben.expect("the skip") { $0.command == "NOTICE" && $0.params.last?.contains("skipped their turn") == true }
        let after = try XCTUnwrap(try read(link, server).events).filter { $0.uid.hasPrefix("turn-") }
        XCTAssertFalse(after.isEmpty)
        XCTAssertFalse(after.contains { $0.uid == today.uid }, "before \(turns.map(\.uid)), after \(after.map(\.uid))")
        XCTAssertTrue(after.allSatisfy { $0.start > today.start })
        // The job, edited, is the same entry with a higher SEQUENCE.
        ann.send("PRIVMSG #kitchen :!edit 1 due in 3d")
        try ann.expect("the edit") { $0.command == "NOTICE" && $0.params.last?.contains("job 1") == true }
        Thread.sleep(forTimeInterval: 1.1)  // SEQUENCE counts seconds
        ann.send("PRIVMSG #kitchen :!edit 1 title Fix the sink for good")
        try ann.expect("the title") { $0.command == "NOTICE" && $0.params.last?.contains("job 1") == true }
        let edited = try XCTUnwrap(try XCTUnwrap(try read(link, server).events).first { $0.uid == "job-1@chorus" })
        XCTAssertGreaterThan(edited.sequence, job.sequence)
        XCTAssertEqual(edited.summary, "Due: Fix the sink for good (job 1, ben)")
    }

    func testARoomsFeedShowsEveryonesTurnsAndOnlyTheJobsItsReaderMaySee() throws {
        let server = try TestServer { $0.web = .init(host: "127.0.0.1", port: 0) }
        let (ann, ben) = try kitchen(server)
        ann.send("PRIVMSG #kitchen :!chore add bins every day at 18:00 among ann ben")
        try ann.expect("the chore") { $0.command == "NOTICE" && $0.params.last?.contains("added the chore bins") == true }
        ann.send("PRIVMSG #kitchen :!room set visibility own")
        try ann.expect("the setting") { $0.command == "NOTICE" && $0.params.last?.contains("visibility own") == true }
        ann.send("PRIVMSG #kitchen :!job add Sweep @ben due in 2d")
        try ann.expect("job 1") { $0.command == "NOTICE" && $0.params.last?.contains("created job 1") == true }
        ann.send("PRIVMSG #kitchen :!job add Pay the rent @ann due in 2d")
        try ann.expect("job 2") { $0.command == "NOTICE" && $0.params.last?.contains("created job 2") == true }

        let bens = try XCTUnwrap(try read(try newFeed(ben, "!ical new #kitchen"), server).events)
        XCTAssertEqual(Set(bens.filter { $0.uid.hasPrefix("turn-") }.map(\.summary)), ["bins — ann", "bins — ben"])
        XCTAssertEqual(bens.filter { $0.uid.hasPrefix("job-") }.map(\.uid), ["job-1@chorus"], "ben sees his own job only")
        let anns = try XCTUnwrap(try read(try newFeed(ann, "!ical new #kitchen"), server).events)
        XCTAssertEqual(Set(anns.filter { $0.uid.hasPrefix("job-") }.map(\.uid)), ["job-1@chorus", "job-2@chorus"], "a manager sees all")
    }

    func testARevokedOrEditedLinkIsRefusedAndTheLimitsHold() throws {
        let server = try TestServer { $0.web = .init(host: "127.0.0.1", port: 0) }
        let (_, ben) = try kitchen(server)
        let link = try newFeed(ben, "!ical new")
        XCTAssertEqual(try read(link, server).status, 200)
        // Another feed's number, another account, or a changed signature: refused as not the server's.
        for (from, to) in [("f=1", "f=2"), ("a=ben", "a=ann"), ("&sig=", "&sig=0")] {
            XCTAssertEqual(try read(link.replacingOccurrences(of: from, with: to), server).status, 403, to)
        }
        ben.send("PRIVMSG Chorus :!ical revoke 1")
        try ben.expect("revoked") { $0.command == "NOTICE" && $0.params.last == "Calendar 1 is revoked: its link no longer works." }
        let revoked = try read(link, server)
        XCTAssertEqual(revoked.status, 410)
        XCTAssertTrue(revoked.text.contains("revoked"), revoked.text)

        for _ in 1...CalendarFeed.maxPerAccount { _ = try newFeed(ben, "!ical new") }
        ben.send("PRIVMSG Chorus :!ical new")
        try ben.expect("the limit") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("You have 10 calendar feeds already") == true }

        // Without the web side there is nothing to subscribe to, and nothing is made.
        let plain = try TestServer()
        try plain.addAccount("cy", "cy-password")
        let cy = try plain.connect(as: "cy")
        cy.send("PRIVMSG Chorus :!ical new")
        try cy.expect("web side off") { $0.command == "NOTICE" && $0.params.last?.contains("served by the web side") == true }
        cy.send("PRIVMSG Chorus :!ical")
        try cy.expect("none made") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("You have no calendar feeds") == true }
    }

    /// Each node has a data folder of its own; the key links are signed with is the database's.
    func testALinkMadeOnOneNodeOpensOnAnother() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "calendar-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared) { $0.web = .init(host: "127.0.0.1", port: 0) }
        let b = try TestServer(sharing: shared) { $0.web = .init(host: "127.0.0.1", port: 0) }
        try a.addAccount("ben", "ben-password")
        let ben = try a.connect(as: "ben")
        let link = try newFeed(ben, "!ical new")
        XCTAssertEqual(try read(link, a).status, 200)
        XCTAssertEqual(try read(link, b).status, 200)
        ben.send("PRIVMSG Chorus :!ical revoke 1")
        try ben.expect("revoked") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Calendar 1 is revoked") == true }
        XCTAssertEqual(try read(link, b).status, 410)
    }

    /// A data folder's `link.key` from before the key was the database's becomes the database's:
    /// links made with it still open.
    func testTheDataFoldersLinkKeyIsTheOneKept() throws {
        let key = Data((0..<32).map { UInt8($0 * 7) })
        let server = try TestServer { config in
            config.web = .init(host: "127.0.0.1", port: 0)
            try? FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: config.linkKeyPath, contents: key)
        }
        try server.addAccount("ben", "ben-password")
        let link = try newFeed(try server.connect(as: "ben"), "!ical new")
        let query = String(link[link.index(after: link.firstIndex(of: "?")!)...])
        XCTAssertEqual(try LinkSigner(key: key).verify(query, now: Date())["f"], "1")
        XCTAssertThrowsError(try LinkSigner(key: LinkSigner.newKey()).verify(query, now: Date()))
    }

    // MARK: Helpers

    /// ann (manager) and ben in #kitchen.
    private func kitchen(_ server: TestServer) throws -> (TestClient, TestClient) {
        try server.addAccount("ann", "ann-password")
        try server.addAccount("ben", "ben-password")
        let ann = try server.connect(as: "ann")
        try ann.join("#kitchen")
        ann.send("PRIVMSG #kitchen :!room add ben")
        try ann.expect("ben added") { $0.command == "NOTICE" && $0.params.last?.contains("added ben") == true }
        let ben = try server.connect(as: "ben")
        try ben.join("#kitchen")
        return (ann, ben)
    }

    /// The link `!ical new …` answers with.
    private func newFeed(_ client: TestClient, _ command: String) throws -> String {
        client.send("PRIVMSG Chorus :\(command)")
        let answer = try client.expect("the feed's link") { $0.command == "NOTICE" && $0.params.last?.hasPrefix("Calendar ") == true }
        let link = try XCTUnwrap(answer.params.last?.split(separator: " ").last.map(String.init))
        XCTAssertTrue(link.hasPrefix("https://test.chorus:"), link)
        return link
    }

    struct Feed: Decodable {
        struct Entry: Decodable {
            var uid: String
            var sequence: Int
            var summary: String
            var start: String
            var rrule: String?
        }
        var status: Int
        var type: String?
        var text: String
        var crlf: Bool
        var longest: Int
        var events: [Entry]?
        var zones: [String]?
    }

    /// The feed at `link` (on this test's server), fetched and parsed by Python.
    private func read(_ link: String, _ server: TestServer) throws -> Feed {
        let url = "https://127.0.0.1:\(server.webPort)" + String(link[link.range(of: "/calendar.ics")!.lowerBound...])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Self.python, "-c", Self.reader, url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let feed = try JSONDecoder().decode(Feed.self, from: data)
        return feed
    }

    /// Debian's Python, whose python3-icalendar a python3 earlier on the PATH may not see.
    private static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") ? "/usr/bin/python3" : "python3"

    private static let reader = """
        import json, ssl, sys, urllib.request, urllib.error
        out = {}
        try:
            answer = urllib.request.urlopen(sys.argv[1], context=ssl._create_unverified_context(), timeout=10)
        except urllib.error.HTTPError as refusal:
            answer = refusal
        out['status'] = answer.status if hasattr(answer, 'status') else answer.code
        out['type'] = answer.headers.get('Content-Type')
        raw = answer.read()
        out['text'] = raw.decode('utf-8')
        out['crlf'] = raw.endswith(b'\\r\\n') and b'\\n' not in raw.replace(b'\\r\\n', b'')
        out['longest'] = max(len(line) for line in raw.split(b'\\r\\n'))
        try:
            import icalendar
        except ImportError:
            icalendar = None
        if icalendar and out['status'] == 200:
            calendar = icalendar.Calendar.from_ical(raw)
            out['zones'] = [str(zone['TZID']) for zone in calendar.walk('VTIMEZONE')]
            out['events'] = [{'uid': str(e['UID']), 'sequence': int(e.get('SEQUENCE', 0)), 'summary': str(e['SUMMARY']),
                              'start': e.decoded('DTSTART').isoformat(),
                              'rrule': e['RRULE'].to_ical().decode() if 'RRULE' in e else None} for e in calendar.walk('VEVENT')]
        print(json.dumps(out))
        """
}
