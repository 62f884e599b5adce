import ChorusCore
import ChorusIRC
@testable import ChorusServer
import ChorusTestSupport
import Crypto
import Foundation
import NIOConcurrencyHelpers
import XCTest

/// Web Push (soju.im/webpush): a device registered for an account hears, through its push service
/// (here a receiver on 127.0.0.1, `push-to-private = on`), what the account missed while none of
/// its connections was open; the receiver opens each message with the device's own key, as a
/// browser does, and checks the VAPID signature with the key the server advertised.
final class PushTests: XCTestCase {
    /// RFC 8291, Appendix A: the same keys and salt give the same bytes.
    func testTheRFCsExampleIsSealedByteForByte() throws {
        let messageKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: b64("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let body = try WebPushMessage.encrypt(Data("When I grow up, I want to be a watermelon".utf8),
                                              p256dh: b64("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"),
                                              auth: b64("BTBZMqHH6r4Tts7J_aSIgg"), salt: b64("DGv6ra1nlYgDCS1FRnbzlw"), messageKey: messageKey)
        XCTAssertEqual(Base64URL.encode(body), "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
        let device = try P256.KeyAgreement.PrivateKey(rawRepresentation: b64("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
        XCTAssertEqual(String(decoding: try Device.open(Array(body), key: device, auth: b64("BTBZMqHH6r4Tts7J_aSIgg")), as: UTF8.self),
                       "When I grow up, I want to be a watermelon")
    }

    func testAnAccountsDeviceHearsWhatItMissedSealedAndSigned() throws {
        let status = NIOLockedValueBox(201)
        let receiver = try HookReceiver { _ in status.withLockedValue { $0 } }
        defer { receiver.close() }
        let server = try TestServer { $0.pushToPrivate = true }
        for name in ["ann", "bob"] { try server.addAccount(name, "\(name)-password") }
        let ann = try server.connect()
        let burst = try ann.register("ann", caps: ["soju.im/webpush", "standard-replies"], pass: "ann:ann-password")
        let vapid = try XCTUnwrap(burst.filter { $0.command == "005" }.flatMap(\.params).first { $0.hasPrefix("VAPID=") }?.dropFirst(6))
        let device = Device()
        let endpoint = "http://127.0.0.1:\(receiver.port)/push/ann-phone"
        ann.send("WEBPUSH REGISTER \(endpoint) \(device.keys)")
        try ann.expect(command: "WEBPUSH", "REGISTER", endpoint)
        let bob = try server.connect(as: "bob")
        try bob.join("#den")
        ann.send("JOIN #den")  // bob's room: ann is let in as an account (rooms are open in tests)
        try ann.expect(command: "366", "#den")

        // Connected, ann hears it herself: nothing is pushed.
        bob.send("PRIVMSG ann :are you there?")
        try ann.expect(command: "PRIVMSG", "ann", "are you there?")
        ann.send("QUIT :off")
        try bob.expect(command: "QUIT")
        XCTAssertEqual(receiver.count, 0, "nothing is pushed while the account is connected")

        bob.send("PRIVMSG ann :the plumber comes at 3")
        let first = try receiver.wait(for: 1)[0]
        XCTAssertEqual(first.headers["content-encoding"], "aes128gcm")
        XCTAssertEqual(first.headers["ttl"], "86400")
        XCTAssertEqual(first.headers["urgency"], "high")
        let line = String(decoding: try Device.open(first.body, key: device.key, auth: device.auth), as: UTF8.self)
        let message = try Message.parse(line)
        XCTAssertEqual(message.command, "PRIVMSG")
        XCTAssertEqual(message.params, ["ann", "the plumber comes at 3"])
        XCTAssertTrue(message.source?.hasPrefix("bob!") == true, line)
        XCTAssertTrue(message.tags.contains { $0.key == "msgid" } && message.tags.contains { $0.key == "account" && $0.value == "bob" }, line)
        try Self.checkVAPID(first.headers["authorization"], key: String(vapid), audience: "http://127.0.0.1:\(receiver.port)")

        // An event for her while away: a job given to her, told as the bot's notice.
        bob.send("PRIVMSG #den :!job add Fix the tap @ann")
        try bob.expect("the job") { $0.command == "NOTICE" && $0.params.last?.contains("Fix the tap") == true }
        let second = try receiver.wait(for: 2)[1]
        let event = try Message.parse(String(decoding: try Device.open(second.body, key: device.key, auth: device.auth), as: UTF8.self))
        XCTAssertEqual(event.command, "NOTICE")
        XCTAssertTrue(event.params.last?.contains("Fix the tap") == true, "\(event)")
        XCTAssertTrue(event.tags.contains { $0.key == "chorus/event" }, "\(event)")
        XCTAssertEqual(second.headers["urgency"], "normal")

        // A room's line that names her reaches her; one that does not, or names her in passing
        // inside another word, does not.
        bob.send("PRIVMSG #den :does anyone have a ladder? joanna had one")
        bob.send("PRIVMSG #den :ann: the key is under the mat")
        let third = try receiver.wait(for: 3)[2]
        let mention = try Message.parse(String(decoding: try Device.open(third.body, key: device.key, auth: device.auth), as: UTF8.self))
        XCTAssertEqual(mention.params, ["#den", "ann: the key is under the mat"])
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(receiver.count, 3, "a line that does not name her is not pushed")

        // The push service says the device is gone: it is forgotten, and nothing more is sent.
        status.withLockedValue { $0 = 410 }
        bob.send("PRIVMSG ann :still there?")
        _ = try receiver.wait(for: 4)
        try waitUntil("the subscription is deleted") { try server.server.store.pushSubscriptions(of: "ann").isEmpty }
        bob.send("PRIVMSG ann :hello?")
        try bob.expect(command: "301", "ann")
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(receiver.count, 4)
    }

    func testRegistrationsThatCannotBeKeptAreRefusedWithTheirReason() throws {
        let server = try TestServer()
        try server.addAccount("ann", "ann-password")
        let guest = try server.connect()
        try guest.register("gus", caps: ["standard-replies"])
        let device = Device()
        guest.send("WEBPUSH REGISTER https://push.example.org/gus \(device.keys)")
        try guest.expect(command: "FAIL", "WEBPUSH", "ACCOUNT_REQUIRED", "REGISTER")

        let ann = try server.connect(as: "ann", caps: ["standard-replies"])
        ann.send("WEBPUSH REGISTER http://push.example.org/ann \(device.keys)")
        let plain = try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER")
        XCTAssertTrue(plain.params.last!.contains("https"), "\(plain)")
        for local in ["https://127.0.0.1:8443/push", "https://[::1]/push", "https://printer.local/push", "https://10.0.0.7/push"] {
            ann.send("WEBPUSH REGISTER \(local) \(device.keys)")
            let refused = try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER", local)
            XCTAssertTrue(refused.params.last!.contains("private network"), "\(refused)")
        }
        ann.send("WEBPUSH REGISTER https://push.example.org/ann p256dh=AAAA;auth=\(Base64URL.encode(device.auth))")
        try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER")
        ann.send("WEBPUSH REGISTER https://push.example.org/ann p256dh=\(Base64URL.encode(device.key.publicKey.x963Representation))")
        let noAuth = try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER")
        XCTAssertTrue(noAuth.params.last!.contains("auth"), "\(noAuth)")
        ann.send("WEBPUSH REGISTER")
        try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER")
        ann.send("WEBPUSH SUBSCRIBE x")
        try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "SUBSCRIBE")

        for n in 1...PushSubscription.perAccount {
            ann.send("WEBPUSH REGISTER https://push.example.org/ann/\(n) \(Device().keys)")
            try ann.expect(command: "WEBPUSH", "REGISTER", "https://push.example.org/ann/\(n)")
        }
        ann.send("WEBPUSH REGISTER https://push.example.org/ann/one-more \(device.keys)")
        let full = try ann.expect(command: "FAIL", "WEBPUSH", "INVALID_PARAMS", "REGISTER")
        XCTAssertTrue(full.params.last!.contains("unregister one"), "\(full)")
        // The same device again replaces its keys, and is not one more.
        ann.send("WEBPUSH REGISTER https://push.example.org/ann/1 \(device.keys)")
        try ann.expect(command: "WEBPUSH", "REGISTER", "https://push.example.org/ann/1")
        ann.send("WEBPUSH UNREGISTER https://push.example.org/ann/2")
        try ann.expect(command: "WEBPUSH", "UNREGISTER", "https://push.example.org/ann/2")
        let kept = try server.server.store.pushSubscriptions(of: "ann")
        XCTAssertEqual(kept.count, PushSubscription.perAccount - 1)
        XCTAssertEqual(kept.first { $0.endpoint.hasSuffix("/ann/1") }?.auth, device.auth)
    }

    // MARK: The device's side

    /// A browser's subscription: its key pair and secret, and how it opens a message (RFC 8291).
    struct Device {
        let key = P256.KeyAgreement.PrivateKey()
        let auth = Data((0..<16).map { _ in UInt8.random(in: 0...255) })

        var keys: String { "p256dh=\(Base64URL.encode(key.publicKey.x963Representation));auth=\(Base64URL.encode(auth))" }

        static func open(_ body: [UInt8], key: P256.KeyAgreement.PrivateKey, auth: Data) throws -> Data {
            let salt = Data(body[0..<16])
            let idLength = Int(body[20])
            let sender = Data(body[21..<(21 + idLength)])
            let sealed = Data(body[(21 + idLength)...])
            let shared = try key.sharedSecretFromKeyAgreement(with: try P256.KeyAgreement.PublicKey(x963Representation: sender))
            let info = Data("WebPush: info".utf8) + [0] + key.publicKey.x963Representation + sender
            let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: info, outputByteCount: 32)
            let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm".utf8) + [0],
                                             outputByteCount: 16)
            let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce".utf8) + [0],
                                               outputByteCount: 12)
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }),
                                            ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            var padded = try AES.GCM.open(box, using: cek)
            while padded.last == 0 { padded.removeLast() }
            guard padded.last == 2 else { throw TestError.failed("no last-record delimiter") }
            return padded.dropLast()
        }
    }

    /// `vapid t=<JWT>, k=<key>`: the key is the one advertised, the token is signed by it (ES256)
    /// for the push service's origin, and lasts at most a day (RFC 8292).
    static func checkVAPID(_ header: String?, key: String, audience: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let header = try XCTUnwrap(header, "no Authorization", file: file, line: line)
        XCTAssertTrue(header.hasPrefix("vapid t="), header, file: file, line: line)
        let parts = header.dropFirst("vapid ".count).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let token = try XCTUnwrap(parts.first { $0.hasPrefix("t=") }?.dropFirst(2))
        XCTAssertEqual(parts.first { $0.hasPrefix("k=") }.map { String($0.dropFirst(2)) }, key, file: file, line: line)
        let pieces = token.split(separator: ".").map(String.init)
        XCTAssertEqual(pieces.count, 3, file: file, line: line)
        let publicKey = try P256.Signing.PublicKey(x963Representation: try XCTUnwrap(Base64URL.decode(key)))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try XCTUnwrap(Base64URL.decode(pieces[2])))
        XCTAssertTrue(publicKey.isValidSignature(signature, for: Data("\(pieces[0]).\(pieces[1])".utf8)), "the signature", file: file, line: line)
        let head = try JSONSerialization.jsonObject(with: try XCTUnwrap(Base64URL.decode(pieces[0]))) as? [String: Any]
        XCTAssertEqual(head?["alg"] as? String, "ES256", file: file, line: line)
        let claims = try JSONSerialization.jsonObject(with: try XCTUnwrap(Base64URL.decode(pieces[1]))) as? [String: Any]
        XCTAssertEqual(claims?["aud"] as? String, audience, file: file, line: line)
        let expiry = try XCTUnwrap(claims?["exp"] as? Double, file: file, line: line)
        XCTAssertTrue(expiry > Date().timeIntervalSince1970 && expiry <= Date().timeIntervalSince1970 + 86_400, "exp \(expiry)", file: file, line: line)
        XCTAssertNotNil(claims?["sub"] as? String, file: file, line: line)
    }

    private func waitUntil(_ what: String, within seconds: TimeInterval = 5, _ done: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try done() { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTFail("not within \(seconds) s: \(what)")
    }

    private func b64(_ text: String) -> Data { Base64URL.decode(text)! }
}
