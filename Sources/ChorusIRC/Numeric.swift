/// Numeric replies, named as in modern.ircdocs.horse.
public enum Numeric: String, Sendable {
    case welcome = "001", yourHost = "002", created = "003", myInfo = "004", isupport = "005"
    case umodeIs = "221"
    case luserClient = "251", luserOp = "252", luserUnknown = "253", luserChannels = "254", luserMe = "255"
    case adminMe = "256"
    case localUsers = "265", globalUsers = "266"
    case away = "301", userhost = "302", ison = "303", unaway = "305", nowAway = "306"
    case whoisRegNick = "307", whoisBot = "335"
    case whoisUser = "311", whoisServer = "312", whoisOperator = "313", whowasUser = "314"
    case endOfWho = "315", whoisIdle = "317", endOfWhois = "318", whoisChannels = "319"
    case listStart = "321", list = "322", listEnd = "323", channelModeIs = "324", creationTime = "329"
    case whoisAccount = "330", noTopic = "331", topic = "332", topicWhoTime = "333"
    case whoisActually = "338"
    case inviting = "341", version = "351", whoReply = "352", whoSpcRpl = "354", namReply = "353"
    case banList = "367", endOfBanList = "368", endOfNames = "366", endOfWhowas = "369", info = "371", endOfInfo = "374"
    case motd = "372", motdStart = "375", endOfMotd = "376", whoisHost = "378", youreOper = "381"
    case time = "391"
    case whoisSecure = "671", invalidModeParam = "696"
    case monOnline = "730", monOffline = "731", monList = "732", endOfMonList = "733", monListFull = "734"
    case noSuchNick = "401", noSuchServer = "402", noSuchChannel = "403", cannotSendToChan = "404"
    case tooManyChannels = "405", wasNoSuchNick = "406", noRecipient = "411", noTextToSend = "412"
    case inputTooLong = "417", unknownCommand = "421", noMotd = "422"
    case noNicknameGiven = "431", erroneusNickname = "432", nicknameInUse = "433"
    case userNotInChannel = "441", notOnChannel = "442", userOnChannel = "443"
    case notRegistered = "451", needMoreParams = "461", alreadyRegistered = "462", passwdMismatch = "464"
    case channelIsFull = "471", unknownMode = "472", inviteOnlyChan = "473", bannedFromChan = "474"
    case badChannelKey = "475", badChanMask = "476", noPrivileges = "481", chanOPrivsNeeded = "482"
    case noOperHost = "491", uModeUnknownFlag = "501", usersDontMatch = "502", invalidKey = "525"
    case loggedIn = "900", loggedOut = "901", nickLocked = "902", saslSuccess = "903", saslFail = "904"
    case saslTooLong = "905", saslAborted = "906", saslAlready = "907", saslMechs = "908"
}

extension Message {
    /// A numeric reply from `server` to `target` (the client's nick, or `*` before it has one).
    public static func numeric(_ numeric: Numeric, server: String, target: String, _ params: [String]) -> Message {
        Message(source: server, numeric.rawValue, [target] + params)
    }
}
