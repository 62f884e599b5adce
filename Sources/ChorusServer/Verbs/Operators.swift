import ChorusCore
import ChorusIRC
import Foundation

extension IRCServer {
    // OPER <name> <password>   (operators are listed in the config file with a scrypt hash)
    func handleOper(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard let oper = config.operators.first(where: { $0.name == m.params[0] }) else {
            return reply.numeric(.noOperHost, "No operator block for your name")
        }
        let password = m.params[1]
        let hasher = accounts.hasher
        reply.wait(for: background { hasher.verify(password, against: oper.passwordHash) }) { result in
            if case .success(true) = result {
                self.registry.setOper(client, true)
                self.cluster?.presenceChanged(client)
                reply.numeric(.youreOper, "You are now an IRC operator")
                reply.send(Message(source: client.prefix, "MODE", [client.nick, "+o"]))
                self.logger.notice("OPER \(oper.name) by \(client.prefix)")
            } else {
                reply.numeric(.passwdMismatch, "Password incorrect")
            }
        }
    }

    // KILL <nick> [:<reason>]   (the reason may be left out, as Ergo allows)
    func handleKill(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard client.isOper else { return reply.numeric(.noPrivileges, "Permission Denied- You're not an IRC operator") }
        let why = m.params.count > 1 && !m.params[1].isEmpty ? m.params[1] : "no reason given"
        let reason = "Killed (\(client.nick) (\(why)))"
        let here = registry.client(nick: m.params[0]), elsewhere = remote.user(nick: m.params[0])
        guard here != nil || elsewhere != nil else { return reply.numeric(.noSuchNick, m.params[0], "No such nick") }
        // Sessions under the nick on other nodes: theirs ends them, and the QUIT comes back as presence.
        if let elsewhere {
            logger.notice("KILL \(elsewhere.nick) on \(elsewhere.server) by \(client.prefix): \(why)")
            cluster?.post(.kill(KillOrder(nick: elsewhere.nick, reason: reason, source: client.prefix, time: now())))
        }
        if let here {
            logger.notice("KILL \(here.prefix) by \(client.prefix): \(why)")
            kill(here, reason: reason, reply: reply)
        }
    }

    /// Ends every session under `target`'s nick; the first last, so the rooms hear one QUIT.
    func kill(_ target: Client, reason: String, reply: Reply?) {
        for session in registry.sharing(target).reversed() {
            session.quitReason = reason
            if session === reply?.client { reply?.finish() }
            disconnect(session, reason: reason)
        }
    }
}
