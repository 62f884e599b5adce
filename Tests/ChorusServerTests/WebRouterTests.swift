@testable import ChorusServer
import NIOCore
import NIOEmbedded
import NIOHTTP1
import XCTest

/// The web side's one table of routes: exact paths, named segments, HEAD by GET, and what a 405
/// names. The routes' answers are tested over real sockets in WebTests and APITests.
final class WebRouterTests: XCTestCase {
    let loop = EmbeddedEventLoop()

    func route(_ name: String) -> WebRouter.Handler {
        { [loop] in loop.makeSucceededFuture(.text(.ok, name + " " + $0.path)) }
    }

    func answer(_ router: WebRouter, _ method: HTTPMethod, _ path: String) throws -> (name: String, parameters: [String: Substring])? {
        guard case .found(let handler, let parameters) = router.match(method, Substring(path)) else { return nil }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        let response = try handler(WebRequest(head: head, body: nil, peer: nil).matched(parameters)).wait()
        return (String(buffer: response.body!).split(separator: " ").first.map(String.init) ?? "", parameters)
    }

    func testRoutesMatchByMethodAndShape() throws {
        var router = WebRouter()
        router.get("/jobs", route("list"))
        router.post("/jobs", route("add"))
        router.get("/jobs/:id", route("one"))
        router.get("/jobs/:id/comments", route("comments"))
        router.get("/people/:name", route("person"))

        XCTAssertEqual(try answer(router, .GET, "/jobs")?.name, "list")
        XCTAssertEqual(try answer(router, .HEAD, "/jobs")?.name, "list")
        XCTAssertEqual(try answer(router, .POST, "/jobs")?.name, "add")
        let one = try XCTUnwrap(try answer(router, .GET, "/jobs/7"))
        XCTAssertEqual(one.name, "one")
        XCTAssertEqual(one.parameters, ["id": "7"])
        XCTAssertEqual(try answer(router, .GET, "/jobs/7/comments")?.parameters, ["id": "7"])
        // An empty segment is still a segment: the route decides what an empty id means.
        XCTAssertEqual(try answer(router, .GET, "/jobs/")?.parameters, ["id": ""])
        XCTAssertNil(try answer(router, .GET, "/jobs/7/comments/2"))
        XCTAssertNil(try answer(router, .GET, "/job"))

        guard case .wrongMethod(let allowed) = router.match(.DELETE, "/jobs") else { return XCTFail("DELETE /jobs matched") }
        XCTAssertEqual(allowed.map(\.rawValue), ["GET", "HEAD", "POST"])
        guard case .wrongMethod(let onlyGet) = router.match(.POST, "/people/ann") else { return XCTFail("POST /people/ann matched") }
        XCTAssertEqual(onlyGet.map(\.rawValue), ["GET", "HEAD"])
        guard case .notFound = router.match(.GET, "/nothing") else { return XCTFail("/nothing matched") }
    }

    func testTheQueryIsReadPercentDecodedTheLastOfANameWinning() {
        let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/jobs?status=open&q=fix+the%20sink&status=done&flag")
        let request = WebRequest(head: head, body: nil, peer: nil)
        XCTAssertEqual(request.path, "/jobs")
        XCTAssertEqual(request.query, ["status": "done", "q": "fix the sink", "flag": ""])
    }
}
