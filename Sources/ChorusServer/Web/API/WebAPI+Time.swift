import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore

/// An account's own time, as `!track log`, `!report`, `!modes` and `!plan` give it: no one else's.
extension WebAPI {
    /// `GET /api/v1/time?from=YYYY-MM-DD&to=YYYY-MM-DD`: the account's entries that start in those
    /// days (its own zone; the last 7 days unless given, at most 366), the running one, its modes
    /// and its weekly plan.
    func time(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let store = server.store, now = server.now, serverZone = server.config.timeZone
        let (fromText, toText) = (request.query["from"], request.query["to"])
        return readBoard { _, _ -> APITime in
            let zone = try store.timeZone(of: caller.key, otherwise: serverZone)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let day = { (text: String?, fallback: Date) throws -> Date in
                guard let text else { return calendar.startOfDay(for: fallback) }
                let parts = text.split(separator: "-").compactMap { Int($0) }
                // A date the calendar would roll over (2026-02-30 is not 2 March) is refused.
                guard parts.count == 3, let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])),
                      calendar.dateComponents([.year, .month, .day], from: date) == DateComponents(year: parts[0], month: parts[1], day: parts[2]) else {
                    throw APIError(.badRequest, "INVALID_PARAMS", "from and to are dates such as 2026-11-23.")
                }
                return date
            }
            let to = try day(toText, now())
            let from = try day(fromText, to.addingTimeInterval(-6 * 86_400))
            let end = calendar.date(byAdding: .day, value: 1, to: to) ?? to
            guard from < end, end.timeIntervalSince(from) <= 367 * 86_400 else {
                throw APIError(.badRequest, "INVALID_PARAMS", "from is before to, at most 366 days apart.")
            }
            let board = TimeBoard(store: store, jobs: JobBoard(store: store, now: now), now: now)
            let modes = try board.modes(of: caller.account)
            return APITime(zone: zone.identifier, entries: try board.entries(of: caller.account, from: from, to: end).map(APITimeEntry.init),
                           running: try board.running(of: caller.account).map(APITimeEntry.init),
                           modes: modes.presets + modes.own, plan: try board.plan(of: caller.account).map(APIPlanBlock.init))
        }
    }

    /// `GET /api/v1/time/report?q=<!report's words>`: the account's own report, as `!report`
    /// makes it (`q=week by job`, `q=2026-11-01..2026-11-15`, `q=month %23flat by person`), in its
    /// time zone.
    func timeReport(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let arguments = request.query["q"] ?? ""
        let store = server.store, now = server.now, serverZone = server.config.timeZone
        return readBoard { _, _ -> APITimeReport in
            let zone = try store.timeZone(of: caller.key, otherwise: serverZone)
            let invocation = try WebApplication.linkInvocation(account: caller.account, room: nil, zone: zone, now: now(), store)
            do {
                return APITimeReport(try Bot(boards: Boards(store: store, timeZone: serverZone, now: now)).timeReport(invocation, arguments: arguments))
            } catch let usage as UsageError {
                throw APIError(.badRequest, "INVALID_PARAMS", usage.description)
            }
        }
    }
}

struct APITimeEntry: Encodable {
    let id: Int64
    let mode: String
    let job: Int64?
    let start: String
    /// Nil while the timer runs.
    let end: String?
    let note: String

    init(_ e: TimeEntry) {
        id = e.id
        mode = e.mode
        job = e.job
        start = WebAPI.timestamp(e.start)
        end = e.end.map(WebAPI.timestamp)
        note = e.note
    }
}

struct APIPlanBlock: Encodable {
    let id: Int64
    let mode: String
    /// mon … sun.
    let days: [String]
    /// HH:MM in the account's zone.
    let start: String
    let end: String

    init(_ b: PlanBlock) {
        id = b.id
        mode = b.mode
        let names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
        days = [2, 3, 4, 5, 6, 7, 1].filter(b.days.contains).map { names[$0 - 1] }
        start = String(format: "%02d:%02d", b.start / 60, b.start % 60)
        end = String(format: "%02d:%02d", b.end / 60, b.end % 60)
    }
}

struct APITime: Encodable {
    let zone: String
    let entries: [APITimeEntry]
    let running: APITimeEntry?
    let modes: [String]
    let plan: [APIPlanBlock]
}

struct APITimeReport: Encodable {
    struct Row: Encodable {
        let label: String
        let seconds: Int
        let planned: Int?
    }
    let heading: String
    let rows: [Row]
    let total: Int
    let footer: [String]

    init(_ report: TimeReport) {
        heading = report.heading
        rows = report.rows.map { Row(label: $0.label, seconds: $0.seconds, planned: $0.planned) }
        total = report.total
        footer = report.footer
    }
}
