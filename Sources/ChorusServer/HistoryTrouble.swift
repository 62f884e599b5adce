import ChorusCore
import ChorusIRC
import Foundation

/// Chat lines the store could not keep (a full disk, a database at its size limit). They were
/// delivered, as IRC delivers; their senders are told they are not in the history, the log says so
/// once a minute at most rather than per line, and the next batch written says it is over.
extension IRCServer {
    func historyWritten(_ lines: [HistoryEntry], _ error: Error?) {
        guard let error else {
            if let trouble = historyTrouble {
                historyTrouble = nil
                logger.info("history is kept again", metadata: ["not-kept-since": "\(trouble.since)"])
            }
            return
        }
        let t = now()
        if var trouble = historyTrouble {
            trouble.unlogged += lines.count
            if t.timeIntervalSince(trouble.lastLogged) >= 60 {
                logger.error("history still not kept", metadata: ["lines-since-last-report": "\(trouble.unlogged)", "error": "\(error)"])
                trouble.lastLogged = t
                trouble.unlogged = 0
            }
            historyTrouble = trouble
        } else {
            historyTrouble = (since: t, lastLogged: t, unlogged: 0)
            logger.error("history not kept: lines are delivered but not stored until the store can write again",
                         metadata: ["lines": "\(lines.count)", "error": "\(error)"])
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
