import CoreMetrics
import Foundation
import Prometheus

/// What `/metrics` shows, in Prometheus's text format: counters and histograms kept as things
/// happen (through swift-metrics, each server with a registry of its own, so a process may run
/// several), and gauges read from the server when scraped.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory

    /// Chat lines (PRIVMSG, NOTICE) relayed to a room or a person, once each however many read them.
    let linesRelayed: CoreMetrics.Counter
    /// Clients cut off because their send queue passed its limit.
    let sendQueueDrops: CoreMetrics.Counter
    let ircHandshakes: CoreMetrics.Counter
    let webHandshakes: CoreMetrics.Counter
    let failedLogins: CoreMetrics.Counter
    /// HTTP requests read on the web listeners (WebSocket upgrades are not among them).
    let webRequests: CoreMetrics.Counter
    /// From a `!command` read to its answer, commit included.
    let commandLatency: CoreMetrics.Timer
    /// Changes the Workspace's writer committed in one transaction.
    let writerBatch: CoreMetrics.Recorder
    private let connections: [ClientKind: CoreMetrics.Gauge]
    private let rooms: CoreMetrics.Gauge

    enum ClientKind: String, CaseIterable {
        case plain, tls, websocket
    }

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["chorus_command_duration_seconds"] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.valueHistogramBuckets["chorus_writer_batch_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        self.factory = factory
        linesRelayed = CoreMetrics.Counter(label: "chorus_lines_relayed_total", factory: factory)
        sendQueueDrops = CoreMetrics.Counter(label: "chorus_send_queue_drops_total", factory: factory)
        ircHandshakes = CoreMetrics.Counter(label: "chorus_tls_handshakes_total", dimensions: [("listener", "irc")], factory: factory)
        webHandshakes = CoreMetrics.Counter(label: "chorus_tls_handshakes_total", dimensions: [("listener", "web")], factory: factory)
        failedLogins = CoreMetrics.Counter(label: "chorus_failed_logins_total", factory: factory)
        webRequests = CoreMetrics.Counter(label: "chorus_web_requests_total", factory: factory)
        commandLatency = CoreMetrics.Timer(label: "chorus_command_duration_seconds", factory: factory)
        writerBatch = CoreMetrics.Recorder(label: "chorus_writer_batch_size", aggregate: true, factory: factory)
        connections = Dictionary(uniqueKeysWithValues: ClientKind.allCases.map {
            ($0, CoreMetrics.Gauge(label: "chorus_connections", dimensions: [("kind", $0.rawValue)], factory: factory))
        })
        rooms = CoreMetrics.Gauge(label: "chorus_rooms", factory: factory)
    }

    /// One counter per command and outcome; `command` is a name from the command table (or
    /// `unknown`), so what people type cannot grow the list without end.
    func commandRan(_ command: String, outcome: String) {
        CoreMetrics.Counter(label: "chorus_commands_total", dimensions: [("command", command), ("outcome", outcome)], factory: factory).increment()
    }

    /// The text of `/metrics`, with the gauges as they are now.
    func exposition(connections counts: [ClientKind: Int], rooms roomCount: Int) -> [UInt8] {
        for (kind, gauge) in connections { gauge.record(counts[kind] ?? 0) }
        rooms.record(roomCount)
        return registry.emitToBuffer()
    }
}
