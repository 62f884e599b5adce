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
        var latencies = Latencies()
        let lock = NSLock()
        var failure: Error?
        let cpu0 = bench.server.cpuTime()
        let start = now()
        DispatchQueue.concurrentPerform(iterations: bots) { i in
            do {
                let client = try HTTPClient(port: port)
                var mine = Latencies()
                for n in 0..<perBot {
                    let sent = now()
                    let answer = try client.post("/api/v1/commands", token: tokens[i], body: #"{"text": "!comment \#(jobs[i]) \#(n)"}"#)
                    guard answer["events"] != nil else { throw BenchError("refused: \(answer)") }
                    mine.add(nanos: now() - sent)
                }
                lock.withLock { latencies.merge(mine) }
            } catch {
                lock.withLock { failure = error }
            }
        }
        if let failure { throw failure }
        let seconds = Double(now() - start) / 1e9
        let cpu1 = bench.server.cpuTime()
        var f = Figures()
        f.add("scripts", Double(bots), "", digits: 0)
        f.add("commands", Double(perBot * bots), "", digits: 0)
        f.add("durable commands per second", Double(perBot * bots) / seconds, "/s", digits: 0)
        f.add("request → answer p50", latencies.percentile(0.5), "ms", digits: 3)
        f.add("request → answer p99", latencies.percentile(0.99), "ms", digits: 3)
        f.addCPU("server CPU per command", cpu1 - cpu0, per: Double(perBot * bots), scale: 1000, "ms")

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

/// One keep-alive HTTP/1.1 connection, a request at a time, on a blocking socket (a thread each):
/// enough for a few thousand requests a second from a handful of scripts.
final class HTTPClient {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int) throws {
        guard let fd = loopbackSocket(port: port) else { throw BenchError("cannot connect to 127.0.0.1:\(port)") }
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    func post(_ path: String, token: String, body: String) throws -> [String: Any] {
        try request("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                    + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
    }

    func get(_ path: String, token: String) throws -> [String: Any] {
        try request("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n")
    }

    private func request(_ text: String) throws -> [String: Any] {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw BenchError("send failed") }
            sent += n
        }
        // The head, then Content-Length bytes of body.
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: separator)?.upperBound
            if headEnd == nil { try fill() }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        guard let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
              let length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else {
            throw BenchError("no Content-Length in: \(head)")
        }
        while buffer.count < headEnd! + length { try fill() }
        let body = Data(buffer[headEnd!..<(headEnd! + length)])
        buffer.removeFirst(headEnd! + length)
        return (try JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw BenchError("the server closed the connection") }
        buffer += chunk[..<n]
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
