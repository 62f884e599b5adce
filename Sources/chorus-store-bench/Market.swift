import ChorusBot
import ChorusCore
import ChorusStore
import ChorusWorkspace
import Foundation

/// `!request add` on a large marketplace: N contractors and M stored requests, then P postings,
/// one at a time, each through the Workspace's door exactly as a chat line runs (parse, match by
/// the skill index, store the request and its events, plan who is told, commit). Prints the time
/// per posting and how many contractors each told.
func marketBench(contractorCount: Int, requestCount: Int, postCount: Int) throws {
    let categories = ["plumbing", "electrical", "painting", "carpentry", "gardening", "cleaning", "moving", "roofing", "tiling",
                      "locksmith", "appliances", "heating", "windows", "flooring", "plastering", "fencing", "gutters", "pest-control",
                      "furniture", "handyman"]
    let streets = (1...20).map { "Street \($0)" }
    let (store, folder) = try scratchStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    let t0 = Date()

    // Seed: contractors with one to three skills (a fifth of them serving a street), customers, and
    // stored requests in every status, as a marketplace that has run for a while has.
    var rng = SystemRandomNumberGenerator()
    let seedStart = Date()
    try store.transaction(cache: nil) { tx in
        for i in 0..<contractorCount {
            let name = "pro\(i)"
            _ = try tx.insertAccount(Account(name: name, passwordHash: "x", createdAt: t0))
            let skills = Array(Set((0..<Int.random(in: 1...3, using: &rng)).map { _ in categories.randomElement(using: &rng)! }))
            let area = Int.random(in: 0..<5, using: &rng) == 0 ? [streets.randomElement(using: &rng)!] : []
            try tx.saveContractor(Contractor(account: name, skills: skills, rate: 4500, area: area))
        }
        for i in 0..<1000 { _ = try tx.insertAccount(Account(name: "home\(i)", passwordHash: "x", createdAt: t0)) }
        let statuses: [ServiceRequest.Status] = [.open, .hired, .done, .confirmed, .cancelled, .expired]
        for i in 0..<requestCount {
            let status = statuses.randomElement(using: &rng)!
            _ = try tx.insertRequest(ServiceRequest(
                customer: "home\(i % 1000)", category: categories.randomElement(using: &rng)!, description: "Seeded request \(i)",
                budget: 8000, place: streets.randomElement(using: &rng)!, status: status,
                contractor: status == .open || status == .expired ? nil : "pro\(Int.random(in: 0..<contractorCount, using: &rng))",
                createdAt: t0.addingTimeInterval(-Double(requestCount - i))))
        }
    }
    let seeded = Date().timeIntervalSince(seedStart)

    let workspace = benchWorkspace(store)
    let tally = Tally()
    workspace.add(tally)

    func post(_ i: Int) -> (seconds: Double, told: Int) {
        let place = i % 2 == 0 ? " | at \(streets[i % streets.count]) \(i)" : ""
        let (outcome, seconds) = timed(workspace, "!request add \(categories[i % categories.count]) Posting number \(i) | budget 80\(place)",
                                       as: "home\(i % 1000)")
        return (seconds, outcome.events.first?.concerns.count ?? 0)
    }

    for i in 0..<20 { _ = post(i) }  // warm the statement cache
    var times: [Double] = []
    var told: [Int] = []
    let runStart = Date()
    for i in 0..<postCount {
        let (s, n) = post(i + 20)
        times.append(s)
        told.append(n)
    }
    let wall = Date().timeIntervalSince(runStart)
    // The match alone: one skill's contractors through the skill index, on the writer's connection as
    // a posting reads them (10 rounds of every category).
    var matched = 0
    let matchStart = DispatchTime.now().uptimeNanoseconds
    try store.transaction(cache: nil) { tx in
        for _ in 0..<10 { for c in categories { matched += try tx.contractors(withSkill: c).count } }
    }
    let matchTime = Double(DispatchTime.now().uptimeNanoseconds - matchStart) / 1e9 / Double(categories.count * 10)
    matched /= 10
    print("""
        market: \(contractorCount) contractors, \(requestCount) stored requests, \(postCount) postings (seeded in \(String(format: "%.1f", seeded)) s)
          per posting: \(spread(times))
          postings per second, one at a time: \(String(format: "%.0f", Double(postCount) / wall))
          contractors told per posting: median \(told.sorted()[told.count / 2]), max \(told.max()!), total direct deliveries planned \(tally.direct)
          the match alone (one skill's active contractors from the index): \(String(format: "%.2f ms", matchTime * 1000)) for \(matched / categories.count) contractors on average
        """)
}
