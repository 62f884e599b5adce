import GRDB

/// The schema, one migration per released change. Never edit a migration once it has shipped: add one.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: accounts, rooms, memberships, history") { db in
            try db.execute(sql: """
                CREATE TABLE accounts (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  key TEXT NOT NULL UNIQUE,
                  name TEXT NOT NULL,
                  email TEXT,
                  first_name TEXT,
                  last_name TEXT,
                  password_hash TEXT NOT NULL,
                  created_at INTEGER NOT NULL
                );
                CREATE TABLE rooms (
                  key TEXT PRIMARY KEY,
                  name TEXT NOT NULL,
                  topic TEXT NOT NULL DEFAULT '',
                  topic_set_by TEXT NOT NULL DEFAULT '',
                  topic_set_at INTEGER,
                  invite_only BOOLEAN NOT NULL DEFAULT 0,
                  topic_locked BOOLEAN NOT NULL DEFAULT 1,
                  no_external BOOLEAN NOT NULL DEFAULT 1,
                  secret BOOLEAN NOT NULL DEFAULT 0,
                  moderated BOOLEAN NOT NULL DEFAULT 0,
                  channel_key TEXT,
                  user_limit INTEGER,
                  bans TEXT NOT NULL DEFAULT '',
                  created_at INTEGER NOT NULL
                );
                CREATE TABLE memberships (
                  seq INTEGER PRIMARY KEY AUTOINCREMENT,
                  room TEXT NOT NULL REFERENCES rooms(key) ON DELETE CASCADE,
                  account TEXT NOT NULL REFERENCES accounts(key) ON DELETE CASCADE,
                  role TEXT NOT NULL,
                  voiced BOOLEAN NOT NULL DEFAULT 0,
                  since INTEGER NOT NULL,
                  UNIQUE (room, account)
                );
                CREATE INDEX memberships_account ON memberships(account);
                CREATE TABLE history (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  conversation TEXT NOT NULL,
                  msgid TEXT NOT NULL UNIQUE,
                  time INTEGER NOT NULL,
                  command TEXT NOT NULL,
                  source TEXT NOT NULL,
                  account TEXT,
                  target TEXT NOT NULL,
                  text TEXT NOT NULL,
                  client_tags TEXT NOT NULL DEFAULT ''
                );
                CREATE INDEX history_conversation_time ON history(conversation, time, id);
                """)
        }
        return migrator
    }
}
