import ChorusBot
import ChorusCore
import ChorusWorkspace
import Foundation
import NIOCore
import NIOHTTP1

/// `!jobs` as a spreadsheet (`/jobs.csv`), behind the signed link its answer carries: every page
/// of the list the person asked for, as their rooms and the room's visibility allow today.
extension WebApplication {
    func jobSheet(_ request: WebRequest) -> EventLoopFuture<WebResponse> {
        followingLink(request, naming: ["a", "q", "r"], jobSheet(fields:))
    }

    private func jobSheet(fields: [String: String]) -> EventLoopFuture<WebResponse> {
        let account = fields["a"]!, arguments = fields["q"]!, room = fields["r"]!
        let zone = fields["tz"].flatMap(TimeZone.init(identifier:)) ?? config.timeZone
        let now = server.now
        return server.readAfterWrites { store -> JobExport in
            let invocation = try Self.linkInvocation(account: account, room: room.isEmpty ? nil : room, zone: zone, now: now(), store)
            return try Bot(boards: Boards(store: store, timeZone: zone, now: now)).jobExport(invocation, arguments: arguments)
        }
        .map { export in
            let name = export.place.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
            return WebResponse.csv(JobSheet(export, timeZone: zone).text, fileName: "chorus-jobs-\(name.isEmpty ? "room" : name).csv")
        }
        .recover { ($0 as? LinkRefusal)?.response ?? .text(.badRequest, "\($0)") }
    }
}

/// One row a job: the columns a team sorts and filters in a spreadsheet, times in the asker's zone.
struct JobSheet {
    let text: String

    init(_ export: JobExport, timeZone: TimeZone) {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = timeZone
        format.dateFormat = "yyyy-MM-dd HH:mm"
        let time = { (date: Date?) in date.map(format.string(from:)) ?? "" }
        var sheet = CSV(header: ["id", "title", "status", "assignee", "creator", "due", "created", "updated", "tasks_done", "tasks", "description"])
        for job in export.jobs {
            sheet.append([String(job.id), job.title, job.status.rawValue, job.assignee ?? "", job.creator, time(job.due),
                          time(job.createdAt), time(job.updatedAt), String(job.tasksDone), String(job.tasks.count), job.description])
        }
        text = sheet.text
    }
}
