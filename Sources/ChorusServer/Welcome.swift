import Foundation

/// The parts of the welcome burst that depend only on the configuration, made once at start:
/// splitting the MOTD and building the ISUPPORT tokens for every registration cost 8 % of the
/// server's instructions per connection (callgrind, 1,000 connections).
struct Welcome {
    /// 003's date.
    let created: String
    /// Each 005 line's parameters after the nick: up to 12 tokens and the closing text.
    let isupport: [[String]]
    /// Each 372 line's text, `- ` included; empty when there is no MOTD.
    let motd: [String]

    init(config: ServerConfig, createdAt: Date) {
        created = "\(createdAt)"
        isupport = ISupport.tokens(config).chunks(ofCount: 12).map { $0 + ["are supported by this server"] }
        motd = config.motd.isEmpty ? [] : config.motd.split(separator: "\n", omittingEmptySubsequences: false).map { "- " + $0 }
    }
}

extension Array {
    fileprivate func chunks(ofCount n: Int) -> [[Element]] {
        stride(from: 0, to: count, by: n).map { Array(self[$0..<Swift.min($0 + n, count)]) }
    }
}
