import Foundation

/// The rules of chores and shared lists: rotations, whose turn it is, covering and skipping, and
/// the events each change makes. Like `JobBoard`, callers serialize calls.
public struct ChoreBoard: Sendable {
    public let store: any ChoreStore & JobStore
    public let now: @Sendable () -> Date
    public let calendar: Calendar

    public init(store: any ChoreStore & JobStore, timeZone: TimeZone, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.now = now
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        calendar = c
    }

    private func role(_ actor: String, _ room: String) throws -> Role {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(room) }
        return role
    }

    private func chore(_ name: String, _ room: String) throws -> Chore {
        guard let chore = try store.chore(named: name, in: room) else {
            throw JobError.invalid("There is no chore \"\(name)\" here: !chores lists them")
        }
        return chore
    }

    private func event(_ type: String, _ chore: Chore, _ actor: String, _ data: [String: String] = [:], concerns: [String] = []) -> Event {
        var data = data
        data["chore"] = chore.name
        if data["turn"] == nil { data["turn"] = chore.whoseTurn }
        return Event(type: type, room: chore.room, job: nil, actor: actor, data: data, at: now(),
                     concerns: concerns.filter { Account.key($0) != Account.key(actor) })
    }

    private func started(_ chore: Chore, _ actor: String, _ extra: [String: String] = [:]) throws -> Event {
        var data = extra
        data["due"] = ISO8601DateFormatter().string(from: chore.due)
        data["next"] = try nextUp(chore)
        return event(EventType.turnStarted, chore, actor, data, concerns: [chore.whoseTurn])
    }

    /// Who takes the turn after this one: the next in the rotation who is not away when it falls.
    /// `!turn` and the `turn.started` events say the same.
    public func nextUp(_ chore: Chore) throws -> String {
        guard !chore.rotation.isEmpty else { return "nobody" }
        let due = chore.frequency.step(from: chore.due, hour: chore.hour, minute: chore.minute, calendar: calendar)
        return chore.rotation[try nextPresent(after: chore.current, in: chore, at: due)]
    }

    // MARK: Chores

    public func add(name: String, frequency: Frequency, hour: Int, minute: Int, from start: Date?, among: [String]?,
                    in room: String, by actor: String) throws -> (Chore, [Event]) {
        let role = try role(actor, room)
        if role == .member, try store.roomSettings(room).creators == .managers {
            throw JobError.notAllowed("Only managers add chores in \(room)")
        }
        guard name.count <= 40 else { throw JobError.invalid("A chore's name is at most 40 characters: dishes, bins, hoovering") }
        guard !name.isEmpty, Int(name) == nil, !name.contains(" ") else {
            throw JobError.invalid("A chore's name is one word, not a number (jobs use numbers): dishes, bins, hoovering")
        }
        if try store.chore(named: name, in: room) != nil { throw JobError.invalid("There is already a chore \"\(name)\" here") }
        let members = try store.members(of: room)
        var rotation = members
        if let among, !among.isEmpty {
            for person in among where !members.contains(where: { Account.key($0) == Account.key(person) }) {
                throw JobError.notAMember(person, room: room)
            }
            rotation = among
        }
        guard !rotation.isEmpty else { throw JobError.invalid("Nobody to take turns: say among <nick> <nick> …") }
        let t = now()
        // From a given day: its first allowed day on or after it (`every sun from` a Tuesday falls
        // on the Sunday after), never in the past.
        let due = start.map { frequency.first(after: max(calendar.startOfDay(for: $0).addingTimeInterval(-1), t),
                                              hour: hour, minute: minute, calendar: calendar) }
            ?? frequency.first(after: t, hour: hour, minute: minute, calendar: calendar)
        let chore = Chore(room: room, name: name, frequency: frequency.anchored(at: due, calendar: calendar), hour: hour,
                          minute: minute, rotation: rotation, turnSince: t, due: due, createdBy: actor, createdAt: t)
        let added = event(EventType.choreAdded, chore, actor, ["frequency": chore.frequency.description,
                                                                "at": String(format: "%02d:%02d", hour, minute),
                                                                "rotation": rotation.joined(separator: " ")])
        return try store.insertChore(chore, events: [added, try started(chore, actor)])
    }

    public func chores(in room: String, by actor: String) throws -> [Chore] {
        _ = try role(actor, room)
        return try store.chores(in: room)
    }

    public func turn(_ name: String, in room: String, by actor: String) throws -> Chore {
        _ = try role(actor, room)
        return try chore(name, room)
    }

    /// Moves the turn to the next person and the due time one period on (past now, if it is late).
    private func advance(_ chore: inout Chore) throws {
        let t = now()
        var next = chore.frequency.step(from: chore.due, hour: chore.hour, minute: chore.minute, calendar: calendar)
        var guardSteps = 0
        while next <= t && guardSteps < 5000 {
            next = chore.frequency.step(from: next, hour: chore.hour, minute: chore.minute, calendar: calendar)
            guardSteps += 1
        }
        // The next person who is there when the new turn falls; whoever is passed over for being
        // away gets it back if they come back before then.
        let inLine = chore.rotation.isEmpty ? 0 : (chore.current + 1) % chore.rotation.count
        chore.current = try nextPresent(after: chore.current, in: chore, at: next)
        chore.passedOver = chore.current == inLine || chore.rotation.isEmpty ? nil : chore.rotation[inLine]
        chore.turnSince = t
        chore.due = next
        chore.lastReminder = nil
        chore.roomToldOverdue = false
    }

    /// Whoever does it, it is done: by someone else, it is recorded as covering for them.
    public func done(_ name: String, in room: String, by actor: String) throws -> (Chore, [Event]) {
        _ = try role(actor, room)
        var chore = try chore(name, room)
        let whose = chore.whoseTurn
        var data = ["by": actor]
        if Account.key(whose) != Account.key(actor) { data["covered"] = whose }
        if chore.due < now() { data["late"] = "yes" }
        let done = event(EventType.turnDone, chore, actor, data, concerns: [whose])
        try advance(&chore)
        return (chore, try store.updateChore(chore, events: [done, try started(chore, actor)]))
    }

    /// Passes the turn on without recording it as done.
    public func skip(_ name: String, reason: String, in room: String, by actor: String) throws -> (Chore, [Event]) {
        let role = try role(actor, room)
        var chore = try chore(name, room)
        let whose = chore.whoseTurn
        guard role == .manager || Account.key(whose) == Account.key(actor) else {
            throw JobError.notAllowed("It is \(whose)'s turn: only they or a manager can skip it")
        }
        var data: [String: String] = [:]
        if !reason.isEmpty { data["reason"] = reason }
        let skipped = event(EventType.turnSkipped, chore, actor, data, concerns: [whose])
        try advance(&chore)
        return (chore, try store.updateChore(chore, events: [skipped, try started(chore, actor)]))
    }

    public func reorder(_ name: String, rotation: [String], in room: String, by actor: String) throws -> (Chore, [Event]) {
        guard try role(actor, room) == .manager else { throw JobError.notAllowed("Only managers change a rotation") }
        var chore = try chore(name, room)
        let members = try store.members(of: room)
        for person in rotation where !members.contains(where: { Account.key($0) == Account.key(person) }) {
            throw JobError.notAMember(person, room: room)
        }
        guard !rotation.isEmpty else { throw JobError.invalid("Name the people in order: !chore order <chore> <nick> <nick> …") }
        chore.rotation = rotation
        chore.current = 0
        chore.passedOver = nil
        chore.turnSince = now()
        let e = event(EventType.choreOrder, chore, actor, ["rotation": rotation.joined(separator: " ")])
        return (chore, try store.updateChore(chore, events: [e, try started(chore, actor)]))
    }

    public func remove(_ name: String, in room: String, by actor: String) throws -> Event {
        guard try role(actor, room) == .manager else { throw JobError.notAllowed("Only managers remove chores") }
        let chore = try chore(name, room)
        return try store.deleteChore(chore, event: event(EventType.choreRemoved, chore, actor))
    }

    /// Upcoming turns within `days`, soonest first: (due, chore, person).
    public func agenda(in rooms: [String], days: Int, only account: String? = nil) throws -> [(Date, Chore, String)] {
        let horizon = now().addingTimeInterval(Double(max(1, min(days, 62))) * 86_400)
        var items: [(Date, Chore, String)] = []
        for room in rooms {
            for chore in try store.chores(in: room) where !chore.rotation.isEmpty {
                var due = chore.due, index = chore.current, steps = 0
                while due <= horizon && steps < 200 {
                    let person = chore.rotation[index % chore.rotation.count]
                    if account.map({ Account.key($0) == Account.key(person) }) ?? true { items.append((due, chore, person)) }
                    due = chore.frequency.step(from: due, hour: chore.hour, minute: chore.minute, calendar: calendar)
                    index += 1
                    steps += 1
                }
            }
        }
        return items.sorted { ($0.0, $0.1.name) < ($1.0, $1.1.name) }
    }

    // MARK: Away, swaps, edits

    /// Whether `account` is away when a turn due at `due` falls: their away time has not ended,
    /// and ends after it.
    private func isAway(_ account: String, _ room: String, at due: Date) throws -> Bool {
        guard let until = try store.awayUntil(account, in: room) else { return false }
        return until > now() && until > due
    }

    /// The index of the next person in the rotation after `index` who is not away when a turn due
    /// at `due` falls (or simply the next one, if everybody is away).
    private func nextPresent(after index: Int, in chore: Chore, at due: Date) throws -> Int {
        let n = max(1, chore.rotation.count)
        for step in 1...n {
            let i = (index + step) % n
            if try !isAway(chore.rotation[i], chore.room, at: due) { return i }
        }
        return (index + 1) % n
    }

    /// The turn as it stands goes to the person at `index` from now, with its reminders anew;
    /// `passingOver` names whose it was, when it passes over them for being away.
    private func hand(_ chore: inout Chore, to index: Int, passingOver: String? = nil) {
        chore.current = index
        chore.passedOver = passingOver
        chore.turnSince = now()
        chore.lastReminder = nil
        chore.roomToldOverdue = false
    }

    /// Leaves the actor out of the room's rotations until `until`: a turn of theirs that falls
    /// before then passes on; one that falls after it stays theirs.
    public func away(until: Date, in room: String, by actor: String) throws -> [Event] {
        _ = try role(actor, room)
        guard until > now() else { throw JobError.invalid("That time has already passed") }
        var events = [Event(type: EventType.memberAway, room: room, job: nil, actor: actor,
                            data: ["until": ISO8601DateFormatter().string(from: until)], at: now())]
        events = try store.setAway(actor, in: room, until: until, events: events)
        for var chore in try store.chores(in: room)
        where Account.key(chore.whoseTurn) == Account.key(actor) && chore.rotation.count > 1 && chore.due < until {
            hand(&chore, to: try nextPresent(after: chore.current, in: chore, at: chore.due), passingOver: actor)
            events += try store.updateChore(chore, events: [try started(chore, actor)])
        }
        return events
    }

    /// Ends the actor's away time early: a turn that passed over them and has not fallen due yet
    /// comes back to them.
    public func back(in room: String, by actor: String) throws -> [Event] {
        _ = try role(actor, room)
        guard try store.awayUntil(actor, in: room) != nil else { throw JobError.invalid("You are not marked away in \(room)") }
        var events = try store.setAway(actor, in: room, until: nil, events: [
            Event(type: EventType.memberBack, room: room, job: nil, actor: actor, at: now()),
        ])
        for var chore in try store.chores(in: room) where chore.passedOver.map(Account.key) == Account.key(actor) && chore.due > now() {
            guard let mine = chore.rotation.firstIndex(where: { Account.key($0) == Account.key(actor) }) else { continue }
            hand(&chore, to: mine)
            events += try store.updateChore(chore, events: [try started(chore, actor)])
        }
        return events
    }

    /// Someone left the room: they are out of its rotations, and a turn of theirs passes to the next
    /// person who is not away. Without this the chore stuck on them, and they went on being reminded.
    public func removeFromRotations(_ account: String, in room: String, by actor: String) throws -> [Event] {
        var events: [Event] = []
        for var chore in try store.chores(in: room) {
            guard let i = chore.rotation.firstIndex(where: { Account.key($0) == Account.key(account) }) else { continue }
            let wasTheirs = i == chore.current % chore.rotation.count
            chore.rotation.remove(at: i)
            if i < chore.current { chore.current -= 1 }
            chore.current = chore.rotation.isEmpty ? 0 : chore.current % chore.rotation.count
            if [chore.swapFrom, chore.swapTo].contains(where: { $0.map(Account.key) == Account.key(account) }) {
                chore.swapFrom = nil
                chore.swapTo = nil
            }
            var batch = [event(EventType.choreLeft, chore, actor, ["member": account, "rotation": chore.rotation.joined(separator: " ")])]
            if wasTheirs && !chore.rotation.isEmpty {
                // The person after them now stands at `current`; pass over anyone away.
                let n = chore.rotation.count
                hand(&chore, to: try nextPresent(after: (chore.current + n - 1) % n, in: chore, at: chore.due))
                batch.append(try started(chore, actor))
            }
            events += try store.updateChore(chore, events: batch)
        }
        return events
    }

    /// Offers to swap places in a chore's rotation with `other`, who accepts or declines.
    public func askSwap(_ name: String, with other: String, in room: String, by actor: String) throws -> Event {
        _ = try role(actor, room)
        var chore = try chore(name, room)
        let inRotation = { (who: String) in chore.rotation.contains { Account.key($0) == Account.key(who) } }
        guard inRotation(actor) else { throw JobError.notAllowed("You are not in the \(chore.name) rotation") }
        guard inRotation(other), Account.key(other) != Account.key(actor) else {
            throw JobError.invalid("\(other) is not someone else in the \(chore.name) rotation")
        }
        chore.swapFrom = actor
        chore.swapTo = other
        return try store.updateChore(chore, events: [event(EventType.turnSwapAsked, chore, actor, ["with": other], concerns: [other])])[0]
    }

    /// Answers the swap offered to the actor (in `name`, or the only one pending in the room).
    public func answerSwap(_ name: String?, accept: Bool, in room: String, by actor: String) throws -> [Event] {
        _ = try role(actor, room)
        let pending = try store.chores(in: room).filter {
            $0.swapTo.map { Account.key($0) == Account.key(actor) } == true && (name == nil || $0.key == Account.key(name!))
        }
        guard var chore = pending.first else { throw JobError.invalid("Nobody has asked you to swap\(name.map { " \($0)" } ?? "")") }
        guard pending.count == 1 else { throw JobError.invalid("Several swaps wait for you: name the chore") }
        let from = chore.swapFrom ?? ""
        chore.swapFrom = nil
        chore.swapTo = nil
        guard accept else {
            return try store.updateChore(chore, events: [event(EventType.turnSwapDeclined, chore, actor, ["with": from], concerns: [from])])
        }
        let whoseBefore = chore.whoseTurn
        if let i = chore.rotation.firstIndex(where: { Account.key($0) == Account.key(from) }),
           let j = chore.rotation.firstIndex(where: { Account.key($0) == Account.key(actor) }) {
            chore.rotation.swapAt(i, j)
        }
        var events = [event(EventType.turnSwapped, chore, actor, ["with": from, "rotation": chore.rotation.joined(separator: " ")],
                            concerns: [from])]
        if chore.whoseTurn != whoseBefore {
            chore.turnSince = now()
            chore.lastReminder = nil
            events.append(try started(chore, actor))
        }
        return try store.updateChore(chore, events: events)
    }

    /// Changes how often or at what time a chore comes round; the current turn keeps its person,
    /// and is due at the first new slot on or after the day it was due (from now, if that day has
    /// passed): turns done early stay done, and a new time of day does not bring a turn weeks forward.
    public func edit(_ name: String, frequency: Frequency?, hour: Int?, minute: Int?, in room: String, by actor: String) throws -> [Event] {
        guard try role(actor, room) == .manager else { throw JobError.notAllowed("Only managers edit chores") }
        var chore = try chore(name, room)
        if let frequency { chore.frequency = frequency }
        if let hour, let minute { chore.hour = hour; chore.minute = minute }
        let from = max(calendar.startOfDay(for: chore.due).addingTimeInterval(-1), now())
        chore.due = chore.frequency.first(after: from, hour: chore.hour, minute: chore.minute, calendar: calendar)
        if let frequency { chore.frequency = frequency.anchored(at: chore.due, calendar: calendar) }
        chore.lastReminder = nil
        chore.roomToldOverdue = false
        return try store.updateChore(chore, events: [
            event(EventType.choreEdited, chore, actor, ["frequency": chore.frequency.description,
                                                        "at": String(format: "%02d:%02d", chore.hour, chore.minute)]),
            try started(chore, actor),
        ])
    }

    // MARK: Reminders

    /// When the next reminder falls due across all chores: a turn's due time, or the next overdue
    /// reminder `every` seconds after the last. One timer for all chores waits for this.
    public func nextReminder(every interval: TimeInterval) throws -> Date? {
        // A chore nobody takes turns at reminds nobody (`fireReminders` passes it by).
        try store.allChores().filter { !$0.rotation.isEmpty }.map { reminderTime($0, every: interval) }.min()
    }

    private func reminderTime(_ chore: Chore, every interval: TimeInterval) -> Date {
        guard let last = chore.lastReminder else { return chore.due }
        return max(chore.due, last).addingTimeInterval(interval)
    }

    /// Fires every reminder that is due by now: the person whose turn it is is told when the turn
    /// becomes due and again every `interval` while overdue; the room is told once that it is overdue.
    /// A due time that passed while the server was down fires once, not once per missed interval.
    public func fireReminders(every interval: TimeInterval) throws -> [Event] {
        let t = now()
        var events: [Event] = []
        for var chore in try store.allChores() where reminderTime(chore, every: interval) <= t && !chore.rotation.isEmpty {
            let whose = chore.whoseTurn
            if try isAway(whose, chore.room, at: t) {
                // Away people get no reminders; look again after an interval.
                chore.lastReminder = t
                _ = try store.updateChore(chore, events: [])
                continue
            }
            let first = chore.lastReminder == nil
            var batch: [Event] = []
            let since = ISO8601DateFormatter().string(from: chore.due)
            batch.append(Event(type: first ? EventType.turnDue : EventType.turnOverdue, room: chore.room, job: nil, actor: "Chorus",
                               data: ["chore": chore.name, "turn": whose, "due": since], at: t, concerns: [whose], reach: .concerned))
            if !first && !chore.roomToldOverdue {
                batch.append(Event(type: EventType.turnOverdue, room: chore.room, job: nil, actor: "Chorus",
                                   data: ["chore": chore.name, "turn": whose, "due": since], at: t))
                chore.roomToldOverdue = true
            }
            chore.lastReminder = t
            events += try store.updateChore(chore, events: batch)
        }
        return events
    }

    // MARK: Lists

    public func list(_ name: String, in room: String, by actor: String) throws -> SharedList {
        _ = try role(actor, room)
        return try store.list(named: name, in: room) ?? SharedList(room: room, name: name)
    }

    public func lists(in room: String, by actor: String) throws -> [SharedList] {
        _ = try role(actor, room)
        return try store.lists(in: room)
    }

    private func listEvent(_ type: String, _ list: SharedList, _ actor: String, _ item: String) -> Event {
        Event(type: type, room: list.room, job: nil, actor: actor, data: ["list": list.name, "item": item], at: now())
    }

    public func addItems(_ texts: [String], to name: String, in room: String, by actor: String) throws -> [Event] {
        var list = try self.list(name, in: room, by: actor)
        let texts = texts.map(\.trimmed).filter { !$0.isEmpty }
        guard !texts.isEmpty else { throw JobError.invalid("Say what to add: !list \(name) add milk, eggs") }
        guard list.items.count + texts.count <= 200 else { throw JobError.invalid("A list holds at most 200 items") }
        list.items += texts.map { SharedList.Item(text: $0, by: actor) }
        return try store.saveList(list, events: texts.map { listEvent(EventType.listItemAdded, list, actor, $0) })
    }

    /// An item by its number on the list or its text (case-insensitive).
    private func index(of ref: String, in list: SharedList) throws -> Int {
        if let n = Int(ref), n >= 1, n <= list.items.count { return n - 1 }
        if let i = list.items.firstIndex(where: { $0.text.lowercased() == ref.lowercased() }) { return i }
        throw JobError.invalid("\"\(ref)\" is not on the \(list.name) list")
    }

    public func completeItem(_ ref: String, on name: String, in room: String, by actor: String) throws -> [Event] {
        var list = try self.list(name, in: room, by: actor)
        let i = try index(of: ref, in: list)
        guard !list.items[i].done else { throw JobError.invalid("\"\(list.items[i].text)\" is already ticked") }
        list.items[i].done = true
        return try store.saveList(list, events: [listEvent(EventType.listItemDone, list, actor, list.items[i].text)])
    }

    public func removeItem(_ ref: String, from name: String, in room: String, by actor: String) throws -> [Event] {
        var list = try self.list(name, in: room, by: actor)
        let i = try index(of: ref, in: list)
        let item = list.items.remove(at: i)
        return try store.saveList(list, events: [listEvent(EventType.listItemRemoved, list, actor, item.text)])
    }
}
