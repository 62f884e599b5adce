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
        migrator.registerMigration("v2: jobs, comments, events, requests, room settings") { db in
            try db.execute(sql: """
                CREATE TABLE jobs (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  room TEXT REFERENCES rooms(key) ON DELETE CASCADE,
                  title TEXT NOT NULL,
                  description TEXT NOT NULL DEFAULT '',
                  status TEXT NOT NULL,
                  creator TEXT NOT NULL,
                  creator_key TEXT NOT NULL,
                  assignee TEXT,
                  assignee_key TEXT,
                  due INTEGER,
                  created_at INTEGER NOT NULL,
                  updated_at INTEGER NOT NULL,
                  tasks TEXT NOT NULL DEFAULT '[]',
                  photos TEXT NOT NULL DEFAULT '[]'
                );
                CREATE INDEX jobs_room ON jobs(room, id);
                CREATE INDEX jobs_assignee ON jobs(assignee_key, status);
                CREATE INDEX jobs_personal ON jobs(creator_key) WHERE room IS NULL;
                CREATE TABLE comments (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  job INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
                  author TEXT NOT NULL,
                  text TEXT NOT NULL,
                  at INTEGER NOT NULL
                );
                CREATE INDEX comments_job ON comments(job, id);
                CREATE TABLE events (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  type TEXT NOT NULL,
                  room TEXT,
                  job INTEGER,
                  actor TEXT NOT NULL,
                  data TEXT NOT NULL,
                  at INTEGER NOT NULL,
                  concerns TEXT NOT NULL DEFAULT '[]',
                  audience TEXT
                );
                CREATE INDEX events_job ON events(job, id);
                CREATE TABLE requests (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  room TEXT NOT NULL REFERENCES rooms(key) ON DELETE CASCADE,
                  kind TEXT NOT NULL,
                  job INTEGER,
                  by TEXT NOT NULL,
                  reason TEXT NOT NULL DEFAULT '',
                  state TEXT NOT NULL,
                  decided_by TEXT,
                  at INTEGER NOT NULL
                );
                CREATE INDEX requests_open ON requests(room, state);
                CREATE TABLE room_settings (
                  room TEXT PRIMARY KEY REFERENCES rooms(key) ON DELETE CASCADE,
                  visibility TEXT NOT NULL DEFAULT 'all',
                  creators TEXT NOT NULL DEFAULT 'everyone',
                  echo_commands BOOLEAN NOT NULL DEFAULT 1
                );
                CREATE TABLE queued_events (
                  account TEXT NOT NULL,
                  event INTEGER NOT NULL REFERENCES events(id) ON DELETE CASCADE,
                  PRIMARY KEY (account, event)
                );
                """)
        }
        migrator.registerMigration("v3: account settings") { db in
            try db.execute(sql: """
                CREATE TABLE account_settings (
                  account TEXT PRIMARY KEY REFERENCES accounts(key) ON DELETE CASCADE,
                  time_zone TEXT
                );
                """)
        }
        migrator.registerMigration("v4: chores and shared lists") { db in
            try db.execute(sql: """
                CREATE TABLE chores (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  room TEXT NOT NULL REFERENCES rooms(key) ON DELETE CASCADE,
                  key TEXT NOT NULL,
                  name TEXT NOT NULL,
                  frequency TEXT NOT NULL,
                  hour INTEGER NOT NULL,
                  minute INTEGER NOT NULL,
                  rotation TEXT NOT NULL,
                  current INTEGER NOT NULL,
                  turn_since INTEGER NOT NULL,
                  due INTEGER NOT NULL,
                  created_by TEXT NOT NULL,
                  created_at INTEGER NOT NULL,
                  UNIQUE (room, key)
                );
                CREATE INDEX chores_due ON chores(due);
                CREATE TABLE lists (
                  room TEXT NOT NULL REFERENCES rooms(key) ON DELETE CASCADE,
                  key TEXT NOT NULL,
                  name TEXT NOT NULL,
                  items TEXT NOT NULL DEFAULT '[]',
                  PRIMARY KEY (room, key)
                );
                """)
        }
        migrator.registerMigration("v5: chore reminders") { db in
            try db.execute(sql: """
                ALTER TABLE chores ADD COLUMN last_reminder INTEGER;
                ALTER TABLE chores ADD COLUMN room_told_overdue BOOLEAN NOT NULL DEFAULT 0;
                """)
        }
        migrator.registerMigration("v6: away periods and turn swaps") { db in
            try db.execute(sql: """
                ALTER TABLE memberships ADD COLUMN away_until INTEGER;
                ALTER TABLE chores ADD COLUMN swap_from TEXT;
                ALTER TABLE chores ADD COLUMN swap_to TEXT;
                """)
        }
        migrator.registerMigration("v7: history lines for some members only") { db in
            try db.execute(sql: "ALTER TABLE history ADD COLUMN audience TEXT")
        }
        // AUTOINCREMENT read and rewrote sqlite_sequence on every stored line: one more B-tree
        // update per line and one more page in every commit's log. Nothing needs its promise that a
        // deleted line's id is never reused (lines are found by conversation, time and msgid), so
        // ids are plain rowids now: the next is the largest plus one. The rows keep their ids.
        migrator.registerMigration("v8: history ids without AUTOINCREMENT") { db in
            try db.execute(sql: """
                CREATE TABLE history_v8 (
                  id INTEGER PRIMARY KEY,
                  conversation TEXT NOT NULL,
                  msgid TEXT NOT NULL UNIQUE,
                  time INTEGER NOT NULL,
                  command TEXT NOT NULL,
                  source TEXT NOT NULL,
                  account TEXT,
                  target TEXT NOT NULL,
                  text TEXT NOT NULL,
                  client_tags TEXT NOT NULL DEFAULT '',
                  audience TEXT
                );
                INSERT INTO history_v8 (id, conversation, msgid, time, command, source, account, target, text, client_tags, audience)
                  SELECT id, conversation, msgid, time, command, source, account, target, text, client_tags, audience FROM history;
                DROP TABLE history;
                ALTER TABLE history_v8 RENAME TO history;
                CREATE INDEX history_conversation_time ON history(conversation, time, id);
                """)
        }
        // Private lines to an account that was offline wait for its next login. The line itself is in
        // `history` (written in its own batch, so no foreign key: a hold may be written first).
        migrator.registerMigration("v9: private lines held for offline accounts") { db in
            try db.execute(sql: """
                CREATE TABLE held_lines (
                  account TEXT NOT NULL,
                  msgid TEXT NOT NULL,
                  PRIMARY KEY (account, msgid)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v10: tokens bots log in with") { db in
            try db.execute(sql: """
                CREATE TABLE account_tokens (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  account TEXT NOT NULL,
                  label TEXT NOT NULL,
                  digest TEXT NOT NULL UNIQUE,
                  created_at INTEGER NOT NULL,
                  last_used_at INTEGER
                );
                CREATE INDEX account_tokens_account ON account_tokens(account);
                """)
        }
        // A member's ask of the managers was called a request; service requests need that word.
        migrator.registerMigration("v11: asks, not requests") { db in
            try db.execute(sql: """
                ALTER TABLE requests RENAME TO asks;
                DROP INDEX requests_open;
                CREATE INDEX asks_open ON asks(room, state);
                UPDATE events SET type = 'ask.opened', data = replace(data, '"request":', '"ask":') WHERE type = 'request.opened';
                UPDATE events SET type = 'ask.decided', data = replace(data, '"request":', '"ask":') WHERE type = 'request.decided';
                """)
        }
        // Service requests. Contractors are found by skill through their own index table, never by
        // reading every contractor. A request's events carry its number in a column of their own.
        migrator.registerMigration("v12: service requests") { db in
            try db.execute(sql: """
                CREATE TABLE contractors (
                  account_key TEXT PRIMARY KEY,
                  account TEXT NOT NULL,
                  active BOOLEAN NOT NULL,
                  skills TEXT NOT NULL DEFAULT '',
                  rate INTEGER,
                  area TEXT NOT NULL DEFAULT '',
                  bio TEXT NOT NULL DEFAULT ''
                ) WITHOUT ROWID;
                CREATE TABLE contractor_skills (
                  skill TEXT NOT NULL,
                  account_key TEXT NOT NULL REFERENCES contractors(account_key) ON DELETE CASCADE,
                  PRIMARY KEY (skill, account_key)
                ) WITHOUT ROWID;
                CREATE TABLE service_requests (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  customer TEXT NOT NULL,
                  customer_key TEXT NOT NULL,
                  category TEXT NOT NULL,
                  description TEXT NOT NULL,
                  window TEXT,
                  window_end INTEGER,
                  budget INTEGER,
                  place TEXT,
                  estimate TEXT,
                  status TEXT NOT NULL,
                  contractor TEXT,
                  contractor_key TEXT,
                  created_at INTEGER NOT NULL,
                  updated_at INTEGER NOT NULL
                );
                CREATE INDEX service_requests_open ON service_requests(category, id) WHERE status = 'open';
                CREATE INDEX service_requests_expiry ON service_requests(window_end) WHERE status = 'open' AND window_end IS NOT NULL;
                CREATE INDEX service_requests_customer ON service_requests(customer_key, id);
                CREATE INDEX service_requests_contractor ON service_requests(contractor_key, id) WHERE contractor_key IS NOT NULL;
                CREATE TABLE offers (
                  request INTEGER NOT NULL REFERENCES service_requests(id) ON DELETE CASCADE,
                  contractor_key TEXT NOT NULL,
                  contractor TEXT NOT NULL,
                  price INTEGER NOT NULL,
                  note TEXT NOT NULL DEFAULT '',
                  at INTEGER NOT NULL,
                  PRIMARY KEY (request, contractor_key)
                ) WITHOUT ROWID;
                CREATE INDEX offers_contractor ON offers(contractor_key, request);
                CREATE TABLE reviews (
                  request INTEGER PRIMARY KEY REFERENCES service_requests(id) ON DELETE CASCADE,
                  customer TEXT NOT NULL,
                  contractor TEXT NOT NULL,
                  contractor_key TEXT NOT NULL,
                  rating INTEGER NOT NULL CHECK (rating BETWEEN 1 AND 5),
                  text TEXT NOT NULL,
                  reply TEXT,
                  at INTEGER NOT NULL
                );
                CREATE INDEX reviews_contractor ON reviews(contractor_key);
                ALTER TABLE events ADD COLUMN request INTEGER;
                CREATE INDEX events_request ON events(request, id) WHERE request IS NOT NULL;
                ALTER TABLE room_settings ADD COLUMN market BOOLEAN NOT NULL DEFAULT 0;
                """)
        }
        // Tracked time. One timer per person is a rule of the schema too (the partial unique index);
        // reports sum by SQL over (account_key, start_at), never by loading every entry.
        migrator.registerMigration("v13: tracked time") { db in
            try db.execute(sql: """
                CREATE TABLE time_entries (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  account_key TEXT NOT NULL,
                  account TEXT NOT NULL,
                  mode TEXT NOT NULL,
                  job INTEGER,
                  room TEXT,
                  start_at INTEGER NOT NULL,
                  end_at INTEGER,
                  note TEXT NOT NULL DEFAULT '',
                  left_at INTEGER,
                  nudged BOOLEAN NOT NULL DEFAULT 0
                );
                CREATE INDEX time_entries_account ON time_entries(account_key, start_at);
                CREATE UNIQUE INDEX time_entries_running ON time_entries(account_key) WHERE end_at IS NULL;
                CREATE INDEX time_entries_job ON time_entries(job) WHERE job IS NOT NULL;
                CREATE INDEX time_entries_room ON time_entries(room, start_at) WHERE room IS NOT NULL;
                CREATE TABLE time_modes (
                  account_key TEXT NOT NULL,
                  mode TEXT NOT NULL,
                  PRIMARY KEY (account_key, mode)
                ) WITHOUT ROWID;
                CREATE TABLE time_plan (
                  id INTEGER PRIMARY KEY AUTOINCREMENT,
                  account_key TEXT NOT NULL,
                  account TEXT NOT NULL,
                  mode TEXT NOT NULL,
                  days INTEGER NOT NULL,
                  start_minute INTEGER NOT NULL,
                  end_minute INTEGER NOT NULL
                );
                CREATE INDEX time_plan_account ON time_plan(account_key);
                CREATE TABLE time_settings (
                  account_key TEXT PRIMARY KEY,
                  limit_minutes INTEGER,
                  plan_remind BOOLEAN NOT NULL DEFAULT 0,
                  reminded_until INTEGER
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v14: what each account has seen") { db in
            try db.execute(sql: """
                CREATE TABLE account_presence (
                  account_key TEXT PRIMARY KEY,
                  last_seen INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE read_markers (
                  account_key TEXT NOT NULL,
                  target TEXT NOT NULL,
                  at INTEGER NOT NULL,
                  PRIMARY KEY (account_key, target)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v15: when each board's work comes due") { db in
            // A board's `due_at` is 0 until it is first looked at (due at once); NULL when nothing
            // on it will come due.
            try db.execute(sql: """
                CREATE TABLE due_work (
                  board TEXT PRIMARY KEY,
                  due_at INTEGER
                ) WITHOUT ROWID;
                INSERT INTO due_work (board, due_at) VALUES ('chores', 0), ('requests', 0), ('timers', 0), ('plans', 0);
                """)
        }
        migrator.registerMigration("v16: whose turn passed over them while away") { db in
            try db.execute(sql: "ALTER TABLE chores ADD COLUMN passed_over TEXT")
        }
        migrator.registerMigration("v17: who may join a room") { db in
            // NULL: the server's `rooms` setting decides, until a manager chooses.
            try db.execute(sql: "ALTER TABLE room_settings ADD COLUMN open BOOLEAN")
        }
        return migrator
    }
}
