import ChorusBot
import ChorusCore
import ChorusIRC
@testable import ChorusServer
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOWebSocket
import XCTest

/// Signed links to reports and job lists, followed over HTTPS as a browser would.
extension WebTests {
    func testAReportsLinkShowsItAsAChartAndCSVForADayAndRefusesChanges() throws {
        let clock = NIOLockedValueBox(Date())
        let server = try TestServer(now: { clock.withLockedValue { $0 } }) { config in
            config.web = .init(host: "127.0.0.1", port: 0)
        }
        try server.addAccount("ann", "ann-password")
        let ann = try server.connect(as: "ann")
        ann.send("PRIVMSG Chorus :!track add work 1:00-2:30 yesterday")
        try ann.expect("the entry") { $0.command == "NOTICE" && $0.params.last?.contains("1h 30m") == true }
        ann.send("PRIVMSG Chorus :!report yesterday")
        let links = try ann.expect("the links") { $0.command == "NOTICE" && $0.params.last?.contains("Chart: ") == true }
        let text = try XCTUnwrap(links.params.last)
        let urls = text.split(separator: " ").filter { $0.hasPrefix("https://") }.map(String.init)
        XCTAssertEqual(urls.count, 2, text)
        XCTAssertTrue(urls[0].hasPrefix("https://test.chorus:\(server.webPort)/report.svg?a=ann&q=yesterday&tz="), urls[0])
        let target = { (url: String) in String(url[url.range(of: "/report.")!.lowerBound...]) }

        let chart = try http(server, "GET \(target(urls[0])) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(chart.status, 200)
        XCTAssertEqual(chart.headers["content-type"], "image/svg+xml")
        XCTAssertTrue(chart.rest.contains("<svg") && chart.rest.contains(">work</text>") && chart.rest.contains("1h 30m · 100%"), chart.rest)
        let csv = try http(server, "GET \(target(urls[1])) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(csv.status, 200)
        XCTAssertEqual(csv.headers["content-type"], "text/csv; charset=utf-8")
        XCTAssertTrue(csv.rest.contains("name,minutes,hours,share_percent,planned_minutes"), csv.rest)
        XCTAssertTrue(csv.rest.contains("work,90,1.50,100.0,"), csv.rest)

        // Someone else's report, or another period, is not to be had by editing the link.
        for (from, to) in [("a=ann", "a=bob"), ("q=yesterday", "q=month"), ("&sig=", "&sig=0")] {
            let edited = target(urls[0]).replacingOccurrences(of: from, with: to)
            XCTAssertEqual(try http(server, "GET \(edited) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 403, to)
        }
        // A day later the link has expired.
        clock.withLockedValue { $0 += ReportLinks.lifetime + 1 }
        let late = try http(server, "GET \(target(urls[0])) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(late.status, 410)
        XCTAssertTrue(late.body.contains("expired"), late.body)
    }

    func testAJobListsLinkDownloadsEveryPageAsCSVWhileTheAskerIsAMember() throws {
        let server = try webServer()
        try server.addAccount("ann", "ann-password")
        try server.addAccount("ben", "ben-password")
        let ann = try server.connect(as: "ann")
        try ann.join("#kitchen")
        for i in 1...12 {
            // A title a spreadsheet would take for a formula, and one with a comma, among them.
            ann.send("PRIVMSG #kitchen :!job add \(i == 3 ? "=SUM(A1) trick" : i == 5 ? "Soap, sponges" : "Chore \(i)")")
            try ann.expect("job \(i)") { $0.params.last?.contains("created job \(i) ") == true }
        }
        ann.send("PRIVMSG #kitchen :!job add Fix the sink @ann")
        try ann.expect("job 13") { $0.params.last?.contains("created job 13 ") == true }
        ann.send("PRIVMSG #kitchen :!jobs status:created")
        let line = try ann.expect("the link") { $0.command == "NOTICE" && $0.params.last?.contains("CSV of all 12: ") == true }
        let url = try XCTUnwrap(line.params.last?.split(separator: " ").last.map(String.init))
        XCTAssertTrue(url.hasPrefix("https://test.chorus:\(server.webPort)/jobs.csv?a=ann&r=%23kitchen&q=status"), url)
        let target = String(url[url.range(of: "/jobs.csv")!.lowerBound...])

        let sheet = try http(server, "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(sheet.status, 200)
        XCTAssertEqual(sheet.headers["content-type"], "text/csv; charset=utf-8")
        XCTAssertEqual(sheet.headers["content-disposition"], "attachment; filename=\"chorus-jobs-kitchen.csv\"")
        let rows = sheet.rest.components(separatedBy: .newlines).filter { !$0.isEmpty }
        XCTAssertEqual(rows.first, "id,title,status,assignee,creator,due,created,updated,tasks_done,tasks,description")
        XCTAssertEqual(rows.count, 13, sheet.rest)  // every page: the 12 created, not the assigned one
        XCTAssertTrue(rows[1].hasPrefix("12,Chore 12,created,,ann,,"), rows[1])
        XCTAssertTrue(rows.contains { $0.hasPrefix("3,'=SUM(A1) trick,created,") }, sheet.rest)
        XCTAssertTrue(rows.contains { $0.hasPrefix("5,\"Soap, sponges\",created,") }, sheet.rest)
        XCTAssertFalse(sheet.rest.contains("Fix the sink"))

        // The room or the filter is not to be changed by editing the link.
        for (from, to) in [("r=%23kitchen", "r=%23garden"), ("q=status", "q=xstatus")] {
            XCTAssertEqual(try http(server, "GET \(target.replacingOccurrences(of: from, with: to)) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").status, 403, to)
        }
        // Once ann has left the room, her link shows nothing of it.
        ann.send("PART #kitchen")
        try ann.expect(command: "PART")
        let after = try http(server, "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        XCTAssertEqual(after.status, 400, after.rest)
        XCTAssertFalse(after.rest.contains("Chore"), after.rest)
    }

    func testSignedFieldsKeepTheirCharacters() throws {
        let signer = LinkSigner(key: LinkSigner.newKey())
        let now = Date()
        let query = signer.sign([("q", "a&b=c d/é"), ("tz", "Europe/Paris")], expires: now + 60)
        let fields = try signer.verify(query, now: now)
        XCTAssertEqual(fields["q"], "a&b=c d/é")
        XCTAssertEqual(fields["tz"], "Europe/Paris")
        XCTAssertThrowsError(try LinkSigner(key: LinkSigner.newKey()).verify(query, now: now)) { error in
            XCTAssertEqual(error as? LinkSigner.Refusal, .tampered)
        }
    }
}
