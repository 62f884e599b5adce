import ArgumentParser
import ChorusServer
import Foundation
import Logging

extension ServerConfig.LogFormat: ExpressibleByArgument {}

/// `log-format = json`: one JSON object a line on standard error, for log collectors (journald's
/// JSON, Loki, Elasticsearch). Its fields: time (ISO 8601, UTC), level, label, message, and the
/// event's metadata. Nothing secret is ever logged, in either format: no passwords, tokens or keys.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    init(label: String) {
        self.label = label
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields: [String: String] = [:]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { fields[key] = "\(value)" }
        fields["time"] = Timestamp.format(Date())  // as IRCv3 server-time writes it
        fields["level"] = event.level.rawValue
        fields["label"] = label
        fields["message"] = "\(event.message)"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(fields) else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardError.write(line)
    }
}
