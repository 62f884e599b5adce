import ChorusCore
@testable import ChorusServer
import Foundation
import XCTest

/// Someone's own data, whole: from the API with their token, or behind the link `!profile export`
/// gives in private (an hour's link that a report's link, signed by the same key, cannot stand in for).
extension APITests {
    func testAnAccountDownloadsItsOwnDataAndNoOneElses() throws {
        // Links name the address people reach (`web-url`), here in front of the plain listener.
        server = try TestServer(configure: { $0.webPlain = .init(host: "127.0.0.1", port: 0); $0.webURL = "https://chat.example.org" })
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        let alice = try flat("!job add Fix the sink")
        try alice.take("the job") { ($0.params.last ?? "").contains("created job 1") }
        alice.send("PRIVMSG bob :the secret plan")

        // In a room, the link is refused: it would be shown where others read.
        alice.send("PRIVMSG #flat :!profile export")
        try alice.take("the refusal") { ($0.params.last ?? "").hasPrefix("Your data's link is a secret") }
        alice.send("PRIVMSG Chorus :!profile export")
        let answer = try alice.take("the link") { ($0.params.last ?? "").hasPrefix("Your data, as JSON") }
        let link = try XCTUnwrap(answer.params.last?.split(separator: " ").last.map(String.init))
        let path = String(link[try XCTUnwrap(link.range(of: "/export.json")).lowerBound...])
        let file = try call("GET", path, token: nil)
        XCTAssertEqual(file.status, 200, file.text)
        XCTAssertEqual(file.headers["content-disposition"], "attachment; filename=\"chorus-alice.json\"")
        XCTAssertEqual((file.json["accounts"] as? [[String: Any]])?.first?["name"] as? String, "alice")
        XCTAssertEqual((file.json["jobs"] as? [[String: Any]])?.first?["title"] as? String, "Fix the sink")
        XCTAssertTrue((file.json["history"] as? [[String: Any]])?.contains { $0["text"] as? String == "the secret plan" } == true, file.text)
        XCTAssertFalse(file.text.contains("password_hash") || file.text.contains("digest"), file.text)

        // A link changed by hand, or a list's link (signed too, and meant for rooms), opens nothing.
        XCTAssertEqual(try call("GET", path.replacingOccurrences(of: "a=alice", with: "a=bob"), token: nil).status, 403)
        alice.send("PRIVMSG #flat :!jobs")
        let list = try alice.take("the list's link") { ($0.params.last ?? "").contains("/jobs.csv?") }
        let listQuery = try XCTUnwrap(list.params.last?.components(separatedBy: "/jobs.csv?").last)
        XCTAssertEqual(try call("GET", "/jobs.csv?" + listQuery, token: nil).status, 200, "the list's link itself works")
        XCTAssertEqual(try call("GET", "/export.json?" + listQuery, token: nil).status, 403)

        // The API gives the same to the token's account: bob's, with the line alice sent him.
        let bobs = try call("GET", "/api/v1/me/export", token: try token("bob"))
        XCTAssertEqual(bobs.status, 200, bobs.text)
        XCTAssertEqual((bobs.json["accounts"] as? [[String: Any]])?.first?["name"] as? String, "bob")
        XCTAssertTrue((bobs.json["history"] as? [[String: Any]])?.contains { $0["text"] as? String == "the secret plan" } == true,
                      "a private line names its recipient too")
        XCTAssertFalse(bobs.text.contains("Fix the sink"), "alice's job is not bob's")
        XCTAssertEqual(try call("GET", "/api/v1/me/export", token: nil).status, 401)
    }
}
