import ChorusBot
import ChorusCore
import ChorusIRC
import ChorusSQL
import ChorusWorkspace
import Foundation
import NIOCore
import NIOHTTP1

/// The JSON API at `/api/v1/…`, for bots and scripts (API.md is its reference). A request names
/// its account by a token (`Authorization: Bearer chorus-…`, the tokens `!token new` makes), and
/// every answer holds what that account would hear over IRC: its rooms' events as their audience
/// allows, and what it is told directly. Commands go through the Workspace as typed ones do.
///
/// Lives on the server's loop; reads of the store run on the background pool, beside the writer.
final class WebAPI {
    unowned let server: IRCServer
    private var buckets: [Int64: RequestBucket] = [:]
    /// Feed requests waiting for an event (`wait=`), woken by each committed batch.
    var waiting: [FeedWaiter] = []
    var waitTicker: RepeatedTask?
    /// When this process first saw each gap in the event ids (PostgreSQL: a transaction with an
    /// earlier id may not have committed yet).
    var gapsSeen: [Int64: NIODeadline] = [:]
    /// When each token's use was last noted in the store (noted at most once a minute).
    private var usesNoted: [Int64: NIODeadline] = [:]
    /// Tokens recently found, by digest: two reads of the store fewer a request. `!token revoke`
    /// forgets them at once; a revocation elsewhere (`chorusd account`, another process) counts
    /// after `tokenMemory`.
    private var knownTokens: [String: (caller: Caller, until: NIODeadline)] = [:]
    static let tokenMemory = TimeAmount.seconds(10)

    /// The most events one answer holds, and the longest a feed request waits for one.
    static let maxEvents = 500
    static let maxWait = 30
    /// How long a gap in the event ids is waited for before the feed passes it (longer than a batch).
    static let gapPatience = TimeAmount.seconds(5)

    init(server: IRCServer) {
        self.server = server
    }

    struct Caller {
        let account: String
        let key: String
        let token: Int64
    }

    /// The API's routes, each behind the caller's token and rate (`openapi.json` needs neither).
    func addRoutes(to router: inout WebRouter) {
        router.get("/api/v1/openapi.json") { [unowned self] _ in
            // The API's description (OpenAPI 3.1), for code generators and API browsers.
            var response = json(.ok, bytes: PackageResources.openapi_json)
            response.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
            return server.loop.makeSucceededFuture(response)
        }
        router.get("/api/v1/me", asCaller(me))
        router.get("/api/v1/me/export", asCaller { [unowned self] caller, _ in WebApplication.exportResponse(of: caller.account, server) })
        router.post("/api/v1/commands", asCaller(command))
        router.get("/api/v1/events", asCaller(events))
        router.get("/api/v1/jobs", asCaller(jobs))
        router.get("/api/v1/jobs/:id", asCaller(numbered(job, "A job is named by its number: /api/v1/jobs/7.")))
        router.get("/api/v1/chores", asCaller(chores))
        router.get("/api/v1/lists", asCaller(lists))
        router.get("/api/v1/agenda", asCaller(agenda))
        router.get("/api/v1/requests", asCaller(requests))
        router.get("/api/v1/requests/:id", asCaller(numbered(serviceRequest, "A request is named by its number: /api/v1/requests/3.")))
        router.get("/api/v1/contractors/:name", asCaller { [unowned self] caller, request in
            let name = request.parameters["name"].flatMap { $0.removingPercentEncoding } ?? ""
            guard !name.isEmpty else { throw APIError(.notFound, "NOT_FOUND", "A contractor is named by account: /api/v1/contractors/bob.") }
            return try contractor(caller, request, name: name)
        })
        router.get("/api/v1/time", asCaller(time))
        router.get("/api/v1/time/report", asCaller(timeReport))
        router.post(WebRequests.photoPath, asCaller(uploadPhoto))
    }

    /// A route run as the token's account, once its rate allows; any error is answered as JSON.
    private func asCaller(_ route: @escaping (Caller, WebRequest) throws -> EventLoopFuture<WebResponse>) -> WebRouter.Handler {
        { [unowned self] request in
            authenticate(request.head).flatMap { caller in
                do {
                    try self.admit(caller)
                    return try route(caller, request)
                } catch {
                    return self.fail(error)
                }
            }.flatMapError { self.fail($0) }
        }
    }

    /// A route of one thing by the path's `id`, a number above zero; any other is 404 saying how
    /// the thing is named.
    private func numbered(_ route: @escaping (Caller, WebRequest, Int64) throws -> EventLoopFuture<WebResponse>,
                          _ naming: String) -> (Caller, WebRequest) throws -> EventLoopFuture<WebResponse> {
        { caller, request in
            guard let id = request.parameters["id"].flatMap({ Int64($0) }), id > 0 else { throw APIError(.notFound, "NOT_FOUND", naming) }
            return try route(caller, request, id)
        }
    }

    // MARK: Who asks

    /// The token's account, or 401 without saying whether the token or the account ever existed.
    private func authenticate(_ head: HTTPRequestHead) -> EventLoopFuture<Caller> {
        guard let header = head.headers.first(name: "Authorization"), header.lowercased().hasPrefix("bearer ") else {
            return server.loop.makeFailedFuture(APIError.unauthorized("Send a token: Authorization: Bearer chorus-… (!token new makes one)."))
        }
        let secret = header.dropFirst("bearer ".count).trimmingCharacters(in: .whitespaces)
        guard secret.hasPrefix(AccountToken.prefix), secret.utf8.count == AccountToken.prefix.utf8.count + 64 else {
            return server.loop.makeFailedFuture(APIError.unauthorized("That is not a token this server makes, or it is revoked."))
        }
        let digest = AccountToken.digest(of: secret)
        let now = NIODeadline.now()
        if let known = knownTokens[digest], now < known.until { return server.loop.makeSucceededFuture(known.caller) }
        let store = server.store
        return server.background { () -> AccountToken? in
            guard let token = try store.token(withDigest: digest),
                  try store.account(named: token.account) != nil else { return nil }
            return token
        }.flatMapThrowing { token in
            guard let token else { throw APIError.unauthorized("That is not a token this server makes, or it is revoked.") }
            self.noteUse(of: token.id)
            let caller = Caller(account: token.account, key: Account.key(token.account), token: token.id)
            if self.knownTokens.count > 10_000 { self.knownTokens = self.knownTokens.filter { now < $0.value.until } }
            self.knownTokens[digest] = (caller, now + Self.tokenMemory)
            return caller
        }
    }

    /// A token was revoked here (or an account deleted): every token is looked up again.
    func forgetTokens() {
        knownTokens.removeAll()
    }

    /// A runaway script meets 429 and `Retry-After`, not slower commands for everyone else.
    private func admit(_ caller: Caller) throws {
        let rate = Double(server.config.apiRequestsPerSecond), burst = rate * 2
        guard rate > 0 else { return }
        let now = NIODeadline.now()
        var bucket = buckets[caller.token] ?? RequestBucket(tokens: burst, at: now)
        let wait = bucket.take(at: now, rate: rate, burst: burst)
        buckets[caller.token] = bucket
        if buckets.count > 10_000 { buckets = buckets.filter { now - $0.value.at < .seconds(10) } }
        if let wait {
            var error = APIError(.tooManyRequests, "RATE_LIMITED", "More than \(Int(rate)) requests a second with this token.")
            error.retryAfter = max(1, Int((Double(wait.nanoseconds) / 1e9).rounded(.up)))
            throw error
        }
    }

    private func noteUse(of token: Int64) {
        let now = NIODeadline.now()
        if let last = usesNoted[token], now - last < .seconds(60) { return }
        usesNoted[token] = now
        let at = server.now()
        server.persist("token use") { try $0.noteTokenUse(token, at: at) }
    }

    // MARK: Routes

    /// The account and its rooms.
    private func me(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        let rooms = server.rooms.values.compactMap { room -> APIRoom? in
            guard let membership = room.memberships[caller.key] else { return nil }
            return APIRoom(name: room.name, role: membership.role.rawValue, topic: room.room.topic)
        }.sorted { $0.name < $1.name }
        let store = server.store
        return readBoard { _, _ -> APIMe in
            guard let account = try store.account(named: caller.account) else { throw APIError(.notFound, "NOT_FOUND", "The account is gone.") }
            let tokens = try store.tokens(of: caller.account).map {
                APIToken(id: $0.id, label: $0.label, createdAt: Self.timestamp($0.createdAt), lastUsedAt: $0.lastUsedAt.map(Self.timestamp))
            }
            return APIMe(account: caller.account, rooms: rooms,
                         profile: APIProfile(firstName: account.firstName, lastName: account.lastName, email: account.email,
                                             since: Self.timestamp(account.createdAt)),
                         tokens: tokens)
        }
    }

    /// Runs one `!command` as the caller, in a room of theirs or in private, and answers with what
    /// it said and the events it made (with their ids: the feed's positions).
    private func command(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        // A command is a flat object of strings: read without JSONDecoder, which is for telling
        // what is wrong with any other body.
        let asked = try request.body.flatMap({ FlatJSON.object($0.readableBytesView) }).flatMap { fields in fields["text"].map { APICommand(text: $0, room: fields["room"]) } }
            ?? decode(APICommand.self, request.body)
        let text = asked.text.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("!"), text.count > 1 else {
            throw APIError(.badRequest, "INVALID_PARAMS", "text is a !command, such as \"!jobs\" (!help lists them).")
        }
        // Scalars, not Characters: "\r\n" is one Character, neither "\r" nor "\n".
        guard !text.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }), text.utf8.count <= Limits.lineBytes else {
            throw APIError(.badRequest, "INVALID_PARAMS", "text is one line of at most \(Limits.lineBytes) bytes.")
        }
        var room: LiveRoom?
        if let name = asked.room {
            guard let live = server.rooms[Names.fold(name)], live.memberships[caller.key] != nil else {
                throw APIError(.notFound, "NO_SUCH_ROOM", "You are not a member of \(name.prefix(60)).")
            }
            room = live
        }
        let invocation = server.invocation(for: caller.account, nick: caller.account, text: text, in: room)
        let promise = server.loop.makePromise(of: Outcome.self)
        server.flushHistory()
        server.workspace.run(BotLine(text, invocation, newSecret: server.newSecret, links: server.reportLinks)) { promise.succeed($0) }
        return promise.futureResult.flatMapThrowing { outcome in
            guard !outcome.refused else {
                var error = APIError(.unprocessableEntity, outcome.code ?? "REFUSED", outcome.replies.first ?? "The command was refused.")
                error.replies = outcome.replies
                throw error
            }
            return self.json(.ok, bytes: APICommandOutcome(replies: outcome.replies, events: outcome.events, described: self.described).json)
        }
    }

    // MARK: Answers

    /// An event's room by its name, and the sentence people read for it.
    func described(_ event: Event) -> (room: String?, text: String) {
        let room = event.room.map { server.rooms[$0]?.name ?? $0 }
        return (room, server.wording.sentence(event, roomName: room))
    }

    static func apiEvent(_ event: Event, roomName: String?, wording: IRCEventWording) -> APIEvent {
        APIEvent(id: event.id, type: event.type, room: roomName, job: event.job, actor: event.actor,
                 at: timestamp(event.at), data: event.data, concerns: event.concerns,
                 text: wording.sentence(event, roomName: roomName))
    }

    private func ok(_ value: some Encodable) -> EventLoopFuture<WebResponse> {
        server.loop.makeSucceededFuture((try? json(.ok, value)) ?? errorResponse(APIError(.internalServerError, "INTERNAL", "Could not write the answer.")))
    }

    func json(_ status: HTTPResponseStatus, _ value: some Encodable) throws -> WebResponse {
        json(status, bytes: Array(try Self.encoder.encode(value)))
    }

    func json(_ status: HTTPResponseStatus, bytes: [UInt8]) -> WebResponse {
        // Room for the line's end too: a page of the feed is not copied twice to add it.
        var body = ByteBufferAllocator().buffer(capacity: bytes.count + 1)
        body.writeBytes(bytes)
        body.writeInteger(UInt8(ascii: "\n"))
        var response = WebResponse(status: status, body: body)
        response.headers.add(name: "Content-Type", value: "application/json")
        response.headers.add(name: "Cache-Control", value: "no-store")
        return response
    }

    func fail(_ error: Error) -> EventLoopFuture<WebResponse> {
        server.loop.makeSucceededFuture(errorResponse(error))
    }

    func errorResponse(_ error: Error) -> WebResponse {
        let failure = error as? APIError ?? APIError(.internalServerError, "INTERNAL", "Something went wrong; it is logged.")
        if !(error is APIError) { server.logger.error("API request failed: \(error)") }
        var response = (try? json(failure.status, APIFailure(code: failure.code, message: failure.message, replies: failure.replies)))
            ?? .text(failure.status, failure.message)
        if let seconds = failure.retryAfter { response.headers.add(name: "Retry-After", value: String(seconds)) }
        if failure.status == .unauthorized { response.headers.add(name: "WWW-Authenticate", value: "Bearer realm=\"chorus\"") }
        return response
    }

    private func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer?) throws -> T {
        guard let body, body.readableBytes > 0 else { throw APIError(.badRequest, "INVALID_PARAMS", "Send a JSON body: API.md shows it.") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body.readableBytesView))
        } catch {
            throw APIError(.badRequest, "INVALID_PARAMS", "The body is not the JSON this takes: \(Self.reason(error))")
        }
    }

    private static func reason(_ error: Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "\"\(key.stringValue)\" is missing."
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type."
        default: return "it does not read as JSON."
        }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func timestamp(_ date: Date) -> String {
        Timestamp.format(date)
    }
}

/// A token's requests: a bucket that fills at the allowed rate up to the burst.
struct RequestBucket {
    var tokens: Double
    var at: NIODeadline

    /// Takes one request's worth; nil if there was one, else how long until there is.
    mutating func take(at now: NIODeadline, rate: Double, burst: Double) -> TimeAmount? {
        tokens = min(burst, tokens + Double((now - at).nanoseconds) / 1e9 * rate)
        at = now
        guard tokens >= 1 else { return .nanoseconds(Int64((1 - tokens) / rate * 1e9)) }
        tokens -= 1
        return nil
    }
}

/// A refusal: its HTTP status, a code as IRC's `FAIL` gives them, and a sentence.
struct APIError: Error {
    let status: HTTPResponseStatus
    let code: String
    let message: String
    var retryAfter: Int?
    var replies: [String]?

    init(_ status: HTTPResponseStatus, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func unauthorized(_ message: String) -> APIError {
        APIError(.unauthorized, "ACCOUNT_REQUIRED", message)
    }
}
