import ChorusCore
import ChorusStore
import ChorusTestSupport
import Foundation
import XCTest

/// The marketplace's rules, each with a test that fails without it: who is told of a new request,
/// who may offer, hire, finish, confirm, review, cancel and write, and what each side sees.
final class MarketBoardTests: XCTestCase {
    var store: (any ChorusStorage)!
    var market: MarketBoard!
    var clock: Date = ISO8601DateFormatter().date(from: "2026-11-23T09:00:00Z")!

    override func setUpWithError() throws {
        store = try TestStore.fresh()
        let box = ClockBox(self)
        market = MarketBoard(store: store, now: { box.now })
        for name in ["ann", "bob", "cat", "dan", "eve"] {
            _ = try store.insertAccount(Account(name: name, passwordHash: "x", createdAt: clock))
        }
        // bob fixes pipes on Elm Street; cat paints anywhere; eve plumbs but stopped taking work.
        try contractor("bob", skills: "plumbing, electrical", area: ["Elm Street"])
        try contractor("cat", skills: "painting, plumbing", area: [])
        try contractor("eve", skills: "plumbing", area: [])
        _ = try market.setContractor(false, by: "eve")
    }

    /// The board reads the time through this, so a test can move it.
    final class ClockBox: @unchecked Sendable {
        weak var test: MarketBoardTests?
        init(_ test: MarketBoardTests) { self.test = test }
        var now: Date { test?.clock ?? Date() }
    }

    func contractor(_ name: String, skills: String, area: [String]) throws {
        _ = try market.setContractor(true, by: name)
        let parsed = try MarketBoard.skills(skills)
        _ = try market.updateContractor(by: name) { $0.skills = parsed; $0.area = area }
    }

    func post(_ category: String = "plumbing", by customer: String = "ann", place: String? = nil,
              ends: Date? = nil) throws -> (ServiceRequest, [Event], Int) {
        try market.post(ServiceRequest(customer: customer, category: category, description: "Fix the dripping tap",
                                       window: ends.map { _ in "sat" }, windowEnd: ends, budget: 8000, place: place, createdAt: clock),
                        by: customer)
    }

    func assertRefused(_ expression: @autoclosure () throws -> Any, _ error: JobError, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { XCTAssertEqual($0 as? JobError, error, file: file, line: line) }
    }

    // MARK: Posting

    func testAPostingReachesContractorsWithTheSkillWhoServeThePlace() throws {
        let (r, events, told) = try post(place: "Elm Street 12")
        XCTAssertEqual(r.status, .open)
        XCTAssertEqual(Set(events[0].concerns), ["bob", "cat"], "skill and area match; eve stopped; dan is no contractor")
        XCTAssertEqual(told, 2)
        XCTAssertEqual(events[0].data["request"], String(r.id))
        XCTAssertEqual(events[0].data["customer"], "ann")
        XCTAssertEqual(events[0].reach, .concerned, "told to those it concerns, not to a room")

        let (_, elsewhere, _) = try post(place: "Harbour Road 3")
        XCTAssertEqual(elsewhere[0].concerns, ["cat"], "bob serves Elm Street only; cat serves everywhere")
        let (_, painting, _) = try post("Painting")
        XCTAssertEqual(painting[0].concerns, ["cat"])
        let (_, own, ownTold) = try post(by: "bob")
        XCTAssertFalse(own[0].concerns.contains("bob"), "a contractor is not told of their own request")
        XCTAssertEqual(ownTold, 1, "nor counted among those told")
    }

    func testARoomThatHearsTheMarketGetsTheRequest() throws {
        try store.saveRoom(Room(name: "#Trades", createdAt: clock))
        var settings = RoomSettings()
        settings.market = true
        _ = try store.saveRoomSettings(settings, room: "#trades", event: Event(type: EventType.roomSettings, room: "#trades", job: nil,
                                                                              actor: "ann", at: clock))
        let (_, events, _) = try post("gardening")
        XCTAssertEqual(events.count, 2)
        XCTAssertEqual(events[1].room, "#trades")
        XCTAssertEqual(events[1].reach, .room, "the room hears it")
        XCTAssertTrue(events[1].concerns.isEmpty)
    }

    func testBadPostingsChangeNothing() throws {
        assertRefused(try post("123"), .invalid("“123” is not a category: letters, up to 40 characters, e.g. plumbing"))
        assertRefused(try market.post(ServiceRequest(customer: "ann", category: "plumbing", description: "  ", createdAt: clock), by: "ann"),
                      .invalid("Give a description"))
        assertRefused(try post(ends: clock.addingTimeInterval(-60)), .invalid("That window has already passed"))
        // `!request add Paint the hall`: the first word of the description is no category anybody works in.
        assertRefused(try post("Paint"), .invalid("“paint” is not a category here (painting?). Start with one of: " +
                                                  Market.categories.joined(separator: ", ") + ", or a skill a contractor offers"))
        XCTAssertEqual(try store.countRequests(RequestFilter(scope: .involving("ann"))), 0)
    }

    func testACategoryIsAUsualTradeOrAContractorsSkill() throws {
        assertRefused(try post("aquariums"), .invalid("“aquariums” is not a category here. Start with one of: " +
                                                      Market.categories.joined(separator: ", ") + ", or a skill a contractor offers"))
        try contractor("eve", skills: "aquariums", area: [])
        XCTAssertEqual(try post("aquariums").0.category, "aquariums")
    }

    func testAmountsAndCategoriesAreReadOneWay() {
        XCTAssertEqual(Market.amount("45"), 4500)
        XCTAssertEqual(Market.amount("45.5"), 4550)
        XCTAssertEqual(Market.amount("€45.05"), 4505)
        XCTAssertNil(Market.amount("-5"))
        XCTAssertNil(Market.amount("1e9"))
        XCTAssertNil(Market.amount("99999999999"), "absurd")
        XCTAssertNil(Market.amount("4.555"))
        XCTAssertNil(Market.amount(""))
        XCTAssertEqual(Market.money(4550), "45.50")
        XCTAssertEqual(Market.money(4500), "45")
        XCTAssertEqual(Market.amount("80 EUR"), 8000)
        XCTAssertEqual(Market.amount("80 euros"), 8000)
        XCTAssertEqual(Market.amount("80€"), 8000)
        XCTAssertEqual(Market.amount("79.50 usd"), 7950)
        XCTAssertNil(Market.amount("80 apples"))
        XCTAssertNil(Market.amount("EUR"))
        XCTAssertEqual(Market.category(" Lawn  Care "), "lawn-care")
        XCTAssertNil(Market.category("42"))
        XCTAssertNil(Market.category("pipes|drains"))
    }

    // MARK: Offers and the hire

    func testOnlyContractorsOfferOnceEachAndNotOnTheirOwn() throws {
        let (r, _, _) = try post()
        assertRefused(try market.offer(on: r.id, price: 5000, note: "", by: "dan"), .noSuchRequest(r.id))
        _ = try market.setContractor(true, by: "dan")
        let (first, event, replaced) = try market.offer(on: r.id, price: 5000, note: "soon", by: "dan")
        XCTAssertFalse(replaced)
        XCTAssertEqual(event.concerns, ["ann"], "the customer is told")
        XCTAssertEqual(event.data["price"], "50")
        let (_, _, again) = try market.offer(on: r.id, price: 4500, note: "", by: "dan")
        XCTAssertTrue(again)
        XCTAssertEqual(try store.offers(on: r.id).map(\.price), [4500], "one offer each: the second replaces the first")
        XCTAssertEqual(first.contractor, "dan")
        let (own, _, _) = try post(by: "bob")
        assertRefused(try market.offer(on: own.id, price: 100, note: "", by: "bob"), .notAllowed("You cannot offer on your own request"))
        assertRefused(try market.offer(on: r.id, price: 0, note: "", by: "bob"), .invalid("A price is more than 0 and at most 1000000"))
    }

    func testPricesAreSeenByTheCustomerAndEachOffererForTheirOwn() throws {
        let (r, _, _) = try post()
        _ = try market.offer(on: r.id, price: 7000, note: "", by: "bob")
        _ = try market.offer(on: r.id, price: 5500, note: "", by: "cat")
        XCTAssertEqual(try market.offers(on: r.id, by: "ann").map(\.contractor), ["cat", "bob"], "cheapest first")
        XCTAssertEqual(try market.offers(on: r.id, by: "bob").map(\.contractor), ["bob"])
        assertRefused(try market.offers(on: r.id, by: "dan"), .noSuchRequest(r.id))
        assertRefused(try market.offers(on: 999, by: "dan"), .noSuchRequest(999))
    }

    func testOnlyTheCustomerHiresAndOnlySomeoneWhoOffered() throws {
        let (r, _, _) = try post()
        _ = try market.offer(on: r.id, price: 7000, note: "", by: "bob")
        _ = try market.offer(on: r.id, price: 5500, note: "", by: "cat")
        assertRefused(try market.hire(on: r.id, "bob", by: "cat"), .notAllowed("Only the customer who posted request \(r.id) hires"))
        assertRefused(try market.hire(on: r.id, "eve", by: "ann"),
                      .invalid("eve has not offered on request \(r.id): !offers \(r.id) shows who has"))
        let (hired, offer, events) = try market.hire(on: r.id, "CAT", by: "ann")
        XCTAssertEqual(hired.status, .hired)
        XCTAssertEqual(hired.contractor, "cat")
        XCTAssertEqual(offer.price, 5500)
        XCTAssertEqual(events[0].concerns, ["cat"])
        XCTAssertEqual(events[1].concerns, ["bob"], "the others are told it went elsewhere")
        XCTAssertNil(events[1].data["contractor"], "without whom")
        assertRefused(try market.hire(on: r.id, "bob", by: "ann"), .invalid("Request \(r.id) is hired: only an open request is hired for"))
        assertRefused(try market.offer(on: r.id, price: 100, note: "", by: "bob"),
                      .invalid("Request \(r.id) is hired: offers are taken while it is open"))
    }

    // MARK: After the hire

    func hired() throws -> ServiceRequest {
        let (r, _, _) = try post()
        _ = try market.offer(on: r.id, price: 7000, note: "", by: "bob")
        return try market.hire(on: r.id, "bob", by: "ann").0
    }

    func testTheWorkIsFinishedByTheContractorAndConfirmedOrDisputedByTheCustomer() throws {
        let r = try hired()
        assertRefused(try market.confirm(r.id, by: "ann"), .invalid("Request \(r.id) is hired, not done or disputed"))
        assertRefused(try market.finish(r.id, by: "ann"), .notAllowed("Only the contractor hired for request \(r.id) does that"))
        let (done, told) = try market.finish(r.id, by: "bob")
        XCTAssertEqual(done.status, .done)
        XCTAssertEqual(told.concerns, ["ann"])
        assertRefused(try market.confirm(r.id, by: "bob"), .notAllowed("Only the customer who posted request \(r.id) does that"))
        assertRefused(try market.dispute(r.id, reason: " ", by: "ann"), .invalid("Give a reason"))
        let (disputed, event) = try market.dispute(r.id, reason: "still drips", by: "ann")
        XCTAssertEqual(disputed.status, .disputed)
        XCTAssertEqual(event.concerns, ["bob"])
        XCTAssertEqual(event.data["reason"], "still drips")
    }

    /// A dispute has its ways out: the contractor puts it right (done again, then confirmed), the
    /// customer confirms after all, or either side cancels; a settled hire can be reviewed.
    func testADisputeEndsInAFixAConfirmationOrACancellation() throws {
        let fixed = try hired()
        _ = try market.finish(fixed.id, by: "bob")
        _ = try market.dispute(fixed.id, reason: "still drips", by: "ann")
        assertRefused(try market.review(fixed.id, rating: 2, text: "meh", by: "ann"),
                      .invalid("Request \(fixed.id) is disputed: a hire is reviewed once it is settled (confirmed, or cancelled after the hire)"))
        assertRefused(try market.finish(fixed.id, by: "ann"), .notAllowed("Only the contractor hired for request \(fixed.id) does that"))
        let (again, told) = try market.finish(fixed.id, by: "bob")
        XCTAssertEqual(again.status, .done)
        XCTAssertEqual(told.concerns, ["ann"])
        XCTAssertEqual(try market.confirm(fixed.id, by: "ann").0.status, .confirmed)

        let accepted = try hired()
        _ = try market.finish(accepted.id, by: "bob")
        _ = try market.dispute(accepted.id, reason: "a scratch", by: "ann")
        XCTAssertEqual(try market.confirm(accepted.id, by: "ann").0.status, .confirmed, "the customer confirms after all")

        let dropped = try hired()
        _ = try market.finish(dropped.id, by: "bob")
        _ = try market.dispute(dropped.id, reason: "wrong part", by: "ann")
        assertRefused(try market.cancel(dropped.id, reason: "", by: "bob"), .invalid("Give a reason"))
        let (cancelled, event) = try market.cancel(dropped.id, reason: "no such part made", by: "bob")
        XCTAssertEqual(cancelled.status, .cancelled)
        XCTAssertEqual(event.concerns, ["ann"])
        XCTAssertEqual(try market.review(dropped.id, rating: 3, text: "honest", by: "ann").0.rating, 3, "a cancelled hire is settled")
    }

    func testAReviewIsTheCustomersOnceAfterConfirmingAndTheContractorAnswersOnce() throws {
        let r = try hired()
        assertRefused(try market.review(r.id, rating: 5, text: "great", by: "ann"),
                      .invalid("Request \(r.id) is hired: a hire is reviewed once it is settled (confirmed, or cancelled after the hire)"))
        _ = try market.finish(r.id, by: "bob")
        _ = try market.confirm(r.id, by: "ann")
        assertRefused(try market.review(r.id, rating: 6, text: "superb", by: "ann"), .invalid("A rating is 1 to 5"))
        assertRefused(try market.review(r.id, rating: 0, text: "awful", by: "ann"), .invalid("A rating is 1 to 5"))
        assertRefused(try market.review(r.id, rating: 5, text: "mine", by: "bob"), .notAllowed("Only the customer of request \(r.id) reviews it"))
        assertRefused(try market.review(r.id, rating: 5, text: "hi", by: "dan"), .noSuchRequest(r.id))
        let (review, event) = try market.review(r.id, rating: 4, text: "tidy", by: "ann")
        XCTAssertEqual(review.rating, 4)
        XCTAssertEqual(event.concerns, ["bob"])
        assertRefused(try market.review(r.id, rating: 5, text: "again", by: "ann"), .invalid("Request \(r.id) is already reviewed"))
        XCTAssertEqual(try market.standing(of: "bob"), Standing(average: 4, reviews: 1, completed: 1))
        let (answered, told) = try market.answerReview(r.id, text: "thanks", by: "bob")
        XCTAssertEqual(answered.reply, "thanks")
        XCTAssertEqual(told.concerns, ["ann"])
        assertRefused(try market.answerReview(r.id, text: "again", by: "bob"), .invalid("You have already answered the review of request \(r.id)"))
    }

    func testCancellingNeedsAReasonAndTellsTheOtherSide() throws {
        let (open, _, _) = try post()
        _ = try market.offer(on: open.id, price: 7000, note: "", by: "bob")
        assertRefused(try market.cancel(open.id, reason: "", by: "ann"), .invalid("Give a reason"))
        assertRefused(try market.cancel(open.id, reason: "mine now", by: "bob"),
                      .notAllowed("Only the customer cancels an open request; withdraw by not being hired"))
        let (cancelled, event) = try market.cancel(open.id, reason: "fixed it myself", by: "ann")
        XCTAssertEqual(cancelled.status, .cancelled)
        XCTAssertEqual(event.concerns, ["bob", "cat"], "those who offered, and the contractors it reaches, are told")

        let r = try hired()
        let (_, byContractor) = try market.cancel(r.id, reason: "ill", by: "bob")
        XCTAssertEqual(byContractor.concerns, ["ann"], "after the hire either side cancels; the other is told")
        assertRefused(try market.cancel(r.id, reason: "again", by: "ann"),
                      .invalid("Request \(r.id) is cancelled: only an open, hired or disputed request is cancelled"))
    }

    /// Those who offered (cat, a painter) and the contractors the request reaches (bob, a plumber
    /// on Elm Street: the request has no place) hear the change.
    func testOnlyTheCustomerEditsAnOpenRequestAndOfferersAndReachedContractorsAreTold() throws {
        let (r, _, _) = try post()
        _ = try market.offer(on: r.id, price: 7000, note: "", by: "cat")
        assertRefused(try market.edit(r.id, .budget(9000), by: "cat"), .notAllowed("Only the customer who posted request \(r.id) changes it"))
        let (edited, event) = try market.edit(r.id, .budget(9000), by: "ann")
        XCTAssertEqual(edited.budget, 9000)
        XCTAssertEqual(event.concerns, ["cat", "bob"])
        XCTAssertEqual(event.data["value"], "90")
        assertRefused(try market.edit(r.id, .category("!!"), by: "ann"), .invalid("“!!” is not a category: letters, up to 40 characters, e.g. plumbing"))
    }

    // MARK: Talk, history, expiry

    func testMessagesGoBetweenTheTwoPartiesAndStayWithThem() throws {
        let (r, _, _) = try post()
        _ = try market.offer(on: r.id, price: 7000, note: "", by: "bob")
        let question = try market.message(on: r.id, to: nil, text: "Which floor?", by: "bob")
        XCTAssertEqual(question.concerns, ["ann"])
        XCTAssertEqual(try market.message(on: r.id, to: nil, text: "Second", by: "ann").concerns, ["bob"], "one offerer: no name needed")
        _ = try market.offer(on: r.id, price: 6000, note: "", by: "cat")
        assertRefused(try market.message(on: r.id, to: nil, text: "Hello?", by: "ann"),
                      .invalid("Say whom: !request msg \(r.id) @nick <text> (cat, bob offered)"))
        XCTAssertEqual(try market.message(on: r.id, to: "cat", text: "Can you come at 9?", by: "ann").concerns, ["cat"])
        assertRefused(try market.message(on: r.id, to: nil, text: "hi", by: "dan"), .noSuchRequest(r.id))

        let (_, bobSees) = try market.history(r.id, by: "bob")
        XCTAssertEqual(bobSees.filter { $0.type == EventType.requestMessage }.map { $0.data["text"]! }, ["Which floor?", "Second"])
        let (_, catSees) = try market.history(r.id, by: "cat")
        XCTAssertEqual(catSees.filter { $0.type == EventType.requestMessage }.map { $0.data["text"]! }, ["Can you come at 9?"],
                       "a conversation is its two parties' only")
        XCTAssertFalse(catSees.contains { $0.type == EventType.requestOffered && $0.actor == "bob" }, "nor bob's price")
        let (_, annSees) = try market.history(r.id, by: "ann")
        XCTAssertEqual(annSees.first?.type, EventType.requestPosted)
        XCTAssertEqual(annSees.filter { $0.type == EventType.requestOffered }.count, 2)
    }

    func testAnOpenRequestWhoseWindowPassesExpiresAndItsCustomerIsTold() throws {
        let end = clock.addingTimeInterval(3600)
        let (r, _, _) = try post(ends: end)
        let (later, _, _) = try post(ends: end.addingTimeInterval(3600))
        let (hiredOne, _, _) = try post(ends: end)
        _ = try market.offer(on: hiredOne.id, price: 100, note: "", by: "bob")
        _ = try market.hire(on: hiredOne.id, "bob", by: "ann")
        XCTAssertEqual(try market.nextExpiry(), end)
        XCTAssertTrue(try market.expire().isEmpty, "not yet")
        clock = end
        let events = try market.expire()
        XCTAssertEqual(events.map { $0.data["request"] }, [String(r.id)], "only the open one whose window passed")
        XCTAssertEqual(events[0].type, EventType.requestExpired)
        XCTAssertEqual(events[0].concerns, ["ann"], "its customer is told")
        XCTAssertEqual(try store.request(r.id)?.status, .expired)
        XCTAssertEqual(try store.request(hiredOne.id)?.status, .hired)
        XCTAssertEqual(try market.nextExpiry(), later.windowEnd)
    }

    func testRequestsAreListedByScopeAndPaged() throws {
        for _ in 0..<12 { _ = try post() }
        _ = try post("painting", by: "dan")
        let (mine, total) = try market.list(.mine, category: nil, page: 2, by: "ann")
        XCTAssertEqual(total, 12)
        XCTAssertEqual(mine.count, 2, "10 a page")
        XCTAssertEqual(try market.list(.open, category: nil, page: 1, by: "bob").total, 12, "bob's skills: plumbing and electrical")
        XCTAssertEqual(try market.list(.all, category: "painting", page: 1, by: "bob").total, 1)
        assertRefused(try market.list(.open, category: nil, page: 1, by: "dan"),
                      .notAllowed("Only contractors browse open requests (!contractor on); !requests mine shows yours"))
    }
}
