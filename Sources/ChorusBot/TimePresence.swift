import ChorusCore
import ChorusWorkspace
import Foundation

/// Time that follows the person: the transport tells the Workspace when someone's last connection
/// closes and when they log in again, and a timer that ran on in between is asked about instead of
/// counted blindly.
public struct TimeDeparture: WorkspaceCommand {
    public let account: String
    public let time: Date

    public init(_ account: String, at time: Date) {
        self.account = account
        self.time = time
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            try boards.time.noteLeft(account, at: time)
            return Outcome()
        } catch {
            return .refusal("could not note when \(account) left: \(error)")
        }
    }
}

/// At login: the question about a timer that ran on while the person was away, as the answer's
/// one line (none when there is nothing to ask).
public struct TimeArrival: WorkspaceCommand {
    public let account: String
    public let now: Date

    public init(_ account: String, at now: Date) {
        self.account = account
        self.now = now
    }

    public func run(on boards: Boards) -> Outcome {
        do {
            let zone = try boards.store.timeZone(of: account, otherwise: boards.timeZone)
            let question = try Bot(boards: boards).awayQuestion(for: account, zone: zone, now: now)
            return Outcome(replies: question.map { [$0] } ?? [])
        } catch {
            return .refusal("could not read \(account)'s timer: \(error)")
        }
    }
}
