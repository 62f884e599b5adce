import NIOCore

/// A spreadsheet as RFC 4180 text: one row a line ending in CR LF, fields with commas, quotes or
/// line breaks quoted.
struct CSV {
    private(set) var text: String

    init(header: [String]) {
        text = ""
        append(header)
    }

    mutating func append(_ row: [String]) {
        text += row.map(Self.field).joined(separator: ",") + "\r\n"
    }

    static func field(_ value: String) -> String {
        // A leading = + - @ makes a spreadsheet read a formula: a quote mark keeps it text.
        let safe = value.first.map { "=+-@".contains($0) } == true ? "'" + value : value
        return safe.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            ? "\"" + safe.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : safe
    }
}

extension WebResponse {
    /// A download: the browser saves it as `fileName` rather than showing it.
    static func csv(_ text: String, fileName: String) -> WebResponse {
        var response = WebResponse(status: .ok, body: ByteBuffer(string: text))
        response.headers.add(name: "Content-Type", value: "text/csv; charset=utf-8")
        response.headers.add(name: "Content-Disposition", value: "attachment; filename=\"\(fileName)\"")
        response.headers.add(name: "Cache-Control", value: "private, max-age=60")
        return response
    }
}
