import ChorusSQL
import Foundation

/// The migrations (`Migrations`, shared with SQLite) as PostgreSQL runs them: each once, in order,
/// noted by version in `chorus_migrations`.
enum PostgresSchema {
    /// Applies the migrations the database lacks, each in a transaction of its own. Nodes starting
    /// at once take turns (an advisory lock held until each commits): the second finds the work done.
    static func migrate(_ link: PostgresLink, schema: String?) throws {
        // The lock names the schema, which may not exist yet: `CREATE SCHEMA IF NOT EXISTS` alone
        // is not safe against a second node doing the same.
        let lockName = "chorus migrations " + (schema ?? "")
        let lock: SQL = "SELECT pg_advisory_xact_lock(hashtext(\(lockName)))"
        try link.inTransaction {
            try link.execute(lock)
            if let schema {
                try link.execute("CREATE SCHEMA IF NOT EXISTS \(raw: PostgresLocation.quotedIdentifier(schema))")
            }
            try link.execute("""
                CREATE TABLE IF NOT EXISTS chorus_migrations (
                  version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)
                """)
        }
        try link.inTransaction {
            try link.execute(lock)
            try renumber(link)
        }
        for migration in Migrations.all {
            try link.inTransaction {
                try link.execute(lock)
                let done = try link.query("SELECT 1 FROM chorus_migrations WHERE version = \(migration.version)")
                guard done.isEmpty else { return }
                // One statement at a time: the extended protocol takes no more (no `;` at a line's end inside one).
                for statement in migration.postgres.split(separator: ";\n") where !statement.allSatisfy(\.isWhitespace) {
                    try link.execute(SQL(raw: String(statement).trimmingCharacters(in: CharacterSet(charactersIn: "; \n"))))
                }
                try link.execute("""
                    INSERT INTO chorus_migrations (version, name, applied_at)
                    VALUES (\(migration.version), \(migration.name), \(Int64(Date().timeIntervalSince1970 * 1000)))
                    """)
            }
        }
    }

    /// The numbers PostgreSQL's store gave its migrations before both databases shared one list,
    /// and what each is in that list: its v1 was SQLite's v1 to v14, its v5, v7 and v8 SQLite's
    /// v15 to v17, the rest a cluster's own.
    static let formerVersions: [Int: [Int]] = [1: Array(1...14), 2: [18], 3: [19], 4: [20], 5: [15], 6: [21], 7: [16], 8: [17]]
    static let formerFirstName = "v1: the schema of SQLite's v14"

    /// Notes a database's migrations by their numbers in the one list, where it was migrated
    /// under the former numbers (in the caller's transaction).
    static func renumber(_ link: PostgresLink) throws {
        let first = try link.query("SELECT name FROM chorus_migrations WHERE version = 1")
        guard let name: String = try first.first?.string(0), name == formerFirstName else { return }
        let applied = try link.query("SELECT version, applied_at FROM chorus_migrations").map {
            (version: try $0.int64(0) as Int64, at: try $0.int64(1) as Int64)
        }
        try link.execute("DELETE FROM chorus_migrations")
        let names = Dictionary(uniqueKeysWithValues: Migrations.all.map { ($0.version, $0.name) })
        for (former, at) in applied {
            for version in formerVersions[Int(former)] ?? [] {
                try link.execute("""
                    INSERT INTO chorus_migrations (version, name, applied_at)
                    VALUES (\(version), \(names[version] ?? "v\(version)"), \(at))
                    """)
            }
        }
    }
}
