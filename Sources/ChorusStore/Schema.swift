import ChorusSQL
import GRDB

/// The migrations (`Migrations`, shared with PostgreSQL) as GRDB runs them: each once, in order,
/// known in the file by its name.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in Migrations.all {
            let sql = migration.sqlite
            migrator.registerMigration(migration.name) { db in
                if !sql.isEmpty { try db.execute(sql: sql) }
            }
        }
        return migrator
    }
}
