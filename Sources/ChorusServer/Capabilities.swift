/// The IRCv3 capabilities Chorus offers. A client's enabled set is a bit set: cheap to test per delivery.
struct Caps: OptionSet, Hashable {
    let rawValue: UInt32

    static let capNotify = Caps(rawValue: 1 << 0)
    static let messageTags = Caps(rawValue: 1 << 1)
    static let serverTime = Caps(rawValue: 1 << 2)
    static let echoMessage = Caps(rawValue: 1 << 3)
    static let accountTag = Caps(rawValue: 1 << 4)
    static let batch = Caps(rawValue: 1 << 5)
    static let labeledResponse = Caps(rawValue: 1 << 6)
    static let multiPrefix = Caps(rawValue: 1 << 7)
    static let awayNotify = Caps(rawValue: 1 << 8)
    static let extendedJoin = Caps(rawValue: 1 << 9)
    static let inviteNotify = Caps(rawValue: 1 << 10)
    static let setname = Caps(rawValue: 1 << 11)
    static let standardReplies = Caps(rawValue: 1 << 12)
    static let sasl = Caps(rawValue: 1 << 13)
    static let accountRegistration = Caps(rawValue: 1 << 14)
    static let chathistory = Caps(rawValue: 1 << 15)
    static let accountNotify = Caps(rawValue: 1 << 16)
    static let userhostInNames = Caps(rawValue: 1 << 17)
    static let chghost = Caps(rawValue: 1 << 18)
    static let extendedMonitor = Caps(rawValue: 1 << 19)
    static let readMarker = Caps(rawValue: 1 << 20)
    static let webPush = Caps(rawValue: 1 << 21)

    /// Name, bit, and the value advertised with `CAP LS 302` (nil: no value).
    static let all: [(name: String, cap: Caps, value: String?)] = [
        ("account-notify", .accountNotify, nil),
        ("account-tag", .accountTag, nil),
        ("away-notify", .awayNotify, nil),
        ("batch", .batch, nil),
        ("cap-notify", .capNotify, nil),
        ("draft/account-registration", .accountRegistration, "before-connect,custom-account-name"),
        ("draft/chathistory", .chathistory, nil),
        ("draft/read-marker", .readMarker, nil),
        ("echo-message", .echoMessage, nil),
        ("extended-join", .extendedJoin, nil),
        ("extended-monitor", .extendedMonitor, nil),
        ("invite-notify", .inviteNotify, nil),
        ("labeled-response", .labeledResponse, nil),
        ("message-tags", .messageTags, nil),
        ("multi-prefix", .multiPrefix, nil),
        ("sasl", .sasl, "PLAIN"),
        ("server-time", .serverTime, nil),
        ("setname", .setname, nil),
        ("soju.im/webpush", .webPush, nil),
        ("standard-replies", .standardReplies, nil),
        ("userhost-in-names", .userhostInNames, nil),
    ]

    static func named(_ name: String) -> Caps? {
        all.first(where: { $0.name == name })?.cap
    }

    /// The bits that change how one broadcast line is written; fan-out caches one copy per variant.
    static let tagVariantBits: Caps = [.messageTags, .serverTime, .accountTag]
}
