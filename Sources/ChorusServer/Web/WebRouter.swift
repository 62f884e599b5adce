import NIOCore
import NIOHTTP1

/// A request as a route reads it: its head and body, where it came from, the path's named parts
/// (`/api/v1/jobs/:id` gives `id`) and the query, percent-decoded.
struct WebRequest {
    let head: HTTPRequestHead
    let body: ByteBuffer?
    /// The client's address (the one a PROXY header or a trusted proxy gave, if any).
    let peer: SocketAddress?
    let path: Substring
    let query: [String: String]
    fileprivate(set) var parameters: [String: Substring] = [:]

    init(head: HTTPRequestHead, body: ByteBuffer?, peer: SocketAddress?) {
        self.head = head
        self.body = body
        self.peer = peer
        path = WebRequests.path(of: head.uri)
        query = Self.query(of: head.uri)
    }

    /// A target's query, `a=1&b=2`, percent-decoded; the last of a repeated name wins.
    static func query(of target: String) -> [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        var values: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let name = parts.first?.removingPercentEncoding else { continue }
            values[name] = parts.count > 1 ? (parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
        }
        return values
    }
}

/// Every address the web side serves, by method and path, in one table. A route's pattern is a
/// path whose `:name` segments each match one segment of a request's path; a GET route answers
/// HEAD too. A path no route has is `notFound`; one whose routes take other methods is
/// `wrongMethod`, with the methods a 405 names in `Allow`.
struct WebRouter {
    typealias Handler = (WebRequest) -> EventLoopFuture<WebResponse>

    enum Match {
        case found(Handler, parameters: [String: Substring])
        case wrongMethod(allowed: [HTTPMethod])
        case notFound
    }

    private enum Segment {
        case literal(Substring)
        case parameter(String)
    }

    private struct Route {
        let method: HTTPMethod
        let segments: [Segment]
        let handler: Handler
    }

    /// Routes without parameters, by path: nearly every request finds its route in one look.
    private var exact: [Substring: [Route]] = [:]
    private var patterned: [Route] = []

    mutating func get(_ pattern: String, _ handler: @escaping Handler) { add(.GET, pattern, handler) }
    mutating func post(_ pattern: String, _ handler: @escaping Handler) { add(.POST, pattern, handler) }

    mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping Handler) {
        let segments = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part -> Segment in
            part.first == ":" ? .parameter(String(part.dropFirst())) : .literal(part)
        }
        let route = Route(method: method, segments: segments, handler: handler)
        if segments.contains(where: { if case .parameter = $0 { true } else { false } }) {
            patterned.append(route)
        } else {
            exact[Substring(pattern), default: []].append(route)
        }
    }

    func match(_ method: HTTPMethod, _ path: Substring) -> Match {
        var candidates: [(Route, [String: Substring])] = (exact[path] ?? []).map { ($0, [:]) }
        if candidates.isEmpty {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            for route in patterned {
                if let parameters = Self.parameters(of: route, in: parts) { candidates.append((route, parameters)) }
            }
        }
        guard !candidates.isEmpty else { return .notFound }
        let taking = method == .HEAD ? .GET : method
        if let (route, parameters) = candidates.first(where: { $0.0.method == taking }) {
            return .found(route.handler, parameters: parameters)
        }
        var allowed: [HTTPMethod] = []
        for (route, _) in candidates where !allowed.contains(route.method) {
            allowed.append(route.method)
            if route.method == .GET { allowed.append(.HEAD) }
        }
        return .wrongMethod(allowed: allowed)
    }

    /// The named segments' values when the path has the route's shape.
    private static func parameters(of route: Route, in parts: ArraySlice<Substring>) -> [String: Substring]? {
        guard parts.count == route.segments.count else { return nil }
        var parameters: [String: Substring] = [:]
        for (segment, part) in zip(route.segments, parts) {
            switch segment {
            case .literal(let text): if text != part { return nil }
            case .parameter(let name): parameters[name] = part
            }
        }
        return parameters
    }
}

extension WebRequest {
    /// A request whose path matched a route, with its named segments.
    func matched(_ parameters: [String: Substring]) -> WebRequest {
        var request = self
        request.parameters = parameters
        return request
    }

    /// A whole-number parameter of the query, or `fallback` when it is not given.
    func integer(_ name: String, default fallback: Int64, in range: ClosedRange<Int64>) throws -> Int64 {
        guard let text = query[name] else { return fallback }
        guard let value = Int64(text), range.contains(value) else {
            let upper = range.upperBound == .max ? "" : " to \(range.upperBound)"
            throw APIError(.badRequest, "INVALID_PARAMS", "\(name) is a whole number from \(range.lowerBound)\(upper), not \"\(text.prefix(30))\".")
        }
        return value
    }
}
