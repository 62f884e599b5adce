import Foundation

/// What an operator does with `chorusd` beside the running server: accounts and their tokens,
/// made on the run's data folder (or its PostgreSQL schema).
struct Operator {
    let chorusd: String
    let data: String
    let store: String?

    /// An account and a token for it.
    func makeToken(_ name: String) throws -> String {
        let store = self.store.map { ["--store", $0] } ?? []
        _ = try run(["account", "add", name, "--data", data, "--password", "bench-\(name)-password"] + store)
        let out = try run(["account", "token", name, "--data", data, "--label", "bench"] + store)
        guard let range = out.range(of: #"chorus-[0-9a-f]{64}"#, options: .regularExpression) else {
            throw BenchError("no token in: \(out)")
        }
        return String(out[range])
    }

    private func run(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: chorusd)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw BenchError("chorusd \(arguments.prefix(2).joined(separator: " ")): \(text)") }
        return text
    }
}
