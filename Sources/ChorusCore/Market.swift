import Foundation

/// Someone who takes paid work through service requests: what they do, for how much, where.
public struct Contractor: Equatable, Sendable {
    /// The account's name.
    public var account: String
    /// False once they stop (`!contractor off`): they keep their profile and reviews, and are told of nothing.
    public var active: Bool
    /// Folded skill names (`plumbing`): a request's category is matched against them.
    public var skills: [String]
    /// Per hour, in cents.
    public var rate: Int?
    /// The places they serve, as typed; a request's place is matched against them.
    public var area: [String]
    public var bio: String

    public init(account: String, active: Bool = true, skills: [String] = [], rate: Int? = nil, area: [String] = [], bio: String = "") {
        self.account = account
        self.active = active
        self.skills = skills
        self.rate = rate
        self.area = area
        self.bio = bio
    }

    /// Whether they serve `place`: yes when either side leaves it open, or one names the other
    /// (`Elm Street` serves `Elm Street 12`).
    public func serves(_ place: String?) -> Bool {
        guard let place = place.map(Market.fold), !place.isEmpty, !area.isEmpty else { return true }
        return area.map(Market.fold).contains { !$0.isEmpty && (place.contains($0) || $0.contains(place)) }
    }
}

/// A customer's request for a hand, from posting to review.
public struct ServiceRequest: Equatable, Sendable {
    /// open → hired → done → confirmed or disputed; disputed → done again (put right), confirmed or
    /// cancelled; open or hired → cancelled; open → expired. Reviewed once confirmed or cancelled after a hire.
    public enum Status: String, Sendable, CaseIterable {
        case open, hired, done, confirmed, disputed, cancelled, expired

        /// Still going: an offer, a hire or the work may yet happen.
        public var isCurrent: Bool { self == .open || self == .hired || self == .done }
    }

    public var id: Int64
    public var customer: String
    /// Folded (`plumbing`).
    public var category: String
    public var description: String
    /// When the work may happen, as typed (`sat 9:00-12:00`), and when that window ends: an open
    /// request still without a hire then expires.
    public var window: String?
    public var windowEnd: Date?
    /// The most the customer will pay, in cents.
    public var budget: Int?
    public var place: String?
    /// How long the customer thinks it takes, as typed (`2h`).
    public var estimate: String?
    public var status: Status
    /// The hired contractor's account name.
    public var contractor: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: Int64 = 0, customer: String, category: String, description: String, window: String? = nil,
                windowEnd: Date? = nil, budget: Int? = nil, place: String? = nil, estimate: String? = nil,
                status: Status = .open, contractor: String? = nil, createdAt: Date, updatedAt: Date? = nil) {
        self.id = id
        self.customer = customer
        self.category = category
        self.description = description
        self.window = window
        self.windowEnd = windowEnd
        self.budget = budget
        self.place = place
        self.estimate = estimate
        self.status = status
        self.contractor = contractor
        self.createdAt = createdAt
        self.updatedAt = updatedAt ?? createdAt
    }

    public func isCustomer(_ account: String) -> Bool { Account.key(customer) == Account.key(account) }
    public func isHired(_ account: String) -> Bool { contractor.map { Account.key($0) == Account.key(account) } ?? false }
}

/// A contractor's price for a request: one per contractor, changed by offering again.
public struct Offer: Equatable, Sendable {
    public var request: Int64
    public var contractor: String
    /// In cents.
    public var price: Int
    public var note: String
    public var at: Date

    public init(request: Int64, contractor: String, price: Int, note: String = "", at: Date) {
        self.request = request
        self.contractor = contractor
        self.price = price
        self.note = note
        self.at = at
    }
}

/// The customer's word on a confirmed hire, and the contractor's one answer.
public struct Review: Equatable, Sendable {
    public var request: Int64
    public var customer: String
    public var contractor: String
    /// 1 to 5.
    public var rating: Int
    public var text: String
    public var reply: String?
    public var at: Date

    public init(request: Int64, customer: String, contractor: String, rating: Int, text: String, reply: String? = nil, at: Date) {
        self.request = request
        self.customer = customer
        self.contractor = contractor
        self.rating = rating
        self.text = text
        self.reply = reply
        self.at = at
    }
}

/// A contractor's standing: the average of their reviews and how many hires they completed.
public struct Standing: Equatable, Sendable {
    public var average: Double?
    public var reviews: Int
    public var completed: Int

    public init(average: Double?, reviews: Int, completed: Int) {
        self.average = average
        self.reviews = reviews
        self.completed = completed
    }

    /// `4.5★ (2 reviews)`, or `no reviews yet`.
    public var text: String {
        guard let average, reviews > 0 else { return "no reviews yet" }
        return String(format: "%.1f★ (%d review%@)", average, reviews, reviews == 1 ? "" : "s")
    }
}

/// Which requests a list asks for.
public struct RequestFilter: Equatable, Sendable {
    public enum Scope: Equatable, Sendable {
        /// Open requests in these categories (folded), not the asker's own.
        case open(categories: [String], except: String)
        /// The account's own: as customer, as hired contractor, or where they offered; current and past.
        case involving(String)
    }

    public var scope: Scope
    public var category: String?
    public var limit = 10
    public var offset = 0

    public init(scope: Scope, category: String? = nil) {
        self.scope = scope
        self.category = category
    }
}

/// What the market rules need from storage. Writes store the change only; the board stores its
/// events with `insertEvents` in the same transaction (the Workspace's).
public protocol MarketStore: Sendable {
    func contractor(_ account: String) throws -> Contractor?
    func saveContractor(_ contractor: Contractor) throws
    /// Active contractors with this skill (folded), from the skill index: never every contractor.
    func contractors(withSkill skill: String) throws -> [Contractor]

    func insertRequest(_ request: ServiceRequest) throws -> ServiceRequest
    func request(_ id: Int64) throws -> ServiceRequest?
    func updateRequest(_ request: ServiceRequest) throws
    /// Newest first.
    func requests(_ filter: RequestFilter) throws -> [ServiceRequest]
    func countRequests(_ filter: RequestFilter) throws -> Int
    /// Open requests whose window ended at or before `time`.
    func openRequests(endedBy time: Date) throws -> [ServiceRequest]
    /// When the first open request's window ends, nil if none has one.
    func nextRequestExpiry() throws -> Date?

    /// Cheapest first.
    func offers(on request: Int64) throws -> [Offer]
    func saveOffer(_ offer: Offer) throws

    func review(of request: Int64) throws -> Review?
    func saveReview(_ review: Review) throws
    func standing(of contractor: String) throws -> Standing

    /// The events of a request (its history and conversation), oldest first.
    func events(ofRequest request: Int64) throws -> [Event]
    /// Keys of rooms whose managers set `market on`: they hear every new request.
    func marketRooms() throws -> [String]
}

/// Words and numbers of the market, read and written one way.
public enum Market {
    /// The most a price, rate or budget may be, in cents: an absurd figure is a typo.
    public static let maxAmount = 100_000_000

    /// The usual trades: a request names one of these, or a skill some contractor offers.
    public static let categories = [
        "appliances", "assembly", "carpentry", "cleaning", "electrical", "flooring", "gardening", "handyman", "heating",
        "locksmith", "moving", "painting", "plumbing", "roofing", "tiling", "windows",
    ]

    /// `plumbing`, `Plumbing ` → `plumbing`.
    public static func fold(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A category or skill as stored, or nil when it is not one (no letter, too long, odd
    /// characters). Words are joined by hyphens (`lawn care` → `lawn-care`), so a skill of two
    /// words matches a category typed as one.
    public static func category(_ text: String) -> String? {
        let folded = fold(text).split(separator: " ").joined(separator: "-")
        guard (1...40).contains(folded.count), folded.contains(where: \.isLetter),
              folded.allSatisfy({ $0.isLetter || $0.isNumber || $0 == " " || $0 == "-" || $0 == "&" || $0 == "/" }) else { return nil }
        return folded
    }

    /// A currency as people write it after an amount: `80 EUR`, `80 euros`, `80€`.
    static let currencyWords = ["eur", "euro", "euros", "usd", "dollar", "dollars", "gbp", "pound", "pounds", "chf"]

    /// `45`, `45.5`, `45.50`, `€45`, `$45`, `45€`, `45 EUR`, `45 euros` → cents; nil for anything
    /// else, a negative, or more than `maxAmount`. The currency is the market's one: it is not kept.
    public static func amount(_ text: String) -> Int? {
        var t = text.trimmingCharacters(in: .whitespaces)
        if let first = t.first, "€$£".contains(first) { t.removeFirst() }
        if let last = t.last, "€$£".contains(last) { t.removeLast() }
        let letters = t.reversed().prefix(while: \.isLetter)
        if !letters.isEmpty, currencyWords.contains(String(letters.reversed()).lowercased()) {
            t = String(t.dropLast(letters.count)).trimmingCharacters(in: .whitespaces)
        }
        let parts = t.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].count <= 9, parts[0].allSatisfy(\.isASCII),
              let whole = Int(parts[0]), whole >= 0 else { return nil }
        var cents = whole * 100
        if parts.count == 2 {
            let frac = parts[1]
            guard (1...2).contains(frac.count), frac.allSatisfy({ $0.isASCII && $0.isNumber }), let f = Int(frac) else { return nil }
            cents += frac.count == 1 ? f * 10 : f
        }
        return cents <= maxAmount ? cents : nil
    }

    /// 4500 → `45`, 4550 → `45.50`.
    public static func money(_ cents: Int) -> String {
        cents % 100 == 0 ? String(cents / 100) : String(format: "%d.%02d", cents / 100, cents % 100)
    }
}
