import ChorusBot
import Testing

/// The one command table: every word a user types reaches exactly one command.
@Suite struct CommandTableTests {
    @Test func noWordNamesTwoCommands() {
        #expect(Bot.clashes.isEmpty, "words naming several commands: \(Bot.clashes)")
    }

    @Test func namesAndAliasesAreOneLowercaseWord() {
        for command in Bot.commands {
            for word in [command.name] + command.aliases {
                #expect(!word.isEmpty && word == word.lowercased() && !word.contains(" "), "!\(word) of !\(command.name)")
            }
        }
    }
}
