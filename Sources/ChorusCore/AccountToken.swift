import Crypto
import Foundation

/// A long-lived secret a bot logs in with instead of its account's password: `PASS name:token`, or
/// SASL PLAIN with the token as the password. A script then holds no password, and the person who
/// made the token can end it alone (`!token revoke`). Only its SHA-256 digest is stored: a token is
/// 32 random bytes, so a slow password hash would add nothing but a slower login.
public struct AccountToken: Equatable, Sendable {
    public var id: Int64
    /// The owner's account key.
    public var account: String
    public var label: String
    public var digest: String
    public var createdAt: Date
    public var lastUsedAt: Date?

    public init(id: Int64 = 0, account: String, label: String, digest: String, createdAt: Date, lastUsedAt: Date? = nil) {
        self.id = id
        self.account = Account.key(account)
        self.label = label
        self.digest = digest
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }

    /// What every token starts with, so a login can tell a token from a password.
    public static let prefix = "chorus-"
    /// Enough for a person's bots; a bound on what one account can make the server store.
    public static let maxPerAccount = 20
    public static let maxLabelLength = 40

    public static func digest(of secret: String) -> String {
        Hex.lowercase(SHA256.hash(data: Data(secret.utf8)))
    }

    /// A new secret from the system's secure random source.
    public static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + Hex.lowercase((0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}

extension Store {
    /// Makes `account` a token whose secret is `secret` (shown to its owner once, kept as a digest):
    /// the rules of `!token new` and `chorusd account token` in one place.
    public func issueToken(for account: String, label: String, secret: String, at time: Date) throws -> AccountToken {
        guard try self.account(named: account) != nil else { throw AccountError.noSuchAccount(account) }
        guard try tokens(of: account).count < AccountToken.maxPerAccount else { throw AccountError.tooManyTokens }
        let label = String(label.trimmingCharacters(in: .whitespaces).prefix(AccountToken.maxLabelLength))
        return try insertToken(AccountToken(account: account, label: label.isEmpty ? "bot" : label,
                                            digest: AccountToken.digest(of: secret), createdAt: time))
    }
}
