import ChorusCore
import Foundation
import GRDB
import ChorusSQL

extension SQLiteStore: MarketStore {
    // MARK: Contractors

    public func contractor(_ account: String) throws -> Contractor? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT account, active, skills, rate, area, bio FROM contractors WHERE account_key = ?",
                             arguments: [Account.key(account)]).map(Self.contractor)
        }
    }

    public func saveContractor(_ c: Contractor) throws {
        let key = Account.key(c.account)
        try db.write { db in
            try db.run(sql: """
                INSERT INTO contractors (account_key, account, active, skills, rate, area, bio) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(account_key) DO UPDATE SET account = excluded.account, active = excluded.active,
                  skills = excluded.skills, rate = excluded.rate, area = excluded.area, bio = excluded.bio
                """, arguments: [key, c.account, c.active, StoredForm.lines(c.skills), c.rate, StoredForm.lines(c.area), c.bio])
            // The skill index: what `contractors(withSkill:)` reads instead of every contractor.
            try db.run(sql: "DELETE FROM contractor_skills WHERE account_key = ?", arguments: [key])
            for skill in c.skills {
                try db.run(sql: "INSERT INTO contractor_skills (skill, account_key) VALUES (?, ?)", arguments: [skill, key])
            }
        }
    }

    public func contractors(withSkill skill: String) throws -> [Contractor] {
        try db.read { db in
            // Columns by position, in `contractor`'s order: a match reads a thousand rows.
            // A cursor decodes each row where it stands instead of copying every row first.
            let statement = try db.cachedStatement(sql: """
                SELECT contractors.account, contractors.active, contractors.skills, contractors.rate, contractors.area, contractors.bio
                FROM contractor_skills JOIN contractors USING (account_key)
                WHERE contractor_skills.skill = ? AND contractors.active
                """)
            return try Array(Row.fetchCursor(statement, arguments: [skill]).map(Self.contractor))
        }
    }

    private static func contractor(_ row: Row) -> Contractor {
        Contractor(account: row[0], active: row[1], skills: StoredForm.lines(row[2]), rate: row[3], area: StoredForm.lines(row[4]), bio: row[5])
    }

    // MARK: Requests

    public func insertRequest(_ r: ServiceRequest) throws -> ServiceRequest {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO service_requests (customer, customer_key, category, description, window, window_end, budget, place,
                  estimate, status, contractor, contractor_key, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: Self.arguments(of: r))
            var saved = r
            saved.id = db.lastInsertedRowID
            return saved
        }
    }

    public func updateRequest(_ r: ServiceRequest) throws {
        try db.write { db in
            try db.run(sql: """
                UPDATE service_requests SET customer = ?, customer_key = ?, category = ?, description = ?, window = ?,
                  window_end = ?, budget = ?, place = ?, estimate = ?, status = ?, contractor = ?, contractor_key = ?,
                  created_at = ?, updated_at = ?
                WHERE id = ?
                """, arguments: Self.arguments(of: r) + [r.id])
        }
    }

    private static func arguments(of r: ServiceRequest) -> StatementArguments {
        [r.customer, Account.key(r.customer), r.category, r.description, r.window, r.windowEnd.map(Millis.from), r.budget, r.place,
         r.estimate, r.status.rawValue, r.contractor, r.contractor.map(Account.key), Millis.from(r.createdAt), Millis.from(r.updatedAt)]
    }

    public func request(_ id: Int64) throws -> ServiceRequest? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM service_requests WHERE id = ?", arguments: [id]).map(Self.request)
        }
    }

    public func requests(_ filter: RequestFilter) throws -> [ServiceRequest] {
        let condition = StoredFilters.requests(filter)
        return try db.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM service_requests WHERE \(condition.text) ORDER BY id DESC LIMIT ? OFFSET ?",
                             arguments: condition.arguments + [filter.limit, filter.offset]).map(Self.request)
        }
    }

    public func countRequests(_ filter: RequestFilter) throws -> Int {
        let condition = StoredFilters.requests(filter)
        return try db.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM service_requests WHERE \(condition.text)", arguments: condition.arguments) ?? 0
        }
    }

    public func openRequests(endedBy time: Date) throws -> [ServiceRequest] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: """
                SELECT * FROM service_requests WHERE status = 'open' AND window_end IS NOT NULL AND window_end <= ? ORDER BY window_end
                """, arguments: [Millis.from(time)]).map(Self.request)
        }
    }

    public func nextRequestExpiry() throws -> Date? {
        try db.read { db in
            try Int64.fetchOne(cached: db, sql: """
                SELECT min(window_end) FROM service_requests WHERE status = 'open' AND window_end IS NOT NULL
                """).map(Millis.date)
        }
    }

    private static func request(_ row: Row) -> ServiceRequest {
        ServiceRequest(id: row["id"], customer: row["customer"], category: row["category"], description: row["description"],
                       window: row["window"], windowEnd: (row["window_end"] as Int64?).map(Millis.date), budget: row["budget"],
                       place: row["place"], estimate: row["estimate"],
                       status: ServiceRequest.Status(rawValue: row["status"]) ?? .open, contractor: row["contractor"],
                       createdAt: Millis.date(row["created_at"]), updatedAt: Millis.date(row["updated_at"]))
    }

    // MARK: Offers and reviews

    public func offers(on request: Int64) throws -> [Offer] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM offers WHERE request = ? ORDER BY price, at", arguments: [request]).map { row in
                Offer(request: row["request"], contractor: row["contractor"], price: row["price"], note: row["note"],
                      at: Millis.date(row["at"]))
            }
        }
    }

    public func saveOffer(_ o: Offer) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO offers (request, contractor_key, contractor, price, note, at) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT(request, contractor_key) DO UPDATE SET price = excluded.price, note = excluded.note, at = excluded.at
                """, arguments: [o.request, Account.key(o.contractor), o.contractor, o.price, o.note, Millis.from(o.at)])
        }
    }

    public func review(of request: Int64) throws -> Review? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM reviews WHERE request = ?", arguments: [request]).map { row in
                Review(request: row["request"], customer: row["customer"], contractor: row["contractor"], rating: row["rating"],
                       text: row["text"], reply: row["reply"], at: Millis.date(row["at"]))
            }
        }
    }

    public func saveReview(_ r: Review) throws {
        try db.write { db in
            try db.run(sql: """
                INSERT INTO reviews (request, customer, contractor, contractor_key, rating, text, reply, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(request) DO UPDATE SET reply = excluded.reply
                """, arguments: [r.request, r.customer, r.contractor, Account.key(r.contractor), r.rating, r.text, r.reply,
                                 Millis.from(r.at)])
        }
    }

    public func standing(of contractor: String) throws -> Standing {
        let key = Account.key(contractor)
        return try db.read { db in
            let row = try Row.fetchOne(cached: db, sql: "SELECT avg(rating), count(*) FROM reviews WHERE contractor_key = ?", arguments: [key])
            let completed = try Int.fetchOne(cached: db, sql: """
                SELECT count(*) FROM service_requests WHERE contractor_key = ? AND status = 'confirmed'
                """, arguments: [key]) ?? 0
            return Standing(average: row?[0], reviews: row?[1] ?? 0, completed: completed)
        }
    }

    // MARK: Events and rooms

    public func events(ofRequest request: Int64) throws -> [Event] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT \(Self.eventColumns) FROM events WHERE request = ? ORDER BY id",
                             arguments: [request]).map(Self.event)
        }
    }

    public func marketRooms() throws -> [String] {
        try db.read { db in try String.fetchAll(cached: db, sql: "SELECT room FROM room_settings WHERE market ORDER BY room") }
    }
}
