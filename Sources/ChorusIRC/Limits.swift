/// Wire limits from RFC 1459 and IRCv3 message-tags.
public enum Limits {
    /// A line without its tags, including CR LF.
    public static let lineBytes = 512
    /// The tag section a client may send, including `@` and the trailing space.
    public static let clientTagBytes = 4096
    /// The tag section a server may send.
    public static let tagBytes = 8191
    /// The longest line the framer accepts before answering 417 (tags + body + CR LF).
    public static let maxInputLine = tagBytes + lineBytes
    public static let nickLength = 30
    public static let channelLength = 50
    public static let topicLength = 390
    public static let awayLength = 200
    public static let kickLength = 255
    public static let realnameLength = 100
}
