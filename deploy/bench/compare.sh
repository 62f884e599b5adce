#!/usr/bin/env bash
# Runs the same chorus-bench scenarios against Chorus, ngIRCd and InspIRCd on this machine, one
# server at a time, and prints one table with each figure and the ratio Chorus/other. A fourth
# column is the floor: relay.c beside this script, the least a server can do for these scenarios.
# On demand only (not in CI): bash deploy/bench/compare.sh [idle-clients] [fanout-messages] [churn-cycles]
# Every server listens on 127.0.0.1 only, with flood control and per-IP limits off.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLIENTS=${1:-1000}
MESSAGES=${2:-20000}
CYCLES=${3:-3000}

for pkg in ngircd inspircd; do
  command -v "$pkg" >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ngircd inspircd; break; }
done
bash deploy/build-release.sh >/dev/null
BENCH=.build/release/chorus-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
printf 'Welcome to the benchmark.\n' > "$work/motd"

start_chorus() {
  .build/release/chorusd serve --data "$work/chorus" --plain 127.0.0.1:16667 --tls off --no-limits >/dev/null 2>&1 &
  echo "$! 16667"
}

start_ngircd() {
  cat > "$work/ngircd.conf" <<CONF
[Global]
  Name = bench.ngircd
  Info = bench
  Listen = 127.0.0.1
  Ports = 16668
  MotdFile = $work/motd
  PidFile = $work/ngircd.pid
  ServerUID = root
  ServerGID = root
[Limits]
  MaxConnections = 0
  MaxConnectionsIP = 0
  MaxJoins = 0
  MaxListSize = 100
  # 0 turns ngIRCd's command penalties (its flood control) off.
  MaxPenaltyTime = 0
  PingTimeout = 600
  PongTimeout = 600
[Options]
  DNS = no
  Ident = no
  PAM = no
CONF
  ngircd -n -f "$work/ngircd.conf" >/dev/null 2>&1 &
  echo "$! 16668"
}

start_relay() {
  gcc -O2 -o "$work/relay" deploy/bench/relay.c
  "$work/relay" 16670 >/dev/null 2>&1 &
  echo "$! 16670"
}

start_inspircd() {
  cat > "$work/inspircd.conf" <<CONF
<server name="bench.inspircd" description="bench" network="Bench">
<admin name="bench" nick="bench" email="bench@localhost">
<bind address="127.0.0.1" port="16669" type="clients">
<power diepass="" restartpass="">
<connect name="main" allow="127.0.0.1" timeout="60" pingfreq="600" hardsendq="67108864" softsendq="8388608"
         recvq="65536" threshold="100000000" commandrate="100000000" fakelag="no" localmax="1000000" globalmax="1000000"
         maxconnwarn="off" useident="no" limit="1000000" resolvehostnames="no">
<files motd="$work/motd">
<pid file="$work/inspircd.pid">
<performance netbuffersize="10240" somaxconn="1024" softlimit="100000" clonesonconnect="no" quietbursts="yes" nouserdns="yes">
<dns server="127.0.0.1" timeout="1">
<channels users="100" opers="100">
<security hidesplits="no" announceinvites="dynamic">
<limits maxchan="64" maxnick="30" maxtopic="307">
<log method="file" type="* -USERINPUT -USEROUTPUT" level="none" target="$work/inspircd.log">
CONF
  inspircd --nofork --runasroot --config "$work/inspircd.conf" >/dev/null 2>&1 &
  echo "$! 16669"
}

wait_port() {
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server on port $1 did not start" >&2
  return 1
}

figure() { (grep -m1 "^$1" || echo "x  -") | sed -E 's/^.*[[:space:]]{2,}([0-9.]+|-).*$/\1/'; }

declare -A RESULT
declare -A PORT=([chorus]=16667 [ngircd]=16668 [inspircd]=16669 [relay]=16670)
for server in chorus ngircd inspircd relay; do
  if (exec 3<>"/dev/tcp/127.0.0.1/${PORT[$server]}") 2>/dev/null; then
    echo "port ${PORT[$server]} is taken before $server started: stop what listens there" >&2
    exit 1
  fi
  read -r pid port < <("start_$server")
  pids+=("$pid")
  wait_port "$port"
  echo "measuring $server (pid $pid, port $port)" >&2
  # A scenario that fails leaves its figures empty ("-" in the table) rather than stopping the run.
  idle=$("$BENCH" idle --pid "$pid" --port "$port" --timeout 90 --clients "$CLIENTS" 2>&1) || echo "$server idle: $idle" >&2
  fan=$("$BENCH" fanout --pid "$pid" --port "$port" --timeout 90 --members 100 --messages "$MESSAGES" 2>&1) || echo "$server fanout: $fan" >&2
  light=$("$BENCH" fanout --pid "$pid" --port "$port" --timeout 90 --members 100 --messages 4000 --rate 20000 2>&1) || echo "$server light: $light" >&2
  churn=$("$BENCH" churn --pid "$pid" --port "$port" --timeout 90 --cycles "$CYCLES" 2>&1) || echo "$server churn: $churn" >&2
  RESULT[$server,rss]=$(echo "$idle" | figure "server RSS per connection")
  RESULT[$server,join]=$(echo "$idle" | figure "server CPU per connect")
  RESULT[$server,fan]=$(echo "$fan" | figure "server CPU per 1M")
  RESULT[$server,light]=$(echo "$light" | figure "server CPU per 1M")
  RESULT[$server,p50]=$(echo "$light" | figure "latency p50")
  RESULT[$server,p99]=$(echo "$light" | figure "latency p99")
  RESULT[$server,churn]=$(echo "$churn" | figure "server CPU per cycle")
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
printf '\n%-46s %9s %9s %9s %9s %9s %9s %9s\n' "figure ($(nproc) cores, $(date -u +%F))" chorus ngircd inspircd relay \
  "/ngircd" "/inspircd" "/relay"
row() {
  printf '%-46s %9s %9s %9s %9s %9s %9s %9s\n' "$1" "${RESULT[chorus,$2]}" "${RESULT[ngircd,$2]}" "${RESULT[inspircd,$2]}" \
    "${RESULT[relay,$2]}" "$(ratio "${RESULT[chorus,$2]}" "${RESULT[ngircd,$2]}")" \
    "$(ratio "${RESULT[chorus,$2]}" "${RESULT[inspircd,$2]}")" "$(ratio "${RESULT[chorus,$2]}" "${RESULT[relay,$2]}")"
}
row "RSS per idle connection, $CLIENTS (KiB)" rss
row "CPU per connect+register+join (ms)" join
row "CPU-s per 1M deliveries, saturated, M=100" fan
row "CPU-s per 1M deliveries, 20k/s asked, M=100" light
row "latency p50 at 20k/s asked (ms)" p50
row "latency p99 at 20k/s asked (ms)" p99
row "CPU per connect/register/join/quit (ms)" churn
echo "ratios are Chorus / that server; relay is deploy/bench/relay.c, a floor, not a server anyone runs"
