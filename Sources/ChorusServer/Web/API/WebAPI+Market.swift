import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore

/// Service requests and time, as `!requests`, `!request show` and `!report` give them: the same
/// boards, the same rules (an offer is its maker's and the customer's; time is its owner's).
extension WebAPI {
    /// `GET /api/v1/requests?scope=mine|open|all&category=&page=`: the account's requests, or (a
    /// contractor's) the open ones, newest first, 20 a page.
    func requests(_ caller: Caller, _ request: Request) throws -> EventLoopFuture<WebResponse> {
        let scope: MarketBoard.ListScope
        switch request.query["scope"] ?? "mine" {
        case "mine": scope = .mine
        case "open": scope = .open
        case "all": scope = .all
        case let other: throw APIError(.badRequest, "INVALID_PARAMS", "scope is mine, open or all, not \"\(other.prefix(30))\".")
        }
        let category = request.query["category"].flatMap { $0.isEmpty ? nil : $0 }
        let page = Int(try request.integer("page", default: 1, in: 1...100_000))
        let store = server.store, now = server.now
        return readBoard { _, _ -> APIRequestList in
            let (requests, total) = try MarketBoard(store: store, now: now).list(scope, category: category, page: page, by: caller.account)
            return APIRequestList(requests: requests.map(APIServiceRequest.init), total: total)
        }
    }

    /// `GET /api/v1/requests/ID`: one request the account may see, the offers it may see (all of
    /// them for the customer, their own for an offerer) and its history as theirs.
    func serviceRequest(_ caller: Caller, _ request: Request, id: Int64) throws -> EventLoopFuture<WebResponse> {
        let store = server.store, now = server.now
        return readBoard { _, wording -> APIRequestDetail in
            let board = MarketBoard(store: store, now: now)
            let (found, history) = try board.history(id, by: caller.account)
            return APIRequestDetail(request: APIServiceRequest(found), offers: try board.offers(on: id, by: caller.account).map(APIOffer.init),
                                    history: history.map { WebAPI.apiEvent($0, roomName: nil, wording: wording) })
        }
    }

    /// `GET /api/v1/time/report?q=<!report's words>`: the account's own report, as `!report`
    /// makes it (`q=week by job`, `q=2026-11-01..2026-11-15`, `q=month %23flat by person`), in its
    /// time zone.
    func timeReport(_ caller: Caller, _ request: Request) throws -> EventLoopFuture<WebResponse> {
        let arguments = request.query["q"] ?? ""
        let store = server.store, now = server.now, serverZone = server.config.timeZone
        return readBoard { _, _ -> APITimeReport in
            let zone = try store.timeZone(of: caller.key).flatMap(TimeZone.init(identifier:)) ?? serverZone
            let invocation = try IRCServer.linkInvocation(account: caller.account, room: nil, zone: zone, now: now(), store)
            do {
                return APITimeReport(try Bot(boards: Boards(store: store, timeZone: serverZone, now: now)).timeReport(invocation, arguments: arguments))
            } catch let usage as UsageError {
                throw APIError(.badRequest, "INVALID_PARAMS", usage.description)
            }
        }
    }
}

struct APIServiceRequest: Encodable {
    let id: Int64
    let customer: String
    let category: String
    let description: String
    let window: String?
    let budget: Int?
    let place: String?
    let status: String
    let contractor: String?
    let created: String
    let updated: String

    init(_ r: ServiceRequest) {
        id = r.id
        customer = r.customer
        category = r.category
        description = r.description
        window = r.window
        budget = r.budget
        place = r.place
        status = r.status.rawValue
        contractor = r.contractor
        created = WebAPI.timestamp(r.createdAt)
        updated = WebAPI.timestamp(r.updatedAt)
    }
}

struct APIOffer: Encodable {
    let contractor: String
    let price: Int
    let note: String
    let at: String

    init(_ offer: Offer) {
        contractor = offer.contractor
        price = offer.price
        note = offer.note
        at = WebAPI.timestamp(offer.at)
    }
}

struct APIRequestList: Encodable {
    let requests: [APIServiceRequest]
    let total: Int
}

struct APIRequestDetail: Encodable {
    let request: APIServiceRequest
    let offers: [APIOffer]
    let history: [APIEvent]
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
