import ChorusIRC

/// RPL_ISUPPORT (005) tokens: what clients may assume about this server.
enum ISupport {
    /// `fileHost`: where clients upload pictures (`draft/FILEHOST`), when there is a web side;
    /// `vapid`: the key push messages are signed with (`VAPID`, soju.im/webpush).
    static func tokens(_ config: ServerConfig, fileHost: String? = nil, vapid: String? = nil) -> [String] {
        [
            "AWAYLEN=\(Limits.awayLength)",
            "BOT=B",
            "CASEMAPPING=ascii",
            "CHANLIMIT=#:\(config.maxChannelsPerClient)",
            "CHANMODES=b,k,l,imnst",
            "CHANNELLEN=\(Limits.channelLength)",
            "CHANTYPES=#",
            "CHATHISTORY=\(config.historyPageLimit)",
            "ELIST=U",
            "HOSTLEN=64",
            "KICKLEN=\(Limits.kickLength)",
            "MAXTARGETS=4",
            "MODES=4",
            "MONITOR=\(Monitors.limit)",
            "MSGREFTYPES=msgid,timestamp",
            "NETWORK=\(config.network)",
            "NICKLEN=\(Limits.nickLength)",
            "PREFIX=(ov)@+",
            "STATUSMSG=@+",
            "TARGMAX=NAMES:1,LIST:1,KICK:4,WHOIS:1,PRIVMSG:4,NOTICE:4,JOIN:,PART:",
            "TOPICLEN=\(Limits.topicLength)",
            "USERLEN=10",
            "UTF8ONLY",
            "WHOX",
        ] + (vapid.map { ["VAPID=\($0)"] } ?? []) + (fileHost.map { ["draft/FILEHOST=\($0)"] } ?? [])
    }
}
