import Foundation

/// Registration and login: the account rules, the password hash and the store, in one place.
/// Every method blocks (scrypt, SQLite); call it off the event loops.
public struct Accounts: Sendable {
    public let store: any Store
    public let hasher: PasswordHasher
    public let now: @Sendable () -> Date
    /// The shortest password taken for a new account or a new password (`password-min-length`).
    public let minimumPasswordLength: Int

    public init(store: any Store, hasher: PasswordHasher = PasswordHasher(), now: @escaping @Sendable () -> Date = { Date() },
                minimumPasswordLength: Int = AccountRules.defaultMinimumPasswordLength) {
        self.store = store
        self.hasher = hasher
        self.now = now
        self.minimumPasswordLength = minimumPasswordLength
    }

    /// Makes and stores an account (the `chorusd account` tool); the server does it in two steps,
    /// `prepare` off the event loop and `open` in the Workspace.
    public func register(name: String, password: String, email: String? = nil,
                         firstName: String? = nil, lastName: String? = nil) throws -> Account {
        try Accounts.open(try prepare(name: name, password: password, email: email, firstName: firstName, lastName: lastName),
                          in: store)
    }

    /// A new account checked by the rules and with its password hashed, not yet stored. The slow
    /// part (scrypt) is here, so storing it holds up no other change.
    public func prepare(name: String, password: String, email: String? = nil,
                        firstName: String? = nil, lastName: String? = nil) throws -> Account {
        try AccountRules.validate(name: name, password: password, email: email, minimumPasswordLength: minimumPasswordLength)
        if try store.account(named: name) != nil { throw AccountError.nameTaken(name) }
        if try store.accountDeleted(named: name) != nil { throw AccountError.nameRetired(name) }
        return Account(name: name, email: email, firstName: firstName, lastName: lastName,
                       passwordHash: try hasher.hash(password), createdAt: now())
    }

    /// Stores a prepared account, unless its name was taken meanwhile.
    public static func open(_ account: Account, in store: any Store) throws -> Account {
        do {
            return try store.insertAccount(account)
        } catch StoreError.duplicate {
            if try store.accountDeleted(named: account.name) != nil { throw AccountError.nameRetired(account.name) }
            throw AccountError.nameTaken(account.name)
        }
    }

    /// The account when the password is right. A missing account costs a hash too, so the time
    /// taken does not tell which names exist.
    public func authenticate(name: String, password: String) throws -> Account {
        try logIn(name: name, password: password).account
    }

    /// The account, and the token's id when a token (`AccountToken`) of the account was given in
    /// place of the password: it is checked without the hash (the caller notes its use). Reads only. A password that merely looks like a
    /// token is checked as a password after that.
    public func logIn(name: String, password: String) throws -> (account: Account, token: Int64?) {
        if let (account, token) = try tokenLogIn(name: name, token: password) { return (account, token) }
        return (try passwordLogIn(name: name, password: password), nil)
    }

    /// The account and token id when `token` is one of the account's tokens; nil otherwise. A
    /// SHA-256 and a read, no hash: fast enough to answer at once.
    public func tokenLogIn(name: String, token: String) throws -> (account: Account, token: Int64)? {
        guard token.hasPrefix(AccountToken.prefix),
              let found = try store.token(withDigest: AccountToken.digest(of: token)), found.account == Account.key(name),
              let account = try store.account(named: name) else { return nil }
        return (account, found.id)
    }

    /// The account when the password is right (scrypt: slow on purpose).
    public func passwordLogIn(name: String, password: String) throws -> Account {
        guard let account = try store.account(named: name) else {
            _ = try? hasher.hash(password)
            throw AccountError.wrongPassword
        }
        guard hasher.verify(password, against: account.passwordHash) else { throw AccountError.wrongPassword }
        return account
    }

    public func changePassword(name: String, to password: String) throws {
        try AccountRules.validate(password: password, minimumLength: minimumPasswordLength)
        guard var account = try store.account(named: name) else { throw AccountError.noSuchAccount(name) }
        account.passwordHash = try hasher.hash(password)
        try store.updateAccount(account)
    }

    /// Retires the account (`AccountData`): its sessions end, it cannot log in, and its name is
    /// never given to anyone else.
    public func delete(name: String) throws {
        guard try store.deleteAccount(named: name) else {
            throw try store.accountDeleted(named: name) != nil ? AccountError.alreadyDeleted(name) : AccountError.noSuchAccount(name)
        }
    }

    /// Retires the account if it is live, then deletes its personal data (`AccountData.erased`).
    public func erase(name: String) throws {
        _ = try store.deleteAccount(named: name)
        guard try store.eraseAccount(named: name) else { throw AccountError.noSuchAccount(name) }
    }
}
