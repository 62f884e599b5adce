import Foundation

// MARK: api

/// The JSON API (API.md) from `bots` scripts, each on one keep-alive HTTP connection to chorusd's
/// web-plain listener: durable commands a second through `POST /api/v1/commands` (a `!comment` on
/// the bot's own job, answered once committed), then one bot catching up on its event feed from
/// position 0, 500 events an answer. Needs --spawn: the bots' accounts and tokens are made with
/// `chorusd account add` and `account token` on the run's data folder.
struct APIScenario {
    let bots: Int
    let chorusd: String
    let data: String
    let store: String?
    let port: Int

    func run(_ bench: Bench, commands: Int) throws -> Figures {
        let tokens = try (0..<bots).map { try makeToken("apibot\($0)") }
        // Each bot's own job to comment on.
        let jobs = try tokens.map { token -> Int in
            let client = try HTTPClient(port: port)
            let answer = try client.post("/api/v1/commands", token: token, body: #"{"text": "!job add bench target"}"#)
            guard let events = answer["events"] as? [[String: Any]], let job = events.first?["job"] as? Int else {
                throw BenchError("no job made: \(answer)")
            }
            return job
        }
        let perBot = commands / bots
        let results = ScriptResults()
        let eventsField = Array(#""events":"#.utf8)
        // A thread each, all at once: concurrentPerform would run only as many as there are cores.
        let clients = try (0..<bots).map { _ in try HTTPClient(port: port) }
        let finished = DispatchGroup()
        let cpu0 = bench.server.cpuTime(), own0 = CPUTime.ofThisProcess()
        let start = now()
        for i in 0..<bots {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                do {
                    var mine = Latencies()
                    for n in 0..<perBot {
                        let sent = now()
                        let answer = try clients[i].postRaw("/api/v1/commands", token: tokens[i], body: #"{"text": "!comment \#(jobs[i]) \#(n)"}"#)
                        // A command that made its event answers 200 with an "events" list.
                        guard answer.status == 200, answer.body.firstRange(of: eventsField) != nil else {
                            throw BenchError("refused: \(String(decoding: answer.body, as: UTF8.self))")
                        }
                        mine.add(nanos: now() - sent)
                    }
                    results.add(mine)
                } catch {
                    results.fail(error)
                }
            }
        }
        finished.wait()
        let (latencies, failure) = results.taken
        if let failure { throw failure }
        let seconds = Double(now() - start) / 1e9
        let cpu1 = bench.server.cpuTime(), own1 = CPUTime.ofThisProcess()
        var f = Figures()
        f.add("scripts", Double(bots), "", digits: 0)
        f.add("commands", Double(perBot * bots), "", digits: 0)
        f.add("durable commands per second", Double(perBot * bots) / seconds, "/s", digits: 0)
        f.add("request → answer p50", latencies.percentile(0.5), "ms", digits: 3)
        f.add("request → answer p99", latencies.percentile(0.99), "ms", digits: 3)
        f.addCPU("server CPU per command", cpu1 - cpu0, per: Double(perBot * bots), scale: 1000, "ms")
        f.addCPU("the scripts' CPU per command", own1 - own0, per: Double(perBot * bots), scale: 1000, "ms")

        // Catch-up: bot 0's feed from the start.
        let reader = try HTTPClient(port: port)
        var after = 0, read = 0, answers = 0
        let cpu2 = bench.server.cpuTime()
        let caughtUp = now()
        while true {
            let page = try reader.get("/api/v1/events?after=\(after)&limit=500", token: tokens[0])
            guard let events = page["events"] as? [[String: Any]], let next = page["next"] as? Int else { throw BenchError("no feed: \(page)") }
            read += events.count
            answers += 1
            after = next
            if page["more"] as? Bool != true { break }
        }
        let catchUp = Double(now() - caughtUp) / 1e9
        let cpu3 = bench.server.cpuTime()
        f.add("catch-up: events read (one script's)", Double(read), "", digits: 0)
        f.add("catch-up: answers / seconds", Double(answers), "", digits: 0)
        f.add("catch-up: wall time", catchUp, "s", digits: 3)
        f.addCPU("catch-up: server CPU per 100,000 events", cpu3 - cpu2, per: Double(max(1, read)), scale: 100_000, "s")
        return f
    }

    private func makeToken(_ name: String) throws -> String {
        try Operator(chorusd: chorusd, data: data, store: store).makeToken(name)
    }
}

/// What the scripts' threads measured, and the first thing that went wrong.
private final class ScriptResults: @unchecked Sendable {
    private let lock = NSLock()
    private var latencies = Latencies()
    private var failure: Error?

    func add(_ some: Latencies) { lock.withLock { latencies.merge(some) } }
    func fail(_ error: Error) { lock.withLock { failure = failure ?? error } }
    var taken: (Latencies, Error?) { lock.withLock { (latencies, failure) } }
}

/// One keep-alive HTTP/1.1 connection, a request at a time, on a blocking socket (a thread each).
/// It works on bytes: the scripts share the machine with the server they measure, and a client
/// that parsed every answer with Foundation cost as much CPU a command as chorusd did.
final class HTTPClient {
    private let fd: Int32
    /// What was received and not yet taken, from `start`.
    private var buffer: [UInt8] = []
    private var start = 0

    init(port: Int) throws {
        guard let fd = loopbackSocket(port: port) else { throw BenchError("cannot connect to 127.0.0.1:\(port)") }
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func post(_ path: String, token: String, body: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(postRaw(path, token: token, body: body).body)) as? [String: Any] ?? [:]
    }

    func get(_ path: String, token: String) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(request("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n").body)) as? [String: Any] ?? [:]
    }

    /// The answer's status and body as they came.
    func postRaw(_ path: String, token: String, body: String) throws -> (status: Int, body: ArraySlice<UInt8>) {
        try request("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    private func request(_ text: String) throws -> (status: Int, body: ArraySlice<UInt8>) {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        var text = text
        try text.withUTF8 { bytes in
            var sent = 0
            while sent < bytes.count {
                let n = send(fd, bytes.baseAddress! + sent, bytes.count - sent, 0)
                guard n > 0 else { throw BenchError("send failed") }
                sent += n
            }
        }
        // The head, then Content-Length bytes of body.
        var headEnd: Int?
        var searched = start
        while headEnd == nil {
            headEnd = Self.end(ofHeadIn: buffer, from: searched)
            if headEnd == nil {
                searched = max(start, buffer.count - 3)
                try fill()
            }
        }
        let head = buffer[start..<headEnd!]
        guard let status = Self.status(head), let length = Self.contentLength(head) else {
            throw BenchError("not an HTTP answer with Content-Length: \(String(decoding: head, as: UTF8.self))")
        }
        while buffer.count < headEnd! + length { try fill() }
        let body = buffer[headEnd!..<(headEnd! + length)]
        start = headEnd! + length
        return (status, body)
    }

    private func fill() throws {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65536) { chunk in
            let n = recv(fd, chunk.baseAddress, chunk.count, 0)
            guard n > 0 else { throw BenchError("the server closed the connection") }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// Where the body begins: just past the first CR LF CR LF at or after `from`.
    private static func end(ofHeadIn bytes: [UInt8], from: Int) -> Int? {
        var i = from
        while i + 3 < bytes.count {
            if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i + 4 }
            i += 1
        }
        return nil
    }

    /// The status code of `HTTP/1.1 200 OK`.
    private static func status(_ head: ArraySlice<UInt8>) -> Int? {
        let digits = head.dropFirst(9).prefix(3)
        guard digits.count == 3, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 48) }
    }

    private static let lengthField = Array("\r\ncontent-length:".utf8)

    /// The value of Content-Length, its name in any case.
    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
        let field = lengthField
        var i = head.startIndex
        while i + field.count <= head.endIndex {
            var matches = true
            for k in 0..<field.count where head[i + k] | 0x20 != field[k] | 0x20 {
                matches = false
                break
            }
            if matches {
                var j = i + field.count, value = 0, digits = 0
                while j < head.endIndex, head[j] == 32 { j += 1 }
                while j < head.endIndex, (48...57).contains(head[j]) {
                    value = value * 10 + Int(head[j] - 48)
                    digits += 1
                    j += 1
                }
                return digits > 0 ? value : nil
            }
            i += 1
        }
        return nil
    }
}

/// A blocking TCP socket connected to 127.0.0.1:`port`, or nil if nothing listens there.
func loopbackSocket(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}
