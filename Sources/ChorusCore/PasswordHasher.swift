import Crypto
import CryptoExtras
import Foundation

/// Slow salted password hashes with scrypt, stored as `$scrypt$ln=14,r=8,p=1$<salt>$<hash>` (base64).
///
/// Hashing costs tens of milliseconds by design; callers run it off the event loops.
public struct PasswordHasher: Sendable {
    public var logRounds: Int
    public var blockSize: Int
    public var parallelism: Int

    /// `logRounds` 14 is scrypt's interactive-login setting; tests may lower it to stay fast.
    public init(logRounds: Int = 14, blockSize: Int = 8, parallelism: Int = 1) {
        self.logRounds = logRounds
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    public func hash(_ password: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var rng = SystemRandomNumberGenerator()
        for i in salt.indices { salt[i] = UInt8.random(in: .min ... .max, using: &rng) }
        let key = try derive(password, salt: salt, logRounds: logRounds, blockSize: blockSize, parallelism: parallelism)
        return "$scrypt$ln=\(logRounds),r=\(blockSize),p=\(parallelism)$\(Data(salt).base64EncodedString())$\(key.base64EncodedString())"
    }

    /// True when `password` matches `encoded`. Unknown or damaged hashes never match.
    public func verify(_ password: String, against encoded: String) -> Bool {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: true)
        guard parts.count == 4, parts[0] == "scrypt",
              let salt = Data(base64Encoded: String(parts[2])),
              let expected = Data(base64Encoded: String(parts[3])) else { return false }
        var settings: [String: Int] = [:]
        for item in parts[1].split(separator: ",") {
            let kv = item.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { settings[String(kv[0])] = v }
        }
        guard let ln = settings["ln"], let r = settings["r"], let p = settings["p"], (1...20).contains(ln),
              let actual = try? derive(password, salt: Array(salt), logRounds: ln, blockSize: r, parallelism: p)
        else { return false }
        // Compare in constant time so timing does not reveal how much of a guess was right.
        guard actual.count == expected.count else { return false }
        var diff: UInt8 = 0
        for (a, b) in zip(actual, expected) { diff |= a ^ b }
        return diff == 0
    }

    private func derive(_ password: String, salt: [UInt8], logRounds: Int, blockSize: Int, parallelism: Int) throws -> Data {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: 32,
            rounds: 1 << logRounds, blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Data($0) }
    }
}
