import ChorusCore
import Foundation

/// Contractors, service requests, offers and reviews, written once for both databases.
public protocol SQLMarketStore: MarketStore, SQLDatabase {}

extension SQLMarketStore {
    // MARK: Contractors

    private static var contractorColumns: String {
        "contractors.account, contractors.active, contractors.skills, contractors.rate, contractors.area, contractors.bio"
    }

    public func contractor(_ account: String) throws -> Contractor? {
        try reading { c in
            try c.rows("SELECT \(raw: Self.contractorColumns) FROM contractors WHERE account_key = \(Account.key(account))")
                .first.map(Self.contractor)
        }
    }

    public func saveContractor(_ contractor: Contractor) throws {
        let key = Account.key(contractor.account)
        try writing { c in
            try c.run("""
                INSERT INTO contractors (account_key, account, active, skills, rate, area, bio)
                VALUES (\(key), \(contractor.account), \(contractor.active), \(StoredForm.lines(contractor.skills)),
                  \(contractor.rate), \(StoredForm.lines(contractor.area)), \(contractor.bio))
                ON CONFLICT (account_key) DO UPDATE SET account = excluded.account, active = excluded.active,
                  skills = excluded.skills, rate = excluded.rate, area = excluded.area, bio = excluded.bio
                """)
            // The skill index: what `contractors(withSkill:)` reads instead of every contractor.
            try c.run("DELETE FROM contractor_skills WHERE account_key = \(key)")
            for skill in contractor.skills {
                try c.run("INSERT INTO contractor_skills (skill, account_key) VALUES (\(skill), \(key))")
            }
        }
    }

    public func contractors(withSkill skill: String) throws -> [Contractor] {
        try reading { c in
            // A posting reads a thousand of these: each is decoded where the cursor stands.
            var found: [Contractor] = []
            try c.eachRow("""
                SELECT \(raw: Self.contractorColumns) FROM contractor_skills JOIN contractors USING (account_key)
                WHERE contractor_skills.skill = \(skill) AND contractors.active
                """) { found.append(try Self.contractor($0)) }
            return found
        }
    }

    private static func contractor(_ row: any SQLRow) throws -> Contractor {
        Contractor(account: try row.string("account"), active: try row.bool("active"), skills: StoredForm.lines(try row.string("skills")),
                   rate: try row.int64("rate").map { Int($0) }, area: StoredForm.lines(try row.string("area")), bio: try row.string("bio"))
    }

    // MARK: Requests

    /// The id first: a versioned read adds the row's version last.
    private static var requestColumns: String {
        """
        id, customer, category, description, "window", window_end, budget, place, estimate, status, contractor, created_at, updated_at
        """
    }

    public func insertRequest(_ r: ServiceRequest) throws -> ServiceRequest {
        try writing { c in
            let id = try c.insert("INSERT INTO service_requests (\(raw: Self.requestWritten)) VALUES (\(list: Self.values(of: r)))")
            var saved = r
            saved.id = id
            return saved
        }
    }

    public func updateRequest(_ r: ServiceRequest) throws {
        try writing { c in
            try c.change("service_requests", id: r.id, set: .assignments(Self.requestWritten, Self.values(of: r)), what: "request \(r.id)")
        }
    }

    /// What a request's row holds, in the order of `values(of:)`.
    private static var requestWritten: String {
        """
        customer, customer_key, category, description, "window", window_end, budget, place, estimate, status, contractor,
        contractor_key, created_at, updated_at
        """
    }

    private static func values(of r: ServiceRequest) -> [any SQLBindable] {
        [r.customer, Account.key(r.customer), r.category, r.description, r.window, r.windowEnd.map(Millis.from), r.budget, r.place,
         r.estimate, r.status.rawValue, r.contractor, r.contractor.map(Account.key), Millis.from(r.createdAt), Millis.from(r.updatedAt)]
    }

    public func request(_ id: Int64) throws -> ServiceRequest? {
        try requests(where: "id = \(id)").first
    }

    public func requests(_ filter: RequestFilter) throws -> [ServiceRequest] {
        let condition = StoredFilters.requests(filter)
        return try requests(where: "\(condition) ORDER BY id DESC LIMIT \(filter.limit) OFFSET \(filter.offset)")
    }

    public func countRequests(_ filter: RequestFilter) throws -> Int {
        let condition = StoredFilters.requests(filter)
        return try reading { c in
            try c.rows("SELECT count(*) AS n FROM service_requests WHERE \(condition)").first?.int("n") ?? 0
        }
    }

    public func openRequests(endedBy time: Date) throws -> [ServiceRequest] {
        try requests(where: "status = 'open' AND window_end IS NOT NULL AND window_end <= \(Millis.from(time)) ORDER BY window_end")
    }

    public func nextRequestExpiry() throws -> Date? {
        try reading { c in
            try c.rows("SELECT min(window_end) AS ends FROM service_requests WHERE status = 'open' AND window_end IS NOT NULL")
                .first.flatMap { try $0.date("ends") }
        }
    }

    /// Requests, read to be changed: the board changes what it reads.
    private func requests(where condition: SQL) throws -> [ServiceRequest] {
        try reading { c in
            try c.rowsToChange("service_requests", """
                SELECT \(raw: Self.requestColumns)\(raw: c.dialect.rowVersion("service_requests")) FROM service_requests WHERE \(condition)
                """).map(Self.request)
        }
    }

    private static func request(_ row: any SQLRow) throws -> ServiceRequest {
        ServiceRequest(id: try row.int64("id"), customer: try row.string("customer"), category: try row.string("category"),
                       description: try row.string("description"), window: try row.string("window"), windowEnd: try row.date("window_end"),
                       budget: try row.int64("budget").map { Int($0) }, place: try row.string("place"), estimate: try row.string("estimate"),
                       status: ServiceRequest.Status(rawValue: try row.string("status")) ?? .open, contractor: try row.string("contractor"),
                       createdAt: try row.date("created_at"), updatedAt: try row.date("updated_at"))
    }

    // MARK: Offers and reviews

    public func offers(on request: Int64) throws -> [Offer] {
        try reading { c in
            try c.rows("SELECT request, contractor, price, note, at FROM offers WHERE request = \(request) ORDER BY price, at").map { row in
                Offer(request: try row.int64("request"), contractor: try row.string("contractor"), price: try row.int("price"),
                      note: try row.string("note"), at: try row.date("at"))
            }
        }
    }

    public func saveOffer(_ o: Offer) throws {
        try writing { c in
            try c.run("""
                INSERT INTO offers (request, contractor_key, contractor, price, note, at)
                VALUES (\(o.request), \(Account.key(o.contractor)), \(o.contractor), \(o.price), \(o.note),
                  \(Millis.from(o.at)))
                ON CONFLICT (request, contractor_key) DO UPDATE SET price = excluded.price, note = excluded.note, at = excluded.at
                """)
        }
    }

    public func review(of request: Int64) throws -> Review? {
        try reading { c in
            try c.rows("SELECT request, customer, contractor, rating, text, reply, at FROM reviews WHERE request = \(request)")
                .first.map { row in
                    Review(request: try row.int64("request"), customer: try row.string("customer"), contractor: try row.string("contractor"),
                           rating: try row.int("rating"), text: try row.string("text"), reply: try row.string("reply"), at: try row.date("at"))
                }
        }
    }

    public func saveReview(_ r: Review) throws {
        try writing { c in
            try c.run("""
                INSERT INTO reviews (request, customer, contractor, contractor_key, rating, text, reply, at)
                VALUES (\(r.request), \(r.customer), \(r.contractor), \(Account.key(r.contractor)), \(r.rating),
                  \(r.text), \(r.reply), \(Millis.from(r.at)))
                ON CONFLICT (request) DO UPDATE SET reply = excluded.reply
                """)
        }
    }

    public func standing(of contractor: String) throws -> Standing {
        let key = Account.key(contractor)
        return try reading { c in
            let row = try c.rows("""
                SELECT CAST(avg(rating) AS DOUBLE PRECISION) AS average, count(*) AS n FROM reviews
                WHERE contractor_key = \(key)
                """).first
            let completed = try c.rows("""
                SELECT count(*) AS n FROM service_requests WHERE contractor_key = \(key) AND status = 'confirmed'
                """).first?.int("n") ?? 0
            return Standing(average: try row?.double("average"), reviews: try row?.int("n") ?? 0, completed: completed)
        }
    }

    // MARK: Events and rooms

    public func events(ofRequest request: Int64) throws -> [Event] {
        try reading { c in
            try c.rows("SELECT \(raw: EventRows.columns) FROM events WHERE request = \(request) ORDER BY id").map(EventRows.event)
        }
    }

    public func marketRooms() throws -> [String] {
        try reading { c in try c.rows("SELECT room FROM room_settings WHERE market ORDER BY room").map { try $0.string("room") } }
    }
}
