import ChorusCore
import Foundation

/// Rooms' webhooks, their positions in the events and their attempts: written once for both databases.
public protocol SQLWebhookStore: WebhookStore, SQLDatabase {}

extension SQLWebhookStore {
    public func insertWebhook(_ hook: Webhook) throws -> Webhook {
        try writing { c in
            var saved = hook
            saved.id = try c.insert("""
                INSERT INTO webhooks (room, url, types, secret, created_by, created_at, delivered_through, failures)
                VALUES (\(hook.room), \(hook.url), \(hook.types.joined(separator: " ")), \(hook.secret),
                  \(hook.createdBy), \(Millis.from(hook.createdAt)), \(hook.deliveredThrough), 0)
                """)
            return saved
        }
    }

    public func webhooks(in room: String) throws -> [Webhook] {
        try reading { c in try c.rows("\(raw: Self.selectHooks) WHERE room = \(room) ORDER BY id").map(Self.hook) }
    }

    public func allWebhooks() throws -> [Webhook] {
        try reading { c in try c.rows("\(raw: Self.selectHooks) ORDER BY id").map(Self.hook) }
    }

    public func webhook(_ id: Int64) throws -> Webhook? {
        try reading { c in try c.rows("\(raw: Self.selectHooks) WHERE id = \(id)").first.map(Self.hook) }
    }

    public func deleteWebhook(_ id: Int64, in room: String) throws -> Bool {
        try writing { c in
            guard try c.run("DELETE FROM webhooks WHERE id = \(id) AND room = \(room)") > 0 else { return false }
            try c.run("DELETE FROM webhook_attempts WHERE hook = \(id)")
            return true
        }
    }

    public func claimWebhook(_ id: Int64, node: String, until: Date, now: Date) throws -> Bool {
        try writing { c in
            try c.run("""
                UPDATE webhooks SET lease_node = \(node), lease_until = \(Millis.from(until))
                WHERE id = \(id) AND (lease_until IS NULL OR lease_until < \(Millis.from(now)) OR lease_node = \(node))
                """) > 0
        }
    }

    public func releaseWebhook(_ id: Int64, node: String) throws {
        try writing { c in
            try c.run("UPDATE webhooks SET lease_node = NULL, lease_until = NULL WHERE id = \(id) AND lease_node = \(node)")
        }
    }

    public func noteWebhookAttempt(_ attempt: WebhookAttempt, position: Int64, nextAttempt: Date?) throws {
        try writing { c in
            if attempt.delivered {
                try c.run("""
                    UPDATE webhooks
                    SET delivered_through = \(position), failures = 0, next_attempt = NULL, last_error = NULL,
                      failing_since = NULL
                    WHERE id = \(attempt.hook)
                    """)
            } else if attempt.status == nil && attempt.error == nil {
                // Passed over (not of the hook's types): further on, but a failing hook stays failing,
                // its next try as far off as its failures say.
                try c.run("UPDATE webhooks SET delivered_through = \(position) WHERE id = \(attempt.hook)")
            } else {
                try c.run("""
                    UPDATE webhooks
                    SET failures = failures + 1, next_attempt = \(nextAttempt.map(Millis.from)),
                      last_error = \(attempt.error ?? "HTTP \(attempt.status ?? 0)"),
                      failing_since = coalesce(failing_since, \(Millis.from(attempt.at)))
                    WHERE id = \(attempt.hook)
                    """)
            }
            guard attempt.status != nil || attempt.error != nil else { return }  // passed over, not sent
            try c.run("""
                INSERT INTO webhook_attempts (hook, event, type, at, status, error, milliseconds)
                VALUES (\(attempt.hook), \(attempt.event), \(attempt.type), \(Millis.from(attempt.at)),
                  \(attempt.status.map(Int64.init)), \(attempt.error), \(Int64(attempt.milliseconds)))
                """)
            try c.run("""
                DELETE FROM webhook_attempts WHERE hook = \(attempt.hook) AND id <= (
                  SELECT id FROM webhook_attempts
                  WHERE hook = \(attempt.hook) ORDER BY id DESC LIMIT 1 OFFSET \(Int64(WebhookAttempt.kept)))
                """)
        }
    }

    public func setWebhookPosition(_ id: Int64, to position: Int64) throws {
        try writing { c in
            try c.run("""
                UPDATE webhooks
                SET delivered_through = \(position), failures = 0, next_attempt = NULL, last_error = NULL,
                  failing_since = NULL
                WHERE id = \(id)
                """)
        }
    }

    public func webhookAttempts(of id: Int64, limit: Int) throws -> [WebhookAttempt] {
        try reading { c in
            try c.rows("""
                SELECT hook, event, type, at, status, error, milliseconds FROM webhook_attempts
                WHERE hook = \(id) ORDER BY id DESC LIMIT \(Int64(max(0, limit)))
                """).reversed().map { row in
                WebhookAttempt(hook: try row.int64("hook"), event: try row.int64("event"), type: try row.string("type"), at: try row.date("at"),
                               status: (try row.int64("status") as Int64?).map(Int.init), error: try row.string("error"),
                               milliseconds: try row.int("milliseconds"))
            }
        }
    }

    public func events(inRoom room: String, after position: Int64, limit: Int) throws -> [Event] {
        try reading { c in
            try c.rows("""
                SELECT \(raw: EventRows.columns) FROM events
                WHERE room = \(room) AND id > \(position) ORDER BY id LIMIT \(Int64(max(0, limit)))
                """).map(EventRows.event)
        }
    }

    public func lastEventID() throws -> Int64 {
        try reading { c in try c.rows("SELECT coalesce(max(id), 0) AS last FROM events").first?.int64("last") ?? 0 }
    }

    private static var selectHooks: String {
        "SELECT id, room, url, types, secret, created_by, created_at, delivered_through, failures, next_attempt, last_error, failing_since FROM webhooks"
    }

    private static func hook(_ row: any SQLRow) throws -> Webhook {
        var hook = Webhook(id: try row.int64("id"), room: try row.string("room"), url: try row.string("url"),
                           types: (try row.string("types") as String).split(separator: " ").map(String.init), secret: try row.string("secret"),
                           createdBy: try row.string("created_by"), createdAt: try row.date("created_at"),
                           deliveredThrough: try row.int64("delivered_through"))
        hook.failures = try row.int("failures")
        hook.nextAttempt = try row.date("next_attempt")
        hook.lastError = try row.string("last_error")
        hook.failingSince = try row.date("failing_since")
        return hook
    }
}
