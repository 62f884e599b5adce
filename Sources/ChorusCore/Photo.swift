import Foundation

/// A picture someone uploaded (`POST /api/v1/photos`, the `draft/FILEHOST` of IRC clients), as
/// proof of work on a job or to show a room. It is kept in the store, so that every process of a
/// cluster serves it and a backup holds it, with its metadata taken out first (`ImageFile`), and
/// shown through a signed link.
public struct Photo: Sendable, Equatable {
    public var id: Int64
    /// The uploader's account key.
    public var account: String
    public var kind: ImageFile.Kind
    public var bytes: Data
    public var created: Date

    public init(id: Int64 = 0, account: String, kind: ImageFile.Kind, bytes: Data, created: Date) {
        self.id = id
        self.account = account
        self.kind = kind
        self.bytes = bytes
        self.created = created
    }

    /// A phone's photo is 2–6 MB; more is a video or a scan, not proof of a fixed tap.
    public static let maxBytes = 10 * 1024 * 1024
    /// Uploads per account a day: enough for a busy team's proof, too few to fill a disk.
    public static let perDay = 200
    /// A photo's link lasts as long as the job history that names it.
    public static let linkLifetime: TimeInterval = 10 * 365 * 86_400
    /// `!photo <job>` without a link takes the asker's latest upload of this recent.
    public static let recentUpload: TimeInterval = 3600
}
