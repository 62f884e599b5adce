extension Message {
    /// The message as one line, without CR LF. Tags are written only when `includeTags` is true,
    /// so one message can be written for clients with and without `message-tags`.
    public func serialized(includeTags: Bool = true) -> String {
        var out = ""
        out.reserveCapacity(64 + params.reduce(0) { $0 + $1.utf8.count })
        if includeTags && !tags.isEmpty {
            out.append("@")
            Message.serialize(tags, into: &out)
            out.append(" ")
        }
        if let source {
            out.append(":")
            out.append(source)
            out.append(" ")
        }
        out.append(command)
        for (i, param) in params.enumerated() {
            out.append(" ")
            let isLast = i == params.count - 1
            // A last parameter that is empty, holds a space or starts with ':' must be trailing;
            // a middle one that would need it is repaired rather than corrupting the line.
            let needsTrailing = param.isEmpty || param.utf8.first == UInt8(ascii: ":") || param.utf8.contains(UInt8(ascii: " "))
            if isLast && needsTrailing {
                out.append(":")
                out.append(param)
            } else if needsTrailing {
                out.append(param.isEmpty ? "*" : param.replacingSpaces())
            } else {
                out.append(param)
            }
        }
        return out
    }

    /// Tags as they appear after the `@`: `key=value;key2`, values escaped.
    public static func serializedTags(_ tags: [Tag]) -> String {
        var out = ""
        serialize(tags, into: &out)
        return out
    }

    static func serialize(_ tags: [Tag], into out: inout String) {
        for (i, tag) in tags.enumerated() {
            if i > 0 { out.append(";") }
            out.append(tag.key)
            if !tag.value.isEmpty {
                out.append("=")
                escapeTagValue(tag.value, into: &out)
            }
        }
    }

    static func escapeTagValue(_ value: String, into out: inout String) {
        // Most values need no escape: one pass over the bytes, then a plain append.
        if !value.utf8.contains(where: { $0 == UInt8(ascii: ";") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\\")
            || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
            return out.append(value)
        }
        // By scalar, not Character: "\r\n" is a single Character in Swift.
        for scalar in value.unicodeScalars {
            switch scalar {
            case ";": out.append("\\:")
            case " ": out.append("\\s")
            case "\\": out.append("\\\\")
            case "\r": out.append("\\r")
            case "\n": out.append("\\n")
            default: out.unicodeScalars.append(scalar)
            }
        }
    }
}

extension String {
    fileprivate func replacingSpaces() -> String {
        var scalars = Substring(self).unicodeScalars
        if scalars.first == ":" { scalars.removeFirst() }
        return String(String.UnicodeScalarView(scalars.map { $0 == " " ? "_" : $0 }))
    }
}
