import Foundation

extension Migrations {
    /// v22 on: what accounts leave behind, and the doors to programs outside (calendar feeds,
    /// webhooks, photos, push) with the key they are signed with.
    static let accountsAndOutsiders: [Migration] = [
        // A deleted account stays as a tombstone, wiped (`AccountData`): its name is never given to
        // anyone else, so what the team keeps under it never becomes a newcomer's.
        Migration(22, "v22: deleted accounts keep their name", both: """
            ALTER TABLE accounts ADD COLUMN deleted_at INTEGER
            """),
        // A calendar app's subscription (`CalendarFeed`): the signed link names the row, and
        // deleting the row revokes the link.
        Migration(23, "v23: calendar feeds", both: """
            CREATE TABLE calendar_feeds (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              account TEXT NOT NULL,
              room TEXT,
              created_at INTEGER NOT NULL
            );
            CREATE INDEX calendar_feeds_account ON calendar_feeds(account)
            """),
        // Keys every process on the database must share (the one links are signed with), so a
        // link made by one node opens on every other, and a restored backup keeps its links.
        Migration(24, "v24: keys the processes share", both: """
            CREATE TABLE server_keys (
              name TEXT PRIMARY KEY,
              value TEXT NOT NULL
            ) WITHOUT ROWID
            """),
        // Rooms' webhooks (`Webhook`): the events table is the outbox, and a hook's position in it
        // is what has been delivered; a lease lets one process deliver a hook at a time.
        Migration(25, "v25: webhooks", both: """
            CREATE TABLE webhooks (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              room TEXT NOT NULL,
              url TEXT NOT NULL,
              types TEXT NOT NULL,
              secret TEXT NOT NULL,
              created_by TEXT NOT NULL,
              created_at INTEGER NOT NULL,
              delivered_through INTEGER NOT NULL,
              failures INTEGER NOT NULL,
              next_attempt INTEGER,
              last_error TEXT,
              failing_since INTEGER,
              lease_node TEXT,
              lease_until INTEGER
            );
            CREATE INDEX webhooks_room ON webhooks(room);
            CREATE TABLE webhook_attempts (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              hook INTEGER NOT NULL,
              event INTEGER NOT NULL,
              type TEXT NOT NULL,
              at INTEGER NOT NULL,
              status INTEGER,
              error TEXT,
              milliseconds INTEGER NOT NULL
            );
            CREATE INDEX webhook_attempts_hook ON webhook_attempts(hook, id)
            """),
        // Uploaded pictures (`Photo`), metadata taken out: in the store, so every process serves
        // them and a backup holds them.
        Migration(26, "v26: photos", both: """
            CREATE TABLE photos (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              account TEXT NOT NULL,
              kind TEXT NOT NULL,
              bytes BLOB NOT NULL,
              created_at INTEGER NOT NULL
            );
            CREATE INDEX photos_account ON photos(account, created_at)
            """),
        // Devices' Web Push subscriptions (`PushSubscription`): one a push endpoint; the keys as
        // the browser gives them (base64url).
        Migration(27, "v27: push subscriptions", both: """
            CREATE TABLE push_subscriptions (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              account TEXT NOT NULL,
              endpoint TEXT NOT NULL UNIQUE,
              p256dh TEXT NOT NULL,
              auth TEXT NOT NULL,
              created_at INTEGER NOT NULL
            );
            CREATE INDEX push_subscriptions_account ON push_subscriptions(account)
            """),
        // Whom an event reaches (`Event.Reach`) as a column of its own, where it was a `direct`
        // field among the event's particulars (and so in the JSON API's copy of them).
        // The fields are written sorted and without spaces (`StoredForm.json`), so the pair is
        // taken out where it stands: after another, before another, or alone.
        Migration(28, "v28: whom an event reaches", both: """
            ALTER TABLE events ADD COLUMN reach TEXT NOT NULL DEFAULT 'room';
            UPDATE events SET reach = 'concerned',
              data = REPLACE(REPLACE(REPLACE(data, ',"direct":"yes"', ''), '"direct":"yes",', ''), '{"direct":"yes"}', '{}')
            WHERE data LIKE '%"direct":"yes"%'
            """),
    ]
}
