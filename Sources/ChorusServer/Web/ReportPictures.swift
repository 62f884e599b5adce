import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore
import NIOHTTP1

/// `!report` as a picture (`/report.svg`) or a spreadsheet (`/report.csv`), behind the signed links
/// the bot's answer carries: the link names the account, the report's words and the time zone, so
/// the web side runs the very report the person asked for, a day long.
extension WebApplication {
    func report(_ request: WebRequest, as format: ReportFormat) -> EventLoopFuture<WebResponse> {
        followingLink(request, naming: ["a", "q"]) { fields in
            let account = fields["a"]!, arguments = fields["q"]!
            let zone = fields["tz"].flatMap(TimeZone.init(identifier:)) ?? config.timeZone
            let now = server.now
            return server.readAfterWrites { store -> TimeReport in
                let invocation = try Self.linkInvocation(account: account, room: nil, zone: zone, now: now(), store)
                return try Bot(boards: Boards(store: store, timeZone: zone, now: now)).timeReport(invocation, arguments: arguments)
            }
            .map { format.response(for: $0) }
            .recover { ($0 as? LinkRefusal)?.response ?? .text(.badRequest, "\($0)") }
        }
    }

    /// `body` with a link's fields once its signature and time check out and each of `required`
    /// is there; else the answer that says why the link is not followed.
    func followingLink(_ request: WebRequest, naming required: [String],
                       _ body: ([String: String]) -> EventLoopFuture<WebResponse>) -> EventLoopFuture<WebResponse> {
        switch signedFields(of: request, naming: required) {
        case .success(let fields): return body(fields)
        case .failure(let refusal): return loop.makeSucceededFuture(refusal.response)
        }
    }

    /// The answer to a signed link whose fields do not say what its route needs.
    var tamperedLink: EventLoopFuture<WebResponse> {
        loop.makeSucceededFuture(.text(.forbidden, LinkSigner.Refusal.tampered.description))
    }

    /// A link's fields once its signature and time check out, with each of `required` present.
    func signedFields(of request: WebRequest, naming required: [String]) -> Result<[String: String], LinkRefusal> {
        guard let links = server.reportLinks else { return .failure(LinkRefusal(status: .notFound, text: "Reports are not served here.")) }
        let uri = request.head.uri
        let query = uri.firstIndex(of: "?").map { String(uri[uri.index(after: $0)...]) } ?? ""
        do {
            let fields = try links.signer.verify(query, now: server.now())
            guard required.allSatisfy({ fields[$0] != nil }) else {
                return .failure(LinkRefusal(status: .forbidden, text: LinkSigner.Refusal.tampered.description))
            }
            return .success(fields)
        } catch let refusal as LinkSigner.Refusal {
            return .failure(LinkRefusal(status: refusal == .expired ? .gone : .forbidden, text: refusal.description))
        } catch {
            return .failure(LinkRefusal(status: .forbidden, text: "\(error)"))
        }
    }

    /// The account behind a link as the bot sees it now: its rooms as they are today, so a link
    /// outlives neither a membership nor the account.
    static func linkInvocation(account: String, room: String?, zone: TimeZone, now: Date, _ store: any ChorusStorage) throws -> Invocation {
        guard try store.account(named: account) != nil else {
            throw LinkRefusal(status: .gone, text: "This link's account was deleted: the link no longer works.")
        }
        var rooms: [String: String] = [:]
        for membership in try store.memberships(ofAccount: Account.key(account)) {
            rooms[membership.room] = try store.roomName(membership.room) ?? membership.room
        }
        let here = room.flatMap { key in rooms[key].map { Invocation.RoomRef(key: key, name: $0) } }
        if let room, here == nil { throw JobError.notInRoom(room) }
        return Invocation(account: account, nick: account, room: here, rooms: rooms, onlineAccounts: [:], timeZone: zone, now: now)
    }
}

/// Why a signed link was not followed, as the HTTP answer says it.
struct LinkRefusal: Error {
    var status: HTTPResponseStatus
    var text: String
    var response: WebResponse { .text(status, text) }
}

enum ReportFormat {
    case svg
    case csv

    func response(for report: TimeReport) -> WebResponse {
        var response = WebResponse(status: .ok)
        switch self {
        case .svg:
            response.body = ByteBuffer(string: ReportChart(report).svg)
            response.headers.add(name: "Content-Type", value: "image/svg+xml")
            // A picture, never a page: nothing in it runs.
            response.headers.add(name: "Content-Security-Policy", value: "default-src 'none'; style-src 'unsafe-inline'")
        case .csv:
            return WebResponse.csv(Self.csv(report), fileName: "chorus-report.csv")
        }
        response.headers.add(name: "Cache-Control", value: "private, max-age=60")
        return response
    }

    static func csv(_ report: TimeReport) -> String {
        let total = report.total
        var sheet = CSV(header: ["name", "minutes", "hours", "share_percent", "planned_minutes"])
        for row in report.rows {
            let share = total > 0 ? String(format: "%.1f", Double(row.seconds) * 100 / Double(total)) : "0.0"
            sheet.append([row.label, String(row.seconds / 60), String(format: "%.2f", Double(row.seconds) / 3600), share,
                          row.planned.map { String($0 / 60) } ?? ""])
        }
        sheet.append(["total", String(total / 60), String(format: "%.2f", Double(total) / 3600), "100.0", ""])
        return sheet.text
    }
}

/// A time report as horizontal bars: one row a name, its time and share, the plan as an outline.
struct ReportChart {
    let report: TimeReport

    init(_ report: TimeReport) {
        self.report = report
    }

    static let width = 640
    static let rowHeight = 30
    static let labelWidth = 190
    static let barWidth = 300

    var svg: String {
        let rows = report.rows
        let top = max(1, rows.map { max($0.seconds, $0.planned ?? 0) }.max() ?? 1)
        let height = 64 + max(1, rows.count) * Self.rowHeight + report.footer.count * 22 + 12
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.width)" height="\(height)" viewBox="0 0 \(Self.width) \(height)" \
        font-family="system-ui, sans-serif" font-size="14" role="img" aria-label="\(Self.escape(report.heading))">
        <rect width="100%" height="100%" fill="#ffffff"/>
        <text x="16" y="28" font-size="17" font-weight="600" fill="#1d2330">\(Self.escape(report.heading))</text>
        <text x="16" y="48" fill="#5f6b7a">Total \(TimeRules.duration(report.total))\(rows.contains { $0.planned != nil } ? " · dashed outline: planned" : "")</text>

        """
        if rows.isEmpty {
            out += "<text x=\"16\" y=\"84\" fill=\"#5f6b7a\">\(Self.escape(report.empty))</text>\n"
        }
        for (i, row) in rows.enumerated() {
            let y = 64 + i * Self.rowHeight
            let width = Int((Double(row.seconds) / Double(top) * Double(Self.barWidth)).rounded())
            let share = report.total > 0 ? Int((Double(row.seconds) * 100 / Double(report.total)).rounded()) : 0
            let label = row.label.count > 26 ? String(row.label.prefix(25)) + "…" : row.label
            out += "<text x=\"16\" y=\"\(y + 19)\" fill=\"#1d2330\">\(Self.escape(label))</text>\n"
            out += "<rect x=\"\(Self.labelWidth)\" y=\"\(y + 5)\" width=\"\(max(width, row.seconds > 0 ? 2 : 0))\" height=\"18\" rx=\"3\" fill=\"#2b6cb0\"/>\n"
            if let planned = row.planned {
                let plannedWidth = Int((Double(planned) / Double(top) * Double(Self.barWidth)).rounded())
                out += "<rect x=\"\(Self.labelWidth)\" y=\"\(y + 3)\" width=\"\(plannedWidth)\" height=\"22\" rx=\"3\" fill=\"none\" "
                    + "stroke=\"#d97706\" stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>planned \(TimeRules.duration(planned))</title></rect>\n"
            }
            out += "<text x=\"\(Self.labelWidth + Self.barWidth + 12)\" y=\"\(y + 19)\" fill=\"#1d2330\">"
                + "\(TimeRules.duration(row.seconds)) · \(share)%</text>\n"
        }
        for (i, line) in report.footer.enumerated() {
            out += "<text x=\"16\" y=\"\(64 + max(1, rows.count) * Self.rowHeight + 18 + i * 22)\" fill=\"#5f6b7a\">\(Self.escape(line))</text>\n"
        }
        return out + "</svg>\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}

extension IRCServer {
    /// The key links are signed with, kept in the database so that every process on it (and a
    /// restored backup) opens the same links. The first start stores the data folder's
    /// `link.key` when it has one (so links made before the key moved still open), else a new key.
    func linkKey() throws -> Data {
        let file = FileManager.default.contents(atPath: config.linkKeyPath).flatMap { $0.count == 32 ? $0 : nil }
        return try store.sharedKey("link", proposing: file ?? LinkSigner.newKey())
    }
}
