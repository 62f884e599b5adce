import Foundation

/// The rules of service requests: who may post, offer, hire, finish, confirm, review and talk, the
/// status machine, who sees what, and the events each change makes. Like the other boards it reads,
/// decides and writes through the store of one Workspace transaction.
///
/// Every event of a request is for the people it concerns only (`direct`): there is no room to hear
/// it in, except the rooms that chose to hear new requests (`market on`), which get a copy of the
/// posting. Offers' prices reach the customer and each offerer for their own offer only.
public struct MarketBoard: Sendable {
    public let store: any Store & JobStore & MarketStore
    public let now: @Sendable () -> Date

    public init(store: any Store & JobStore & MarketStore, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.now = now
    }

    // MARK: Contractors

    /// `!contractor on|off`. Turning on keeps what was set before; turning off keeps it for later.
    public func setContractor(_ on: Bool, by actor: String) throws -> Contractor {
        var c = try store.contractor(actor) ?? Contractor(account: try name(of: actor), active: on)
        c.active = on
        try store.saveContractor(c)
        return c
    }

    /// Changes the actor's contractor profile (skills, rate, area, bio); only a contractor has one.
    public func updateContractor(by actor: String, _ change: (inout Contractor) throws -> Void) throws -> Contractor {
        guard var c = try store.contractor(actor), c.active else {
            throw JobError.notAllowed("Become a contractor first: !contractor on")
        }
        try change(&c)
        try store.saveContractor(c)
        return c
    }

    /// `plumbing, electrical` → folded skills, each checked; at most 20.
    public static func skills(_ text: String) throws -> [String] {
        var skills: [String] = []
        for word in text.split(separator: ",") where !word.trimmingCharacters(in: .whitespaces).isEmpty {
            guard let skill = Market.category(String(word)) else {
                throw JobError.invalid("“\(word.trimmingCharacters(in: .whitespaces))” is not a skill: letters, up to 40 characters")
            }
            if !skills.contains(skill) { skills.append(skill) }
        }
        guard !skills.isEmpty else { throw JobError.invalid("Name at least one skill, e.g. plumbing, electrical") }
        guard skills.count <= 20 else { throw JobError.invalid("At most 20 skills") }
        return skills
    }

    public func standing(of contractor: String) throws -> Standing {
        try store.standing(of: contractor)
    }

    // MARK: Posting and changing a request

    /// Posts a request: `draft` as its customer gives it (category, description, and whichever of
    /// window, budget, place and estimate); its number, customer, status and times are the board's.
    /// Contractors whose skills include its category and whose area serves its place are told (the
    /// skill index finds them; the customer is never told of their own), and every room that hears
    /// the market gets the posting. `told`: how many contractors.
    public func post(_ draft: ServiceRequest, by actor: String) throws -> (request: ServiceRequest, events: [Event], told: Int) {
        let category = try known(draft.category)
        let description = try Self.text(draft.description, what: "a description", max: 500)
        if let end = draft.windowEnd, end <= now() { throw JobError.invalid("That window has already passed") }
        var fresh = draft
        fresh.id = 0
        fresh.customer = try name(of: actor)
        fresh.category = category
        fresh.description = description
        fresh.status = .open
        fresh.contractor = nil
        fresh.createdAt = now()
        fresh.updatedAt = fresh.createdAt
        let request = try store.insertRequest(fresh)
        let customer = request.customer
        let matched = try contractorsReached(by: request)
        var data = facts(of: request)
        data["description"] = description
        var events = [event(EventType.requestPosted, request, by: customer, data: data, concerns: matched)]
        // The market rooms' copy is the room's to hear, not a direct line.
        for room in try store.marketRooms() {
            events.append(Event(type: EventType.requestPosted, room: room, job: nil, actor: customer, data: data, at: now()))
        }
        return (request, try store.insertEvents(events), matched.count)
    }

    /// A field of a request its customer may change while it is open.
    public enum Field: Sendable {
        case category(String)
        case description(String)
        case window(String, ends: Date?)
        case budget(Int?)
        case place(String?)
        case estimate(String?)
    }

    /// The customer changes an open request; those who offered and the contractors it reaches are told.
    public func edit(_ id: Int64, _ field: Field, by actor: String) throws -> (ServiceRequest, Event) {
        var r = try request(id, seenBy: actor)
        guard r.isCustomer(actor) else { throw JobError.notAllowed("Only the customer who posted request \(id) changes it") }
        guard r.status == .open else { throw JobError.invalid("Request \(id) is \(r.status.rawValue): only an open request is changed") }
        let name: String, value: String
        switch field {
        case .category(let text):
            let c = try known(text)
            r.category = c; name = "category"; value = c
        case .description(let text):
            r.description = try Self.text(text, what: "a description", max: 500); name = "description"; value = r.description
        case .window(let text, let end):
            if let end, end <= now() { throw JobError.invalid("That window has already passed") }
            r.window = text; r.windowEnd = end; name = "when"; value = text
        case .budget(let cents):
            r.budget = cents; name = "budget"; value = cents.map(Market.money) ?? "none"
        case .place(let text):
            r.place = text; name = "at"; value = text ?? "none"
        case .estimate(let text):
            r.estimate = text; name = "takes"; value = text ?? "none"
        }
        r.updatedAt = now()
        try store.updateRequest(r)
        var data = facts(of: r)
        data["field"] = name
        data["value"] = value
        // Those who offered, and the contractors it now reaches (as a posting would), hear the change.
        return (r, try record(EventType.requestEdited, r, by: actor, data: data, concerns: try offerers(of: r) + contractorsReached(by: r)))
    }

    /// The customer cancels an open request (those who offered, and the contractors it reaches,
    /// who may be about to offer, are told), or either party a hired one (the other is told). A
    /// reason is required: the other side deserves one.
    public func cancel(_ id: Int64, reason: String, by actor: String) throws -> (ServiceRequest, Event) {
        var r = try request(id, seenBy: actor)
        let why = try Self.text(reason, what: "a reason", max: 300)
        let concerns: [String]
        switch r.status {
        case .open:
            guard r.isCustomer(actor) else { throw JobError.notAllowed("Only the customer cancels an open request; withdraw by not being hired") }
            concerns = try offerers(of: r) + contractorsReached(by: r)
        case .hired, .disputed:
            guard r.isCustomer(actor) || r.isHired(actor) else { throw JobError.notAllowed("Only the customer and the hired contractor cancel request \(id)") }
            concerns = [r.isCustomer(actor) ? r.contractor! : r.customer]
        default:
            throw JobError.invalid("Request \(id) is \(r.status.rawValue): only an open, hired or disputed request is cancelled")
        }
        r.status = .cancelled
        r.updatedAt = now()
        try store.updateRequest(r)
        var data = facts(of: r)
        data["reason"] = why
        return (r, try record(EventType.requestCancelled, r, by: actor, data: data, concerns: concerns))
    }

    // MARK: Offers and the hire

    /// A contractor offers a price on an open request (not their own); offering again changes it.
    public func offer(on id: Int64, price: Int, note: String, by actor: String) throws -> (Offer, Event, replaced: Bool) {
        let r = try request(id, seenBy: actor)
        guard !r.isCustomer(actor) else { throw JobError.notAllowed("You cannot offer on your own request") }
        guard try store.contractor(actor)?.active == true else { throw JobError.notAllowed("Only contractors make offers: !contractor on") }
        guard r.status == .open else { throw JobError.invalid("Request \(id) is \(r.status.rawValue): offers are taken while it is open") }
        guard price > 0, price <= Market.maxAmount else { throw JobError.invalid("A price is more than 0 and at most \(Market.money(Market.maxAmount))") }
        let trimmed = note.trimmingCharacters(in: .whitespaces)
        guard trimmed.count <= 300 else { throw JobError.invalid("A note is at most 300 characters") }
        let contractor = try name(of: actor)
        let replaced = try store.offers(on: id).contains { Account.key($0.contractor) == Account.key(actor) }
        let offer = Offer(request: id, contractor: contractor, price: price, note: trimmed, at: now())
        try store.saveOffer(offer)
        var data = facts(of: r)
        data["contractor"] = contractor
        data["price"] = Market.money(price)
        if !trimmed.isEmpty { data["note"] = trimmed }
        if replaced { data["changed"] = "yes" }
        return (offer, try record(EventType.requestOffered, r, by: contractor, data: data, concerns: [r.customer]), replaced)
    }

    /// The offers on a request: all of them for its customer, their own for an offerer.
    public func offers(on id: Int64, by actor: String) throws -> [Offer] {
        let r = try request(id, seenBy: actor)
        let all = try store.offers(on: id)
        return r.isCustomer(actor) ? all : all.filter { Account.key($0.contractor) == Account.key(actor) }
    }

    /// The customer hires someone who offered. They are told; the others who offered are told it
    /// went to someone else (without whom).
    public func hire(on id: Int64, _ contractor: String, by actor: String) throws -> (ServiceRequest, Offer, [Event]) {
        var r = try request(id, seenBy: actor)
        guard r.isCustomer(actor) else { throw JobError.notAllowed("Only the customer who posted request \(id) hires") }
        guard r.status == .open else { throw JobError.invalid("Request \(id) is \(r.status.rawValue): only an open request is hired for") }
        let offers = try store.offers(on: id)
        guard let offer = offers.first(where: { Account.key($0.contractor) == Account.key(contractor) }) else {
            throw JobError.invalid("\(contractor) has not offered on request \(id): !offers \(id) shows who has")
        }
        r.status = .hired
        r.contractor = offer.contractor
        r.updatedAt = now()
        try store.updateRequest(r)
        var data = facts(of: r)
        data["price"] = Market.money(offer.price)
        var events = [event(EventType.requestHired, r, by: r.customer, data: data, concerns: [offer.contractor])]
        let others = offers.map(\.contractor).filter { Account.key($0) != Account.key(offer.contractor) }
        if !others.isEmpty {
            var elsewhere = facts(of: r)
            elsewhere["contractor"] = nil
            elsewhere["outcome"] = "taken"
            events.append(event(EventType.requestHired, r, by: r.customer, data: elsewhere, concerns: others))
        }
        return (r, offer, try store.insertEvents(events))
    }

    // MARK: After the hire

    /// The hired contractor says the work is finished, or, after a dispute, that it is put right;
    /// the customer is told.
    public func finish(_ id: Int64, by actor: String) throws -> (ServiceRequest, Event) {
        try move(id, from: [.hired, .disputed], to: .done, by: actor, type: EventType.requestDone, contractorActs: true)
    }

    /// The customer confirms the finished work (or, after a dispute, accepts it after all); the
    /// contractor is told, and may be reviewed.
    public func confirm(_ id: Int64, by actor: String) throws -> (ServiceRequest, Event) {
        try move(id, from: [.done, .disputed], to: .confirmed, by: actor, type: EventType.requestConfirmed, contractorActs: false)
    }

    /// The customer says the finished work is not right, and why; the contractor is told. A dispute
    /// ends when the contractor comes back (`finish` again), the customer confirms after all, or
    /// either side cancels.
    public func dispute(_ id: Int64, reason: String, by actor: String) throws -> (ServiceRequest, Event) {
        let why = try Self.text(reason, what: "a reason", max: 300)
        return try move(id, from: [.done], to: .disputed, by: actor, type: EventType.requestDisputed, contractorActs: false, reason: why)
    }

    private func move(_ id: Int64, from: Set<ServiceRequest.Status>, to: ServiceRequest.Status, by actor: String, type: String,
                      contractorActs: Bool, reason: String? = nil) throws -> (ServiceRequest, Event) {
        var r = try request(id, seenBy: actor)
        if contractorActs {
            guard r.isHired(actor) else { throw JobError.notAllowed("Only the contractor hired for request \(id) does that") }
        } else {
            guard r.isCustomer(actor) else { throw JobError.notAllowed("Only the customer who posted request \(id) does that") }
        }
        guard from.contains(r.status) else {
            let expected = ServiceRequest.Status.allCases.filter(from.contains).map(\.rawValue).joined(separator: " or ")
            throw JobError.invalid("Request \(id) is \(r.status.rawValue), not \(expected)")
        }
        r.status = to
        r.updatedAt = now()
        try store.updateRequest(r)
        var data = facts(of: r)
        if let reason { data["reason"] = reason }
        let other = contractorActs ? r.customer : r.contractor!
        return (r, try record(type, r, by: actor, data: data, concerns: [other]))
    }

    /// The customer of a confirmed hire rates it, once; the contractor is told.
    public func review(_ id: Int64, rating: Int, text: String, by actor: String) throws -> (Review, Event) {
        let r = try request(id, seenBy: actor)
        guard r.isCustomer(actor) else { throw JobError.notAllowed("Only the customer of request \(id) reviews it") }
        // Settled: confirmed, or cancelled after the hire (a dispute that ended there, or a hire
        // that fell through): the customer has something to say either way.
        guard r.status == .confirmed || r.status == .cancelled, let contractor = r.contractor else {
            throw JobError.invalid("Request \(id) is \(r.status.rawValue): a hire is reviewed once it is settled (confirmed, or cancelled after the hire)")
        }
        guard (1...5).contains(rating) else { throw JobError.invalid("A rating is 1 to 5") }
        guard try store.review(of: id) == nil else { throw JobError.invalid("Request \(id) is already reviewed") }
        let words = try Self.text(text, what: "a few words", max: 500)
        let review = Review(request: id, customer: r.customer, contractor: contractor, rating: rating, text: words, at: now())
        try store.saveReview(review)
        var data = facts(of: r)
        data["rating"] = String(rating)
        data["text"] = words
        return (review, try record(EventType.requestReviewed, r, by: r.customer, data: data, concerns: [contractor]))
    }

    /// The reviewed contractor answers the review, once; the customer is told.
    public func answerReview(_ id: Int64, text: String, by actor: String) throws -> (Review, Event) {
        let r = try request(id, seenBy: actor)
        guard r.isHired(actor) else { throw JobError.notAllowed("Only the reviewed contractor answers a review") }
        guard var review = try store.review(of: id) else { throw JobError.invalid("Request \(id) has no review to answer yet") }
        guard review.reply == nil else { throw JobError.invalid("You have already answered the review of request \(id)") }
        review.reply = try Self.text(text, what: "an answer", max: 500)
        try store.saveReview(review)
        var data = facts(of: r)
        data["reply"] = review.reply
        return (review, try record(EventType.requestReviewed, r, by: review.contractor, data: data, concerns: [r.customer]))
    }

    // MARK: Talking and reading

    /// A message to the other party: the customer to someone who offered (named, unless only one
    /// did) or, after the hire, to the hired contractor; an offerer or the hired contractor to the
    /// customer. Kept with the request for the two of them.
    public func message(on id: Int64, to named: String?, text: String, by actor: String) throws -> Event {
        let r = try request(id, seenBy: actor)
        let words = try Self.text(text, what: "a message", max: 400)
        let to: String
        if r.isCustomer(actor) {
            if let contractor = r.contractor, r.status != .open {
                if let named, Account.key(named) != Account.key(contractor) {
                    throw JobError.invalid("Request \(id) went to \(contractor): messages go to them")
                }
                to = contractor
            } else {
                let offerers = try offerers(of: r)
                if let named {
                    guard let found = offerers.first(where: { Account.key($0) == Account.key(named) }) else {
                        throw JobError.invalid("\(named) has not offered on request \(id): you write to those who did")
                    }
                    to = found
                } else {
                    guard offerers.count == 1 else {
                        throw JobError.invalid(offerers.isEmpty ? "Nobody has offered on request \(id) yet"
                                                                : "Say whom: !request msg \(id) @nick <text> (\(offerers.joined(separator: ", ")) offered)")
                    }
                    to = offerers[0]
                }
            }
        } else if try r.isHired(actor) || (r.status == .open && offerers(of: r).contains(where: { Account.key($0) == Account.key(actor) })) {
            to = r.customer
        } else {
            throw JobError.notAllowed("Only the customer and those who offered (the hired contractor, after the hire) write about request \(id)")
        }
        var data = facts(of: r)
        data["to"] = to
        data["text"] = words
        return try record(EventType.requestMessage, r, by: try name(of: actor), data: data, concerns: [to])
    }

    /// A request with the events of it the actor may read (those they made or were told of),
    /// oldest first: its history and their conversation. The customer's "went to someone else",
    /// written for the others who offered, is not part of theirs.
    public func history(_ id: Int64, by actor: String) throws -> (ServiceRequest, [Event]) {
        let r = try request(id, seenBy: actor)
        let key = Account.key(actor)
        let events = try store.events(ofRequest: id).filter { e in
            guard e.room == nil else { return false }
            if e.data["outcome"] == "taken" { return e.concerns.contains { Account.key($0) == key } }
            return Account.key(e.actor) == key || e.concerns.contains { Account.key($0) == key }
        }
        return (r, events)
    }

    /// A request the actor may see: its customer, those who offered, the hired contractor, and,
    /// while it is open, every contractor. Anyone else is told there is no such request, as if it
    /// did not exist.
    public func request(_ id: Int64, seenBy actor: String) throws -> ServiceRequest {
        guard let r = try store.request(id) else { throw JobError.noSuchRequest(id) }
        if r.isCustomer(actor) || r.isHired(actor) { return r }
        if r.status == .open, try store.contractor(actor)?.active == true { return r }
        if try store.offers(on: id).contains(where: { Account.key($0.contractor) == Account.key(actor) }) { return r }
        throw JobError.noSuchRequest(id)
    }

    /// Lists requests: open ones in the actor's skills (`open`), in every category (`all`), or
    /// their own (`mine`); paged, newest first. Only contractors browse open requests.
    public func list(_ scope: ListScope, category: String?, page: Int, by actor: String) throws -> (requests: [ServiceRequest], total: Int) {
        var filter: RequestFilter
        switch scope {
        case .mine:
            filter = RequestFilter(scope: .involving(actor))
        case .open, .all:
            guard let c = try store.contractor(actor), c.active else {
                throw JobError.notAllowed("Only contractors browse open requests (!contractor on); !requests mine shows yours")
            }
            let categories = category.map { [$0] } ?? (scope == .open ? c.skills : [])
            if scope == .open && categories.isEmpty { throw JobError.invalid("Set your skills first: !contractor skills plumbing, painting") }
            filter = RequestFilter(scope: .open(categories: categories, except: actor))
        }
        if let category {
            guard let c = Market.category(category) else { throw JobError.invalid("“\(category)” is not a category") }
            filter.category = c
        }
        filter.offset = (max(page, 1) - 1) * filter.limit
        return (try store.requests(filter), try store.countRequests(filter))
    }

    public enum ListScope: Sendable { case open, all, mine }

    // MARK: What comes due

    /// Open requests whose window has passed without a hire expire; the customer and those who
    /// offered are told.
    public func expire() throws -> [Event] {
        var events: [Event] = []
        for var r in try store.openRequests(endedBy: now()) {
            r.status = .expired
            r.updatedAt = now()
            try store.updateRequest(r)
            // Nobody acted: the customer is told as well as those who offered.
            events.append(event(EventType.requestExpired, r, by: r.customer, data: facts(of: r),
                                concerns: try offerers(of: r), tellingActor: true))
        }
        return events.isEmpty ? [] : try store.insertEvents(events)
    }

    public func nextExpiry() throws -> Date? {
        try store.nextRequestExpiry()
    }

    // MARK: Helpers

    /// A category as stored, when it is one people work in: a usual trade, or a contractor's skill.
    /// Anything else was most likely the description's first word (`!request add Paint the hall`),
    /// and would have reached nobody.
    private func known(_ typed: String) throws -> String {
        guard let category = Market.category(typed) else {
            throw JobError.invalid("“\(typed)” is not a category: letters, up to 40 characters, e.g. plumbing")
        }
        if try Market.categories.contains(category) || !(store.contractors(withSkill: category)).isEmpty { return category }
        let near = Market.categories.first { $0.hasPrefix(category) || category.hasPrefix($0) }
        throw JobError.invalid("“\(category)” is not a category here" + (near.map { " (\($0)?)" } ?? "") +
                               ". Start with one of: \(Market.categories.joined(separator: ", ")), or a skill a contractor offers")
    }

    private func name(of account: String) throws -> String {
        try store.account(named: account)?.name ?? account
    }

    private func offerers(of r: ServiceRequest) throws -> [String] {
        try store.offers(on: r.id).map(\.contractor)
    }

    /// The active contractors whose skills include the request's category and whose area serves
    /// its place (the skill index finds them), its customer never among them.
    private func contractorsReached(by r: ServiceRequest) throws -> [String] {
        try store.contractors(withSkill: r.category).filter { $0.active && !r.isCustomer($0.account) && $0.serves(r.place) }.map(\.account)
    }

    /// A notice about a request held for someone offline, as it reads at their login: with what
    /// the request is now (its status, and for a posting its fields as edited since), or nothing
    /// when a posting or an edit is of a request no longer open (cancelled, hired, expired) or gone,
    /// or when it is the cancellation of an open request and they had not offered (`offered`).
    public static func asNow(_ held: Event, request: ServiceRequest?, offered: () throws -> Bool) rethrows -> Event? {
        guard held.type.hasPrefix("request.") else { return held }
        guard let request else { return nil }
        var now = held
        if held.type == EventType.requestPosted || held.type == EventType.requestEdited {
            // News of an open request: stale once it is no longer open (a cancel says so to those
            // who offered); a posting shows the fields as edited since.
            guard request.status == .open else { return nil }
            if held.type == EventType.requestPosted {
                now.data = facts(of: request)
                now.data["description"] = request.description
            }
        } else if held.type == EventType.requestCancelled, request.contractor == nil, try !offered() {
            // To a contractor who was only told of it, an open request's end is as stale as its posting.
            return nil
        } else {
            now.data["status"] = request.status.rawValue
        }
        return now
    }

    /// What every event of a request carries, for people's sentences and bots' tags.
    private func facts(of r: ServiceRequest) -> [String: String] { Self.facts(of: r) }

    private static func facts(of r: ServiceRequest) -> [String: String] {
        var data = ["request": String(r.id), "customer": r.customer, "category": r.category, "status": r.status.rawValue]
        if let contractor = r.contractor { data["contractor"] = contractor }
        if let budget = r.budget { data["budget"] = Market.money(budget) }
        if let place = r.place { data["at"] = place }
        if let window = r.window { data["when"] = window }
        if let estimate = r.estimate { data["takes"] = estimate }
        return data
    }

    /// A request's event, for the people it concerns only: the actor, who gets the command's
    /// answer, is not told again unless `tellingActor` (a change nobody typed).
    private func event(_ type: String, _ r: ServiceRequest, by actor: String, data: [String: String], concerns: [String],
                       tellingActor: Bool = false) -> Event {
        // A posting may concern a thousand contractors: a set keeps this linear.
        var seen: Set<String> = [Account.key(actor)]
        var told: [String] = tellingActor ? [actor] : []
        for c in concerns where seen.insert(Account.key(c)).inserted {
            told.append(c)
        }
        return Event(type: type, room: nil, job: nil, actor: actor, data: data, at: now(), concerns: told, reach: .concerned)
    }

    private func record(_ type: String, _ r: ServiceRequest, by actor: String, data: [String: String], concerns: [String]) throws -> Event {
        try store.insertEvents([event(type, r, by: actor, data: data, concerns: concerns)])[0]
    }

    /// Trimmed text that is there and not too long.
    static func text(_ text: String, what: String, max: Int) throws -> String {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { throw JobError.invalid("Give \(what)") }
        guard t.count <= max else { throw JobError.invalid("At most \(max) characters for \(what)") }
        return t
    }
}
