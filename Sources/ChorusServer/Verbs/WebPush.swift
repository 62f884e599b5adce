import ChorusCore
import ChorusIRC
import Foundation

extension IRCServer {
    // WEBPUSH REGISTER <endpoint> <keys>  |  WEBPUSH UNREGISTER <endpoint>   (soju.im/webpush)
    // <keys>: `p256dh=<base64url>;auth=<base64url>`, as a browser's PushSubscription gives them.
    // A device subscribed for an account hears what the account would have been told while none
    // of its connections is open (`PushDeliverer`).
    func handleWebpush(_ reply: Reply, _ m: Message) {
        let subcommand = m.params[0].uppercased()
        guard ["REGISTER", "UNREGISTER"].contains(subcommand) else {
            return reply.fail("INVALID_PARAMS", context: [m.params[0]], "Unknown WEBPUSH subcommand: REGISTER or UNREGISTER",
                              evenWithoutCap: true)
        }
        guard let account = reply.client.account else {
            return reply.fail("ACCOUNT_REQUIRED", context: [subcommand], "Log in to have your devices notified", evenWithoutCap: true)
        }
        guard m.params.count >= 2 else {
            return reply.fail("INVALID_PARAMS", context: [subcommand],
                              subcommand == "REGISTER" ? "Usage: WEBPUSH REGISTER <endpoint> p256dh=<key>;auth=<secret>"
                                                       : "Usage: WEBPUSH UNREGISTER <endpoint>", evenWithoutCap: true)
        }
        let endpoint = m.params[1]
        guard subcommand == "REGISTER" else {
            let removed = readAfterWrites { store in try store.deletePushSubscription(endpoint: endpoint, of: account.name) }
            return reply.wait(for: removed) { result in
                guard case .success = result else {
                    return reply.fail("INTERNAL_ERROR", context: [subcommand], "Could not forget that device; try again", evenWithoutCap: true)
                }
                reply.add(Outgoing(Message(source: self.name, "WEBPUSH", ["UNREGISTER", endpoint]), time: self.now()))
            }
        }
        guard m.params.count >= 3 else {
            return reply.fail("INVALID_PARAMS", context: [subcommand], "Usage: WEBPUSH REGISTER <endpoint> p256dh=<key>;auth=<secret>",
                              evenWithoutCap: true)
        }
        let keys = Self.pushKeys(m.params[2])
        let p256dh = keys["p256dh"].flatMap(Base64URL.decode) ?? Data(), auth = keys["auth"].flatMap(Base64URL.decode) ?? Data()
        if let problem = PushSubscription.problem(endpoint: endpoint, p256dh: p256dh, auth: auth, allowHTTP: config.pushToPrivate) {
            return reply.fail("INVALID_PARAMS", context: [subcommand, endpoint], problem, evenWithoutCap: true)
        }
        let subscription = PushSubscription(account: account.key, endpoint: endpoint, p256dh: p256dh, auth: auth, created: now())
        let saved = readAfterWrites { store -> Bool in
            let others = try store.pushSubscriptions(of: account.name).filter { $0.endpoint != endpoint }
            guard others.count < PushSubscription.perAccount else { return false }
            _ = try store.savePushSubscription(subscription)
            return true
        }
        reply.wait(for: saved) { result in
            switch result {
            case .success(true):
                self.pushAccounts.insert(account.key)
                reply.add(Outgoing(Message(source: self.name, "WEBPUSH", ["REGISTER", endpoint]), time: self.now()))
            case .success(false):
                reply.fail("INVALID_PARAMS", context: [subcommand, endpoint],
                           "\(PushSubscription.perAccount) devices are subscribed already; unregister one first", evenWithoutCap: true)
            case .failure:
                reply.fail("INTERNAL_ERROR", context: [subcommand], "Could not keep that device; try again", evenWithoutCap: true)
            }
        }
    }

    /// `p256dh=…;auth=…` (message-tag form: base64url needs no escapes) as a dictionary.
    static func pushKeys(_ text: String) -> [String: String] {
        var keys: [String: String] = [:]
        for pair in text.split(separator: ";") {
            guard let eq = pair.firstIndex(of: "=") else { continue }
            keys[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }
        return keys
    }

    /// A line for an account that none of its connections heard (they are all closed), to its
    /// devices: as a client with message tags reads it, without its CR LF.
    func push(_ line: Outgoing, to accounts: [String], urgent: Bool) {
        let accounts = accounts.filter(pushAccounts.contains)
        guard let push, !accounts.isEmpty else { return }
        var bytes: [UInt8] = []
        line.write(for: [.messageTags, .serverTime, .accountTag], to: &bytes)
        let first = bytes.split(separator: UInt8(ascii: "\r"), maxSplits: 1).first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        push.send(first, to: accounts, urgent: urgent)
    }
}

extension IRCServer {
    /// Members a room's line names (`ann:`, `@ann`, `thanks ann`) who have no connection open hear
    /// it on their devices.
    func pushMentions(_ out: Outgoing, text: String, in room: LiveRoom, from client: Client) {
        guard !pushAccounts.isEmpty else { return }
        var named: [String] = []
        for word in text.utf8.split(whereSeparator: { !Names.isNickByte($0) }) {
            let key = Account.key(String(decoding: word, as: UTF8.self))
            guard pushAccounts.contains(key), room.memberships[key] != nil, key != client.account?.key, !named.contains(key),
                  registry.sessions[key]?.isEmpty ?? true, remote.users(ofAccount: key).isEmpty else { continue }
            named.append(key)
        }
        push(out, to: named, urgent: false)
    }
}
