import ChorusCore
import Crypto
import Foundation

/// A push message's body, encrypted to one device (RFC 8291, `aes128gcm` of RFC 8188): only the
/// browser that subscribed can read it; the push service carries bytes it cannot.
///
/// One record: the header (salt, record size, this message's public key) and the padded text
/// sealed with AES-128-GCM under a key and nonce derived from an ECDH agreement between a key made
/// for this message and the device's key, mixed with the device's authentication secret.
enum WebPushMessage {
    /// The record size written in the header: the whole message fits in one record of this size.
    static let recordSize: UInt32 = 4096
    /// The most plaintext one record holds: the size, less the tag (16) and the delimiter (1).
    static let maxPlaintext = Int(recordSize) - 16 - 1

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// `plaintext` sealed for the device whose public key is `p256dh` and secret is `auth`. The
    /// salt and the message's key are fresh unless given (the RFC's example gives both).
    static func encrypt(_ plaintext: Data, p256dh: Data, auth: Data,
                        salt: Data = Data((0..<16).map { _ in UInt8.random(in: 0...255) }),
                        messageKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey()) throws -> Data {
        guard plaintext.count <= maxPlaintext else { throw Failure(description: "a push message holds at most \(maxPlaintext) bytes") }
        let device = try P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        let messagePublic = messageKey.publicKey.x963Representation
        let shared = try messageKey.sharedSecretFromKeyAgreement(with: device)
        // The input keying material: the agreement, mixed with the device's secret and both keys.
        let keyInfo = Data("WebPush: info".utf8) + [0] + p256dh + messagePublic
        let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        let cek = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                         info: Data("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt,
                                           info: Data("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // The last (and only) record ends with the delimiter 2; no padding beyond it.
        let sealed = try AES.GCM.seal(plaintext + [2], using: cek, nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Data($0) }))
        var body = salt
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(messagePublic.count))
        body.append(messagePublic)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}
