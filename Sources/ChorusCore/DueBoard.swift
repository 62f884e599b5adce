/// The boards whose work comes due at times of their own, with nobody typing anything: each has a
/// row in the store's due table saying when it next does, so that any process sharing the database
/// may take it then, and one alone does it (`Store.takeDueBoards`).
public enum DueBoard: String, CaseIterable, Sendable {
    /// A chore's turn coming due, and its reminders while overdue (`ChoreBoard.fireReminders`).
    case chores
    /// Open service requests whose window ended (`MarketBoard.expire`).
    case requests
    /// Timers running past their owner's limit (`TimeBoard.nudge`).
    case timers
    /// Planned blocks starting with no timer running (`TimeBoard.planReminders`).
    case plans
}
