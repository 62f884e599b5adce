import ChorusCore
import ChorusStore
import Foundation
import PostgresNIO
import ChorusSQL

extension PostgresStore: MarketStore {
    // MARK: Contractors

    private static let contractorColumns = "account, active, skills, rate, area, bio"

    public func contractor(_ account: String) throws -> Contractor? {
        try db.read { link in
            try link.query("SELECT \(Self.contractorColumns) FROM contractors WHERE account_key = ?", [Account.key(account)])
                .first.map(Self.contractor)
        }
    }

    public func saveContractor(_ c: Contractor) throws {
        let key = Account.key(c.account)
        try db.write { link in
            try link.execute("""
                INSERT INTO contractors (account_key, account, active, skills, rate, area, bio) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (account_key) DO UPDATE SET account = excluded.account, active = excluded.active,
                  skills = excluded.skills, rate = excluded.rate, area = excluded.area, bio = excluded.bio
                """, [key, c.account, c.active, StoredForm.lines(c.skills), c.rate, StoredForm.lines(c.area), c.bio])
            // The skill index: what `contractors(withSkill:)` reads instead of every contractor.
            try link.execute("DELETE FROM contractor_skills WHERE account_key = ?", [key])
            if !c.skills.isEmpty {
                try link.execute("INSERT INTO contractor_skills (skill, account_key) SELECT unnest(?::text[]), ?", [PostgresTextArray(c.skills), key])
            }
        }
    }

    public func contractors(withSkill skill: String) throws -> [Contractor] {
        try db.read { link in
            try link.query("""
                SELECT contractors.account, contractors.active, contractors.skills, contractors.rate, contractors.area, contractors.bio
                FROM contractor_skills JOIN contractors USING (account_key)
                WHERE contractor_skills.skill = ? AND contractors.active
                """, [skill]).map(Self.contractor)
        }
    }

    private static func contractor(_ row: PostgresRandomAccessRow) throws -> Contractor {
        Contractor(account: try row.string(0), active: try row.bool(1), skills: StoredForm.lines(try row.string(2) as String),
                   rate: try row.int(3), area: StoredForm.lines(try row.string(4) as String), bio: try row.string(5))
    }

    // MARK: Requests

    private static let requestColumns = """
        id, customer, category, description, "window", window_end, budget, place, estimate, status, contractor, created_at, updated_at,
        xmin::text
        """

    public func insertRequest(_ r: ServiceRequest) throws -> ServiceRequest {
        try db.write { link in
            let rows = try link.query("""
                INSERT INTO service_requests (customer, customer_key, category, description, "window", window_end, budget, place,
                  estimate, status, contractor, contractor_key, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
                """, Self.values(of: r))
            var saved = r
            saved.id = try rows[0].int64(0)
            return saved
        }
    }

    public func updateRequest(_ r: ServiceRequest) throws {
        try db.write { link in
            try link.updateRow("service_requests", id: r.id, set: """
                customer = ?, customer_key = ?, category = ?, description = ?, "window" = ?, window_end = ?, budget = ?,
                place = ?, estimate = ?, status = ?, contractor = ?, contractor_key = ?, created_at = ?, updated_at = ?
                """, Self.values(of: r), what: "request \(r.id)")
        }
    }

    private static func values(of r: ServiceRequest) -> [any PostgresBindable] {
        [r.customer, Account.key(r.customer), r.category, r.description, r.window, r.windowEnd.map(Millis.from), r.budget, r.place,
         r.estimate, r.status.rawValue, r.contractor, r.contractor.map(Account.key), Millis.from(r.createdAt), Millis.from(r.updatedAt)]
    }

    public func request(_ id: Int64) throws -> ServiceRequest? {
        try db.read { link in try link.queryVersioned("service_requests", "SELECT \(Self.requestColumns) FROM service_requests WHERE id = ?", [id]).first.map(Self.request) }
    }

    public func requests(_ filter: RequestFilter) throws -> [ServiceRequest] {
        let condition = StoredFilters.requests(filter)
        return try db.read { link in
            try link.queryVersioned("service_requests", "SELECT \(Self.requestColumns) FROM service_requests WHERE \(condition.text) ORDER BY id DESC LIMIT ? OFFSET ?",
                           condition.binds + [filter.limit, filter.offset]).map(Self.request)
        }
    }

    public func countRequests(_ filter: RequestFilter) throws -> Int {
        let condition = StoredFilters.requests(filter)
        return try db.read { link in
            try link.query("SELECT count(*) FROM service_requests WHERE \(condition.text)", condition.binds).first?.int(0) ?? 0
        }
    }

    public func openRequests(endedBy time: Date) throws -> [ServiceRequest] {
        try db.read { link in
            try link.queryVersioned("service_requests", """
                SELECT \(Self.requestColumns) FROM service_requests
                WHERE status = 'open' AND window_end IS NOT NULL AND window_end <= ? ORDER BY window_end
                """, [Millis.from(time)]).map(Self.request)
        }
    }

    public func nextRequestExpiry() throws -> Date? {
        try db.read { link in
            try link.query("SELECT min(window_end) FROM service_requests WHERE status = 'open' AND window_end IS NOT NULL")
                .first.flatMap { try $0.date(0) }
        }
    }

    private static func request(_ row: PostgresRandomAccessRow) throws -> ServiceRequest {
        ServiceRequest(id: try row.int64(0), customer: try row.string(1), category: try row.string(2), description: try row.string(3),
                       window: try row.string(4), windowEnd: try row.date(5), budget: try row.int(6),
                       place: try row.string(7), estimate: try row.string(8),
                       status: ServiceRequest.Status(rawValue: try row.string(9)) ?? .open, contractor: try row.string(10),
                       createdAt: try row.date(11), updatedAt: try row.date(12))
    }

    // MARK: Offers and reviews

    public func offers(on request: Int64) throws -> [Offer] {
        try db.read { link in
            try link.query("SELECT request, contractor, price, note, at FROM offers WHERE request = ? ORDER BY price, at", [request]).map { row in
                Offer(request: try row.int64(0), contractor: try row.string(1), price: try row.int(2), note: try row.string(3), at: try row.date(4))
            }
        }
    }

    public func saveOffer(_ o: Offer) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO offers (request, contractor_key, contractor, price, note, at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (request, contractor_key) DO UPDATE SET price = excluded.price, note = excluded.note, at = excluded.at
                """, [o.request, Account.key(o.contractor), o.contractor, o.price, o.note, Millis.from(o.at)])
        }
    }

    public func review(of request: Int64) throws -> Review? {
        try db.read { link in
            try link.query("SELECT request, customer, contractor, rating, text, reply, at FROM reviews WHERE request = ?", [request])
                .first.map { row in
                    Review(request: try row.int64(0), customer: try row.string(1), contractor: try row.string(2), rating: try row.int(3),
                           text: try row.string(4), reply: try row.string(5), at: try row.date(6))
                }
        }
    }

    public func saveReview(_ r: Review) throws {
        try db.write { link in
            try link.execute("""
                INSERT INTO reviews (request, customer, contractor, contractor_key, rating, text, reply, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (request) DO UPDATE SET reply = excluded.reply
                """, [r.request, r.customer, r.contractor, Account.key(r.contractor), r.rating, r.text, r.reply, Millis.from(r.at)])
        }
    }

    public func standing(of contractor: String) throws -> Standing {
        let key = Account.key(contractor)
        return try db.read { link in
            let row = try link.query("SELECT avg(rating)::float8, count(*) FROM reviews WHERE contractor_key = ?", [key]).first
            let completed = try link.query("SELECT count(*) FROM service_requests WHERE contractor_key = ? AND status = 'confirmed'",
                                           [key]).first?.int(0) ?? 0
            return Standing(average: try row?[0].decode(Double?.self), reviews: try row?.int(1) ?? 0, completed: completed)
        }
    }

    // MARK: Events and rooms

    public func events(ofRequest request: Int64) throws -> [Event] {
        try db.read { link in
            try link.query("SELECT \(Self.eventColumns) FROM events WHERE request = ? ORDER BY id", [request]).map(Self.event)
        }
    }

    public func marketRooms() throws -> [String] {
        try db.read { link in try link.query("SELECT room FROM room_settings WHERE market ORDER BY room").map { try $0.string(0) } }
    }
}

/// A list of strings bound as one `text[]` value (`unnest(?::text[])`): a skill list in one statement.
struct PostgresTextArray: PostgresBindable {
    var items: [String]
    init(_ items: [String]) { self.items = items }
    func bind(to binds: inout PostgresBindings) { binds.append(items) }
}
