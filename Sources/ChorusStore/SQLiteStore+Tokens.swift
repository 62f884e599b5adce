import ChorusCore
import Foundation
import GRDB
import ChorusSQL

extension SQLiteStore {
    public func insertToken(_ token: AccountToken) throws -> AccountToken {
        try db.write { db in
            try db.run(sql: "INSERT INTO account_tokens (account, label, digest, created_at) VALUES (?, ?, ?, ?)",
                       arguments: [token.account, token.label, token.digest, Millis.from(token.createdAt)])
            var saved = token
            saved.id = db.lastInsertedRowID
            return saved
        }
    }

    public func tokens(of account: String) throws -> [AccountToken] {
        try db.read { db in
            try Row.fetchAll(cached: db, sql: "SELECT * FROM account_tokens WHERE account = ? ORDER BY id",
                             arguments: [Account.key(account)]).map(Self.token)
        }
    }

    public func token(withDigest digest: String) throws -> AccountToken? {
        try db.read { db in
            try Row.fetchOne(cached: db, sql: "SELECT * FROM account_tokens WHERE digest = ?", arguments: [digest]).map(Self.token)
        }
    }

    public func deleteToken(_ id: Int64, of account: String) throws -> Bool {
        try db.write { db in
            try db.run(sql: "DELETE FROM account_tokens WHERE id = ? AND account = ?", arguments: [id, Account.key(account)])
            return db.changesCount > 0
        }
    }

    public func noteTokenUse(_ id: Int64, at time: Date) throws {
        try db.write { db in
            try db.run(sql: "UPDATE account_tokens SET last_used_at = ? WHERE id = ?", arguments: [Millis.from(time), id])
        }
    }

    static func token(_ row: Row) -> AccountToken {
        AccountToken(id: row["id"], account: row["account"], label: row["label"], digest: row["digest"],
                     createdAt: Millis.date(row["created_at"]), lastUsedAt: (row["last_used_at"] as Int64?).map(Millis.date))
    }
}
