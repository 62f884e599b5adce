#!/usr/bin/env bash
# The release build of Chorus, for deployment and for benchmarks: bash deploy/build-release.sh [swift build options]
#
# Run-time exclusivity checks are off in this build, as Xcode's "debug builds only" setting does:
# they were a fifth of the server's instructions per delivered message, most of them in SwiftNIO's
# channel bookkeeping (BENCHMARKS.md, "Release builds without exclusivity checks"). Debug builds and `swift test` keep
# them, so a violation still fails the tests; plain `swift build -c release` keeps them too.
#
# Cross-module optimization is on: a generic function of one module (GRDB's arguments, the
# store's queries written once in ChorusSQL) is specialized where another calls it, not run
# through witness tables and run-time metadata. Without it a durable command cost 0.104 ms of CPU
# rather than 0.087 (BENCHMARKS.md, "The store written once").
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build -c release -Xswiftc -enforce-exclusivity=unchecked -Xswiftc -cross-module-optimization "$@"
