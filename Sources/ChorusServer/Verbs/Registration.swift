import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

extension IRCServer {
    // CAP LS [302] | CAP LIST | CAP REQ :<caps> | CAP END
    func handleCap(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let target = client.registered ? client.nick : "*"
        switch m.params[0].uppercased() {
        case "LS":
            if !client.registered { client.capNegotiating = true }
            if let v = m.params.dropFirst().first.flatMap({ UInt16($0) }), v > client.capVersion { client.capVersion = v }
            if client.capVersion >= 302 { client.caps.insert(.capNotify) }
            let items = Caps.all.map { cap -> String in
                guard client.capVersion >= 302, let value = cap.value else { return cap.name }
                return "\(cap.name)=\(value)"
            }
            for (i, chunk) in chunked(items, maxBytes: 380).enumerated() {
                let more = i < chunked(items, maxBytes: 380).count - 1
                reply.send(Message(source: name, "CAP", more ? [target, "LS", "*", chunk] : [target, "LS", chunk]))
            }
        case "LIST":
            let enabled = Caps.all.filter { client.caps.contains($0.cap) }.map(\.name).joined(separator: " ")
            reply.send(Message(source: name, "CAP", [target, "LIST", enabled]))
        case "REQ":
            if !client.registered { client.capNegotiating = true }
            let requested = m.params.count > 1 ? m.params[1] : ""
            var add: Caps = [], remove: Caps = []
            for item in requested.split(separator: " ") {
                let off = item.hasPrefix("-")
                guard let cap = Caps.named(String(off ? item.dropFirst() : item)) else {
                    return reply.send(Message(source: name, "CAP", [target, "NAK", requested]))
                }
                if off { remove.insert(cap) } else { add.insert(cap) }
            }
            client.caps.formUnion(add)
            client.caps.subtract(remove)
            reply.send(Message(source: name, "CAP", [target, "ACK", requested]))
        case "END":
            guard !client.registered else { return }
            client.capNegotiating = false
            completeRegistration(reply)
        default:
            reply.send(Message(source: name, "410", [target, m.params[0], "Invalid CAP command"]))
        }
    }

    private func chunked(_ items: [String], maxBytes: Int) -> [String] {
        var chunks: [String] = [], current = ""
        for item in items {
            if !current.isEmpty && current.utf8.count + item.utf8.count + 1 > maxBytes {
                chunks.append(current)
                current = ""
            }
            current += current.isEmpty ? item : " " + item
        }
        chunks.append(current)
        return chunks
    }

    // NICK <nickname>
    func handleNick(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard let nick = m.params.first, !nick.isEmpty else {
            return reply.numeric(.noNicknameGiven, "No nickname given")
        }
        guard Names.isValidNick(nick) else { return reply.numeric(.erroneusNickname, nick, "Erroneous nickname") }
        let key = Names.fold(nick)
        // Before registration a logged-in holder's nick may be this connection's too, if it logs
        // in to the same account (another device): decided when registration ends. After it, a new
        // spelling of one's own nick is every session's.
        let ownNick = client.registered && key == client.nickKey
        if let holder = registry.nicks[key], holder !== client, !ownNick, client.registered || holder.account == nil {
            return reply.numeric(.nicknameInUse, nick, "Nickname is already in use")
        }
        // Before registration a login may still make the nick its person's (`PersonAcrossNodes`):
        // the claim at the end of registration says whether someone else holds it on another node.
        if client.registered && key != client.nickKey && isHeldElsewhere(nick) {
            return reply.numeric(.nicknameInUse, nick, "Nickname is already in use")
        }
        if key == Names.fold(config.serviceNick) {
            return reply.numeric(.erroneusNickname, nick, "That nick belongs to the \(config.serviceNick) service")
        }
        guard client.registered else {
            // Before registration the reservation is checked at the end, once SASL or PASS had its turn.
            client.nick = nick
            client.nickKey = key
            return completeRegistration(reply)
        }
        if nick == client.nick { return }
        // Every session under the nick takes the new one; the first holds the nick's claim.
        let person = registry.first(sharing: client)
        // A new spelling of one's own nick, or one's own account name, needs no lookup (a new
        // spelling is published to the other nodes all the same, where the person may be too).
        if key == client.nickKey {
            return cluster == nil ? changeNick(of: person, to: nick, reply: reply) : takeNick(nick, for: person, reply: reply)
        }
        if key == client.account?.key { return takeNick(nick, for: person, reply: reply) }
        if accountKeys.contains(key) {
            return reply.numeric(.nicknameInUse, nick, "Nickname is reserved by a registered account: log in to use it")
        }
        takeNick(nick, for: person, reply: reply)
    }

    /// Changes a registered client's nick to a new one, once it is claimed across processes.
    private func takeNick(_ nick: String, for client: Client, reply: Reply) {
        guard let cluster else { return changeNick(of: client, to: nick, reply: reply) }
        reply.wait(for: cluster.claimPresence(of: client, nick: nick)) { result in
            switch result {
            case .success(true): self.changeNick(of: client, to: nick, reply: reply)
            case .success(false): reply.numeric(.nicknameInUse, nick, "Nickname is already in use")
            case .failure: reply.fail("TEMPORARILY_UNAVAILABLE", context: [nick], Self.nicksUnavailable, command: "NICK")
            }
        }
    }

    static let nicksUnavailable = "Nicks cannot be checked for a moment (the shared store cannot be reached); try again shortly"

    func changeNick(of client: Client, to nick: String, reply: Reply?) {
        guard !client.closing else { return }
        let out = Outgoing(Message(source: client.prefix, "NICK", [nick]), time: now(), account: client.accountName)
        let (oldNick, oldKey) = (client.nick, client.nickKey)
        registry.rename(client, to: nick, at: now())
        // Watchers hear of a new nick, not of a new spelling of the same one.
        if oldKey != client.nickKey {
            monitoredOffline(nick: oldNick, key: oldKey)
            monitoredOnline(client)
        }
        let sessions = registry.sharing(client)
        let hearers = sessions.count > 1 ? Array(Set(peersAndSelf(of: client) + sessions)) : peersAndSelf(of: client)
        broadcast(out, to: hearers, reply: reply)
    }

    // USER <username> <mode> <unused> :<realname>
    func handleUser(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard !client.registered, client.user.isEmpty else {
            return reply.numeric(.alreadyRegistered, "You may not reregister")
        }
        // Printable ASCII but what would break a prefix; bytes, as every kept one is ASCII.
        // An empty realname is as good as a missing one (irctest; Ergo and InspIRCd answer 461).
        guard !m.params[3].isEmpty else { return reply.numeric(.needMoreParams, "USER", "Not enough parameters") }
        let user = m.params[0].utf8.lazy.filter { $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "@") && $0 != UInt8(ascii: "!") }.prefix(10)
        client.user = "~" + (user.isEmpty ? "user" : String(decoding: Array(user), as: UTF8.self))
        client.realname = String(m.params[3].prefix(Limits.realnameLength))
        completeRegistration(reply)
    }

    // PASS <account>:<password>  (or PASS <password>, with the nick as the account)
    func handlePass(_ reply: Reply, _ m: Message) {
        guard !reply.client.registered else { return reply.numeric(.alreadyRegistered, "You may not reregister") }
        reply.client.pendingPass = m.params[0]
    }

    // PING <token>
    func handlePing(_ reply: Reply, _ m: Message) {
        reply.send(Message(source: name, "PONG", [name, m.params[0]]))
    }

    // PONG [<token>] — liveness is already noted when any line arrives.
    func handlePong(_ reply: Reply, _ m: Message) {}

    // QUIT [:<reason>]
    func handleQuit(_ reply: Reply, _ m: Message) {
        // A user's own reason is marked as theirs, so others can tell it from the server's
        // (`Ping timeout`, `Excess Flood`), as other servers do.
        let reason = "Quit: " + (m.params.first ?? "Client quit")
        reply.client.quitReason = reason
        reply.finish()
        disconnect(reply.client, reason: reason)
    }

    /// Registers the connection once NICK, USER and capability negotiation are done and any login has
    /// finished: checks the nick, sends the welcome burst and puts a logged-in user back in their rooms.
    func completeRegistration(_ reply: Reply) {
        let client = reply.client
        guard !client.registered, client.nick != "*", !client.user.isEmpty, !client.capNegotiating, !client.closing else { return }
        if let pass = client.pendingPass {
            client.pendingPass = nil
            let (account, password): (String, String) = {
                if let colon = pass.firstIndex(of: ":") {
                    return (String(pass[..<colon]), String(pass[pass.index(after: colon)...]))
                }
                return (client.nick, pass)
            }()
            reply.wait(for: checkLogin(account, password, for: client)) { result in
                switch result {
                case .success(let (a, token)):
                    self.logIn(client, as: a, token: token, reply: reply)
                    self.completeRegistration(reply)
                case .failure(let refused as LoginRefused):
                    reply.fail("RATE_LIMITED", context: [account], refused.why, command: "PASS")
                    reply.finish()  // written before the connection closes
                    self.disconnect(client, reason: "Too many failed logins")
                case .failure(let error) where !(error is AccountError):
                    // The store could not answer (a database away): not a wrong password.
                    reply.fail("TEMPORARILY_UNAVAILABLE", context: [account], Self.loginsUnavailable, command: "PASS")
                    reply.finish()
                    self.disconnect(client, reason: "Logins are unavailable for a moment; try again shortly")
                case .failure:
                    reply.numeric(.passwdMismatch, "Password incorrect")
                    reply.finish()  // written before the connection closes
                    self.disconnect(client, reason: "Bad password for account \(account)")
                }
            }
            return
        }
        if let holder = registry.nicks[client.nickKey], holder !== client, !holder.isSamePerson(as: client) {
            reply.numeric(.nicknameInUse, client.nick, "Nickname is already in use")
            return
        }
        if client.account?.key != client.nickKey && accountKeys.contains(client.nickKey) {
            return reply.numeric(.nicknameInUse, client.nick,
                                 "Nickname is reserved by a registered account: log in (SASL or PASS) or pick another nick")
        }
        finishRegistration(reply)
    }

    private func finishRegistration(_ reply: Reply) {
        let client = reply.client
        guard !client.registered, !client.closing else { return }
        let holder = registry.nicks[client.nickKey].flatMap { $0 === client ? nil : $0 }
        if let holder, !holder.isSamePerson(as: client) {
            return reply.numeric(.nicknameInUse, client.nick, "Nickname is already in use")
        }
        // Several processes: the nick must be this connection's in all of them first, or its
        // person's (a second session's nick is its first session's claim here; on another node,
        // the claim is shared by the account's connections: `PersonAcrossNodes`).
        if holder == nil, let cluster, !cluster.holdsNick(client) {
            let nick = client.nick
            return reply.wait(for: cluster.claimPresence(of: client)) { result in
                switch result {
                case .success(true): self.finishRegistration(reply)
                case .success(false): reply.numeric(.nicknameInUse, nick, "Nickname is already in use")
                case .failure:
                    reply.fail("TEMPORARILY_UNAVAILABLE", context: [nick], Self.nicksUnavailable, command: "NICK")
                    reply.finish()
                    self.disconnect(client, reason: "Nicks cannot be checked for a moment; try again shortly")
                }
            }
        }
        client.registered = true
        if let holder {
            registry.register(client, besides: holder)
            sessionArrived(client)
        } else {
            registry.register(client)
            if !hasSessionsElsewhere(client) { monitoredOnline(client) }
        }
        reply.numeric(.welcome, text: "Welcome to the \(config.network) IRC network, \(client.prefix)")
        reply.numeric(.yourHost, text: "Your host is \(name), running version \(version)")
        reply.numeric(.created, text: "This server was created \(welcome.created)")
        reply.numeric(.myInfo, name, version, "iow", "biklmnostv", "bklov")
        for line in welcome.isupport { reply.numeric(.isupport, written: line) }
        sendLusers(reply)
        sendMotd(reply)
        if let account = client.account {
            rejoinRooms(client, reply: reply)
            deliverQueuedEvents(to: client, accountKey: account.key)
            deliverHeldLines(to: client, accountKey: account.key)
            if registry.connections(ofAccount: account.key).count == 1 { askAboutTimer(of: client, account: account.name) }
        }
    }

    /// A login refused without checking the password: too many failures, or too many checks waiting.
    struct LoginRefused: Error {
        let why: String
    }

    static let loginsUnavailable = "Logins are unavailable for a moment (the account store cannot be read); try again shortly"

    /// A password or token check for `account` from `client`'s address. A token (a SHA-256) is
    /// checked at once, throttled or not: guessing one is hopeless, and a guesser must not lock a
    /// bot out. Anything else is a password: an account or address with too many recent failures is
    /// refused at once (`LoginRefused`, saying when to retry) without hashing, and the hash waits its
    /// address's turn for the pool. A password that only looks like a token goes the same way.
    func checkLogin(_ account: String, _ password: String, for client: Client) -> EventLoopFuture<(account: Account, token: Int64?)> {
        let accounts = self.accounts, ip = client.ip
        guard password.hasPrefix(AccountToken.prefix) else { return checkPassword(account, password, from: ip) }
        return background { try accounts.tokenLogIn(name: account, token: password) }.flatMap { found in
            if let (a, token) = found { return self.loop.makeSucceededFuture((account: a, token: Optional(token))) }
            return self.checkPassword(account, password, from: ip)
        }
    }

    /// A throttled login's refusal, a second later (`LoginGate.refusalDelay`).
    private func refusedLater<T>(_ why: String) -> EventLoopFuture<T> {
        let refusal = LoginRefused(why: why)
        return loop.scheduleTask(in: LoginGate.refusalDelay) { () throws -> T in throw refusal }.futureResult
    }

    private func checkPassword(_ account: String, _ password: String, from ip: String) -> EventLoopFuture<(account: Account, token: Int64?)> {
        let gate = loginGate, accounts = self.accounts
        if let seconds = gate.retryAfter(account: account, address: ip, now: now()) {
            // Answered without a hash, but not at once: a guesser that tries again the moment it
            // is refused would keep the event loop answering (11,000 refusals a second from 2,000
            // connections), and the people logging in wait behind that.
            return refusedLater("Too many failed logins for \(account) or from your address; try again in \(seconds) s")
        }
        guard let checked = gate.enqueue(from: ip, on: loop, { self.background { try accounts.passwordLogIn(name: account, password: password) } }) else {
            return refusedLater("Too many logins waiting from your address; try again in a few seconds")
        }
        checked.whenComplete { result in
            switch result {
            case .success: gate.succeeded(account: account, address: ip)
            case .failure(AccountError.wrongPassword):
                gate.failed(account: account, address: ip, at: self.now())
                self.metrics.failedLogins.increment()
            case .failure: break
            }
        }
        return checked.map { (account: $0, token: nil) }
    }

    /// Marks the client as logged in and says so (900).
    /// Before registration the rest waits for `finishRegistration`; a connection that logs in later
    /// (REGISTER or SASL mid-session) takes its account's place in its rooms at once.
    func logIn(_ client: Client, as account: Account, token: Int64? = nil, reply: Reply) {
        client.account = Login(account)
        if let token {
            tokenLogins[ObjectIdentifier(client)] = token
            workspace.run(NoteTokenUse(token, at: now()))
        }
        accountKeys.insert(account.key)
        reply.numeric(.loggedIn, client.prefix, account.name, "You are now logged in as \(account.name)")
        guard client.registered else { return }
        registry.logIn(client, account: account.key)
        cluster?.presenceChanged(client)
        let out = Outgoing(Message(source: client.prefix, "ACCOUNT", [account.name]), time: now())
        broadcast(out, to: peersAndWatchers(of: client), except: client, only: { $0.caps.contains(.accountNotify) })
        settleRooms(of: client, reply: reply)
        deliverQueuedEvents(to: client, accountKey: account.key)
        deliverHeldLines(to: client, accountKey: account.key)
        if registry.connections(ofAccount: account.key).count == 1 { askAboutTimer(of: client, account: account.name) }
    }

    // AUTHENTICATE PLAIN | AUTHENTICATE <base64 chunk> | AUTHENTICATE *
    func handleAuthenticate(_ reply: Reply, _ m: Message) {
        let client = reply.client
        let arg = m.params[0]
        if arg == "*" {
            client.saslPayload = nil
            return reply.numeric(.saslAborted, "SASL authentication aborted")
        }
        guard var payload = client.saslPayload else {
            if client.account != nil { return reply.numeric(.saslAlready, "You have already authenticated using SASL") }
            guard arg.uppercased() == "PLAIN" else {
                reply.numeric(.saslMechs, "PLAIN", "are available SASL mechanisms")
                return reply.numeric(.saslFail, "SASL authentication failed")
            }
            client.saslPayload = ""
            return reply.send(Message("AUTHENTICATE", ["+"]))
        }
        // 905 is for one line over 400 bytes; chunks that add up to more than PLAIN needs fail (904).
        guard arg.utf8.count <= 400 else {
            client.saslPayload = nil
            return reply.numeric(.saslTooLong, "SASL message too long")
        }
        if arg != "+" { payload += arg }
        guard payload.utf8.count <= 1200 else {
            client.saslPayload = nil
            return reply.numeric(.saslFail, "SASL authentication failed: the payload is over 1200 bytes")
        }
        if arg.utf8.count == 400 {  // more chunks follow
            client.saslPayload = payload
            return
        }
        client.saslPayload = nil
        guard let data = Data(base64Encoded: payload) else {
            return reply.numeric(.saslFail, "SASL authentication failed: the payload is not base64")
        }
        let fields = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 3 else { return reply.numeric(.saslFail, "SASL authentication failed: expected authzid\\0authcid\\0password") }
        let (authz, authc, password) = (fields[0], fields[1], fields[2])
        if !authz.isEmpty && Names.fold(authz) != Names.fold(authc) {
            return reply.numeric(.saslFail, "SASL authentication failed: cannot act as another account")
        }
        client.saslAttempts += 1
        if client.saslAttempts > 5 {
            reply.numeric(.saslFail, "SASL authentication failed: too many attempts")
            reply.finish()
            return disconnect(client, reason: "Too many failed login attempts")
        }
        reply.wait(for: checkLogin(authc, password, for: client)) { result in
            switch result {
            case .success(let (account, token)):
                self.logIn(client, as: account, token: token, reply: reply)
                reply.numeric(.saslSuccess, "SASL authentication successful")
            case .failure(let refused as LoginRefused):
                reply.fail("RATE_LIMITED", context: [authc], refused.why, command: "AUTHENTICATE")
                reply.numeric(.saslFail, "SASL authentication failed: \(refused.why)")
            case .failure(let error) where !(error is AccountError):
                reply.fail("TEMPORARILY_UNAVAILABLE", context: [authc], Self.loginsUnavailable, command: "AUTHENTICATE")
                reply.numeric(.saslFail, "SASL authentication failed: \(Self.loginsUnavailable)")
            case .failure:
                reply.numeric(.saslFail, "SASL authentication failed")
            }
        }
    }

    // REGISTER <account|*> <email|*> <password>   (IRCv3 draft/account-registration)
    func handleRegister(_ reply: Reply, _ m: Message) {
        let client = reply.client
        var name = m.params[0]
        if name == "*" {
            guard client.nick != "*" else { return reply.fail("NEED_NICK", context: ["*"], "Send NICK first, or name the account") }
            name = client.nick
        }
        let email = m.params[1] == "*" ? nil : m.params[1]
        let password = m.params[2]
        if client.account != nil {
            return reply.fail("ALREADY_AUTHENTICATED", context: [name], "You are already logged in to \(client.account!.name)")
        }
        do {
            try AccountRules.validate(name: name, password: password, email: email, minimumPasswordLength: accounts.minimumPasswordLength)
        } catch .invalidName {
            return reply.fail("BAD_ACCOUNT_NAME", context: [name], AccountError.invalidName(name).description)
        } catch .weakPassword(let minimum) {
            return reply.fail("WEAK_PASSWORD", context: [name], AccountError.weakPassword(minimum: minimum).description)
        } catch {
            return reply.fail("INVALID_EMAIL", context: [name], error.description)
        }
        if Names.fold(name) == Names.fold(config.serviceNick) {
            return reply.fail("BAD_ACCOUNT_NAME", context: [name], "That name belongs to the \(config.serviceNick) service")
        }
        // An account of that name is said so first, with how to log in to it: its owner is the
        // likeliest one online under its nick.
        if accountKeys.contains(Account.key(name)) {
            return reply.fail("ACCOUNT_EXISTS", context: [name],
                              "\(AccountError.nameTaken(name)); log in to it with PASS \(name):<password> or SASL, or pick another name")
        }
        if let holder = registry.client(nick: name), holder !== client {
            return reply.fail("ACCOUNT_EXISTS", context: [name], "Someone is using that nick right now; pick another name")
        }
        // Accounts are cheap to ask for and each costs a hash and a row: an address makes a few an hour.
        if let seconds = loginGate.registrationRetryAfter(address: client.ip, perHour: config.registrationsPerHour, now: now()) {
            return reply.fail("TEMPORARILY_UNAVAILABLE", context: [name],
                              "Too many accounts made from your address or network; try again in \(seconds) s")
        }
        let accounts = self.accounts
        // Checked and hashed on the thread pool; stored through the Workspace.
        // The hash takes its address's turn for the pool, as a login's does.
        guard let prepared = loginGate.enqueue(from: client.ip, on: loop, {
            self.background { try accounts.prepare(name: name, password: password, email: email) }
        }) else {
            return reply.fail("RATE_LIMITED", context: [name], "Too many requests waiting from your address; try again in a few seconds")
        }
        let opened = prepared.flatMap { account in self.perform(OpenAccount(account), for: reply).map { (account, $0) } }
        reply.wait(for: opened) { result in
            switch result {
            case .success(let (account, outcome)) where !outcome.refused:
                self.loginGate.registered(address: client.ip, at: self.now())
                self.accountKeys.insert(account.key)
                reply.send(Message(source: self.name, "REGISTER", ["SUCCESS", account.name, "Account created"]))
                self.logIn(client, as: account, reply: reply)
            case .success(let (_, outcome)):
                reply.fail(outcome.code ?? "TEMPORARILY_UNAVAILABLE", context: [name], outcome.replies.joined(separator: " "))
            case .failure(let error as AccountError):
                reply.fail("ACCOUNT_EXISTS", context: [name], error.description)  // taken, or retired
            case .failure(let error):
                self.logger.error("REGISTER failed: \(error)")
                reply.fail("TEMPORARILY_UNAVAILABLE", context: [name], "Could not create the account; try again")
            }
        }
    }
}

