import ChorusCore
import ChorusPostgres
import ChorusStore
import Foundation

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
        let name = URL(fileURLWithPath: folder).lastPathComponent.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "_" }
        return try postgres(schema: "f_" + String(String(name).suffix(60)))
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
