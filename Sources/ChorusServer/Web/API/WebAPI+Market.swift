import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore

/// Service requests and contractors, as `!requests`, `!request show` and `!profile` give them:
/// the same board, the same rules (an offer is its maker's and the customer's).
extension WebAPI {
    /// `GET /api/v1/requests?scope=mine|open|all&category=&page=`: the account's requests, or (a
    /// contractor's) the open ones, newest first, 20 a page.
    func requests(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
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
    func serviceRequest(_ caller: Caller, _ request: WebRequest, id: Int64) throws -> EventLoopFuture<WebResponse> {
        let store = server.store, now = server.now
        return readBoard { _, wording -> APIRequestDetail in
            let board = MarketBoard(store: store, now: now)
            let (found, history) = try board.history(id, by: caller.account)
            return APIRequestDetail(request: APIServiceRequest(found), offers: try board.offers(on: id, by: caller.account).map(APIOffer.init),
                                    history: history.map { WebAPI.apiEvent($0, roomName: nil, wording: wording) })
        }
    }

    /// `GET /api/v1/contractors/NAME`: a contractor's profile and standing, as `!profile` shows
    /// it to anyone logged in; 404 for an account that is not one.
    func contractor(_ caller: Caller, _ request: WebRequest, name: String) throws -> EventLoopFuture<WebResponse> {
        let store = server.store
        return readBoard { _, _ -> APIContractor in
            guard let contractor = try store.contractor(name) else { throw JobError.notAllowed("\(name.prefix(40)) is not a contractor") }
            return APIContractor(contractor, try store.standing(of: contractor.account))
        }
    }
}

struct APIServiceRequest: Encodable {
    let id: Int64
    let customer: String
    let category: String
    let description: String
    let window: String?
    /// In cents, as every amount.
    let budgetCents: Int?
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
        budgetCents = r.budget
        place = r.place
        status = r.status.rawValue
        contractor = r.contractor
        created = WebAPI.timestamp(r.createdAt)
        updated = WebAPI.timestamp(r.updatedAt)
    }
}

struct APIOffer: Encodable {
    let contractor: String
    let priceCents: Int
    let note: String
    let at: String

    init(_ offer: Offer) {
        contractor = offer.contractor
        priceCents = offer.price
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

struct APIContractor: Encodable {
    let account: String
    let active: Bool
    let skills: [String]
    /// An hour's rate, in cents.
    let rateCents: Int?
    let area: [String]
    let bio: String
    /// The average of its reviews (1 to 5), how many, and requests completed.
    let rating: Double?
    let reviews: Int
    let completed: Int

    init(_ c: Contractor, _ standing: Standing) {
        account = c.account
        active = c.active
        skills = c.skills
        rateCents = c.rate
        area = c.area
        bio = c.bio
        rating = standing.average
        reviews = standing.reviews
        completed = standing.completed
    }
}
