import ChorusCore
import Foundation

// What `!report` has found, before it is drawn: as bars of text here (`Bars`), as a chart or a
// spreadsheet on the web side, behind the signed links `ReportLinks` makes.

/// Where report pictures are served, and the key their links are signed with (the web side's).
public struct ReportLinks: Sendable {
    /// `https://chat.example.org:8443`, without a trailing slash.
    public let base: String
    public let signer: LinkSigner
    /// A link opens the report for a day.
    public static let lifetime: TimeInterval = 86_400

    public init(base: String, signer: LinkSigner) {
        self.base = base
        self.signer = signer
    }

    /// The chart and the CSV of the report `!report <arguments>` of `account` in `timeZone`.
    func report(account: String, arguments: String, timeZone: String, now: Date) -> (chart: String, csv: String) {
        let query = signer.sign([("a", account), ("q", arguments), ("tz", timeZone)], expires: now + Self.lifetime)
        return ("\(base)/report.svg?\(query)", "\(base)/report.csv?\(query)")
    }

    /// A calendar feed's link (`!ical new`): it names the account and the feed, and lasts until
    /// the feed is revoked.
    func calendar(account: String, feed: Int64, now: Date) -> String {
        "\(base)/calendar.ics?" + signer.sign([("a", account), ("f", String(feed))], expires: now + CalendarFeed.linkLifetime)
    }

    /// An uploaded photo: the link names it, and lasts as long as the history that shows it. One
    /// photo has one link (its lifetime counts from the upload), so the upload's answer and the
    /// job that takes the photo show the same URL.
    public func photo(_ photo: Photo) -> String {
        "\(base)/photo/\(photo.id).\(photo.kind.fileExtension)?" + signer.sign([("p", String(photo.id))], expires: photo.created + Photo.linkLifetime)
    }

    /// Everything the store holds of `account` as JSON (`!profile export`), for an hour. Its `e`
    /// field is what no other link carries: a report's link, meant to be pasted in a room, opens
    /// no export.
    func export(account: String, now: Date) -> String {
        "\(base)/export.json?" + signer.sign([("a", account), ("e", "all")], expires: now + Self.exportLifetime)
    }

    /// An export's link opens it for an hour.
    public static let exportLifetime: TimeInterval = 3_600

    /// The CSV of `!jobs <arguments>` as `account` typed it in `room` (a key; nil in private).
    func jobs(account: String, room: String?, arguments: String, timeZone: String, now: Date) -> String {
        let query = signer.sign([("a", account), ("r", room ?? ""), ("q", arguments), ("tz", timeZone)], expires: now + Self.lifetime)
        return "\(base)/jobs.csv?\(query)"
    }
}

/// Every job a `!jobs` line matches, for the spreadsheet its link downloads.
public struct JobExport: Sendable {
    /// More would be a database dump, not a list: the link names how many it holds.
    public static let maxRows = 5000
    /// `#kitchen`, or `personal` for the asker's own list.
    public var place: String
    /// Newest first.
    public var jobs: [Job]
    /// How many match, which may be more than `jobs` holds.
    public var total: Int
}

/// A time report's figures: what `!report` draws as text bars, and the web side as a chart or CSV.
public struct TimeReport: Sendable {
    public struct Row: Sendable, Equatable {
        public var label: String
        public var seconds: Int
        /// Set when the report compares with the weekly plan.
        public var planned: Int?
        /// What the text report adds after the share (`· planned 2h`).
        var note = ""
    }

    /// `Your time this week, by mode`.
    public var heading: String
    /// What to say when there are no rows.
    public var empty: String
    public var ascii: Bool
    public var rows: [Row] = []
    /// Lines after the bars (how far from the plan).
    public var footer: [String] = []

    public var total: Int { rows.reduce(0) { $0 + $1.seconds } }

    init(heading: String, empty: String, ascii: Bool) {
        self.heading = heading
        self.empty = empty
        self.ascii = ascii
    }
}

struct Bars {
    let ascii: Bool
    static let width = 20
    private static let eighths = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]

    /// One line a row: label, bar, time, share, and what `suffix` adds.
    func lines(_ rows: [(String, Int, String)], total: Int) -> [String] {
        // In the whole minutes shown beside them: a timer running for seconds reads 0m and has no
        // bar, rather than a full one.
        let top = rows.map { $0.1 / 60 }.max() ?? 0
        let labelWidth = min(24, rows.map { $0.0.count }.max() ?? 0)
        return rows.map { label, seconds, suffix in
            let shown = label.count > labelWidth ? String(label.prefix(labelWidth - 1)) + "…" : label
            let pad = String(repeating: " ", count: labelWidth - shown.count)
            let bar = top == 0 ? "" : self.bar(Double(seconds / 60) / Double(top))
            let percent = total >= 60 ? Int((Double(seconds / 60) * 100 / Double(total / 60)).rounded()) : 0
            return "  \(shown)\(pad) \(bar)\(String(repeating: " ", count: Self.width - bar.count)) \(TimeRules.duration(seconds)) \(percent)%\(suffix)"
        }
    }

    private func bar(_ fraction: Double) -> String {
        let eighthsWide = Int((fraction * Double(Self.width * 8)).rounded())
        if ascii { return String(repeating: "#", count: Int((Double(eighthsWide) / 8).rounded())) }
        return String(repeating: "█", count: eighthsWide / 8) + Self.eighths[eighthsWide % 8]
    }
}
