import GRDB

// Statements compiled once per connection and reused. A profile of the `commands` benchmark put
// 40 % of a command's database time in compiling SQL (GRDB's authorizer runs on every compile),
// against the statement cache's dictionary lookup. Same labels as GRDB's, plus `cached:`.

extension Database {
    func run(sql: String, arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }
}

extension DatabaseWriter {
    /// GRDB's `write`, with BEGIN and COMMIT from the statement cache: GRDB compiles both for every
    /// transaction, about 40k instructions of the 100k a one-line history transaction cost
    /// (callgrind). As in GRDB: IMMEDIATE (writers never upgrade a read lock), and a rollback
    /// on any error, including a failed COMMIT.
    func writeTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in
            try db.run(sql: "BEGIN IMMEDIATE TRANSACTION")
            do {
                let result = try body(db)
                try db.run(sql: "COMMIT TRANSACTION")
                return result
            } catch {
                try? db.rollback()
                throw error
            }
        }
    }
}

extension Row {
    static func fetchOne(cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    static func fetchAll(cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible where Self: StatementColumnConvertible {
    static func fetchOne(cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    static func fetchAll(cached db: Database, sql: String, arguments: StatementArguments = StatementArguments()) throws -> [Self] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }
}
