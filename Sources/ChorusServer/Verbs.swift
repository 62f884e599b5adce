import ChorusIRC

/// The IRC verbs the server answers: one table, one handler each (the handler's syntax sits above it
/// in `Verbs/`). The dispatcher checks registration and the parameter count before calling a handler.
struct Verb {
    let minParams: Int
    /// Allowed before the connection has registered (NICK/USER done).
    let beforeRegistration: Bool
    let handler: (IRCServer) -> (Reply, Message) -> Void

    init(_ minParams: Int, beforeRegistration: Bool = false, _ handler: @escaping (IRCServer) -> (Reply, Message) -> Void) {
        self.minParams = minParams
        self.beforeRegistration = beforeRegistration
        self.handler = handler
    }
}


enum Verbs {
    static let table: [String: Verb] = [
        // Connection registration and accounts (Verbs/Registration.swift)
        "CAP": Verb(1, beforeRegistration: true, IRCServer.handleCap),
        "NICK": Verb(0, beforeRegistration: true, IRCServer.handleNick),
        "USER": Verb(4, beforeRegistration: true, IRCServer.handleUser),
        "PASS": Verb(1, beforeRegistration: true, IRCServer.handlePass),
        "AUTHENTICATE": Verb(1, beforeRegistration: true, IRCServer.handleAuthenticate),
        "REGISTER": Verb(3, beforeRegistration: true, IRCServer.handleRegister),
        "PING": Verb(1, beforeRegistration: true, IRCServer.handlePing),
        "PONG": Verb(0, beforeRegistration: true, IRCServer.handlePong),
        "QUIT": Verb(0, beforeRegistration: true, IRCServer.handleQuit),
        // Rooms (Verbs/Channels.swift, Verbs/Modes.swift)
        "JOIN": Verb(1, IRCServer.handleJoin),
        "PART": Verb(1, IRCServer.handlePart),
        "TOPIC": Verb(1, IRCServer.handleTopic),
        "NAMES": Verb(0, IRCServer.handleNames),
        "LIST": Verb(0, IRCServer.handleList),
        "KICK": Verb(2, IRCServer.handleKick),
        "INVITE": Verb(2, IRCServer.handleInvite),
        "MODE": Verb(1, IRCServer.handleMode),
        // Talking (Verbs/Messaging.swift)
        "PRIVMSG": Verb(0, IRCServer.handlePrivmsg),
        "NOTICE": Verb(0, IRCServer.handleNotice),
        "TAGMSG": Verb(1, IRCServer.handleTagmsg),
        "AWAY": Verb(0, IRCServer.handleAway),
        "SETNAME": Verb(1, IRCServer.handleSetname),
        // Looking people and the server up (Verbs/Queries.swift)
        "WHO": Verb(0, IRCServer.handleWho),
        "WHOIS": Verb(1, IRCServer.handleWhois),
        "WHOWAS": Verb(1, IRCServer.handleWhowas),
        "USERHOST": Verb(1, IRCServer.handleUserhost),
        "ISON": Verb(1, IRCServer.handleIson),
        "MONITOR": Verb(1, IRCServer.handleMonitor),
        "LUSERS": Verb(0, IRCServer.handleLusers),
        "MOTD": Verb(0, IRCServer.handleMotd),
        "VERSION": Verb(0, IRCServer.handleVersion),
        "INFO": Verb(0, IRCServer.handleInfo),
        "TIME": Verb(0, IRCServer.handleTime),
        // History (Verbs/History.swift)
        "CHATHISTORY": Verb(1, IRCServer.handleChathistory),
        "MARKREAD": Verb(0, IRCServer.handleMarkread),
        // A device's notifications (Verbs/WebPush.swift)
        "WEBPUSH": Verb(1, IRCServer.handleWebpush),
        // Operators (Verbs/Operators.swift)
        "OPER": Verb(2, IRCServer.handleOper),
        "KILL": Verb(1, IRCServer.handleKill),
    ]
}
