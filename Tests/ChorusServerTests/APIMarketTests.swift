import ChorusCore
import Foundation
import XCTest

/// Service requests and time over the JSON API: the marketplace's and the time tracker's rules,
/// as the bot applies them, hold for scripts too.
extension APITests {
    /// Runs `!command` as the token's account (in private) and wants it kept.
    private func run(_ token: String, _ text: String) throws {
        let answer = try call("POST", "/api/v1/commands", token: token, body: #"{"text": "\#(text)"}"#)
        XCTAssertEqual(answer.status, 200, "\(text): \(answer.json)")
    }

    func testARequestsOffersAreTheCustomersAndEachOfferersOwn() throws {
        try server.addAccount("carol", "carol-password")
        try server.addAccount("dave", "dave-password")
        let (alice, bob, carol, dave) = (try token("alice"), try token("bob"), try token("carol"), try token("dave"))
        for contractor in [bob, carol] {
            try run(contractor, "!contractor on")
            try run(contractor, "!contractor skills plumbing")
        }
        try run(alice, "!request add plumbing Fix the dripping tap | budget 80")
        try run(bob, "!offer 1 70 can come at 10")
        try run(carol, "!offer 1 60")

        let seenByAlice = try call("GET", "/api/v1/requests/1", token: alice)
        XCTAssertEqual(seenByAlice.status, 200)
        XCTAssertEqual((seenByAlice.json["request"] as? [String: Any])?["description"] as? String, "Fix the dripping tap")
        XCTAssertEqual((seenByAlice.json["offers"] as? [[String: Any]])?.compactMap { $0["contractor"] as? String }.sorted(), ["bob", "carol"])
        for (token, name) in [(bob, "bob"), (carol, "carol")] {
            let offers = try call("GET", "/api/v1/requests/1", token: token).json["offers"] as? [[String: Any]]
            XCTAssertEqual(offers?.compactMap { $0["contractor"] as? String }, [name], "\(name) sees their own offer only")
            XCTAssertEqual(offers?.first?["priceCents"] as? Int, name == "bob" ? 7000 : 6000)
        }
        let outsider = try call("GET", "/api/v1/requests/1", token: dave)
        XCTAssertEqual(outsider.status, 404, "as if there were no such request")
        XCTAssertEqual(outsider.json["code"] as? String, "NOT_FOUND")

        XCTAssertEqual(try call("GET", "/api/v1/requests", token: alice).json["total"] as? Int, 1, "alice's own")
        XCTAssertEqual(try call("GET", "/api/v1/requests?scope=open", token: bob).json["total"] as? Int, 1, "open, in bob's skills")
        XCTAssertEqual(try call("GET", "/api/v1/requests", token: dave).json["total"] as? Int, 0)
        let browsing = try call("GET", "/api/v1/requests?scope=open", token: dave)
        XCTAssertEqual(browsing.status, 404)
        XCTAssertTrue((browsing.json["message"] as? String)?.hasPrefix("Only contractors browse open requests") == true, "\(browsing.json)")
        XCTAssertEqual(try call("GET", "/api/v1/requests?scope=every", token: alice).status, 400)
        XCTAssertEqual(try call("GET", "/api/v1/requests/x", token: alice).status, 404)
    }

    func testATimeReportIsItsOwnersAsReportSaysIt() throws {
        let (alice, bob) = (try token("alice"), try token("bob"))
        try run(alice, "!track add work 1:00-2:30 yesterday")
        try run(alice, "!track add study 3:00-3:45 yesterday")
        let report = try call("GET", "/api/v1/time/report?q=yesterday", token: alice)
        XCTAssertEqual(report.status, 200)
        let rows = report.json["rows"] as? [[String: Any]] ?? []
        XCTAssertEqual(rows.compactMap { $0["label"] as? String }, ["work", "study"])
        XCTAssertEqual(rows.compactMap { $0["seconds"] as? Int }, [5400, 2700])
        XCTAssertEqual(report.json["total"] as? Int, 8100)
        XCTAssertEqual((try call("GET", "/api/v1/time/report?q=yesterday", token: bob).json["rows"] as? [Any])?.count, 0, "alice's time is hers")
        let bad = try call("GET", "/api/v1/time/report?q=fortnight", token: alice)
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.json["code"] as? String, "INVALID_PARAMS")
    }

    func testAContractorsProfileIsReadByAnyoneAndOthersAreNotContractors() throws {
        let (alice, bob) = (try token("alice"), try token("bob"))
        try run(bob, "!contractor on")
        try run(bob, "!contractor skills plumbing, painting")
        try run(bob, "!contractor rate 40")
        let profile = try call("GET", "/api/v1/contractors/bob", token: alice)
        XCTAssertEqual(profile.status, 200)
        XCTAssertEqual(profile.json["skills"] as? [String], ["plumbing", "painting"])
        XCTAssertEqual(profile.json["rateCents"] as? Int, 4000)
        XCTAssertEqual(profile.json["reviews"] as? Int, 0)
        XCTAssertEqual(try call("GET", "/api/v1/contractors/alice", token: bob).status, 404)
        XCTAssertEqual(try call("GET", "/api/v1/contractors/bob", token: nil).status, 401)
    }

    func testTimeEntriesModesAndPlanAreTheOwners() throws {
        let (alice, bob) = (try token("alice"), try token("bob"))
        try run(alice, "!track add work 1:00-2:30 yesterday")
        try run(alice, "!plan add study mon-fri 9:00-12:00")
        try run(alice, "!track start study")
        let time = try call("GET", "/api/v1/time", token: alice)
        XCTAssertEqual(time.status, 200)
        let entries = time.json["entries"] as? [[String: Any]] ?? []
        XCTAssertEqual(entries.compactMap { $0["mode"] as? String }, ["work", "study"])
        XCTAssertEqual((time.json["running"] as? [String: Any])?["mode"] as? String, "study")
        XCTAssertTrue((time.json["modes"] as? [String])?.contains("work") == true)
        let plan = time.json["plan"] as? [[String: Any]] ?? []
        XCTAssertEqual(plan.first?["days"] as? [String], ["mon", "tue", "wed", "thu", "fri"])
        XCTAssertEqual(plan.first?["start"] as? String, "09:00")
        let bobs = try call("GET", "/api/v1/time", token: bob)
        XCTAssertEqual((bobs.json["entries"] as? [Any])?.count, 0, "alice's time is hers")
        XCTAssertTrue(bobs.json["running"] == nil || bobs.json["running"] is NSNull)
        XCTAssertEqual(try call("GET", "/api/v1/time?from=2026-13-01", token: alice).status, 400)
        XCTAssertEqual(try call("GET", "/api/v1/time?from=2026-02-30", token: alice).status, 400, "not rolled over to March")
        XCTAssertEqual(try call("GET", "/api/v1/time?from=2020-01-01&to=2026-01-01", token: alice).status, 400, "more than 366 days")
    }
}
