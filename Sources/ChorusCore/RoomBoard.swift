import Foundation

/// The rules of belonging to a room: who adds whom, and what leaving does to the work someone
/// held there. The connection side keeps who is present; who is a member, and in what role, is
/// decided here and stored with its events.
public struct RoomBoard: Sendable {
    public let store: any Store & JobStore & ChoreStore
    public let jobs: JobBoard
    public let chores: ChoreBoard
    public let now: @Sendable () -> Date

    public init(store: any Store & JobStore & ChoreStore, jobs: JobBoard, chores: ChoreBoard, now: @escaping @Sendable () -> Date = { Date() }) {
        self.store = store
        self.jobs = jobs
        self.chores = chores
        self.now = now
    }

    private func name(of room: String) throws -> String {
        try store.roomName(room) ?? room
    }

    /// Someone logged in comes into a room they are not a member of (JOIN, or logging in while
    /// sitting in it as a guest) and becomes a member. They manage it if nobody does and they came
    /// in first (`firstComer`: they made the room, or found it empty of operators), as an empty IRC
    /// channel goes to whoever joins it first. A member already stays as they are. Two people
    /// arriving at once in a room nobody manages are decided here, one after the other (on two
    /// processes sharing a database too: `Store.holdRoom`): only the first becomes its manager.
    public func arrive(_ account: String, in room: String, firstComer: Bool, voiced: Bool = false) throws -> Membership {
        let key = Account.key(room)
        if let kept = try store.memberships(ofAccount: account).first(where: { $0.room == key }) { return kept }
        guard try store.roomName(room) != nil else { throw JobError.invalid("There is no room \(room)") }
        if firstComer { try store.holdRoom(key) }
        let managed = try store.members(of: room).contains { try store.role(of: $0, in: room) == .manager }
        let membership = Membership(room: key, account: Account.key(account), role: firstComer && !managed ? .manager : .member,
                                    voiced: voiced, since: now())
        try store.saveMembership(membership)
        return membership
    }

    /// A manager adds an account to the room, connected or not: it is in the room from its next
    /// login on (at once, if it is connected).
    public func add(_ account: String, to room: String, by actor: String) throws -> (Membership, Event) {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(try name(of: room)) }
        guard role == .manager else { throw JobError.notAllowed("Only the room's managers add people to it") }
        guard let member = try store.account(named: account) else { throw JobError.invalid("\(account) is not a registered account") }
        guard try store.role(of: member.name, in: room) == nil else {
            throw JobError.invalid("\(member.name) is already a member of \(try name(of: room))")
        }
        let membership = Membership(room: Account.key(room), account: member.key, role: .member, since: now())
        try store.saveMembership(membership)
        let event = Event(type: EventType.memberAdded, room: Account.key(room), job: nil, actor: actor,
                          data: ["member": member.name], at: now(), concerns: [member.name].filter { Account.key($0) != Account.key(actor) })
        return (membership, try store.insertEvents([event])[0])
    }

    /// A manager makes someone in the room a manager (MODE +o) or a member again (-o); voice (+v)
    /// is remembered with the role. `actor` is nil for a room's operator without an account, who
    /// may do this only in a room no account manages (it went to whoever came first). The event,
    /// for a change of role only, is nil when only the voice changed.
    public func setRole(_ account: String, in room: String, to role: Role, voiced: Bool, by actor: String?) throws -> (Membership, Event?) {
        if let actor {
            guard try store.role(of: actor, in: room) == .manager else { throw JobError.notAllowed("Only the room's managers change roles") }
        } else if try store.members(of: room).contains(where: { try store.role(of: $0, in: room) == .manager }) {
            throw JobError.notAllowed("Only the room's managers change roles")
        }
        let before = try store.role(of: account, in: room)
        let since = try store.memberships(ofAccount: account).first { $0.room == Account.key(room) }?.since ?? now()
        let membership = Membership(room: Account.key(room), account: Account.key(account), role: role, voiced: voiced, since: since)
        try store.saveMembership(membership)
        guard before != role else { return (membership, nil) }
        let event = Event(type: EventType.memberRole, room: Account.key(room), job: nil, actor: actor ?? account,
                          data: ["member": account, "role": role.rawValue], at: now(),
                          concerns: [account].filter { Account.key($0) != Account.key(actor ?? "") })
        return (membership, try store.insertEvents([event])[0])
    }

    /// The actor's role in the room, if it is at least `needed` (a member: any role): the gate of
    /// every command that works in a room. Someone outside the room is told they are not in it.
    @discardableResult
    public func require(_ needed: Role, of actor: String, in room: String, for what: String) throws -> Role {
        guard let role = try store.role(of: actor, in: room) else { throw JobError.notInRoom(try name(of: room)) }
        if needed == .manager && role != .manager { throw JobError.notAllowed("\(what) is for the room's managers") }
        return role
    }

    /// A manager closes the room for good: its memberships, settings, jobs, chores and history go.
    public func close(_ room: String, by actor: String) throws {
        guard try store.role(of: actor, in: room) == .manager else { throw JobError.notAllowed("Only the room's managers can close it") }
        try store.deleteRoom(named: room)
    }

    /// Someone leaves the room, by PART or by KICK (`actor` is who acted): they are no longer a
    /// member, they are out of its chore rotations (a turn of theirs passes on), and their open
    /// jobs there go back to unassigned. Nothing happens for someone who was not a member.
    public func leave(_ account: String, room: String, by actor: String) throws -> [Event] {
        guard try store.role(of: account, in: room) != nil else { return [] }
        try store.deleteMembership(room: Account.key(room), account: Account.key(account))
        let roomName = try name(of: room)
        let reason = Account.key(actor) == Account.key(account) ? "\(account) left \(roomName)" : "\(account) was removed from \(roomName)"
        return try chores.removeFromRotations(account, in: room, by: actor)
            + jobs.releaseJobs(of: account, in: room, by: actor, reason: reason)
    }
}
