import ChorusCore
import ChorusIRC
import Foundation

/// A room as the server holds it: the stored `Room`, who is in it now (presence, with channel
/// status), and a copy of who belongs to it. Who belongs, and as what, is decided in `RoomBoard`.
final class LiveRoom {
    var room: Room
    /// Connected members in join order, with their channel status: every connection, so that
    /// each of a person's sessions hears the room.
    private(set) var members: [Client] = []
    private var status: [ObjectIdentifier: Status] = [:]
    /// Members that share their nick with an earlier one (`ClientRegistry.twins`).
    private var sharing = 0
    /// Accounts remembered in this room (by account key), put back in when they log in: a copy of
    /// the stored memberships, changed only by committed changes (`RoomBoard`'s rules, through the
    /// Workspace) and by leaving, which takes effect at once.
    var memberships: [String: Membership] = [:]
    /// When this node last changed what it holds of the room's stored state (`RoomMarks`): a
    /// snapshot read before that is read again rather than applied (`RoomSnapshot`).
    private(set) var changedHere: UInt64
    /// People (folded nicks) the members here were told left, whose connections on other nodes
    /// still show them in the room until they follow (`PersonAcrossNodes`): not told twice, not listed.
    var departed: Set<String> = []
    /// KICKs of members given on other nodes (`BusMessage.removal`), by folded nick: said as given
    /// when the membership's end reaches this node and takes their connections out.
    var kicksElsewhere: [String: PresenceOrder] = [:]
    /// The nick of the manager who closed the room on another node (`BusMessage.closure`): named
    /// when the room's end reaches this node.
    var closedElsewhereBy: String?
    /// Nicks invited since the last time they could not join (folded), for +i rooms.
    var invitedNicks: Set<String> = []
    /// Whether `!command` lines are relayed to the room (room setting `echo`).
    private(set) var echoCommands = true
    /// Whether members see only the jobs that involve them (room setting `visibility own`).
    private(set) var jobsHidden = false
    /// `!room set open on|off`, nil until a manager chooses (see `isOpen`).
    private(set) var openChosen: Bool?
    /// False while a room has no stored lines: joining it then needs no history read.
    var hasHistory = true
    /// Changes of the stored room (topic, modes) waiting for the one being saved: each is worked
    /// out from the room as the one before it left it (`IRCServer.changeStoredRoom`).
    var storedChanges: [(@escaping () -> Void) -> Void] = []
    var savingStoredChange = false

    struct Status: OptionSet {
        let rawValue: UInt8
        static let op = Status(rawValue: 1)
        static let voice = Status(rawValue: 2)

        init(rawValue: UInt8) { self.rawValue = rawValue }

        /// What a membership gives: a manager is an operator; voiced is voiced.
        init(_ membership: Membership) {
            self = []
            if membership.role == .manager { insert(.op) }
            if membership.voiced { insert(.voice) }
        }

        /// From its mode letters (`o`, `v`, `ov`), as presence records keep it.
        init(letters: String) {
            self = []
            if letters.contains("o") { insert(.op) }
            if letters.contains("v") { insert(.voice) }
        }

        /// Its mode letters: `o`, `v`, `ov` or empty.
        var letters: String { (contains(.op) ? "o" : "") + (contains(.voice) ? "v" : "") }

        /// `@`, `+`, `@+` (multi-prefix) or empty.
        func prefix(multiPrefix: Bool) -> String {
            var p = ""
            if contains(.op) { p += "@" }
            if contains(.voice) && (multiPrefix || p.isEmpty) { p += "+" }
            return p
        }
    }

    init(room: Room) {
        self.room = room
        changedHere = RoomMarks.next()
    }

    /// This node changed the room's membership, settings, topic or modes, or is about to store such a change.
    func noteChangedHere() {
        changedHere = RoomMarks.next()
    }

    /// Keeps what the relay needs of the room's settings.
    func apply(_ settings: RoomSettings) {
        echoCommands = settings.echoCommands
        jobsHidden = settings.visibility == .own
        openChosen = settings.open
    }

    /// Whether anyone may join (`RoomSettings.admitsAnyone`).
    func isOpen(byDefault roomsOpen: Bool) -> Bool {
        RoomSettings.admitsAnyone(chosen: openChosen, roomsOpen: roomsOpen, hasMembers: !memberships.isEmpty)
    }

    var name: String { room.name }
    var key: String { room.key }

    func contains(_ client: Client) -> Bool { status[ObjectIdentifier(client)] != nil }
    func status(of client: Client) -> Status? { status[ObjectIdentifier(client)] }
    func isOp(_ client: Client) -> Bool { status(of: client)?.contains(.op) ?? false }
    func canSpeak(_ client: Client) -> Bool {
        guard let s = status(of: client) else { return !room.modes.noExternal && !room.modes.moderated }
        return !room.modes.moderated || !s.isEmpty
    }

    /// Whether what the room's managers alone hear (events where members see only their own jobs,
    /// command lines that name them) reaches `client`: a member by the role stored for it, as the
    /// Workspace decided; a guest, who has none, by its `+o`.
    func hearsAsManager(_ client: Client) -> Bool {
        hearsAsManager(account: client.account?.key, isOp: isOp(client))
    }

    /// The same for someone connected to another process: their account, or a guest's `+o` there.
    func hearsAsManager(account key: String?, isOp: Bool) -> Bool {
        guard let key, let membership = memberships[key] else { return isOp }
        return membership.role == .manager
    }

    /// How `client` reads this room's history: managers every line, others the lines meant for them.
    func historyReader(for client: Client) -> HistoryReader {
        hearsAsManager(client) ? .everything : .member(client.account?.key)
    }

    /// The people in the room, each once: the members but for a nick's further sessions (NAMES,
    /// WHO, LIST's count, `+l`).
    var people: [Client] {
        guard sharing > 0 else { return members }
        var seen = Set<String>()
        return members.filter { seen.insert($0.nickKey).inserted }
    }

    /// `sharing`: a member under `client`'s nick is here already (another session of the person).
    func add(_ client: Client, status s: Status, sharing shares: Bool = false) {
        if status[ObjectIdentifier(client)] == nil {
            members.append(client)
            if shares { sharing += 1 }
        }
        status[ObjectIdentifier(client)] = s
    }

    func remove(_ client: Client) {
        guard status.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        members.removeAll { $0 === client }
        if sharing > 0 && members.contains(where: { $0.nickKey == client.nickKey }) { sharing -= 1 }
    }

    /// A status is the person's: every session under the nick gets it.
    func setStatus(_ client: Client, _ s: Status) {
        guard status[ObjectIdentifier(client)] != nil else { return }
        status[ObjectIdentifier(client)] = s
        guard sharing > 0 else { return }
        for member in members where member !== client && member.nickKey == client.nickKey { status[ObjectIdentifier(member)] = s }
    }

    /// `@`, `+`, `@+` (multi-prefix) or empty.
    func prefix(of client: Client, multiPrefix: Bool) -> String {
        status(of: client)?.prefix(multiPrefix: multiPrefix) ?? ""
    }

    func isBanned(_ client: Client) -> Bool {
        room.bans.contains { mask in
            Names.matches(mask: mask, client.prefix) ||
                (mask.hasPrefix("$a:") && client.account.map { Names.fold($0.name) == Names.fold(String(mask.dropFirst(3))) } == true)
        }
    }

    /// `+nt` style summary, with parameters shown only to members.
    func modeString(showParameters: Bool) -> [String] {
        var flags = "+"
        var params: [String] = []
        let m = room.modes
        if m.inviteOnly { flags += "i" }
        if let key = m.key { flags += "k"; params.append(showParameters ? key : "*") }
        if let limit = m.limit { flags += "l"; params.append(String(limit)) }
        if m.moderated { flags += "m" }
        if m.noExternal { flags += "n" }
        if m.secret { flags += "s" }
        if m.topicLocked { flags += "t" }
        return [flags] + params
    }
}
