import ChorusCore
import ChorusIRC
import Foundation

/// Chat lines the store could not keep (a full disk, a database at its size limit). They were
/// delivered, as IRC delivers; their senders are told they are not in the history, and the log says
/// so, and that it is over, at most once a minute each rather than per line or per batch.
extension IRCServer {
    func historyWritten(_ lines: [HistoryEntry], _ error: Error?) {
        let t = now()
        var trouble = historyTrouble ?? (reported: false, lastLogged: nil, unlogged: 0)
        defer { historyTrouble = trouble }
        guard let error else {
            // Over: said once, if the trouble was (a store at its cap may fail and recover by turns).
            if trouble.reported {
                logger.info("history is kept again", metadata: ["lines-not-kept-since-last-report": "\(trouble.unlogged)"])
                trouble = (reported: false, lastLogged: t, unlogged: 0)
            }
            return
        }
        if let last = trouble.lastLogged, t.timeIntervalSince(last) < 60 {
            trouble.unlogged += lines.count
        } else {
            logger.error("history not kept: lines are delivered but not stored until the store can write again",
                         metadata: ["lines": "\(lines.count + trouble.unlogged)", "error": "\(error)"])
            trouble = (reported: true, lastLogged: t, unlogged: 0)
        }
        tellSenders(lines, why: error)
    }

    /// Each sender still connected hears, once per batch and conversation, how many of its lines
    /// were not kept.
    private func tellSenders(_ lines: [HistoryEntry], why error: Error) {
        var counts: [String: [String: Int]] = [:]  // sender nick → where → lines
        for line in lines {
            let nick = String(line.source.prefix { $0 != "!" })
            counts[nick, default: [:]][line.target, default: 0] += 1
        }
        let reason = "\(error)".lowercased().contains("full") ? "its disk is full" : "it cannot write its database"
        for (nick, places) in counts {
            guard let client = registry.client(nick: nick), !client.closing else { continue }
            for (place, count) in places.sorted(by: { $0.key < $1.key }) {
                let text = "\(count) line\(count == 1 ? "" : "s") you sent to \(place) reached \(count == 1 ? "its" : "their") "
                    + "readers but \(count == 1 ? "is" : "are") not kept in the history: \(reason). Lines are kept again once it can."
                send(Outgoing(Message(source: name, "NOTICE", [client.nick, text]), time: now()), to: client)
            }
        }
    }
}
