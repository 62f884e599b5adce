import ChorusCore
import ChorusPostgres
import ChorusStore
import Foundation
import GRDB

/// The store the tests run on. SQLite unless `CHORUS_TEST_STORE=postgres`, when every test that
/// asks for a store here gets PostgreSQL at `CHORUS_TEST_POSTGRES` (a URL; `.ci/run` starts a
/// throw-away cluster with `Tests/postgres/cluster.sh`), in a schema of its own. So the same suite
/// runs against both stores; tests of SQLite's own file handling open `SQLiteStore` themselves.
public enum TestStore {
    public static var onPostgres: Bool { ProcessInfo.processInfo.environment["CHORUS_TEST_STORE"] == "postgres" }

    /// An empty store: SQLite in memory, or a new PostgreSQL schema.
    public static func fresh() throws -> any ChorusStorage {
        guard onPostgres else { return try SQLiteStore.inMemory() }
        return try postgres(schema: "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""))
    }

    /// The store kept for the data folder `folder`: opening the same folder again finds what was written.
    public static func at(folder: String) throws -> any ChorusStorage {
        guard onPostgres else { return try SQLiteStore(path: folder + "/chorus.sqlite") }
        return try postgres(schema: schemaName(folder: folder))
    }

    /// What a server on `store` shares with other processes: PostgreSQL's log and presence.
    public static func cluster(of store: any ChorusStorage) -> ClusterLink? {
        (store as? PostgresStore).map { ClusterLink(log: $0, presence: $0) }
    }

    /// The PostgreSQL URL of the store `at(folder:)` opens for `folder`, for a `chorusd` process of
    /// the test's to share it.
    public static func postgresURL(folder: String) throws -> String {
        guard let url = ProcessInfo.processInfo.environment["CHORUS_TEST_POSTGRES"] else { throw Missing() }
        return url + (url.contains("?") ? "&" : "?") + "schema=" + schemaName(folder: folder)
    }

    private static func schemaName(folder: String) -> String {
        let name = URL(fileURLWithPath: folder).lastPathComponent.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
        return "f_" + String(String(name).suffix(60))
    }

    public static func postgres(schema: String) throws -> PostgresStore {
        guard let url = ProcessInfo.processInfo.environment["CHORUS_TEST_POSTGRES"] else {
            throw Missing()
        }
        var location = try PostgresLocation(url)
        location.schema = schema
        return try PostgresStore(location: location, connections: 2)
    }

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "CHORUS_TEST_STORE=postgres needs CHORUS_TEST_POSTGRES, a URL: eval \"$(bash Tests/postgres/cluster.sh start)\""
        }
    }
}

extension TestStore {
    /// Renames a table of the store kept for `folder`, behind the store's back, with a connection
    /// of the test's own: what a database that cannot answer looks like to the server (the store's
    /// statements fail), and renaming it back is the database returning.
    public static func renameTable(_ table: String, to name: String, folder: String) throws {
        if onPostgres {
            let store = try at(folder: folder) as! PostgresStore
            defer { store.close() }
            try store.execute(unchecked: "ALTER TABLE \(table) RENAME TO \(name)")
        } else {
            // The server's own writers (its checkpointer, say) may hold the lock a moment: wait for it.
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            let queue = try DatabaseQueue(path: folder + "/chorus.sqlite", configuration: configuration)
            try queue.write { try $0.execute(sql: "ALTER TABLE \(table) RENAME TO \(name)") }
            try queue.close()
        }
    }

    /// Ends, from the database's side, the connections that LISTEN for the wake-ups of the store
    /// kept for `folder`: what a dropped connection looks like to the processes (PostgreSQL only).
    public static func endListeners(folder: String) throws {
        let store = try at(folder: folder) as! PostgresStore
        defer { store.close() }
        // The channel names the schema (`PostgresLocation.channel`).
        try store.execute(unchecked: """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE query LIKE 'LISTEN %' AND strpos(query, current_schema()) > 0
            """)
    }

    /// Appends a line to the log of the store kept for `folder` as the store does, but with no
    /// wake-up: what a notification that never arrived looks like to the others (PostgreSQL only).
    public static func appendWithoutWakeUp(msgid: String, text: String, room: String = "#flat", at time: Date = Date(timeIntervalSince1970: 0),
                                           folder: String) throws {
        let store = try at(folder: folder) as! PostgresStore
        defer { store.close() }
        try store.execute(unchecked: """
            WITH locked AS (SELECT pg_advisory_xact_lock(hashtext('chorus history ' || current_schema())))
            INSERT INTO history (conversation, msgid, time, command, source, account, target, text, client_tags, node)
            SELECT '\(room)', '\(msgid)', \(Int64(time.timeIntervalSince1970 * 1000)), 'PRIVMSG', 'ben!b@h', 'ben', '\(room)', '\(text)', '',
              'elsewhere' FROM locked
            """)
    }
}
