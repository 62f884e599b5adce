/// One IRC message: `[@tags] [:source] VERB [params…]`, without the line ending.
///
/// The model follows modern.ircdocs.horse and the IRCv3 message-tags specification: tags keep their
/// order, a tag without a value is stored with an empty value, and the last parameter may contain
/// spaces (it is written as a trailing parameter when it has to be).
public struct Message: Equatable, Sendable {
    public struct Tag: Equatable, Sendable {
        public var key: String
        public var value: String
        public init(_ key: String, _ value: String = "") {
            self.key = key
            self.value = value
        }
    }

    public var tags: [Tag]
    public var source: String?
    /// The verb in upper case, or a three-digit numeric.
    public var command: String
    public var params: [String]

    public init(tags: [Tag] = [], source: String? = nil, _ command: String, _ params: [String] = []) {
        self.tags = tags
        self.source = source
        self.command = command
        self.params = params
    }

    public init(tags: [Tag] = [], source: String? = nil, _ command: String, _ params: String...) {
        self.init(tags: tags, source: source, command, params)
    }

    public func tag(_ key: String) -> String? {
        tags.first(where: { $0.key == key })?.value
    }

    public mutating func setTag(_ key: String, _ value: String) {
        if let index = tags.firstIndex(where: { $0.key == key }) {
            tags[index].value = value
        } else {
            tags.append(Tag(key, value))
        }
    }

    /// Tags a client sent for other clients (`+` prefix, IRCv3 client-only tags).
    public var clientTags: [Tag] { tags.filter { $0.key.hasPrefix("+") } }
}

extension Message: CustomStringConvertible {
    public var description: String { serialized() }
}
