extension StringProtocol {
    /// The text without leading and trailing whitespace. (Foundation's `trimmingCharacters(in:)`
    /// goes through `CharacterSet`: 3 % of the writer's time per `!comment` in a profile.)
    public var trimmed: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }) else { return "" }
        let last = lastIndex(where: { !$0.isWhitespace })!
        return String(self[first...last])
    }
}
