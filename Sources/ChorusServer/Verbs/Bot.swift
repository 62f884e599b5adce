import ChorusBot
import ChorusCore
import ChorusIRC
import Foundation
import NIOCore

/// The bridge between chat and the bot: a `!command` line runs on the database writer (so commands
/// never race), then its replies go to the asker and its events to everyone allowed to see them.
extension IRCServer {
    var serviceSource: String { "\(config.serviceNick)!bot@\(name)" }

    /// Runs `text` for the reply's client, typed in `room` or (nil) in private to the service nick.
    func runCommand(_ text: String, in room: LiveRoom?, reply: Reply) {
        let client = reply.client
        guard let account = client.account else {
            return reply.send(Message(source: serviceSource, "NOTICE", [client.nick,
                "Log in to use commands: REGISTER <name> * <password> makes an account; SASL or PASS logs in."]))
        }
        var myRooms: [String: String] = [:]
        for live in rooms.values where live.memberships[account.key] != nil { myRooms[live.key] = live.name }
        // Only the nicks this line mentions, so a command costs nothing per connected client.
        var online: [String: String] = [:]
        for word in text.split(separator: " ").prefix(16) {
            let nick = Names.fold(word.hasPrefix("@") || word.hasPrefix("assignee:") ?
                String(word.drop(while: { $0 != "@" && $0 != ":" }).dropFirst()) : String(word))
            if let a = nicks[nick]?.account { online[nick] = a.name }
        }
        online[client.nickKey] = account.name
        let invocation = Invocation(account: account.name, nick: client.nick,
                                    room: room.map { .init(key: $0.key, name: $0.name) }, rooms: myRooms,
                                    onlineAccounts: online, timeZone: config.timeZone, now: now())
        reply.suspendForCommand()
        pendingCommands.append(PendingCommand(text: text, invocation: invocation, reply: reply))
        startCommandBatch()
    }

    /// Group commit: the commands waiting when the writer is free run in one transaction, and
    /// their replies and events go out only after it has committed.
    private func startCommandBatch() {
        guard !commandBatchRunning, !pendingCommands.isEmpty else { return }
        commandBatchRunning = true
        let batch = pendingCommands
        pendingCommands.removeAll()
        let bot = self.bot
        // The history lines waiting to be written share the batch's commit rather than one of their own.
        let history = takePendingHistory()
        readAfterWrites { store -> [BotResult] in
            var results: [BotResult] = []
            do {
                try store.inOneTransaction {
                    try store.appendHistory(history)
                    for command in batch {
                        // A refused command takes back what it wrote; the others of the batch stand.
                        try store.attempt {
                            let result = bot.run(command.text, command.invocation)
                            results.append(result)
                            return !result.refused
                        }
                    }
                }
            } catch {
                // Nothing of the batch was committed: say so rather than what would have happened.
                self.logger.error("command batch failed: \(error)")
                do { try store.appendHistory(history) } catch { self.logger.error("could not save history: \(error)") }
                results = batch.map { _ in BotResult(replies: ["Sorry, that did not work. Nothing was changed."]) }
            }
            return results
        }.whenComplete { outcome in
            self.commandBatchRunning = false
            let results = (try? outcome.get()) ?? batch.map { _ in BotResult(replies: ["Sorry, that did not work. Nothing was changed."]) }
            for (command, result) in zip(batch, results) {
                self.deliver(result, reply: command.reply)
                command.reply.commandFinished()
            }
            self.startCommandBatch()
        }
    }

    private func deliver(_ outcome: BotResult, reply: Reply) {
        for line in outcome.replies {
            reply.send(Message(source: serviceSource, "NOTICE", [reply.client.nick, line]))
        }
        for event in outcome.events { announce(event, reply: reply, askerZone: outcome.timeZone) }
        if outcome.events.contains(where: { $0.type.hasPrefix("chore.") || $0.type.hasPrefix("turn.") }) { scheduleReminders() }
        for effect in outcome.effects {
            switch effect {
            case .closeRoom(let key): closeRoom(key, by: reply.client)
            case .setEchoCommands(let key, let on): rooms[key]?.echoCommands = on
            case .revokeToken(let id):
                let loggedIn = tokenLogins.filter { $0.value == id }.keys.compactMap { clients[$0] }
                for client in loggedIn { disconnect(client, reason: "Token revoked") }
            }
        }
    }

    /// The sentence people read for `event`, with times in `zone` (the server's by default). Only
    /// the event's own room is looked up: this runs for every event, and rooms are many.
    private func eventLine(_ event: Event, in zone: TimeZone? = nil) -> String {
        let names = event.room.flatMap { key in rooms[key].map { [key: $0.name] } } ?? [:]
        return EventText(when: When(timeZone: zone ?? config.timeZone), now: now(), roomName: { names[$0] ?? $0 }).line(event)
    }

    /// Sends an event to the room members who may see it, stores it in the room's history, and tells
    /// the people it concerns directly (queued for them if they are offline). An event without a room
    /// (a personal job's) is told to its actor, with the same tags, so a bot learns the job's id.
    func announce(_ event: Event, reply: Reply?, askerZone: TimeZone? = nil) {
        let text = eventLine(event)
        let t = now()
        let msgid = ids.next(at: t)
        let room = event.room.flatMap { rooms[$0] }
        let tags = EventText.tags(event, roomName: room?.name).map { Message.Tag($0.0, $0.1) }
        // Who heard the room's line: a signed-in member in its audience (or a manager).
        var heardInRoom: (String) -> Bool = { _ in false }
        if let room, !event.isDirectOnly {
            let audience = event.audience.map { Set($0.map(Account.key)) }
            let out = Outgoing(Message(source: serviceSource, "NOTICE", [room.name, text]), time: t, msgid: msgid,
                               account: config.serviceNick, clientTags: tags)
            broadcast(out, to: room.members, reply: reply, only: { member in
                guard let audience else { return true }
                return room.isOp(member) || (member.account.map { audience.contains($0.key) } ?? false)
            })
            // Asked of the few accounts an event concerns, not of every member.
            heardInRoom = { key in
                self.sessions[key]?.contains { room.contains($0) && (audience?.contains(key) ?? true || room.isOp($0)) } ?? false
            }
            record(HistoryEntry(conversation: room.key, msgid: msgid, time: t, command: "NOTICE", source: serviceSource,
                                account: config.serviceNick, target: room.name, text: text,
                                clientTags: Message.serializedTags(tags), audience: event.audience.map { $0.map(Account.key) }))
        }
        let told = event.room == nil ? event.concerns + [event.actor] : event.concerns
        for name in Set(told.map(Account.key)) where !heardInRoom(name) {
            if let clients = sessions[name], !clients.isEmpty {
                for client in clients {
                    // The asker reads times in their own zone; everyone else in the server's.
                    let line = client === reply?.client && askerZone != nil ? eventLine(event, in: askerZone) : text
                    let direct = Outgoing(Message(source: serviceSource, "NOTICE", [client.nick, line]), time: t,
                                          msgid: ids.next(at: t), account: config.serviceNick, clientTags: tags)
                    if let reply, client === reply.client { reply.add(direct) } else { send(direct, to: client) }
                }
            } else {
                let id = event.id
                persist("queued event") { try $0.queueEvent(id, for: name) }
            }
        }
    }

    /// What happened while an account was away: one line per event, in order.
    func deliverQueuedEvents(to client: Client, accountKey: String) {
        let store = self.store
        readAfterWrites { _ in try store.takeQueuedEvents(for: accountKey) }.whenSuccess { queued in
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
                                   msgid: self.ids.next(at: event.at), account: self.config.serviceNick, clientTags: tags), to: client)
            }
        }
    }

    // MARK: Reminders

    /// Keeps one timer, for the earliest reminder of any chore (capped at an hour, then looked at again).
    func scheduleReminders() {
        let chores = bot.chores, interval = config.reminderInterval
        readAfterWrites { _ in try chores.nextReminder(every: interval) }.whenSuccess { next in
            self.reminderTask?.cancel()
            self.reminderTask = nil
            guard let next else { return }
            let delay = min(max(0, next.timeIntervalSince(self.now())), 3600)
            self.reminderTask = self.loop.scheduleTask(in: .milliseconds(Int64(delay * 1000) + 1)) { _ = self.runReminders() }
        }
    }

    /// Sends every reminder that is due, then sets the timer for the next one.
    @discardableResult
    func runReminders() -> EventLoopFuture<Void> {
        let chores = bot.chores, interval = config.reminderInterval
        return readAfterWrites { _ in try chores.fireReminders(every: interval) }.map { events in
            for event in events { self.announce(event, reply: nil) }
            self.scheduleReminders()
        }
    }

    /// For tests and operators: fire what is due by the server's clock now, and wait for it.
    public func checkReminders() throws {
        try loop.flatSubmit { self.runReminders() }.wait()
        try loop.submit {}.wait()
    }

    /// Deletes a room for good: everyone is taken out, and its memberships, jobs and history go.
    func closeRoom(_ key: String, by manager: Client) {
        guard let room = rooms.removeValue(forKey: key) else { return }
        let out = Outgoing(Message(source: serviceSource, "KICK", [room.name, "", "Room closed by \(manager.nick)"]), time: now())
        for member in room.members {
            var line = out
            line.message.params[1] = member.nick
            send(line, to: member)
            member.rooms.removeAll { $0 === room }
        }
        let name = room.name
        persist("closing \(name)") { try $0.deleteRoom(named: name) }
    }
}
