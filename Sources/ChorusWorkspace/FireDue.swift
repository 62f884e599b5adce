import ChorusCore
import Foundation

/// The reminders due now, as a command: they are changes (a chore remembers it reminded) with
/// events, and go through the same door and sinks as anything typed.
struct FireDue: WorkspaceCommand {
    let interval: TimeInterval

    func run(on boards: Boards) -> Outcome {
        do {
            return Outcome(events: try boards.fireDue(remindEvery: interval))
        } catch {
            return .refusal("could not fire what is due: \(error)")
        }
    }
}

extension Event {
    /// Whether the event may move what comes due next (a chore's turn or schedule, a request's window).
    var changesWhatComesDue: Bool {
        type.hasPrefix("chore.") || type.hasPrefix("turn.") || type.hasPrefix("member.") || type.hasPrefix("request.")
            || type.hasPrefix("time.")
    }
}
