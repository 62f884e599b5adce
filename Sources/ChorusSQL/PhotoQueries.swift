import ChorusCore
import Foundation

/// Uploaded pictures (`Photo`): written once for both databases.
extension SQLAccountStore {
    public func insertPhoto(_ photo: Photo) throws -> Photo {
        try writing { c in
            var saved = photo
            saved.id = try c.insert("""
                INSERT INTO photos (account, kind, bytes, created_at)
                VALUES (\(Account.key(photo.account)), \(photo.kind.rawValue), \(photo.bytes),
                  \(Millis.from(photo.created)))
                """)
            return saved
        }
    }

    public func photo(_ id: Int64) throws -> Photo? {
        try reading { c in
            try c.rows("SELECT id, account, kind, bytes, created_at FROM photos WHERE id = \(id)").first.map { row in
                try Self.photo(row, bytes: try row.bytes("bytes") ?? Data())
            }
        }
    }

    public func latestPhoto(of account: String, since time: Date) throws -> Photo? {
        try reading { c in
            try c.rows("""
                SELECT id, account, kind, created_at FROM photos
                WHERE account = \(Account.key(account)) AND created_at >= \(Millis.from(time))
                ORDER BY created_at DESC, id DESC LIMIT 1
                """).first.map { try Self.photo($0, bytes: Data()) }
        }
    }

    public func photosUploaded(by account: String, since time: Date) throws -> Int {
        try reading { c in
            try c.rows("""
                SELECT count(*) AS n FROM photos
                WHERE account = \(Account.key(account)) AND created_at >= \(Millis.from(time))
                """).first?.int("n") ?? 0
        }
    }

    private static func photo(_ row: any SQLRow, bytes: Data) throws -> Photo {
        guard let kind = ImageFile.Kind(rawValue: try row.string("kind")) else {
            throw SQLReadError(description: "photo \(try row.int64("id") as Int64) has no kind Chorus keeps")
        }
        return Photo(id: try row.int64("id"), account: try row.string("account"), kind: kind, bytes: bytes, created: try row.date("created_at"))
    }
}
