@testable import ChorusServer
import Foundation
import NIOCore
import NIOSSL
import XCTest

/// SIGHUP's reload and the certificate watch, on a live server: what can change at once does,
/// what cannot waits for a restart, and a bad certificate never replaces a good one.
final class ReloadTests: XCTestCase {
    func testAReloadChangesTheMOTDAndLimitsAndSaysWhatWaitsForARestart() throws {
        let server = try TestServer()
        var changed = server.config
        changed.motd = "Fresh paint in the kitchen."
        changed.maxChannelsPerClient = 1
        changed.serverName = "renamed.chorus"
        changed.plain = .init(host: "127.0.0.1", port: 1)
        let waiting = server.server.reload(changed)
        XCTAssertEqual(Set(waiting), ["name", "plain"])

        let client = try server.connect()  // the plaintext listener is where it was
        let welcome = try client.register("ann")
        XCTAssertTrue(welcome.contains { $0.command == "372" && $0.params.last == "- Fresh paint in the kitchen." })
        XCTAssertEqual(welcome.first?.source, "test.chorus", "the name waits for a restart")
        try client.join("#one")
        client.send("JOIN #two")
        try client.expect(command: "405")
    }

    func testANewCertificateIsUsedByTheNextHandshakesAndABadOneIsNot() throws {
        let server = try TestServer()
        let first = try peerCertificate(server)

        // A renewal: new files in place of the old; the minute's check finds them.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let cert = folder.appendingPathComponent("cert.pem").path, key = folder.appendingPathComponent("key.pem").path
        _ = try Certificates.ensureSelfSigned(certPath: cert, keyPath: key, serverName: "renewed.chorus")
        try replace(server.config.resolvedCertificatePath, with: cert)
        try replace(server.config.resolvedKeyPath, with: key)
        let irc: IRCServer = server.server
        try irc.loop.submit { irc.listeners.reloadCertificateIfChanged() }.wait()
        let second = try peerCertificate(server)
        XCTAssertNotEqual(first, second, "the renewed certificate")

        // A broken file: the certificate in use stays, and connections go on being made with it.
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: server.config.resolvedCertificatePath))
        try irc.loop.submit { irc.listeners.reloadCertificateIfChanged() }.wait()
        XCTAssertEqual(try peerCertificate(server), second)
    }

    private func replace(_ path: String, with source: String) throws {
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: source, toPath: path)
    }

    /// The certificate a new TLS connection is given, as DER bytes.
    private func peerCertificate(_ server: TestServer) throws -> [UInt8] {
        let client = try server.connect(tls: true)
        try client.register("peek\(UInt16.random(in: 0...9999))")
        let certificate = try client.channel.nioSSL_peerCertificate().wait()
        client.close()
        return try XCTUnwrap(certificate).toDERBytes()
    }
}
