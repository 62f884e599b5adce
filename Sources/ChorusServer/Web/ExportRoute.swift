import ChorusCore
import Foundation
import NIOCore

/// An account's own data, whole (`AccountData`): behind the link `!profile export` gives, and at
/// `GET /api/v1/me/export` with the account's token.
extension WebApplication {
    func export(_ request: WebRequest) -> EventLoopFuture<WebResponse> {
        followingLink(request, naming: ["a", "e"]) { fields in
            guard fields["e"] == "all" else { return tamperedLink }
            return Self.exportResponse(of: fields["a"]!, server)
                .recover { ($0 as? LinkRefusal)?.response ?? .text(.internalServerError, "\($0)") }
        }
    }

    /// The JSON of `account`'s data, as a download. Read and encoded on the background pool, beside
    /// the Workspace's writer: an export reads every table, and queued behind the writer it would
    /// hold up everyone's commands while it did. What was answered before the request is committed,
    /// so it is in the file.
    static func exportResponse(of account: String, _ server: IRCServer) -> EventLoopFuture<WebResponse> {
        let store = server.store
        return server.background { () -> Data in
            guard try store.account(named: account) != nil, let data = try store.exportAccount(named: account) else {
                throw LinkRefusal(status: .gone, text: "This link's account was deleted: the link no longer works.")
            }
            return try data.json() + Data("\n".utf8)
        }
        .map { json in
            var response = WebResponse(status: .ok, body: ByteBuffer(bytes: json))
            response.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            let name = account.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
            response.headers.add(name: "Content-Disposition", value: "attachment; filename=\"chorus-\(name.isEmpty ? "account" : name).json\"")
            response.headers.add(name: "Cache-Control", value: "no-store")
            return response
        }
    }
}
