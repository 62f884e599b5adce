import ChorusCore
import ChorusWorkspace
import Foundation

/// Service requests: contractors, requests, offers, the hire, reviews. The bot reads the words and
/// writes the answers; `MarketBoard` decides.
extension Bot {
    // MARK: !contractor

    func contractor(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!contractor on|off | !contractor skills <skill>, … | !contractor rate <per hour> | !contractor area <place>, …|anywhere | !contractor bio <text>"
        guard let sub = args.next()?.lowercased() else {
            guard let c = try market.store.contractor(inv.account) else {
                return Outcome(replies: ["You are not a contractor. !contractor on makes you one; then set your skills, rate and area."])
            }
            return Outcome(replies: try contractorLines(c))
        }
        let market = self.market
        let c: Contractor
        switch sub {
        case "on":
            c = try market.setContractor(true, by: inv.account)
            let next = c.skills.isEmpty ? " Next: !contractor skills plumbing, painting (what you do) and !contractor rate 45." : ""
            return Outcome(replies: ["You are a contractor: requests in your skills reach you.\(next)"])
        case "off":
            _ = try market.setContractor(false, by: inv.account)
            return Outcome(replies: ["You are no longer a contractor: no requests reach you. Your profile and reviews are kept."])
        case "skills", "skill":
            let skills = try MarketBoard.skills(args.rest())
            c = try market.updateContractor(by: inv.account) { $0.skills = skills }
        case "rate":
            let word = try args.word("rate", usage: usage)
            guard let cents = Market.amount(word), cents > 0 else { throw UsageError(Self.notAnAmount(word)) }
            c = try market.updateContractor(by: inv.account) { $0.rate = cents }
        case "area":
            // Like skills, an area is named: nothing typed is a mistake, not "everywhere".
            let typed = args.rest()
            guard !typed.isEmpty else {
                throw UsageError("Name the places you serve (!contractor area Elm Street, Harbour Road), or !contractor area anywhere")
            }
            let anywhere = ["anywhere", "everywhere", "none"].contains(typed.lowercased())
            let places = anywhere ? [] : typed.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard places.count <= 20, places.allSatisfy({ $0.count <= 60 }) else { throw UsageError("At most 20 places of 60 characters") }
            c = try market.updateContractor(by: inv.account) { $0.area = places }
        case "bio":
            let bio = args.rest()
            guard bio.count <= 300 else { throw UsageError("A bio is at most 300 characters") }
            c = try market.updateContractor(by: inv.account) { $0.bio = bio }
        default:
            throw UsageError("Usage: \(usage)")
        }
        return Outcome(replies: ["Saved."] + (try contractorLines(c)))
    }

    /// A contractor's profile lines, as `!contractor` and `!profile` show them.
    func contractorLines(_ c: Contractor) throws -> [String] {
        let standing = try market.standing(of: c.account)
        var lines = ["  contractor\(c.active ? "" : " (not taking requests)"): " +
                     (c.skills.isEmpty ? "no skills set" : c.skills.joined(separator: ", ")) +
                     (c.rate.map { " · \(Market.money($0)) an hour" } ?? "")]
        if !c.area.isEmpty { lines.append("  serves: " + c.area.joined(separator: ", ")) }
        if !c.bio.isEmpty { lines.append("  \(c.bio)") }
        lines.append("  rating: \(standing.text) · \(standing.completed) hire\(standing.completed == 1 ? "" : "s") completed")
        return lines
    }

    static func notAnAmount(_ word: String) -> String {
        "“\(word)” is not an amount: a number like 80 or 79.50, more than 0 and at most \(Market.money(Market.maxAmount))"
    }

    // MARK: !request

    func request(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!request add <category> <description> [| when …] [| budget …] [| at …] [| takes …] | !request show|edit|cancel|done|confirm|dispute|msg <n> …"
        let sub = try args.word("what to do (add, show, edit, cancel, done, confirm, dispute, msg)", usage: usage).lowercased()
        let market = self.market
        let me = inv.account
        switch sub {
        case "add", "new", "post":
            return try postRequest(inv, args.rest())
        case "show":
            let n = try number(&args, usage: "!request show <n>")
            return Outcome(replies: try showRequest(n, inv))
        case "edit":
            let n = try number(&args, usage: "!request edit <n> <field> <value>")
            let field = try self.field(&args, inv)
            let (r, event) = try market.edit(n, field, by: me)
            return Outcome(replies: ["Request \(n) changed: " + summary(r, inv)], events: [event])
        case "cancel":
            let n = try number(&args, usage: "!request cancel <n> <reason>")
            let (_, event) = try market.cancel(n, reason: args.rest(), by: me)
            return Outcome(replies: ["Request \(n) is cancelled\(told(event))."], events: [event])
        case "done", "finished":
            let n = try number(&args, usage: "!request done <n>")
            let (_, event) = try market.finish(n, by: me)
            return Outcome(replies: ["Request \(n) is done\(told(event)): they confirm it or say what is wrong."], events: [event])
        case "confirm":
            let n = try number(&args, usage: "!request confirm <n>")
            let (r, event) = try market.confirm(n, by: me)
            return Outcome(replies: ["Request \(n) is confirmed. How did \(r.contractor ?? "they") do? !review \(n) <1-5> <a few words>"],
                           events: [event])
        case "dispute":
            let n = try number(&args, usage: "!request dispute <n> <reason>")
            let (_, event) = try market.dispute(n, reason: args.rest(), by: me)
            return Outcome(replies: ["Request \(n) is disputed\(told(event))."], events: [event])
        case "msg", "message", "tell":
            let n = try number(&args, usage: "!request msg <n> [@nick] <text>")
            var to: String?
            if let first = args.peek, first.hasPrefix("@") {
                _ = args.next()
                to = String(first.dropFirst())
            }
            let event = try market.message(on: n, to: to, text: args.rest(), by: me)
            return Outcome(replies: ["Sent to \(event.concerns.first ?? "them") about request \(n)."], events: [event])
        default:
            throw UsageError("Usage: \(usage)")
        }
    }

    /// `plumbing Fix the tap | when sat 9:00-12:00 | budget 80 | at Elm Street 12 | takes 2h`: the
    /// `|` parts are the fields, so "when" or "budget" inside the description are just words.
    private func postRequest(_ inv: Invocation, _ text: String) throws -> Outcome {
        let usage = "!request add <category> <description> [| when <window>] [| budget <max>] [| at <place>] [| takes <estimate>]"
        var parts = text.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let head = parts.removeFirst()
        guard let space = head.firstIndex(of: " ") else {
            throw UsageError(head.isEmpty ? "Say what you need. Usage: \(usage)" : "Describe the work after the category. Usage: \(usage)")
        }
        var posting = ServiceRequest(customer: inv.account, category: String(head[..<space]), description: String(head[space...]),
                                     createdAt: inv.now)
        var seen = Set<String>()
        for part in parts {
            let key = part.prefix(while: { $0 != " " }).lowercased()
            let value = part.dropFirst(key.count).trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else {
                throw UsageError(part.isEmpty ? "An empty field between two |. Usage: \(usage)" : "Give a value after “\(key)”. Usage: \(usage)")
            }
            let name = ["due": "when", "where": "at", "place": "at", "estimate": "takes", "max": "budget"][key] ?? key
            guard seen.insert(name).inserted else { throw UsageError("“\(name)” is given twice") }
            switch name {
            case "when":
                let (shown, end) = try window(value, inv)
                posting.window = shown
                posting.windowEnd = end
            case "budget":
                guard let cents = Market.amount(value), cents > 0 else { throw UsageError(Self.notAnAmount(value)) }
                posting.budget = cents
            case "at":
                guard value.count <= 100 else { throw UsageError("A place is at most 100 characters") }
                posting.place = value
            case "takes":
                guard value.count <= 40 else { throw UsageError("An estimate is at most 40 characters, e.g. 2h") }
                posting.estimate = value
            default:
                throw UsageError("Unknown field “\(key)”: the fields are when, budget, at and takes. Usage: \(usage)")
            }
        }
        let (r, events, told) = try market.post(posting, by: inv.account)
        let reach = told == 0 ? "no contractor has that skill yet; it waits for offers"
                              : "\(told) contractor\(told == 1 ? " was" : "s were") told"
        return Outcome(replies: ["Request \(r.id) posted: \(summary(r, inv)). \(reach.prefix(1).uppercased() + reach.dropFirst()). !offers \(r.id) shows the offers."],
                       events: events)
    }

    /// A window as typed, read: when it ends (`sat 9:00-12:00` at 12:00 on Saturday, `tomorrow` at
    /// the end of the day, `fri 17:00` then) and how it is shown from now on (`Sat 28 Nov 9:00-12:00`,
    /// not a `tomorrow` that would be wrong tomorrow).
    func window(_ text: String, _ inv: Invocation) throws -> (text: String, end: Date) {
        let when = self.when(inv)
        var words = text.lowercased().split(separator: " ").map(String.init)
        var end: String?
        var range: String?
        if let i = words.firstIndex(where: { $0.contains("-") && $0.contains(":") }) {
            range = words.remove(at: i)
            let parts = range!.split(separator: "-").map(String.init)
            guard parts.count == 2, let from = When.time(parts[0]), let to = When.time(parts[1]) else {
                throw UsageError("“\(text)” is not a window: a day and hours, e.g. sat 9:00-12:00")
            }
            guard from.0 * 60 + from.1 < to.0 * 60 + to.1 else { throw UsageError("A window ends after it starts: \(text)") }
            end = parts[1]
        } else if !words.contains(where: { When.time($0) != nil }) {
            end = "23:59"  // a day without hours ends with the day
        }
        let phrase = (words + (end.map { [$0] } ?? [])).joined(separator: " ")
        guard case .date(let date)? = when.parse(phrase, now: inv.now) else {
            throw UsageError("“\(text)” is not a window: a day and hours, e.g. sat 9:00-12:00, tomorrow, 2026-12-05")
        }
        guard date > inv.now else { throw UsageError("That window has already passed: \(text)") }
        let shown = when.format(date, now: inv.now)  // `Sat 28 Nov 12:00`
        let day = shown.split(separator: " ").dropLast().joined(separator: " ")
        if let range, end != "23:59" { return ("\(day) \(range)", date) }
        return (end == "23:59" ? day : shown, date)
    }

    private func field(_ args: inout Args, _ inv: Invocation) throws -> MarketBoard.Field {
        let usage = "!request edit <n> category|description|when|budget|at|takes <value>"
        let name = try args.word("field", usage: usage).lowercased()
        let value = args.rest()
        let none = value.lowercased() == "none" || value.isEmpty
        switch name {
        case "category": return .category(value)
        case "description", "text": return .description(value)
        case "when", "due", "window":
            guard !value.isEmpty else { throw UsageError("Give the window, e.g. sat 9:00-12:00") }
            let (shown, end) = try window(value, inv)
            return .window(shown, ends: end)
        case "budget", "max":
            if none { return .budget(nil) }
            guard let cents = Market.amount(value), cents > 0 else { throw UsageError(Self.notAnAmount(value)) }
            return .budget(cents)
        case "at", "where", "place":
            guard value.count <= 100 else { throw UsageError("A place is at most 100 characters") }
            return .place(none ? nil : value)
        case "takes", "estimate":
            guard value.count <= 40 else { throw UsageError("An estimate is at most 40 characters") }
            return .estimate(none ? nil : value)
        default:
            throw UsageError("You can change category, description, when, budget, at or takes. Usage: \(usage)")
        }
    }

    private func showRequest(_ n: Int64, _ inv: Invocation) throws -> [String] {
        let market = self.market
        let (r, events) = try market.history(n, by: inv.account)
        let t = text(inv)
        var lines = ["Request \(r.id) [\(r.status.rawValue)] \(r.category): \(r.description)"]
        var facts = ["by \(r.customer) \(t.short(r.createdAt))"]
        if let hire = hireText(r, inv) { facts.append(hire) }
        if let window = r.window { facts.append("when \(window)") }
        if let budget = r.budget { facts.append("budget \(Market.money(budget))") }
        if let place = r.place { facts.append("at \(place)") }
        if let estimate = r.estimate { facts.append("takes \(estimate)") }
        lines.append("  " + facts.joined(separator: " · "))
        let offers = try market.offers(on: n, by: inv.account)
        if !offers.isEmpty {
            lines.append(r.isCustomer(inv.account) ? "  Offers (\(offers.count)):" : "  Your offer:")
            for o in offers { lines.append("    " + offerLine(o, standing: try market.standing(of: o.contractor))) }
        }
        if let review = try market.store.review(of: n), r.isCustomer(inv.account) || r.isHired(inv.account) {
            lines.append("  Review: \(review.rating)/5 \(review.text)" + (review.reply.map { " — \(review.contractor): \($0)" } ?? ""))
        }
        let history = events.filter { $0.type != EventType.requestMessage }
        let talk = events.filter { $0.type == EventType.requestMessage }
        if !history.isEmpty {
            lines.append("  History:")
            for e in history { lines.append("    \(t.short(e.at)) \(t.line(e, hints: false))") }
        }
        if !talk.isEmpty {
            lines.append("  Messages:")
            for e in talk { lines.append("    \(t.short(e.at)) \(e.actor) → \(e.data["to"] ?? "?"): \(e.data["text"] ?? "")") }
        }
        return lines
    }

    // MARK: !requests, !offer, !offers, !hire, !review

    func requests(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        var scope: MarketBoard.ListScope?
        var category: String?
        var page = 1
        while let word = args.next() {
            let lower = word.lowercased()
            switch lower {
            case "open": scope = .open
            case "all": scope = .all
            case "mine", "my": scope = .mine
            default:
                if lower.hasPrefix("page:") {
                    guard let n = Int(lower.dropFirst(5)), n >= 1, n <= 10_000 else { throw UsageError("“\(word)” is not a page: page:2") }
                    page = n
                } else {
                    guard category == nil else { throw UsageError("One category at a time. Usage: !requests [open|all|mine] [category] [page:<n>]") }
                    category = word
                }
            }
        }
        let isContractor = try market.store.contractor(inv.account)?.active == true
        let chosen = scope ?? (isContractor ? .open : .mine)
        let (list, total) = try market.list(chosen, category: category, page: page, by: inv.account)
        let title: String
        switch chosen {
        case .open: title = "Open requests in your skills"
        case .all: title = "Open requests"
        case .mine: title = "Your requests"
        }
        guard !list.isEmpty else {
            if page > 1 { return Outcome(replies: ["\(title): no page \(page) (\(total) in all)."]) }
            return Outcome(replies: ["\(title)\(category.map { " in \($0)" } ?? ""): none."])
        }
        let pages = (total + 9) / 10
        var lines = ["\(title)\(category.map { " in \($0)" } ?? "") (\(total)\(pages > 1 ? ", page \(page) of \(pages)" : "")):"]
        lines += list.map { "  " + summary($0, inv, mine: chosen == .mine) }
        if page < pages { lines.append("  More: !requests \(chosen == .open ? "open" : chosen == .all ? "all" : "mine")\(category.map { " \($0)" } ?? "") page:\(page + 1)") }
        return Outcome(replies: lines)
    }

    func offer(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!offer <n> <price> [note]"
        let n = try number(&args, usage: usage)
        let word = try args.word("price", usage: usage)
        guard let cents = Market.amount(word), cents > 0 else { throw UsageError(Self.notAnAmount(word)) }
        let (offer, event, replaced) = try market.offer(on: n, price: cents, note: args.rest(), by: inv.account)
        let price = Market.money(offer.price), customer = event.concerns.first ?? "the customer"
        return Outcome(replies: [replaced ? "Your offer on request \(n) is now \(price); \(customer) is told."
                                          : "You offered \(price) on request \(n); \(customer) is told."],
                       events: [event])
    }

    func offers(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let n = try number(&args, usage: "!offers <n>")
        let market = self.market
        let r = try market.request(n, seenBy: inv.account)
        let offers = try market.offers(on: n, by: inv.account)
        guard !offers.isEmpty else {
            return Outcome(replies: [r.isCustomer(inv.account) ? "No offers on request \(n) yet." : "You have not offered on request \(n)."])
        }
        var lines = ["Offers on request \(n) (\(r.category)), cheapest first:"]
        for o in offers { lines.append("  " + offerLine(o, standing: try market.standing(of: o.contractor))) }
        if r.isCustomer(inv.account) && r.status == .open { lines.append("  !hire \(n) <contractor> to choose one.") }
        return Outcome(replies: lines)
    }

    func hire(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!hire <n> <contractor>"
        let n = try number(&args, usage: usage)
        let who = try args.word("contractor", usage: usage)
        let name = who.hasPrefix("@") ? String(who.dropFirst()) : who
        let (_, offer, events) = try market.hire(on: n, inv.onlineAccounts[Account.key(name)] ?? name, by: inv.account)
        let others = events.count > 1 ? events[1].concerns.count : 0
        let elsewhere = others == 0 ? "" : others == 1 ? " The other who offered is told it went to someone else."
                                                        : " The \(others) others who offered are told it went to someone else."
        return Outcome(replies: ["You hired \(offer.contractor) for request \(n) at \(Market.money(offer.price)); they are told.\(elsewhere)" +
                                 " !request msg \(n) <text> writes to them."],
                       events: events)
    }

    func review(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!review <n> <1-5> <text> | !review reply <n> <text>"
        if args.peek?.lowercased() == "reply" {
            _ = args.next()
            let n = try number(&args, usage: usage)
            let (_, event) = try market.answerReview(n, text: args.rest(), by: inv.account)
            return Outcome(replies: ["Your answer is under the review of request \(n)."], events: [event])
        }
        let n = try number(&args, usage: usage)
        let word = try args.word("rating (1 to 5)", usage: usage)
        guard let rating = Int(word.hasSuffix("/5") ? String(word.dropLast(2)) : word) else {
            throw UsageError("“\(word)” is not a rating: 1 to 5. Usage: \(usage)")
        }
        let (review, event) = try market.review(n, rating: rating, text: args.rest(), by: inv.account)
        return Outcome(replies: ["Thank you: \(review.contractor) got \(rating)/5 for request \(n)."], events: [event])
    }

    // MARK: Helpers

    /// A request number: `3`.
    private func number(_ args: inout Args, usage: String) throws -> Int64 {
        guard let w = args.next() else { throw UsageError("Missing request number. Usage: \(usage)") }
        guard let n = Int64(w), n > 0 else { throw UsageError("“\(w)” is not a request number. Usage: \(usage)") }
        return n
    }

    /// `3 [open] plumbing: Fix the tap · budget 80 · at Elm Street 12 · sat 9:00-12:00`
    func summary(_ r: ServiceRequest, _ inv: Invocation, mine: Bool = false) -> String {
        var s = "\(r.id) [\(r.status.rawValue)] \(r.category): \(r.description)"
        if mine && !r.isCustomer(inv.account) { s += " · for \(r.customer)" }
        if let hire = hireText(r, inv) { s += " · \(hire)" }
        if let budget = r.budget { s += " · budget \(Market.money(budget))" }
        if let place = r.place { s += " · at \(place)" }
        if let window = r.window { s += " · \(window)" }
        if let estimate = r.estimate { s += " · takes \(estimate)" }
        return s
    }

    /// Who was hired, as the reader may know it: the customer and the hired contractor by name;
    /// the others who offered only that it went to someone else.
    private func hireText(_ r: ServiceRequest, _ inv: Invocation) -> String? {
        guard let contractor = r.contractor else { return nil }
        if r.isHired(inv.account) { return r.status == .hired ? "you are hired" : "you were hired" }
        return r.isCustomer(inv.account) ? "hired \(contractor)" : "went to someone else"
    }

    private func offerLine(_ o: Offer, standing: Standing) -> String {
        "\(o.contractor): \(Market.money(o.price))" + (o.note.isEmpty ? "" : " — \(o.note)") + " (\(standing.text))"
    }

    /// Who the change was told to: by name when a few (the other party, those who offered), else
    /// how many (an open request's cancellation reaches every contractor it was posted to).
    private func told(_ event: Event) -> String {
        switch event.concerns.count {
        case 0: return ""
        case 1: return "; \(event.concerns[0]) is told"
        case 2...3: return "; \(event.concerns.joined(separator: ", ")) are told"
        case let n: return "; \(n) contractors are told"
        }
    }
}
