import ChorusBot
import ChorusCore
import ChorusStore
import ChorusWorkspace
import Foundation

// Boards on a large store, in process: what one command costs the server when the tables are big.
// Run on demand (not in CI), from a release build:
//   chorus-store-bench market [contractors] [stored requests] [postings]     (10000 100000 500)
//   chorus-store-bench time [entries] [reports]                              (100000 200)
let words = CommandLine.arguments.dropFirst()
let numbers = words.dropFirst().compactMap { Int($0) }
func number(_ i: Int, _ otherwise: Int) -> Int { numbers.count > i ? numbers[i] : otherwise }
switch words.first {
case "market":
    try marketBench(contractorCount: number(0, 10_000), requestCount: number(1, 100_000), postCount: number(2, 500))
case "time":
    try timeBench(entryCount: number(0, 100_000), reportCount: number(1, 200))
default:
    print("usage: chorus-store-bench market [contractors] [requests] [postings] | time [entries] [reports]")
    exit(2)
}

/// A fresh SQLite file in a temporary folder (the caller removes the folder).
func scratchStore() throws -> (SQLiteStore, URL) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-store-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return (try SQLiteStore(path: folder.appendingPathComponent("chorus.sqlite").path), folder)
}

func benchWorkspace(_ store: SQLiteStore) -> Workspace {
    Workspace(store: store, settings: .init(timeZone: TimeZone(identifier: "UTC")!, reminderInterval: 3600,
                                            serviceNick: "Chorus", serviceSource: "Chorus!bot@bench"),
              wording: Words())
}

/// Runs one bot line through the Workspace and waits for its outcome; returns it and the seconds it took.
func timed(_ workspace: Workspace, _ line: String, as account: String, zone: TimeZone = TimeZone(identifier: "UTC")!,
           now: Date = Date()) -> (Outcome, Double) {
    let invocation = Invocation(account: account, nick: account, room: nil, rooms: [:], onlineAccounts: [:], timeZone: zone, now: now)
    let done = DispatchSemaphore(value: 0)
    let result = LockedBox<Outcome?>(nil)
    let start = DispatchTime.now().uptimeNanoseconds
    workspace.run(BotLine(line, invocation)) { outcome in
        result.value = outcome
        done.signal()
    }
    done.wait()
    return (result.value!, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// Median, p99 and max of seconds, as milliseconds.
func spread(_ seconds: [Double]) -> String {
    let s = seconds.sorted()
    func ms(_ x: Double) -> String { String(format: "%.2f ms", x * 1000) }
    return "median \(ms(s[s.count / 2])), p99 \(ms(s[min(s.count - 1, s.count * 99 / 100)])), max \(ms(s.last!))"
}

/// A sink that counts what the IRC side would be asked to deliver.
final class Tally: EventSink, @unchecked Sendable {
    let lock = NSLock()
    var direct = 0
    func publish(_ batch: [Committed]) {
        let n = batch.reduce(0) { $0 + $1.deliveries.reduce(0) { $0 + $1.direct.count } }
        lock.lock(); direct += n; lock.unlock()
    }
}

struct Words: EventWording {
    func roomLine(_ event: Event, roomName: String) -> RoomLineWords {
        RoomLineWords(text: event.type, tags: [], serializedTags: "")
    }

    func directLine(_ event: Event, roomName: String?) -> RoomLineWords {
        RoomLineWords(text: event.type, tags: [], serializedTags: "")
    }
}

final class LockedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
