import Foundation
import GRDB

/// Why a data folder's database cannot be used. Each says which file and what to do.
public enum DataFolderError: Error, Equatable, CustomStringConvertible {
    /// The folder held a database (its marker says since when) and now the file is gone or empty.
    case databaseLost(path: String, since: String, marker: String)
    case damaged(path: String, problems: [String])

    public var description: String {
        switch self {
        case let .databaseLost(path, since, marker):
            return "\(path) is missing or empty, but this data folder has held Chorus's database since \(since). "
                + "Restore the database from a backup (README, \"Backups\"), or, to start a new server with no "
                + "accounts, rooms or history, remove \(marker)."
        case let .damaged(path, problems):
            return "\(path) is damaged (SQLite's integrity check: \(problems.prefix(3).joined(separator: "; "))"
                + (problems.count > 3 ? "; and \(problems.count - 3) more" : "") + "). "
                + "Stop here and restore it from a backup (README, \"Backups\")."
        }
    }
}

/// The folder a server keeps its database in, with the checks made before a server uses it: a
/// database that was there and is now empty is not taken for a new server, and a damaged one is
/// not served from (users would meet "Could not read history" later instead).
public struct DataFolder: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var databasePath: String { path + "/chorus.sqlite" }
    /// Written when the folder's database is made: from then on, an empty database is a loss.
    public var markerPath: String { path + "/chorus.initialized" }

    /// Opens the store after checking it (`check`), making the folder and its database if this is
    /// the folder's first use.
    public func openStore(syncEveryCommit: Bool = false) throws -> SQLiteStore {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let fm = FileManager.default
        let size = (try? fm.attributesOfItem(atPath: databasePath))?[.size] as? Int
        if fm.fileExists(atPath: markerPath), (size ?? 0) == 0 {
            let since = (try? String(contentsOfFile: markerPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            throw DataFolderError.databaseLost(path: databasePath, since: since ?? "an earlier start", marker: markerPath)
        }
        if (size ?? 0) > 0 {
            let problems = try Self.problems(inDatabaseAt: databasePath)
            guard problems.isEmpty else { throw DataFolderError.damaged(path: databasePath, problems: problems) }
        }
        let store = try SQLiteStore(path: databasePath, syncEveryCommit: syncEveryCommit)
        if !fm.fileExists(atPath: markerPath) {
            let stamp = ISO8601DateFormatter().string(from: Date())
            _ = fm.createFile(atPath: markerPath, contents: Data("\(stamp)\n".utf8), attributes: [.posixPermissions: 0o600])
        }
        return store
    }

    /// What SQLite's `quick_check` finds wrong with the database at `path` (empty: nothing).
    /// Opened read-only, so a damaged file is not written to.
    public static func problems(inDatabaseAt path: String) throws -> [String] {
        var config = Configuration()
        config.readonly = true
        do {
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            let rows = try queue.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            return rows == ["ok"] ? [] : rows
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            return [error.message ?? "\(error)"]
        }
    }
}

extension SQLiteStore {
    /// A consistent copy of the database at `path`, taken while the server runs (SQLite's online
    /// backup): what is committed when the copy ends is in it.
    public func backup(to path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: path])
        }
        let destination = try DatabaseQueue(path: path)
        try pool.backup(to: destination)
        try destination.close()
    }
}
