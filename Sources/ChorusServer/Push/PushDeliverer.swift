import AsyncHTTPClient
import ChorusCore
import Crypto
import Foundation
import JWTKit
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// Web Push (RFC 8030) to the devices an account subscribed (`PushSubscription`): each message is
/// one IRC line, encrypted to the device (`WebPushMessage`, RFC 8291) and signed for the push
/// service by this server's VAPID key (RFC 8292), which every process of a cluster shares (it is
/// the database's, as the link key is). A push service that says a subscription is gone (404,
/// 410) has it deleted. Sends run on tasks of their own: a slow push service never holds a command.
final class PushDeliverer: Sendable {
    /// The VAPID public key, uncompressed and base64url: the `VAPID` ISUPPORT token a browser
    /// subscribes with.
    let vapidKey: String
    private let signer: ES256PrivateKey
    private let contact: String
    private let store: any ChorusStorage
    private let allowPrivate: Bool
    private let logger: Logger

    /// How long a push service keeps a message for a device that is off (RFC 8030 `TTL`): a day.
    static let timeToLive = 86_400
    static let timeout: TimeAmount = .seconds(15)
    /// How long a VAPID token is good for (at most a day, RFC 8292 §2).
    static let tokenLifetime: TimeInterval = 12 * 3600

    init(store: any ChorusStorage, contact: String, allowPrivate: Bool, logger: Logger) throws {
        let raw = try store.sharedKey("vapid", proposing: P256.Signing.PrivateKey().rawRepresentation)
        let key = try P256.Signing.PrivateKey(rawRepresentation: raw)
        vapidKey = Base64URL.encode(key.publicKey.x963Representation)
        signer = try ES256PrivateKey(backing: key)
        self.contact = contact
        self.store = store
        self.allowPrivate = allowPrivate
        self.logger = logger
    }

    /// Sends `line` (one IRC line, as a client with message tags reads it) to every device of
    /// each account; `urgent` for what a person should see at once (a private message).
    func send(_ line: String, to accounts: [String], urgent: Bool) {
        guard !accounts.isEmpty else { return }
        let payload = Data(line.utf8.prefix(WebPushMessage.maxPlaintext))
        Task {
            for account in accounts {
                let subscriptions: [PushSubscription]
                do {
                    let store = self.store
                    subscriptions = try await NIOThreadPool.singleton.runIfActive { try store.pushSubscriptions(of: account) }
                } catch {
                    logger.error("could not read push subscriptions", metadata: ["account": "\(account)", "error": "\(error)"])
                    continue
                }
                for subscription in subscriptions { await send(payload, to: subscription, urgent: urgent) }
            }
        }
    }

    private func send(_ payload: Data, to subscription: PushSubscription, urgent: Bool) async {
        let endpoint = subscription.endpoint
        var client: HTTPClient?
        do {
            let target = try await OutboundTarget(endpoint, allowPrivate: allowPrivate, timeout: Self.timeout)
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: target.configuration)
            client = http
            var request = HTTPClientRequest(url: endpoint)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/octet-stream")
            request.headers.add(name: "Content-Encoding", value: "aes128gcm")
            request.headers.add(name: "TTL", value: "\(Self.timeToLive)")
            request.headers.add(name: "Urgency", value: urgent ? "high" : "normal")
            request.headers.add(name: "Authorization", value: try await authorization(for: endpoint))
            request.body = .bytes(ByteBuffer(bytes: try WebPushMessage.encrypt(payload, p256dh: subscription.p256dh, auth: subscription.auth)))
            let response = try await http.execute(request, timeout: Self.timeout)
            switch response.status.code {
            case 200..<300:
                break
            case 404, 410:
                // The browser unsubscribed, or the push service forgot the device: never again.
                logger.info("a push subscription is gone", metadata: ["account": "\(subscription.account)", "status": "\(response.status.code)"])
                let store = self.store, id = subscription.id
                try await NIOThreadPool.singleton.runIfActive { try store.deletePushSubscription(id) }
            default:
                logger.warning("a push service refused a message",
                               metadata: ["account": "\(subscription.account)", "status": "\(response.status.code)"])
            }
        } catch {
            logger.warning("could not send a push message", metadata: ["account": "\(subscription.account)", "error": "\(error)"])
        }
        try? await client?.shutdown()
    }

    /// `vapid t=<token>, k=<key>` (RFC 8292 §3): a token for the push service's origin, signed
    /// with the server's key, and the key itself.
    func authorization(for endpoint: String, now: Date = Date()) async throws -> String {
        guard let url = URL(string: endpoint), let scheme = url.scheme, let host = url.host else {
            throw WebPushMessage.Failure(description: "not a URL: \(endpoint.prefix(80))")
        }
        let origin = "\(scheme)://\(host)" + (url.port.map { ":\($0)" } ?? "")
        let claims = VapidClaims(aud: AudienceClaim(value: [origin]), exp: ExpirationClaim(value: now.addingTimeInterval(Self.tokenLifetime)),
                                 sub: SubjectClaim(value: contact))
        let keys = await JWTKeyCollection().add(ecdsa: signer)
        return "vapid t=\(try await keys.sign(claims)), k=\(vapidKey)"
    }
}

/// What a VAPID token says (RFC 8292 §2): for which push service, until when, and who to contact.
struct VapidClaims: JWTPayload {
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var sub: SubjectClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}
