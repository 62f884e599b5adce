import ChorusBot
import ChorusCore
import ChorusIRC
import ChorusWorkspace
import Foundation
import NIOCore

/// The bridge between chat and the Workspace: a `!command` line runs there (in order, group-committed),
/// its events reach this server's connections as the Workspace planned them (`deliver`), and its
/// answer goes to the asker.
extension IRCServer {
    var serviceSource: String { "\(config.serviceNick)!bot@\(name)" }

    /// Runs `text` for the reply's client, typed in `room` or (nil) in private to the service nick.
    func runCommand(_ text: String, in room: LiveRoom?, reply: Reply) {
        let client = reply.client
        guard let account = client.account else {
            return answer("Log in to use commands: REGISTER <name> * <password> makes an account; SASL or PASS logs in.", in: reply, room: room?.name)
        }
        let invocation = self.invocation(for: account.name, nick: client.nick, text: text, in: room)
        // Once the batch has committed, its events and effects have been carried out (the asker's
        // own copies of the events wait in its reply, after the answer): then the answer.
        let started = NIODeadline.now()
        reply.wait(forCommand: perform(BotLine(text, invocation, newSecret: newSecret, links: reportLinks), for: reply)) { outcome in
            self.metrics.commandLatency.recordNanoseconds((NIODeadline.now() - started).nanoseconds)
            self.metrics.commandRan(Bot.commandName(of: text) ?? "unknown", outcome: outcome.refused ? "refused" : "ok")
            for line in outcome.replies { self.answer(line, in: reply, room: room?.name) }
        }
    }

    /// Who runs `text`, where, and what the bot may know about them, as the server stands now.
    func invocation(for account: String, nick: String, text: String, in room: LiveRoom?) -> Invocation {
        let key = Account.key(account)
        var myRooms: [String: String] = [:]
        for live in rooms.values where live.memberships[key] != nil { myRooms[live.key] = live.name }
        // Only the nicks this line mentions, so a command costs nothing per connected client; a nick
        // held on another node names its account too.
        var online: [String: String] = [:]
        for word in text.split(separator: " ").prefix(16) {
            let nick = Names.fold(word.hasPrefix("@") || word.hasPrefix("assignee:") ?
                String(word.drop(while: { $0 != "@" && $0 != ":" }).dropFirst()) : String(word))
            if let a = person(nick: nick)?.account { online[nick] = a }
        }
        online[Names.fold(nick)] = account
        var invocation = Invocation(account: account, nick: nick, room: room.map { .init(key: $0.key, name: $0.name) }, rooms: myRooms,
                                    onlineAccounts: online, timeZone: config.timeZone, now: now())
        invocation.roomsOpenByDefault = config.roomsOpen
        invocation.hooksReachPrivate = config.webhooksToPrivate
        return invocation
    }

    /// A line from the bot to the asker alone, with the same `account` tag as its room events.
    ///
    /// The answer to a command typed in a room is addressed to the room and sent to the asker
    /// alone, so that it shows in the room's window in every client (irssi, WeeChat, HexChat and
    /// the web client alike: `-Chorus:#kitchen- …`), next to the question. A private answer with
    /// `+draft/channel-context`, as Ergo's services send, reaches the room's window only in the
    /// clients that know the tag; the others show it in their status window, away from the
    /// conversation. Answers carry no `chorus/event` tag: that tells them from the room's events.
    private func answer(_ line: String, in reply: Reply, room: String? = nil) {
        reply.add(Outgoing(Message(source: serviceSource, "NOTICE", [room ?? reply.client.nick, line]), time: now(),
                           account: config.serviceNick, overlong: .split))
    }

    /// Runs `command` through the Workspace; its outcome comes back on the loop, with its events
    /// and effects carried out just before, in the same turn (`IRCEventSink`), and `committed`
    /// before them when it was not refused.
    func perform(_ command: any WorkspaceCommand, for reply: Reply, committed: (() -> Void)? = nil) -> EventLoopFuture<Outcome> {
        let asker = Asker(reply: reply, answer: loop.makePromise(of: Outcome.self), committed: committed)
        // The line that typed the command is stored before what the command makes: history's
        // order is the order other processes deliver in.
        flushHistory()
        workspace.run(command, origin: asker)
        return asker.answer.futureResult
    }

    /// What a committed change asks of this server's connections.
    func carryOut(_ effects: [Outcome.Effect], askedBy asker: Client?) {
        for effect in effects {
            switch effect {
            case .closeRoom(let key, let manager): closeRoom(key, by: manager)
            case .roomSettings(let key, let settings):
                rooms[key]?.apply(settings)
                rooms[key]?.noteChangedHere()
            case .memberAdded(let room, let account): admit(account, to: room)
            case .membership(let membership):
                rooms[membership.room]?.memberships[membership.account] = membership
                rooms[membership.room]?.noteChangedHere()
            case .revokeToken(let id):
                web.api.forgetTokens()
                let loggedIn = tokenLogins.filter { $0.value == id }.keys.compactMap { registry.clients[$0] }
                for client in loggedIn { disconnect(client, reason: "Token revoked") }
            case .webhookAdded(let room): webhooks?.hookAdded(in: room)
            }
        }
    }

    /// The sentence people read for `event`, with times in `zone` (the server's by default). Only
    /// the event's own room is looked up: this runs for every event, and rooms are many.
    func eventLine(_ event: Event, in zone: TimeZone? = nil) -> String {
        wording.sentence(event, roomName: event.room.flatMap { rooms[$0]?.name }, in: zone)
    }

    /// Carries out the Workspace's plan for one committed event on this server's connections: the
    /// room's line (already stored) to the members it reaches, and a direct line to each person it
    /// concerns who did not hear it there, queued for them if they are not connected. The asker's
    /// copies go into their reply, after its answer.
    func deliver(_ delivery: Delivery, reply: Reply?) {
        let event = delivery.event
        let t = now()
        let room = event.room.flatMap { rooms[$0] }
        let tags = (delivery.tags ?? EventText.tags(event, roomName: room?.name)).map { Message.Tag($0.0, $0.1) }
        var heardInRoom: (String) -> Bool = { _ in false }
        var text: String?
        if let line = delivery.roomLine, let room {
            room.hasHistory = true
            text = line.text
            let out = Outgoing(Message(source: line.source, "NOTICE", [room.name, line.text]), time: line.time, msgid: line.msgid,
                               account: line.account, clientTags: tags, overlong: .split)
            let reaches = { (member: Client) in delivery.reaches(account: member.account?.key, isManager: room.hearsAsManager(member)) }
            broadcast(out, to: room.members, except: reply?.client, only: reaches)
            if let reply, room.contains(reply.client), reaches(reply.client) { reply.addAfterAnswer(out) }
            // Asked of the few accounts an event concerns, not of every member.
            heardInRoom = { key in
                self.registry.sessions[key]?.contains { room.contains($0) && delivery.reaches(account: key, isManager: room.hearsAsManager($0)) } ?? false
            }
        }
        var offline: [String] = []
        defer {
            // Gone between the commit and now: queued here, in one write for all of them.
            if !offline.isEmpty {
                let id = event.id, away = offline
                persist("queued event") { store in try store.queueEvent(id, for: away) }
            }
            // Whoever could not be told, at the commit or now, hears it on their devices (asked of
            // the few accounts with one before anything is made for them).
            let unheard = (delivery.queued + offline).filter(pushAccounts.contains)
            if !unheard.isEmpty {
                let line = text ?? eventLine(event)
                push(Outgoing(Message(source: serviceSource, "NOTICE", [config.serviceNick, line]), time: t, msgid: ids.next(at: t),
                              account: config.serviceNick, clientTags: tags), to: unheard, urgent: false)
            }
        }
        // Those who were not connected at the commit find the event queued for them: told now
        // too (they may have just come in), they would hear it twice.
        for key in delivery.direct where !heardInRoom(key) && !delivery.queued.contains(key) {
            guard let clients = registry.sessions[key], !clients.isEmpty else {
                // Connected to another process only: its line went there in the command's
                // transaction (`Workspace.tell`), and that process decides whether they heard the
                // room's line.
                if remote.users(ofAccount: key).isEmpty { offline.append(key) }
                continue
            }
            let serverLine = text ?? eventLine(event)
            text = serverLine
            for client in clients {
                // The asker reads times in their own zone; everyone else in the server's.
                let asker = client === reply?.client
                let line = asker && delivery.actorTimeZone != nil ? eventLine(event, in: delivery.actorTimeZone) : serverLine
                let direct = Outgoing(Message(source: serviceSource, "NOTICE", [client.nick, line]), time: t,
                                      msgid: ids.next(at: t), account: config.serviceNick, clientTags: tags, overlong: .split)
                if asker { reply!.addAfterAnswer(direct) } else { send(direct, to: client) }
            }
        }
    }

    /// Someone logged in: a timer that ran on since their last connection closed is asked about
    /// (`TimeArrival`), once their other lines of the login are out.
    func askAboutTimer(of client: Client, account: String) {
        let asker = NIOLoopBound(client, eventLoop: loop)  // the Workspace answers on its writer
        workspace.run(TimeArrival(account, at: now())) { outcome in
            guard !outcome.replies.isEmpty else { return }
            self.loop.execute {
                let client = asker.value
                guard !client.closing else { return }
                for line in outcome.replies {
                    self.send(Outgoing(Message(source: self.serviceSource, "NOTICE", [client.nick, line]), time: self.now(),
                                       account: self.config.serviceNick), to: client)
                }
            }
        }
    }

    /// What happened while an account was away: one line per event, in order.
    func deliverQueuedEvents(to client: Client, accountKey: String) {
        // Taken (read and removed) on the writer, in order with the events queued before it.
        readAfterWrites { store in
            // A notice about a request says what the request is now, or nothing if it is gone.
            try store.takeQueuedEvents(for: accountKey).compactMap { held in
                guard held.type.hasPrefix("request."), let id = held.data["request"].flatMap(Int64.init) else { return held }
                return try MarketBoard.asNow(held, request: try store.request(id)) {
                    try store.offers(on: id).contains { Account.key($0.contractor) == accountKey }
                }
            }
        }.whenSuccess { queued in
            guard !queued.isEmpty, !client.closing else { return }
            // One line per chore, not a flood: of a chore's turn events only the latest still matters.
            var latest: [String: Int] = [:]
            for (i, e) in queued.enumerated() where e.type.hasPrefix("turn.") { latest["\(e.room ?? "") \(e.data["chore"] ?? "")"] = i }
            let events = queued.enumerated().filter { i, e in
                !e.type.hasPrefix("turn.") || latest["\(e.room ?? "") \(e.data["chore"] ?? "")"] == i
            }.map(\.element)
            self.send(Outgoing(Message(source: self.serviceSource, "NOTICE", [client.nick,
                "While you were away (\(events.count)):"]), time: self.now()), to: client)
            for event in events {
                let tags = EventText.tags(event, roomName: event.room.flatMap { self.rooms[$0]?.name }).map { Message.Tag($0.0, $0.1) }
                self.send(Outgoing(Message(source: self.serviceSource, "NOTICE", [client.nick, self.eventLine(event)]), time: event.at,
                                   msgid: self.ids.next(at: event.at), account: self.config.serviceNick, clientTags: tags,
                                   overlong: .split), to: client)
            }
        }
    }

    // MARK: Reminders

    /// Keeps one timer, for the next thing that comes due (capped at an hour, then looked at again).
    func setReminderTimer(for next: Date?) {
        reminderTask?.cancel()
        reminderTask = nil
        guard let next else { return }
        let delay = min(max(0, next.timeIntervalSince(now())), 3600)
        reminderTask = loop.scheduleTask(in: .milliseconds(Int64(delay * 1000) + 1)) { self.workspace.fireDue() }
    }

    /// For tests and operators: fire what is due by the server's clock now, and wait until it has
    /// been delivered.
    public func checkReminders() throws {
        let fired = DispatchSemaphore(value: 0)
        workspace.fireDue { fired.signal() }
        fired.wait()
        try loop.submit {}.wait()
    }

    /// A room was closed (deleted with its memberships, jobs and history, in the command's
    /// transaction): everyone in it is taken out.
    func closeRoom(_ key: String, by manager: String) {
        guard let room = rooms.removeValue(forKey: key) else { return }
        let out = Outgoing(Message(source: serviceSource, "KICK", [room.name, "", "Room closed by \(manager)"]), time: now())
        for member in room.members {
            var line = out
            line.message.params[1] = member.nick
            send(line, to: member)
            member.rooms.removeAll { $0 === room }
            cluster?.presenceChanged(member, note: "Room closed by \(manager)")
        }
    }
}
