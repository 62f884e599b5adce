import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore
import NIOHTTP1

/// The web side's application: every address it serves, in one router, and the answers that are
/// not the JSON API's (`WebAPI` gives those, behind its tokens). `WebRequests` hands it each plain
/// HTTP request; `/socket` is taken by the WebSocket upgrade before a request gets here, so what
/// reaches it here is a request that could not be upgraded.
///
/// Lives on the server's loop. Reads of the store run on the background pool, beside the
/// Workspace's writer, never queued behind it; only what must see every write so far (`/ready`,
/// a report's figures) waits for the writes before it.
final class WebApplication {
    unowned let server: IRCServer
    let api: WebAPI
    private var router = WebRouter()

    init(server: IRCServer) {
        self.server = server
        api = WebAPI(server: server)
        addRoutes()
        api.addRoutes(to: &router)
    }

    var loop: EventLoop { server.loop }
    var config: ServerConfig { server.config }

    private func addRoutes() {
        router.get("/health") { [unowned self] _ in loop.makeSucceededFuture(.text(.ok, "alive")) }
        router.get("/ready") { [unowned self] _ in readiness() }
        router.get("/metrics") { [unowned self] in loop.makeSucceededFuture(metrics(for: $0.peer)) }
        router.get("/client.json") { [unowned self] _ in loop.makeSucceededFuture(clientSettings()) }
        router.get("/report.svg") { [unowned self] in report($0, as: .svg) }
        router.get("/report.csv") { [unowned self] in report($0, as: .csv) }
        router.get("/jobs.csv") { [unowned self] in jobSheet($0) }
        router.get("/calendar.ics") { [unowned self] in calendar($0) }
        router.get("/export.json") { [unowned self] in export($0) }
        router.get("/photo/:file") { [unowned self] in photo($0) }
        router.get("/socket") { [unowned self] in
            loop.makeSucceededFuture(WebSocketUpgrade.refusal(of: $0.head, allowed: config.webOrigins))
        }
        for (path, file) in WebClientFiles.files {
            let answer: WebRouter.Handler = { [unowned self] in loop.makeSucceededFuture(file.response(to: $0.head)) }
            router.get(String(path), answer)
            if path == "/" { router.get("/index.html", answer) }
        }
    }

    /// The answer to one request: its route's, or why no route takes it (in JSON under `/api/`).
    func respond(to head: HTTPRequestHead, body: ByteBuffer?, from peer: SocketAddress?) -> EventLoopFuture<WebResponse> {
        let request = WebRequest(head: head, body: body, peer: peer)
        let inAPI = request.path.hasPrefix("/api/")
        switch router.match(head.method, request.path) {
        case .found(let handler, let parameters):
            return handler(request.matched(parameters))
        case .wrongMethod(let allowed):
            let names = allowed.map(\.rawValue)
            let spoken = names.count > 1 ? names.dropLast().joined(separator: ", ") + " and " + names.last! : names.joined()
            var response = inAPI
                ? api.errorResponse(APIError(.methodNotAllowed, "METHOD_NOT_ALLOWED",
                                             allowed.contains(.GET) ? "\(request.path) is read with GET." : "\(request.path) takes a \(spoken)."))
                : .text(.methodNotAllowed, "\(request.path.prefix(200)) answers \(spoken) only.")
            response.headers.add(name: "Allow", value: names.joined(separator: ", "))
            return loop.makeSucceededFuture(response)
        case .notFound:
            return loop.makeSucceededFuture(inAPI
                ? api.errorResponse(APIError(.notFound, "NOT_FOUND", "There is no \(request.path.prefix(200)) in the API: API.md lists it."))
                : .text(.notFound, "There is nothing at \(request.path.prefix(200))."))
        }
    }

    /// Prometheus's scrape: from this machine only, unless `metrics = any` says otherwise.
    private func metrics(for peer: SocketAddress?) -> WebResponse {
        switch config.metrics {
        case .off: return .text(.notFound, "There is nothing at /metrics.")
        case .loopback where !(peer.map(Self.isLoopback) ?? false):
            return .text(.forbidden, "Metrics are served to this machine only (metrics = any in the config opens them).")
        case .loopback, .any:
            var counts: [ServerMetrics.ClientKind: Int] = [:]
            for client in server.registry.clients.values where !client.closing {
                let kind: ServerMetrics.ClientKind = !client.isTLS ? .plain
                    : (try? client.channel.pipeline.syncOperations.handler(type: WebSocketLines.self)) != nil ? .websocket : .tls
                counts[kind, default: 0] += 1
            }
            let text = server.metrics.exposition(connections: counts, rooms: server.rooms.count)
            var response = WebResponse(status: .ok, body: ByteBuffer(bytes: text))
            response.headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
            return response
        }
    }

    static func isLoopback(_ address: SocketAddress) -> Bool {
        switch address {
        case .v4(let v4): return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6: return address.ipAddress == "::1" || address.ipAddress?.hasPrefix("::ffff:127.") == true
        default: return false
        }
    }

    /// What the web client needs to know before it connects: whom it sends `!commands` to.
    private func clientSettings() -> WebResponse {
        let settings: [String: String] = ["bot": config.serviceNick, "network": config.network]
        let json = ((try? JSONEncoder().encode(settings)) ?? Data("{}".utf8)) + Data("\n".utf8)
        var response = WebResponse(status: .ok, body: ByteBuffer(bytes: json))
        response.headers.add(name: "Content-Type", value: "application/json")
        response.headers.add(name: "Cache-Control", value: "no-cache")
        return response
    }

    /// Ready to serve: the listeners are bound and the store answers a read queued behind every write.
    private func readiness() -> EventLoopFuture<WebResponse> {
        guard server.listening else { return loop.makeSucceededFuture(.text(.serviceUnavailable, "not listening")) }
        // A store that answers reads but refuses writes (a full disk) is not ready either.
        if let trouble = server.workspace.writeTrouble {
            return loop.makeSucceededFuture(.text(.serviceUnavailable, "the store refuses writes: \(trouble)"))
        }
        return server.readAfterWrites { try $0.probe() }
            .map { WebResponse.text(.ok, "ready") }
            .recover { WebResponse.text(.serviceUnavailable, "the store does not answer: \($0)") }
    }
}
