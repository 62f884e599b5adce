import AsyncHTTPClient
import ChorusCore
import ChorusIRC
import ChorusTestSupport
@testable import ChorusServer
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import XCTest

/// Photos uploaded over HTTPS with an account's token (the web client's camera button, any IRC
/// client's `draft/FILEHOST`), kept without their metadata, served back by signed links, and
/// taken by `!photo <job>`.
final class PhotoTests: XCTestCase {
    var server: TestServer!
    var http: HTTPClient!

    override func setUpWithError() throws {
        server = try TestServer { $0.web = .init(host: "127.0.0.1", port: 0) }
        try server.addAccount("alice", "alice-password")
        try server.addAccount("bob", "bob-password")
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none  // the test server's certificate is self-signed
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
    }

    override func tearDownWithError() throws {
        try http.syncShutdown()
        server = nil
    }

    func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: ImageFixtures.folder.appendingPathComponent(name))
    }

    func token(_ account: String) throws -> String {
        let secret = AccountToken.newSecret()
        _ = try server.server.store.issueToken(for: account, label: "phone", secret: secret, at: Date())
        return secret
    }

    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
    }

    /// A request to this server's HTTPS listener (a link's host, `test.chorus`, is 127.0.0.1 here).
    func call(_ method: HTTPMethod, _ pathOrLink: String, token: String? = nil, type: String? = nil, body: Data? = nil) throws -> Answer {
        let path = pathOrLink.range(of: "test.chorus:\(server.webPort)").map { String(pathOrLink[$0.upperBound...]) } ?? pathOrLink
        var request = try HTTPClient.Request(url: "https://127.0.0.1:\(server.webPort)\(path)", method: method)
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let type { request.headers.add(name: "Content-Type", value: type) }
        if let body { request.body = .byteBuffer(ByteBuffer(bytes: body)) }
        let response = try http.execute(request: request, deadline: .now() + .seconds(10)).wait()
        return Answer(status: Int(response.status.code), headers: response.headers,
                      body: response.body.map { Data($0.readableBytesView) } ?? Data())
    }

    func testAnUploadedPhotoComesBackWithoutItsLocationAndAJobTakesIt() throws {
        let alice = try server.connect()
        let welcome = try alice.register("alice", caps: ["message-tags"], pass: "alice:alice-password").filter { $0.command == "005" }.flatMap(\.params)
        XCTAssertTrue(welcome.contains("draft/FILEHOST=https://test.chorus:\(server.webPort)/api/v1/photos"), "\(welcome)")

        let original = try fixture("gps.jpg")
        let upload = try call(.POST, "/api/v1/photos", token: try token("alice"), type: "image/jpeg", body: original)
        XCTAssertEqual(upload.status, 201, String(decoding: upload.body, as: UTF8.self))
        let link = try XCTUnwrap(upload.headers.first(name: "Location"))
        XCTAssertTrue(link.hasPrefix("https://test.chorus:\(server.webPort)/photo/1.jpg?p=1&exp="), link)
        XCTAssertEqual(upload.json["url"] as? String, link)
        XCTAssertEqual(upload.json["type"] as? String, "image/jpeg")

        let served = try call(.GET, link)
        XCTAssertEqual(served.status, 200)
        XCTAssertEqual(served.headers.first(name: "Content-Type"), "image/jpeg")
        XCTAssertEqual(served.headers.first(name: "X-Content-Type-Options"), "nosniff")
        XCTAssertEqual(Array(served.body.prefix(3)), [0xFF, 0xD8, 0xFF])
        for secret in ["Exif", "PhoneMaker", "taken at home"] {
            XCTAssertNil(served.body.range(of: Data(secret.utf8)), "\(secret) is served")
        }
        XCTAssertEqual(served.body, try ImageFile.withoutMetadata(original).bytes)

        // The uploader's latest photo goes on a job with `!photo <id>`, as its link.
        alice.send("JOIN #flat")
        alice.send("PRIVMSG #flat :!job add Fix the tap @me")
        try alice.expect("the job") { $0.params.last?.contains("created job 1") == true }
        alice.send("PRIVMSG #flat :!photo 1 the tap, fixed")
        let event = try alice.expect("the photo") { $0.tag("chorus/event") == "job.photo" }
        XCTAssertEqual(event.tag("chorus/url"), link)
        XCTAssertEqual(event.params.last, "alice added a photo to job 1 “Fix the tap”: \(link) the tap, fixed")

        // Someone who uploaded nothing is told how.
        let bob = try server.connect(as: "bob", caps: ["message-tags"])
        bob.send("JOIN #flat")
        alice.send("PRIVMSG #flat :!assign 1 bob")
        try alice.expect("assigned") { $0.tag("chorus/event") == "job.assigned" }
        bob.send("PRIVMSG #flat :!photo 1")
        let told = try bob.expect("the refusal") { $0.command == "NOTICE" && $0.params.last?.contains("uploaded no photo") == true }
        XCTAssertTrue(told.params.last!.contains("Usage: !photo <id> [<url>] [caption]"))
    }

    func testAPNGAndAWebPFromAFormAreCleanedToo() throws {
        let alice = try token("alice")
        let png = try call(.POST, "/api/v1/photos", token: alice, type: "image/png", body: try fixture("gps.png"))
        XCTAssertEqual(png.status, 201)
        let pngBack = try call(.GET, try XCTUnwrap(png.headers.first(name: "Location")))
        XCTAssertEqual(pngBack.headers.first(name: "Content-Type"), "image/png")
        XCTAssertNil(pngBack.body.range(of: Data("eXIf".utf8)))
        XCTAssertNil(pngBack.body.range(of: Data("52.375N".utf8)))

        // A browser's or curl's form (`curl -F file=@photo.webp`), its declared type ignored.
        let boundary = "chorus-test-boundary"
        var form = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nthe tap\r\n".utf8)
        form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"IMG_1.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
        form += try fixture("gps.webp") + Data("\r\n--\(boundary)--\r\n".utf8)
        let webp = try call(.POST, "/api/v1/photos", token: alice, type: "multipart/form-data; boundary=\(boundary)", body: form)
        XCTAssertEqual(webp.status, 201, String(decoding: webp.body, as: UTF8.self))
        let link = try XCTUnwrap(webp.headers.first(name: "Location"))
        XCTAssertTrue(link.contains("/photo/2.webp?"), link)
        let webpBack = try call(.GET, link)
        XCTAssertEqual(webpBack.headers.first(name: "Content-Type"), "image/webp")
        XCTAssertNil(webpBack.body.range(of: Data("EXIF".utf8)))
        XCTAssertNil(webpBack.body.range(of: Data("PhoneMaker".utf8)))
    }

    func testWhatIsNotAPictureOrNotSignedIsRefused() throws {
        let alice = try token("alice")
        let picture = try fixture("gps.jpg")
        XCTAssertEqual(try call(.POST, "/api/v1/photos", type: "image/jpeg", body: picture).status, 401)
        XCTAssertEqual(try call(.POST, "/api/v1/photos", token: "chorus-" + String(repeating: "0", count: 64), type: "image/jpeg", body: picture).status, 401)
        let html = try call(.POST, "/api/v1/photos", token: alice, type: "image/jpeg", body: Data("<html><script>alert(1)</script>".utf8))
        XCTAssertEqual(html.status, 415)
        XCTAssertEqual(html.json["message"] as? String, "Only JPEG, PNG and WebP pictures are kept, and this is none of them.")
        XCTAssertEqual(try call(.POST, "/api/v1/photos", token: alice, type: "image/gif", body: Data("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8)).status, 415)
        XCTAssertEqual(try call(.POST, "/api/v1/photos", token: alice, type: "image/jpeg", body: picture.prefix(300)).status, 415)
        XCTAssertEqual(try call(.POST, "/api/v1/photos", token: alice).status, 400)
        XCTAssertEqual(try call(.GET, "/api/v1/photos", token: alice).status, 405)
        let tooBig = try call(.POST, "/api/v1/photos", token: alice, type: "image/jpeg", body: picture + Data(count: Photo.maxBytes + 32 * 1024))
        XCTAssertEqual(tooBig.status, 413)
        // Refused on its headers, before its body is read: no token's shape, or too long a body.
        XCTAssertEqual(try rawStatus("POST /api/v1/photos HTTP/1.1\r\nHost: x\r\nContent-Length: 9000000\r\n\r\n"), 401)
        XCTAssertEqual(try rawStatus("POST /api/v1/photos HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(alice)\r\nContent-Length: 99000000\r\n\r\n"), 413)

        let link = try XCTUnwrap(try call(.POST, "/api/v1/photos", token: alice, type: "image/jpeg", body: picture).headers.first(name: "Location"))
        XCTAssertEqual(try call(.GET, link).status, 200, "the connection closed by the 413 left the server serving")
        XCTAssertEqual(try call(.GET, link.replacingOccurrences(of: "/photo/1.jpg", with: "/photo/2.jpg")).status, 403, "another photo's id")
        XCTAssertEqual(try call(.GET, link.replacingOccurrences(of: "/photo/1.jpg", with: "/photo/1.png")).status, 404, "another kind")
        XCTAssertEqual(try call(.GET, String(link.dropLast()) + (link.hasSuffix("0") ? "1" : "0")).status, 403, "a changed signature")
        XCTAssertEqual(try call(.GET, "/photo/1.jpg").status, 403, "no signature")
    }
}

extension PhotoTests {
    /// The status of a request whose head is all that is sent: the answer comes without its body.
    func rawStatus(_ head: String) throws -> Int {
        let client = try TestClient(port: server.webPort, tls: true)
        client.sendRaw(Array(head.utf8))
        let first = client.drainRaw(for: 1).first ?? ""
        return Int(first.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    func testAPhotoUploadedToOneNodeIsServedByAnother() throws {
        try XCTSkipUnless(TestStore.onPostgres, "servers share a database on PostgreSQL only (CHORUS_TEST_STORE=postgres)")
        let shared = "photos-\(UUID().uuidString)"
        let a = try TestServer(sharing: shared) { $0.web = .init(host: "127.0.0.1", port: 0) }
        let b = try TestServer(sharing: shared) { $0.web = .init(host: "127.0.0.1", port: 0) }
        try a.addAccount("carol", "carol-password")
        let secret = AccountToken.newSecret()
        _ = try a.server.store.issueToken(for: "carol", label: "phone", secret: secret, at: Date())
        server = a
        let link = try XCTUnwrap(try call(.POST, "/api/v1/photos", token: secret, type: "image/png", body: try fixture("gps.png"))
            .headers.first(name: "Location"))
        server = b
        let served = try call(.GET, String(link[try XCTUnwrap(link.range(of: "/photo/")).lowerBound...]))
        XCTAssertEqual(served.status, 200, "the other node checks the link with the key they share, and reads the photo: \(String(decoding: served.body, as: UTF8.self)) \(link)")
        XCTAssertEqual(served.headers.first(name: "Content-Type"), "image/png")
    }
}

enum ImageFixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/photos")
}
