import ChorusIRC
import Foundation

/// The parts of the welcome burst that depend only on the configuration, made once at start:
/// splitting the MOTD and building the ISUPPORT tokens for every registration cost 8 % of the
/// server's instructions per connection, and writing the two 005 lines' 26 parameters another 4 %
/// (callgrind, 1,000 connections).
struct Welcome {
    /// 003's date.
    let created: String
    let createdAt: Date
    /// `:server ` written: how every numeric starts.
    let numericSource: [UInt8]
    /// Each 005 line's parameters after the nick, written: up to 12 tokens and the closing text.
    let isupport: [[UInt8]]
    /// Each 372 line's parameter after the nick, written (`- ` included); empty when there is no MOTD.
    let motd: [[UInt8]]

    init(config: ServerConfig, createdAt: Date, fileHost: String? = nil, vapid: String? = nil) {
        created = "\(createdAt)"
        self.createdAt = createdAt
        numericSource = Array(":\(config.serverName) ".utf8)
        isupport = ISupport.tokens(config, fileHost: fileHost, vapid: vapid).chunks(ofCount: 12).map { Welcome.written($0 + ["are supported by this server"]) }
        motd = config.motd.isEmpty ? []
            : config.motd.split(separator: "\n", omittingEmptySubsequences: false).map { Welcome.written(["- " + $0]) }
    }

    private static func written(_ params: [String]) -> [UInt8] {
        var bytes: [UInt8] = []
        Message.writeParams(params, to: &bytes)
        return bytes
    }
}

extension Array {
    fileprivate func chunks(ofCount n: Int) -> [[Element]] {
        stride(from: 0, to: count, by: n).map { Array(self[$0..<Swift.min($0 + n, count)]) }
    }
}
