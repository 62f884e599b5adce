@testable import ChorusBot
import Testing

/// The one command table: every word a user types reaches exactly one command.
@Suite struct CommandTableTests {
    @Test func noWordNamesTwoCommands() {
        #expect(Bot.clashes.isEmpty, "words naming several commands: \(Bot.clashes)")
    }

    @Test func aMistypedCommandNamesTheOneMeant() {
        #expect(Bot.nearestName(to: "tasks") == "task")
        #expect(Bot.nearestName(to: "asign") == "assign")
        #expect(Bot.nearestName(to: "don") == "done")
        #expect(Bot.nearestName(to: "choers") == "chores")
        // Too short or too far to guess: nothing.
        #expect(Bot.nearestName(to: "ok") == nil)
        #expect(Bot.nearestName(to: "fly") == nil)
        #expect(Bot.nearestName(to: "banana") == nil)
        // Every command's own name is its own nearest.
        for command in Bot.commands where command.name.count > 2 {
            #expect(Bot.nearestName(to: command.name) == command.name)
        }
    }

    @Test func namesAndAliasesAreOneLowercaseWord() {
        for command in Bot.commands {
            for word in [command.name] + command.aliases {
                #expect(!word.isEmpty && word == word.lowercased() && !word.contains(" "), "!\(word) of !\(command.name)")
            }
        }
    }
}
