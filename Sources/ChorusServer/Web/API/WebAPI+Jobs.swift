import ChorusCore
import Foundation
import NIOCore
import NIOHTTP1

/// The jobs an account may see, as `!jobs` and `!show` show them: the same board, the same rules
/// (a member of a room with `visibility own` reads the jobs they created or hold).
extension WebAPI {
    /// `GET /api/v1/jobs?room=&status=&assignee=&q=&limit=&offset=`: a room's jobs, or the
    /// account's personal ones without `room`, newest first.
    func jobs(_ caller: Caller, _ request: WebRequest) throws -> EventLoopFuture<WebResponse> {
        var filter = JobFilter()
        filter.limit = Int(try request.integer("limit", default: 50, in: 1...200))
        filter.offset = Int(try request.integer("offset", default: 0, in: 0...1_000_000))
        if let words = request.query["status"] {
            var statuses = Set<Job.Status>()
            for word in words.split(separator: ",") {
                if word == "open" {
                    statuses.formUnion(Job.Status.allCases.filter(\.isOpen))
                } else if let status = Job.Status(rawValue: String(word)) {
                    statuses.insert(status)
                } else {
                    throw APIError(.badRequest, "INVALID_PARAMS",
                                   "status is open or one of \(Job.Status.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(word.prefix(30))\".")
                }
            }
            filter.statuses = statuses
        }
        filter.assignee = request.query["assignee"].map { $0.hasPrefix("@") ? String($0.dropFirst()) : $0 }
        filter.text = request.query["q"].flatMap { $0.isEmpty ? nil : $0 }
        let room = request.query["room"].map(Account.key)
        let store = server.store, now = server.now
        return readBoard { names, _ -> APIJobList in
            let (jobs, total) = try JobBoard(store: store, now: now).list(in: room, filter: filter, by: caller.account)
            return APIJobList(jobs: jobs.map { APIJob($0, roomName: $0.room.map { names[$0] ?? $0 }) }, total: total)
        }
    }

    /// `GET /api/v1/jobs/ID`: one job with its tasks, photos, latest comments and activity.
    func job(_ caller: Caller, _ request: WebRequest, id: Int64) throws -> EventLoopFuture<WebResponse> {
        let store = server.store, now = server.now
        return readBoard { names, wording -> APIJobDetail in
            let board = JobBoard(store: store, now: now)
            let job = try board.job(id, by: caller.account)
            let roomName = job.room.map { names[$0] ?? $0 }
            return APIJobDetail(job: APIJob(job, roomName: roomName),
                                comments: try board.comments(id, by: caller.account, limit: 20).map(APIComment.init),
                                activity: try board.activity(id, by: caller.account, limit: 30).map {
                                    WebAPI.apiEvent($0, roomName: $0.room.map { names[$0] ?? $0 }, wording: wording)
                                })
        }
    }

    /// A board's read on the background pool (given the rooms' names as they are now, and the
    /// words of events), answered as JSON; the board's refusals as 404.
    func readBoard<T: Encodable>(_ read: @escaping ([String: String], IRCEventWording) throws -> T) -> EventLoopFuture<WebResponse> {
        let names = server.rooms.mapValues(\.name), wording = server.wording
        return server.background { try read(names, wording) }.flatMapThrowing { try self.json(.ok, $0) }.flatMapError { error in
            switch error {
            case let refusal as JobError:
                return self.fail(APIError(.notFound, "NOT_FOUND", refusal.description))
            default:
                return self.fail(error)
            }
        }
    }
}

struct APIJob: Encodable {
    let id: Int64
    let room: String?
    let title: String
    let description: String
    let status: String
    let creator: String
    let assignee: String?
    let due: String?
    let created: String
    let updated: String
    let tasks: [APITask]
    let photos: [APIPhoto]

    init(_ job: Job, roomName: String?) {
        id = job.id
        room = roomName
        title = job.title
        description = job.description
        status = job.status.rawValue
        creator = job.creator
        assignee = job.assignee
        due = job.due.map(WebAPI.timestamp)
        created = WebAPI.timestamp(job.createdAt)
        updated = WebAPI.timestamp(job.updatedAt)
        tasks = job.tasks.map { APITask(text: $0.text, done: $0.done, doneBy: $0.doneBy) }
        photos = job.photos.map { APIPhoto(url: $0.url, caption: $0.caption, by: $0.by, at: WebAPI.timestamp($0.at)) }
    }
}

struct APITask: Encodable {
    let text: String
    let done: Bool
    let doneBy: String?
}

struct APIPhoto: Encodable {
    let url: String
    let caption: String
    let by: String
    let at: String
}

struct APIComment: Encodable {
    let id: Int64
    let author: String
    let text: String
    let at: String

    init(_ comment: Comment) {
        id = comment.id
        author = comment.author
        text = comment.text
        at = WebAPI.timestamp(comment.at)
    }
}

struct APIJobList: Encodable {
    let jobs: [APIJob]
    /// How many match in all (`limit` and `offset` page through them).
    let total: Int
}

struct APIJobDetail: Encodable {
    let job: APIJob
    let comments: [APIComment]
    let activity: [APIEvent]
}
