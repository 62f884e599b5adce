import ChorusCore
import ChorusWorkspace
import Foundation

extension Bot {
    func rooms(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        guard !inv.rooms.isEmpty else { return Outcome(replies: ["You are not a member of any room yet: /join #name makes one."]) }
        var lines = ["Your rooms (\(inv.rooms.count)):"]
        for (key, name) in inv.rooms.sorted(by: { $0.key < $1.key }) {
            let role = try board.store.role(of: inv.account, in: key)
            lines.append("  \(name) — \(role == .manager ? "manager" : "member")")
        }
        return Outcome(replies: lines)
    }

    func profile(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!profile [nick] | !profile set first|last|email <value> | !profile export"
        if args.peek?.lowercased() == "export" {
            _ = args.next()
            // Whoever holds the link reads everything of yours: it is shown where only you see it.
            guard inv.inPrivate else {
                throw UsageError("Your data's link is a secret: ask for it in a private message to me, not in a room. Nothing was made.")
            }
            guard let links else { throw UsageError("Exports are served by the web side, which is off on this server.") }
            return Outcome(replies: [
                "Your data, as JSON (every row that is yours or names you; never your password's hash or a token's secret): \(links.export(account: inv.account, now: inv.now))",
                "The link works for an hour, for whoever holds it.",
            ])
        }
        if args.peek?.lowercased() == "set" {
            _ = args.next()
            let word = try args.word("field (first, last or email)", usage: usage).lowercased()
            guard let field = AccountRules.ProfileField(rawValue: word) else { throw UsageError("You can set first, last or email. Usage: \(usage)") }
            let value = args.rest()
            guard var account = try accounts.account(named: inv.account) else { throw UsageError("Your account is gone") }
            do { try AccountRules.set(field, to: value, of: &account) } catch { throw UsageError(error.description) }
            try accounts.updateAccount(account)
            return Outcome(replies: ["Saved: \(field.rawValue) is now \(value.isEmpty ? "empty" : value)."])
        }
        let name = try args.next().map { try account($0, inv) } ?? inv.account
        guard let a = try accounts.account(named: name) else { throw UsageError("\(name) is not a registered account") }
        let fullName = [a.firstName, a.lastName].compactMap { $0 }.joined(separator: " ")
        var lines = ["\(a.name)" + (fullName.isEmpty ? "" : " (\(fullName))") + ", member since \(when(inv).format(a.createdAt, now: inv.now))"]
        if AccountRules.showsEmail(of: a, to: inv.account) { lines.append("  email: \(a.email ?? "not set")") }
        let shared = try inv.rooms.keys.sorted().filter { try board.store.role(of: a.name, in: $0) != nil }.map { inv.rooms[$0]! }
        if !shared.isEmpty { lines.append("  rooms you share: " + shared.joined(separator: " ")) }
        if let contractor = try market.store.contractor(a.name) { lines += try contractorLines(contractor) }
        return Outcome(replies: lines)
    }

    func token(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        let usage = "!token | !token new [label] | !token renew <label> | !token revoke <id>"
        switch args.next()?.lowercased() {
        case nil, "list":
            let tokens = try accounts.tokens(of: inv.account)
            guard !tokens.isEmpty else { return Outcome(replies: ["You have no tokens. !token new <label> makes one for a bot."]) }
            let at = when(inv)
            return Outcome(replies: ["Your tokens (\(tokens.count)):"] + tokens.map { t in
                "  \(t.id) \(t.label) — made \(at.format(t.createdAt, now: inv.now)), "
                    + (t.lastUsedAt.map { "last used \(at.format($0, now: inv.now))" } ?? "never used")
            })
        case let verb? where verb == "new" || verb == "renew":
            // An answer to a room command is sent to the asker alone but shown in the room's
            // window, where screens are shared and clients keep their channel logs.
            guard inv.inPrivate else {
                throw UsageError("A token is a secret: make it in a private message to me, not in a room. Nothing was made.")
            }
            let label = args.rest()
            // `renew`: a device or a job that logs in again replaces its own token rather than
            // piling up new ones (the web client renews its device's at each login).
            var replaced: [Int64] = []
            if verb == "renew" {
                guard !label.isEmpty else { throw UsageError("Name the token to renew by its label. Usage: \(usage)") }
                replaced = try accounts.tokens(of: inv.account).filter { $0.label == String(label.prefix(AccountToken.maxLabelLength)) }.map(\.id)
                for id in replaced { _ = try accounts.deleteToken(id, of: inv.account) }
            }
            let secret = newSecret()
            let token: AccountToken
            do {
                token = try accounts.issueToken(for: inv.account, label: label, secret: secret, at: inv.now)
            } catch let error as AccountError {
                throw UsageError(error.description)
            }
            let replacing = replaced.isEmpty ? "" : " It replaces token \(replaced.map(String.init).joined(separator: ", ")), now revoked."
            return Outcome(replies: [
                "Token \(token.id) (\(token.label)): \(secret)",
                "It is shown this once. A bot logs in with PASS \(inv.account):<token>, or SASL PLAIN with the token as its password; !token revoke \(token.id) ends it." + replacing,
            ], effects: replaced.map { .revokeToken($0) })
        case "revoke", "rm":
            guard let word = args.next() else { throw UsageError("Missing token id. Usage: \(usage)") }
            guard let id = Int64(word), id > 0 else { throw UsageError("\"\(word)\" is not a token id (a number). Usage: \(usage)") }
            guard try accounts.deleteToken(id, of: inv.account) else { throw UsageError("You have no token \(id): !token lists yours") }
            return Outcome(replies: ["Token \(id) is revoked: connections logged in with it are closed, and later logins refused."],
                             effects: [.revokeToken(id)])
        case let other?:
            throw UsageError("Unknown !token action \"\(other)\". Usage: \(usage)")
        }
    }

    func tz(_ inv: Invocation, _ args: inout Args) throws -> Outcome {
        guard let zone = args.next() else {
            return Outcome(replies: ["Your time zone is \(inv.timeZone.identifier); now it is \(when(inv).format(inv.now, now: inv.now)). Change it with !tz <zone>, e.g. !tz Europe/Paris."])
        }
        if zone.lowercased() == "server" {
            try board.store.setTimeZone(nil, of: inv.account)
            let server = inv.serverTimeZone ?? inv.timeZone
            let local = When(timeZone: server).format(inv.now, now: inv.now)
            var outcome = Outcome(replies: ["Your times now follow the server's time zone, \(server.identifier) (it is \(local) there)."])
            outcome.movesWhatComesDue = true  // a planned block starts at another instant
            return outcome
        }
        guard let tz = TimeZone(identifier: zone) else {
            throw UsageError("\"\(zone)\" is not a time zone I know: use a name like Europe/Paris, America/New_York or UTC")
        }
        try board.store.setTimeZone(tz.identifier, of: inv.account)
        let local = When(timeZone: tz).format(inv.now, now: inv.now)
        var outcome = Outcome(replies: ["Your time zone is now \(tz.identifier) (it is \(local) there)."])
        outcome.movesWhatComesDue = true
        return outcome
    }
}
