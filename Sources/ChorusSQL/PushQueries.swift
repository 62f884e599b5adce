import ChorusCore
import Foundation

/// Devices' Web Push subscriptions (`PushSubscription`): written once for both databases.
extension SQLAccountStore {
    public func savePushSubscription(_ subscription: PushSubscription) throws -> PushSubscription {
        try writing { c in
            let s = subscription
            // One row an endpoint: a device that subscribes again (new keys, or another account
            // logged in on it) replaces what it gave before.
            try c.run("""
                INSERT INTO push_subscriptions (account, endpoint, p256dh, auth, created_at)
                VALUES (\(Account.key(s.account)), \(s.endpoint), \(Base64URL.encode(s.p256dh)),
                  \(Base64URL.encode(s.auth)), \(Millis.from(s.created)))
                ON CONFLICT (endpoint) DO UPDATE SET account = excluded.account, p256dh = excluded.p256dh,
                  auth = excluded.auth, created_at = excluded.created_at
                """)
            var saved = s
            saved.account = Account.key(s.account)
            saved.id = try c.rows("SELECT id FROM push_subscriptions WHERE endpoint = \(s.endpoint)").first?.int64("id") ?? 0
            return saved
        }
    }

    public func pushSubscriptions(of account: String) throws -> [PushSubscription] {
        try reading { c in
            try c.rows("""
                SELECT id, account, endpoint, p256dh, auth, created_at FROM push_subscriptions
                WHERE account = \(Account.key(account)) ORDER BY id
                """).map { row in
                PushSubscription(id: try row.int64("id"), account: try row.string("account"), endpoint: try row.string("endpoint"),
                                 p256dh: Base64URL.decode(try row.string("p256dh")) ?? Data(),
                                 auth: Base64URL.decode(try row.string("auth")) ?? Data(), created: try row.date("created_at"))
            }
        }
    }

    public func deletePushSubscription(endpoint: String, of account: String) throws -> Bool {
        try writing { c in
            try c.run("DELETE FROM push_subscriptions WHERE endpoint = \(endpoint) AND account = \(Account.key(account))") > 0
        }
    }

    public func accountsWithPushSubscriptions() throws -> [String] {
        try reading { c in try c.rows("SELECT DISTINCT account FROM push_subscriptions").map { try $0.string("account") } }
    }

    public func deletePushSubscription(_ id: Int64) throws {
        try writing { c in try c.run("DELETE FROM push_subscriptions WHERE id = \(id)") }
    }
}
