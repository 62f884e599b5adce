import Foundation

/// A registered person or bot. `name` is how it was spelled at registration; lookups fold case.
public struct Account: Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var email: String?
    public var firstName: String?
    public var lastName: String?
    public var passwordHash: String
    public var createdAt: Date

    public init(id: Int64 = 0, name: String, email: String? = nil, firstName: String? = nil,
                lastName: String? = nil, passwordHash: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.email = email
        self.firstName = firstName
        self.lastName = lastName
        self.passwordHash = passwordHash
        self.createdAt = createdAt
    }

    /// The key every table uses for this account: ASCII case folded, as IRC nicks are.
    public var key: String { Account.key(name) }

    public static func key(_ name: String) -> String {
        // Most names are typed in lower case already: no copy then (this runs several times a command).
        guard name.utf8.contains(where: { $0 >= 65 && $0 <= 90 }) else { return name }
        return String(decoding: name.utf8.map { ($0 >= 65 && $0 <= 90) ? $0 + 32 : $0 }, as: UTF8.self)
    }
}

/// Why an account could not be created, changed or used. Each case reads as a sentence for the user.
public enum AccountError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidName(String)
    case nameTaken(String)
    /// Shorter than the server's minimum (`password-min-length`), or with a space.
    case weakPassword(minimum: Int)
    case invalidEmail(String)
    case noSuchAccount(String)
    /// The name of an account that was deleted: never given to anyone else.
    case nameRetired(String)
    /// Deleted before: nothing more to delete.
    case alreadyDeleted(String)
    case wrongPassword
    case tooManyTokens
    /// A profile field longer than it may be: refused whole, rather than cut without a word.
    case tooLong(field: String, max: Int)

    public var description: String {
        switch self {
        case .invalidName(let n): return "\"\(n)\" is not a valid account name: use 1-30 letters, digits or []\\`_^{|}- and do not start with a digit or -"
        case .nameTaken(let n): return "The account \(n) already exists"
        case .weakPassword(let minimum): return "The password must be at least \(minimum) characters and contain no spaces"
        case .invalidEmail(let e): return "\"\(e)\" is not an email address"
        case .noSuchAccount(let n): return "There is no account named \(n)"
        case .nameRetired(let n): return "The name \(n) belonged to an account that was deleted: it is not given to anyone else"
        case .alreadyDeleted(let n): return "The account \(n) is already deleted: its name stays retired (chorusd account erase deletes its personal data)"
        case .wrongPassword: return "Wrong account name or password"
        case .tooManyTokens: return "An account may have \(AccountToken.maxPerAccount) tokens: revoke one first (!token revoke <id>)"
        case .tooLong(let field, let max): return "A \(field) is at most \(max) characters: nothing was changed"
        }
    }
}

public enum AccountRules {
    /// The shortest password a server takes unless its `password-min-length` says otherwise.
    public static let defaultMinimumPasswordLength = 8

    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 30 else { return false }
        let special = Set("[]\\`_^{|}".utf8)
        for (i, b) in bytes.enumerated() {
            let letter = (b >= 65 && b <= 90) || (b >= 97 && b <= 122)
            if letter || special.contains(b) { continue }
            if i > 0 && ((b >= 48 && b <= 57) || b == UInt8(ascii: "-")) { continue }
            return false
        }
        return true
    }

    public static func validate(name: String, password: String, email: String?,
                                minimumPasswordLength: Int = defaultMinimumPasswordLength) throws(AccountError) {
        guard isValidName(name) else { throw .invalidName(name) }
        try validate(password: password, minimumLength: minimumPasswordLength)
        if let email, !isValidEmail(email) { throw .invalidEmail(email) }
    }

    public static func validate(password: String, minimumLength: Int = defaultMinimumPasswordLength) throws(AccountError) {
        guard password.count >= minimumLength, !password.contains(" ") else { throw .weakPassword(minimum: minimumLength) }
    }

    /// The profile fields a person sets themselves (`!profile set`).
    public enum ProfileField: String, CaseIterable, Sendable { case first, last, email }

    /// Sets `field` of `account` to `value` (empty clears it): names are kept to 50 characters,
    /// an email must look like one.
    /// The longest first or last name.
    public static let maxNameLength = 50

    public static func set(_ field: ProfileField, to value: String, of account: inout Account) throws(AccountError) {
        let value = value.trimmed
        switch field {
        case .first:
            guard value.count <= maxNameLength else { throw .tooLong(field: "first name", max: maxNameLength) }
            account.firstName = value.isEmpty ? nil : value
        case .last:
            guard value.count <= maxNameLength else { throw .tooLong(field: "last name", max: maxNameLength) }
            account.lastName = value.isEmpty ? nil : value
        case .email:
            guard value.isEmpty || isValidEmail(value) else { throw .invalidEmail(value) }
            account.email = value.isEmpty ? nil : value
        }
    }

    /// Whether `reader` sees `account`'s email: its owner only.
    public static func showsEmail(of account: Account, to reader: String) -> Bool {
        Account.key(account.name) == Account.key(reader)
    }

    public static func isValidEmail(_ email: String) -> Bool {
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && parts[1].contains(".") && !email.contains(" ")
    }
}
