import ChorusCore
import ChorusWorkspace
import Foundation

/// `!hook`: a room's webhooks, which its managers add, list, follow and remove. The deliveries
/// themselves are the server's (`WebhookDeliverer`), outside any command.
extension Bot {
    static let hookUsage = "!hooks [#room] | !hook add #room <url> [event types] | !hook rm <id> | !hook log <id> | !hook replay <id> <event id>"

    func hook(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let first = args.peek?.lowercased() ?? "list"
        if first == "list" || first.hasPrefix("#") {
            if first == "list" { _ = args.next() }
            return try listHooks(inv, &args)
        }
        switch args.next()?.lowercased() {
        case "add":
            return try addHook(inv, &args)
        case "rm", "remove", "del":
            let hook = try managedHook(inv, &args)
            _ = try hooks.deleteWebhook(hook.id, in: hook.room)
            return Outcome(replies: ["Webhook \(hook.id) is removed: nothing more is sent to \(hook.url)."])
        case "log":
            let hook = try managedHook(inv, &args)
            let attempts = try hooks.webhookAttempts(of: hook.id, limit: 10)
            guard !attempts.isEmpty else { return Outcome(replies: ["Webhook \(hook.id) has sent nothing yet."]) }
            let at = when(inv)
            return Outcome(replies: ["Webhook \(hook.id), its last attempts (\(attempts.count)):"] + attempts.map { a in
                let result = a.delivered ? "\(a.status!) in \(a.milliseconds) ms" : "failed: \(a.error ?? "HTTP \(a.status ?? 0)")"
                return "  event \(a.event) \(a.type) \(at.format(a.at, now: inv.now)) → \(result)"
            })
        case "replay":
            let hook = try managedHook(inv, &args)
            guard let word = args.next() else { throw UsageError("Missing the event id to send again from. Usage: \(Self.hookUsage)") }
            guard let event = Int64(word), event > 0 else { throw UsageError("\"\(word)\" is not an event id (a number). Usage: \(Self.hookUsage)") }
            try hooks.setWebhookPosition(hook.id, to: event - 1)
            return Outcome(replies: ["Webhook \(hook.id) sends again the room's events from event \(event) on, in order."])
        case nil:
            return try listHooks(inv, &args)
        case let other?:
            throw UsageError("Unknown !hook action \"\(other)\". Usage: \(Self.hookUsage)")
        }
    }

    private func listHooks(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        guard let room = try self.room(inv, &args, required: false) else {
            throw UsageError("Which room? In private: !hooks #room")
        }
        try requireManager(inv, room)
        let all = try hooks.webhooks(in: room.key)
        guard !all.isEmpty else { return Outcome(replies: ["\(room.name) has no webhooks. !hook add \(room.name) <https-url> adds one (in private)."]) }
        let at = when(inv)
        return Outcome(replies: ["Webhooks of \(room.name) (\(all.count)):"] + all.map { hook in
            var line = "  \(hook.id) \(hook.url) — \(hook.types.isEmpty ? "every event" : hook.types.joined(separator: " ")) — sent through event \(hook.deliveredThrough)"
            if let since = hook.failingSince {
                line += "; failing since \(at.format(since, now: inv.now)) (\(hook.failures) \(hook.failures == 1 ? "attempt" : "attempts")): \(hook.lastError ?? "?")"
                if let next = hook.nextAttempt { line += ", next try \(at.format(next, now: inv.now))" }
            }
            return line
        })
    }

    private func addHook(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        // The secret is shown once, where only the asker sees it.
        guard inv.inPrivate else {
            throw UsageError("A webhook's secret is shown when it is made: add it in a private message to me (!hook add #room <url>). Nothing was made.")
        }
        guard let room = try self.room(inv, &args, required: false) else {
            throw UsageError("Which room? !hook add #room <url> [event types]")
        }
        try requireManager(inv, room)
        let url = try args.word("URL", usage: Self.hookUsage)
        try Self.checkHookURL(url, private: inv.hooksReachPrivate)
        var types: [String] = []
        while let word = args.next()?.lowercased() {
            guard EventType.all.contains(where: { $0 == word || $0.hasPrefix(word + ".") }) else {
                throw UsageError("\"\(word)\" is not an event type: job, job.created, turn, request, time … (API.md lists them)")
            }
            types.append(word)
        }
        guard try hooks.webhooks(in: room.key).count < Webhook.maxPerRoom else {
            throw UsageError("\(room.name) has \(Webhook.maxPerRoom) webhooks already: !hook rm <id> removes one.")
        }
        let hook = try hooks.insertWebhook(Webhook(room: room.key, url: url, types: types, secret: newSecret(), createdBy: inv.account,
                                                      createdAt: inv.now, deliveredThrough: try hooks.lastEventID()))
        return Outcome(replies: [
            "Webhook \(hook.id) of \(room.name): \(types.isEmpty ? "every event" : types.joined(separator: " ")) from now on, POSTed to \(url).",
            "Its secret, shown this once: \(hook.secret). Each request carries X-Chorus-Signature: t=<time>,v1=<HMAC-SHA256 of \"<time>.<body>\" with the secret>.",
        ], effects: [.webhookAdded(room: room.key)])
    }

    /// A URL a webhook may have: https (or http where private addresses are allowed), a host, no
    /// credentials, and, unless allowed, no name or address of this machine or its network. A
    /// name is checked again, resolved, before each delivery.
    static func checkHookURL(_ text: String, private allowed: Bool) throws {
        guard text.utf8.count <= Webhook.maxURLLength, let url = URL(string: text), let scheme = url.scheme?.lowercased(),
              let host = url.host, !host.isEmpty, url.user == nil, url.password == nil else {
            throw UsageError("\"\(text.prefix(80))\" is not a URL such as https://example.org/hooks/chorus")
        }
        guard scheme == "https" || (scheme == "http" && allowed) else {
            throw UsageError(allowed ? "A webhook's URL starts with https:// or, for a receiver on a private network, http://"
                                     : "A webhook's URL starts with https:// (plain http is for receivers on a private network, which this server does not allow)")
        }
        guard !allowed else { return }
        if AddressRanges.isPrivateHost(host) {
            throw UsageError("\(host) is this machine or a private network: a webhook reaches public addresses only")
        }
    }

    private func requireManager(_ inv: Invocation, _ room: Invocation.RoomRef) throws {
        guard try board.store.role(of: inv.account, in: room.key) == .manager else {
            throw UsageError("Only managers of \(room.name) see and change its webhooks")
        }
    }

    /// The hook named by the next word, if the asker manages its room.
    private func managedHook(_ inv: Invocation, _ args: inout Args) throws -> Webhook {
        guard let word = args.next() else { throw UsageError("Missing webhook id. Usage: \(Self.hookUsage)") }
        guard let id = Int64(word), id > 0 else { throw UsageError("\"\(word)\" is not a webhook id (a number). Usage: \(Self.hookUsage)") }
        guard let hook = try hooks.webhook(id), try board.store.role(of: inv.account, in: hook.room) == .manager else {
            throw UsageError("There is no webhook \(id) in a room you manage: !hooks #room lists them")
        }
        return hook
    }
}
