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

    // KILL <nick> :<reason>
    func handleKill(_ reply: Reply, _ m: Message) {
        let client = reply.client
        guard client.isOper else { return reply.numeric(.noPrivileges, "Permission Denied- You're not an IRC operator") }
        guard let target = registry.client(nick: m.params[0]) else { return reply.numeric(.noSuchNick, m.params[0], "No such nick") }
        let reason = "Killed (\(client.nick) (\(m.params[1])))"
        logger.notice("KILL \(target.prefix) by \(client.prefix): \(m.params[1])")
        // Every session under the nick; the first last, so the rooms hear one QUIT.
        for session in registry.sharing(target).reversed() {
            session.quitReason = reason
            if session === client { reply.finish() }
            disconnect(session, reason: reason)
        }
    }
}
