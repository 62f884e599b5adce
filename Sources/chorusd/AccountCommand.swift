import ArgumentParser
import ChorusCore
import Foundation

struct AccountCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account", abstract: "Manage accounts from the shell.",
        subcommands: [Add.self, Passwd.self, Del.self, Erase.self, Export.self, List.self, Token.self])

    static func readPassword(_ given: String?) throws -> String {
        if let given { return given }
        FileHandle.standardError.write("password: ".data(using: .utf8)!)
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw ValidationError("No password given: pass --password or type it on standard input")
        }
        return line
    }

    /// The accounts of the data folder the options name. Only `add` may make a database where
    /// there is none: a mistyped `--data` must not quietly look like a server with no accounts.
    static func accounts(_ options: DataOptions, mayCreate: Bool = false) throws -> Accounts {
        let settings = try options.load()
        if !mayCreate { try options.requireDatabase(settings) }
        if settings.store == nil, !FileManager.default.fileExists(atPath: settings.databasePath) {
            FileHandle.standardError.write("making a new data folder at \(settings.dataDirectory)\n".data(using: .utf8)!)
        }
        return Accounts(store: try options.openStore(settings), hasher: PasswordHasher(logRounds: settings.passwordCost),
                        minimumPasswordLength: settings.passwordMinLength)
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an account.")
        @OptionGroup var options: DataOptions
        @Argument(help: "Account name (also its nick).") var name: String
        @Option(help: "Email address.") var email: String?
        @Option(help: "Password (read from standard input when left out).") var password: String?

        func run() throws {
            let settings = try options.load()
            let folderWasThere = FileManager.default.fileExists(atPath: settings.dataDirectory)
            do {
                let account = try AccountCommand.accounts(options, mayCreate: true).register(
                    name: name, password: try AccountCommand.readPassword(password), email: email)
                print("created account \(account.name)")
            } catch {
                // A refused first account leaves no folder behind it.
                if !folderWasThere, settings.store == nil { try? FileManager.default.removeItem(atPath: settings.dataDirectory) }
                throw error
            }
        }
    }

    struct Passwd: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Set an account's password.")
        @OptionGroup var options: DataOptions
        @Argument var name: String
        @Option(help: "New password (read from standard input when left out).") var password: String?

        func run() throws {
            try AccountCommand.accounts(options).changePassword(name: name, to: try AccountCommand.readPassword(password))
            print("password changed for \(name)")
        }
    }

    struct Del: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account: it can no longer log in, and its name is never given to anyone else.",
            discussion: """
                Its sessions end (within 5 s on a running server), its tokens stop working, its password \
                hash, email and names are wiped, it leaves its rooms, and its contractor profile, read \
                markers and waiting notices are deleted. What the team keeps under its name (jobs, comments, \
                room history, requests, offers, reviews, private conversations with others) stays, under a \
                name no one else can take. `chorusd account erase` deletes its personal data as well.
                """)
        @OptionGroup var options: DataOptions
        @Argument var name: String

        func run() throws {
            try AccountCommand.accounts(options).delete(name: name)
            print("deleted account \(name): its name stays retired")
        }
    }

    struct Erase: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete an account and erase its personal data: private conversations, time entries, plan and modes.",
            discussion: """
                As `del`, and also deletes its private conversations (both sides), its time entries, \
                modes, plan and time settings. What it wrote in rooms and jobs is the team's record and \
                stays, under its retired name. Export it first if it was asked for (`chorusd account export`).
                """)
        @OptionGroup var options: DataOptions
        @Argument var name: String

        func run() throws {
            try AccountCommand.accounts(options).erase(name: name)
            print("erased account \(name): its personal data is deleted and its name stays retired")
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an account's data as JSON: every row that is its own or names it, table by table.",
            discussion: "Never a password hash or a token's secret. Works for a deleted account too, until it is erased.")
        @OptionGroup var options: DataOptions
        @Argument var name: String

        func run() throws {
            guard let data = try AccountCommand.accounts(options).store.exportAccount(named: name) else {
                throw AccountError.noSuchAccount(name)
            }
            FileHandle.standardOutput.write(try data.json())
            print()
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts.")
        @OptionGroup var options: DataOptions

        func run() throws {
            let all = try AccountCommand.accounts(options).store.allAccounts()
            for a in all {
                print([a.name, a.email ?? "-", ISO8601DateFormatter().string(from: a.createdAt)].joined(separator: "\t"))
            }
            if all.isEmpty { print("no accounts") }
        }
    }
}

extension AccountCommand {
    struct Token: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a token a bot logs in with (PASS name:token), as `!token new` does; it is printed once.")
        @OptionGroup var options: DataOptions
        @Argument(help: "The account the bot logs in as.") var name: String
        @Option(help: "What the token is for, shown by !token.") var label = "bot"

        func run() throws {
            let secret = AccountToken.newSecret()
            let token = try AccountCommand.accounts(options).store.issueToken(for: name, label: label, secret: secret, at: Date())
            print("token \(token.id) (\(token.label)) for \(name): \(secret)")
        }
    }
}
