import ChorusCore
@testable import ChorusStore
import Foundation
import GRDB
import Synchronization
import XCTest

/// The data folder as `chorusd` opens it: a lost or damaged database is refused, a backup is whole.
final class DataFolderTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("chorus-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    var path: String { folder.appendingPathComponent("test.sqlite").path }
    let fastHasher = PasswordHasher(logRounds: 4)


    /// A folder that held a database and now has an empty one is not taken for a new server: the
    /// error names the file and says how to restore it, or how to start anew on purpose.
    func testAFolderThatLostItsDatabaseRefusesToStart() throws {
        let data = DataFolder(path: folder.appendingPathComponent("data").path)
        let store = try data.openStore()
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        store.close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: data.markerPath))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: data.databasePath + suffix) }
        try Data().write(to: URL(fileURLWithPath: data.databasePath))
        XCTAssertThrowsError(try data.openStore()) { error in
            guard case DataFolderError.databaseLost(let path, _, let marker) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, data.databasePath)
            XCTAssertTrue("\(error)".contains("Restore the database from a backup"), "\(error)")
            XCTAssertEqual(marker, data.markerPath)
        }
        try FileManager.default.removeItem(atPath: data.databasePath)
        XCTAssertThrowsError(try data.openStore(), "a missing database too")
        try FileManager.default.removeItem(atPath: data.markerPath)
        XCTAssertEqual(try data.openStore().allAccounts(), [], "a new server, asked for")
    }

    /// A garbage page in the middle is found at start, not by users paging history later.
    func testADamagedDatabaseIsNotServed() throws {
        let data = DataFolder(path: folder.appendingPathComponent("data").path)
        let store = try data.openStore()
        let t = Date()
        try store.appendHistory((0..<2000).map {
            HistoryEntry(conversation: "#c", msgid: "m\($0)", time: t, command: "PRIVMSG", source: "a!a@h",
                         account: nil, target: "#c", text: String(repeating: "x", count: 100))
        })
        store.close()
        let file = try FileHandle(forWritingTo: URL(fileURLWithPath: data.databasePath))
        try file.seek(toOffset: 4096 * 20)
        try file.write(contentsOf: Data(repeating: 0xA5, count: 4096))
        try file.close()
        XCTAssertThrowsError(try data.openStore()) { error in
            guard case DataFolderError.damaged(let path, let problems) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, data.databasePath)
            XCTAssertFalse(problems.isEmpty)
        }
    }

    /// `chorusd backup` is SQLite's online backup: the copy opens and holds what was committed.
    func testABackupIsACompleteCopy() throws {
        let data = DataFolder(path: folder.appendingPathComponent("data").path)
        let store = try data.openStore()
        _ = try store.insertAccount(Account(name: "ann", passwordHash: "x", createdAt: Date()))
        let copy = folder.appendingPathComponent("copy.sqlite").path
        try store.backup(to: copy)
        XCTAssertThrowsError(try store.backup(to: copy), "an existing file is not overwritten")
        store.close()
        XCTAssertEqual(try DataFolder.problems(inDatabaseAt: copy), [])
        XCTAssertEqual(try SQLiteStore(path: copy).allAccounts().map(\.name), ["ann"])
    }
}
