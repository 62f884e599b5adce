import ChorusCore
import ChorusStore
import Foundation

/// `!report month` and `!report year` for someone with a long history: N entries, back to back,
/// of 20 minutes to 3 hours in six modes, on a quarter of them a job, ending an hour ago; then R
/// reports of each kind through the Workspace, as a chat line runs (the sums are SQLite's).
func timeBench(entryCount: Int, reportCount: Int) throws {
    let (store, folder) = try scratchStore()
    defer { try? FileManager.default.removeItem(at: folder) }
    _ = try store.insertAccount(Account(name: "tim", passwordHash: "x", createdAt: Date()))
    for mode in ["reading", "guitar"] { try store.addMode(mode, of: "tim") }
    let modes = ["work", "study", "break", "exercise", "reading", "guitar"]
    var rng = SystemRandomNumberGenerator()
    let seedStart = Date()
    var end = Date().addingTimeInterval(-3600)
    var spanned: TimeInterval = 0
    try store.transaction(cache: nil) { tx in
        for i in 0..<entryCount {
            let length = TimeInterval(Int.random(in: 20...180, using: &rng) * 60)
            let start = end.addingTimeInterval(-length)
            _ = try tx.insertEntry(TimeEntry(account: "tim", mode: i % 4 == 0 ? "job" : modes.randomElement(using: &rng)!,
                                             job: i % 4 == 0 ? Int64(i % 50 + 1) : nil, start: start, end: end))
            spanned += length
            end = start.addingTimeInterval(-TimeInterval(Int.random(in: 0...30, using: &rng) * 60))
        }
    }
    let seeded = Date().timeIntervalSince(seedStart)
    let workspace = benchWorkspace(store)
    var lines: [String] = []
    for period in ["month", "year", "month by job"] {
        _ = timed(workspace, "!report \(period)", as: "tim")  // warm the statement cache
        var times: [Double] = []
        var rows = 0
        for _ in 0..<reportCount {
            let (outcome, seconds) = timed(workspace, "!report \(period)", as: "tim")
            times.append(seconds)
            rows = outcome.replies.count - 1
        }
        lines.append("  !report \(period): \(spread(times)) (\(rows) rows)")
    }
    print("time: \(entryCount) entries over \(Int(spanned / 86_400 / 365 * 12)) months of one person's history, \(reportCount) reports each (seeded in \(String(format: "%.1f", seeded)) s)")
    for line in lines { print(line) }
}
