import ChorusBot
import ChorusCore
import Synchronization
import ChorusIRC
import Foundation
import XCTest

/// The pages in Commands/ are the reference of the chat commands. These tests keep them true:
/// every command in the bot's table has a page showing its syntax, and every page's example
/// session is replayed against a live server and must produce exactly the lines it shows.
///
/// Session lines: `alice> text` is alice saying `text` in #kitchen; `alice@Chorus> text` is a
/// private message to the bot; `#kitchen: text` is a notice the room sees (checked as alice, a
/// manager, sees it, unless written `#kitchen(bob): text`); `bob: text` is a notice to bob alone.
/// Every session starts on Monday 2026-11-23 09:00 UTC with alice (manager), bob and carol in #kitchen
/// (alice made it and added them: it is its members'), and an account dave that is neither
/// connected nor a member.
final class CommandPagesTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Commands")

    func pages() throws -> [String: String] {
        var result: [String: String] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: Self.folder.path) where file.hasSuffix(".md") && file != "README.md" {
            result[String(file.dropLast(3))] = try String(contentsOf: Self.folder.appendingPathComponent(file), encoding: .utf8)
        }
        return result
    }

    func testEveryCommandHasAPageWithItsSyntax() throws {
        let pages = try pages()
        let names = Set(Bot.commands.map(\.name))
        XCTAssertEqual(Set(pages.keys), names, "Commands/ must have exactly one page per command in Bot.commands")
        for command in Bot.commands {
            guard let page = pages[command.name] else { continue }
            for syntax in command.syntax {
                XCTAssertTrue(page.contains("`\(syntax)`"), "Commands/\(command.name).md does not show the syntax `\(syntax)`")
            }
            XCTAssertTrue(page.contains("```session"), "Commands/\(command.name).md has no example session")
        }
    }

    func testExampleSessionsReplay() throws {
        for (name, page) in try pages().sorted(by: { $0.key < $1.key }) {
            let web = page.contains("```session web\n")
            guard let start = page.range(of: web ? "```session web\n" : "```session\n"),
                  let end = page.range(of: "\n```", range: start.upperBound..<page.endIndex) else { continue }
            let session = page[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
            try replay(session, page: name, web: web)
        }
    }

    /// Token secrets the pages can show: the same on every run, shaped as real ones (`chorus-` and
    /// 64 hex digits: here the SHA-256 of "example 1", "example 2", …).
    static func exampleSecrets() -> @Sendable () -> String {
        let counter = Mutex(0)
        return {
            let n = counter.withLock { $0 += 1; return $0 }
            return AccountToken.prefix + AccountToken.digest(of: "example \(n)")
        }
    }

    /// Whether a line as sent matches a page's line: in a session with the web side on (`session
    /// web`), `…` stands for what differs from run to run (a port, a link's signature).
    private static func matches(_ sent: String, _ shown: String, web: Bool) -> Bool {
        guard web, shown.contains("…") else { return sent == shown }
        let pattern = "^" + shown.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: "\\S+") + "$"
        return sent.range(of: pattern, options: .regularExpression) != nil
    }

    private func replay(_ lines: [String], page: String, web: Bool) throws {
        let clock = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!
        // The product's default: #kitchen is its members'. alice makes it and adds bob and carol,
        // who are put in it when they log in.
        let server = try TestServer(newSecret: Self.exampleSecrets(), now: { clock }) {
            $0.timeZone = TimeZone(identifier: "UTC")!
            $0.roomsOpen = false
            if web { $0.web = .init(host: "127.0.0.1", port: 0) }
        }
        var clients: [String: TestClient] = [:]
        for nick in ["alice", "bob", "carol"] { try server.addAccount(nick, "\(nick)-password") }
        for nick in ["alice", "bob", "carol"] {
            let c = try server.connect()
            try c.register(nick, sasl: (nick, "\(nick)-password"))
            if nick == "alice" {
                try c.join("#kitchen")
                for member in ["bob", "carol"] {
                    c.send("PRIVMSG #kitchen :!room add \(member)")
                    try c.expect("\(member) added") { $0.command == "NOTICE" && $0.params.last?.contains("added \(member)") == true }
                }
            } else {
                try c.expect(command: "366", "#kitchen")
            }
            clients[nick] = c
        }
        try server.addAccount("dave", "dave-password")
        for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let location = "Commands/\(page).md session line \(number + 1): \(line)"
            let arrowFirst = line.range(of: "> ").map { arrow in line.range(of: ": ").map { arrow.lowerBound < $0.lowerBound } ?? true } ?? false
            if arrowFirst, let arrow = line.range(of: "> ") {
                let speaker = String(line[..<arrow.lowerBound])
                let text = String(line[arrow.upperBound...])
                let nick = speaker.hasSuffix("@Chorus") ? String(speaker.dropLast(7)) : speaker
                guard let c = clients[nick] else { return XCTFail("\(location): unknown speaker") }
                c.send(speaker.hasSuffix("@Chorus") ? "PRIVMSG Chorus :\(text)" : "PRIVMSG #kitchen :\(text)")
                // A client's next line waits for its command to finish, so this PONG marks the end of it.
                c.send("PING sync-\(number)")
                try c.take(location + " (command end)") { $0.command == "PONG" && $0.params.last == "sync-\(number)" }
            } else if let colon = line.range(of: ": ") {
                let who = String(line[..<colon.lowerBound])
                let text = String(line[colon.upperBound...])
                if who.hasPrefix("#") {
                    var viewer = "alice"
                    if let open = who.firstIndex(of: "("), who.hasSuffix(")") { viewer = String(who[who.index(after: open)..<who.index(before: who.endIndex)]) }
                    try clients[viewer]!.take(location) {
                        $0.command == "NOTICE" && $0.params.first == "#kitchen" && Self.matches($0.params.last ?? "", text, web: web)
                    }
                } else {
                    guard let c = clients[who] else { return XCTFail("\(location): unknown recipient") }
                    // What Chorus tells one person: an answer to a command typed in the room comes
                    // addressed to the room (to them alone, without an event's tags), the rest to them.
                    try c.take(location) { m in
                        m.command == "NOTICE" && m.source?.hasPrefix("Chorus!") == true && m.params.count == 2
                            && Self.matches(m.params[1], text, web: web)
                            && (m.params[0] == who || (m.params[0] == "#kitchen" && !m.tags.contains { $0.key == "chorus/event" }))
                    }
                }
            } else {
                XCTFail("\(location): not a session line")
            }
        }
    }
}
