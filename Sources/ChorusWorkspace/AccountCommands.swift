import ChorusCore
import Foundation

/// Stores a new account made by `Accounts.prepare` (checked and hashed before it comes here, so the
/// writer spends no time on scrypt). Refused with code `ACCOUNT_EXISTS` when the name was taken
/// since it was checked.
public struct OpenAccount: WorkspaceCommand {
    public let account: Account

    public init(_ account: Account) {
        self.account = account
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            _ = try Accounts.open(account, in: boards.store)
            return Outcome()
        } catch let error as AccountError {
            return .refusal(error.description, code: "ACCOUNT_EXISTS")
        } catch {
            return .refusal("Could not create the account (\(error)); try again", code: "TEMPORARILY_UNAVAILABLE")
        }
    }
}

/// A login with a token: when it was last used, for `!token list`.
public struct NoteTokenUse: WorkspaceCommand {
    public let token: Int64
    public let time: Date

    public init(_ token: Int64, at time: Date) {
        self.token = token
        self.time = time
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            try boards.store.noteTokenUse(token, at: time)
            return Outcome()
        } catch {
            return .refusal("Could not note the token's use (\(error))")
        }
    }
}
