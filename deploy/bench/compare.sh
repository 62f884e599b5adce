#!/usr/bin/env bash
# Runs the same chorus-bench scenarios against Chorus, ngIRCd and InspIRCd on this machine, one
# server at a time, and prints one table with each figure and the ratio Chorus/other. A fourth
# column is the floor: relay.c beside this script, the least a server can do for these scenarios
# (plaintext only). The TLS rows use one ECDSA P-256 certificate for the three servers.
# On demand only (not in CI):
#   bash deploy/bench/compare.sh [idle-clients] [fanout-messages] [churn-cycles] [rounds]
# Every server listens on 127.0.0.1 only, with flood control and per-IP limits off. All four run at
# once; each scenario runs against each server in turn, `rounds` times (the order reversed every
# other round), so a ratio compares runs minutes apart at most: this machine's speed drifts by a
# third within the hour. The table gives medians over the rounds, and each ratio is the median of
# the rounds' own ratios (with their range when there are several rounds).
set -euo pipefail
cd "$(dirname "$0")/../.."
# InspIRCd 3.15 segfaults in InspIRCd::Exit when stopped (seen here): no core file in the repository.
ulimit -c 0
CLIENTS=${1:-1000}
MESSAGES=${2:-20000}
CYCLES=${3:-3000}
ROUNDS=${4:-1}
# TLS handshakes are slow on some servers (InspIRCd: ~90 a second here): fewer idle TLS clients,
# unless TLSCLIENTS says how many.
TLSCLIENTS=${TLSCLIENTS:-$(( CLIENTS < 1000 ? CLIENTS : 1000 ))}

for pkg in ngircd inspircd; do
  command -v "$pkg" >/dev/null || { apt-get update -qq; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ngircd inspircd; break; }
done
bash deploy/build-release.sh >/dev/null
BENCH=.build/release/chorus-bench
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
printf 'Welcome to the benchmark.\n' > "$work/motd"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -subj /CN=bench \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

start_chorus() {
  printf 'certificate = %s\nkey = %s\n' "$work/cert.pem" "$work/key.pem" > "$work/chorus.conf"
  .build/release/chorusd serve --config "$work/chorus.conf" --data "$work/chorus" --plain 127.0.0.1:16667 \
    --tls 127.0.0.1:16697 --no-limits --rooms open >/dev/null 2>&1 &
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
[SSL]
  CertFile = $work/cert.pem
  KeyFile = $work/key.pem
  Ports = 16698
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
<module name="ssl_gnutls">
<sslprofile name="bench" provider="gnutls" certfile="$work/cert.pem" keyfile="$work/key.pem" hash="sha256" requestclientcert="no">
<bind address="127.0.0.1" port="16699" type="clients" sslprofile="bench">
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
declare -A TLSPORT=([chorus]=16697 [ngircd]=16698 [inspircd]=16699)
declare -A PID
declare -A FRESH   # no scenario has run against this process yet
# SERVERS="chorus ngircd" bash deploy/bench/compare.sh … measures only those.
read -r -a SERVERS <<< "${SERVERS:-chorus ngircd inspircd relay}"
start() {
  local server=$1 pid port
  read -r pid port < <("start_$server")
  pids+=("$pid")
  PID[$server]=$pid
  FRESH[$server]=1
  wait_port "$port"
  if [[ -n ${TLSPORT[$server]:-} ]]; then wait_port "${TLSPORT[$server]}"; fi
}
# Memory is measured on a fresh process only: a process that has served connections reuses the
# pages they left (and Chorus gives idle TLS buffers back, which would show as negative growth).
restart() {
  local server=$1 port
  kill "${PID[$server]}" 2>/dev/null || true
  wait "${PID[$server]}" 2>/dev/null || true
  for port in "${PORT[$server]}" ${TLSPORT[$server]:-}; do
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || break; sleep 0.1; done
  done
  [[ $server == chorus ]] && rm -rf "$work/chorus"
  start "$server"
}
for server in "${SERVERS[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/${PORT[$server]}") 2>/dev/null; then
    echo "port ${PORT[$server]} is taken before $server started: stop what listens there" >&2
    exit 1
  fi
  start "$server"
done

# One scenario against one server; its figures go to RESULT[server,figure,round].
# A scenario that fails leaves its figures empty ("-" in the table) rather than stopping the run.
measure() {
  local scenario=$1 server=$2 round=$3 pid port out
  if [[ $scenario == tls* && -z ${TLSPORT[$server]:-} ]]; then return 0; fi  # the relay has no TLS
  if [[ ($scenario == idle || $scenario == tlsidle) && $round == 1 && -z ${FRESH[$server]} ]]; then restart "$server"; fi
  FRESH[$server]=
  pid=${PID[$server]} port=${PORT[$server]}
  echo "round $round: $scenario on $server (pid $pid, port $port)" >&2
  case $scenario in
    idle)
      out=$("$BENCH" idle --pid "$pid" --port "$port" --timeout $((90 + CLIENTS / 50)) --clients "$CLIENTS" 2>&1) || echo "$server idle: $out" >&2
      # Memory only from the first round, on a fresh process: later rounds reuse pages it kept.
      (( round == 1 )) && RESULT[$server,rss,$round]=$(echo "$out" | figure "server RSS per connection")
      RESULT[$server,join,$round]=$(echo "$out" | figure "server CPU per connect") ;;
    fan)
      out=$("$BENCH" fanout --pid "$pid" --port "$port" --timeout 90 --members 100 --messages "$MESSAGES" 2>&1) || echo "$server fanout: $out" >&2
      RESULT[$server,fan,$round]=$(echo "$out" | figure "server CPU per 1M") ;;
    light)
      out=$("$BENCH" fanout --pid "$pid" --port "$port" --timeout 90 --members 100 --messages 4000 --rate 20000 2>&1) || echo "$server light: $out" >&2
      RESULT[$server,light,$round]=$(echo "$out" | figure "server CPU per 1M")
      RESULT[$server,p50,$round]=$(echo "$out" | figure "latency p50")
      RESULT[$server,p99,$round]=$(echo "$out" | figure "latency p99") ;;
    churn)
      out=$("$BENCH" churn --pid "$pid" --port "$port" --timeout 90 --cycles "$CYCLES" 2>&1) || echo "$server churn: $out" >&2
      RESULT[$server,churn,$round]=$(echo "$out" | figure "server CPU per cycle") ;;
    tlsidle)
      # Memory after 12 s idle: a server may give back what idle connections do not need.
      out=$("$BENCH" idle --tls --pid "$pid" --port "${TLSPORT[$server]}" --timeout $((120 + TLSCLIENTS / 50)) --clients "$TLSCLIENTS" --settle 12 2>&1) \
        || echo "$server tlsidle: $out" >&2
      (( round == 1 )) && RESULT[$server,tlsrss,$round]=$(echo "$out" | figure "server RSS per connection")
      RESULT[$server,tlsjoin,$round]=$(echo "$out" | figure "server CPU per connect") ;;
    tlsfan)
      out=$("$BENCH" fanout --tls --pid "$pid" --port "${TLSPORT[$server]}" --timeout 90 --members 100 --messages "$((MESSAGES / 2))" 2>&1) \
        || echo "$server tlsfan: $out" >&2
      RESULT[$server,tlsfan,$round]=$(echo "$out" | figure "server CPU per 1M") ;;
  esac
}

# SCENARIOS="tlsidle tlsfan" bash deploy/bench/compare.sh … runs only those (rows of the others stay "-").
for scenario in ${SCENARIOS:-idle tlsidle fan tlsfan light churn}; do
  for round in $(seq "$ROUNDS"); do
    order=("${SERVERS[@]}")
    if (( round % 2 == 0 )); then order=(); for server in "${SERVERS[@]}"; do order=("$server" "${order[@]}"); done; fi
    for server in "${order[@]}"; do measure "$scenario" "$server" "$round"; done
  done
done

# The median of the numbers given ("-" and empty ones left out), or "-".
median() { printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
value() { local r values=(); for r in $(seq "$ROUNDS"); do values+=("${RESULT[$1,$2,$r]:-}"); done; median "${values[@]}"; }
# Chorus / other: the median of the rounds' own ratios, and their range when there are several.
ratio() {
  local r a b ratios=()
  for r in $(seq "$ROUNDS"); do
    a=${RESULT[chorus,$2,$r]:-}; b=${RESULT[$1,$2,$r]:-}
    [[ $a =~ ^[0-9.]+$ && $b =~ ^[0-9.]+$ ]] && ratios+=("$(awk -v a="$a" -v b="$b" 'BEGIN { if (b > 0) printf "%.2f", a / b }')")
  done
  local m; m=$(median "${ratios[@]}"); [[ $m == - ]] || m=$(printf '%.2f' "$m")
  if (( ${#ratios[@]} > 1 )); then
    printf '%s (%s-%s)' "$m" "$(printf '%s\n' "${ratios[@]}" | sort -g | head -1)" "$(printf '%s\n' "${ratios[@]}" | sort -g | tail -1)"
  else
    printf '%s' "$m"
  fi
}
printf '\n%-46s %9s %9s %9s %9s %16s %16s %16s\n' "figure ($(nproc) cores, $(date -u +%F), $ROUNDS rounds)" \
  chorus ngircd inspircd relay "/ngircd" "/inspircd" "/relay"
row() {
  printf '%-46s %9s %9s %9s %9s %16s %16s %16s\n' "$1" "$(value chorus "$2")" "$(value ngircd "$2")" \
    "$(value inspircd "$2")" "$(value relay "$2")" "$(ratio ngircd "$2")" "$(ratio inspircd "$2")" "$(ratio relay "$2")"
}
row "RSS per idle connection, $CLIENTS (KiB)" rss
row "CPU per connect+register+join (ms)" join
row "CPU-s per 1M deliveries, saturated, M=100" fan
row "CPU-s per 1M deliveries, 20k/s asked, M=100" light
row "latency p50 at 20k/s asked (ms)" p50
row "latency p99 at 20k/s asked (ms)" p99
row "CPU per connect/register/join/quit (ms)" churn
row "RSS per idle TLS connection, $TLSCLIENTS, 12 s idle (KiB)" tlsrss
row "CPU per TLS connect+register+join (ms)" tlsjoin
row "CPU-s per 1M TLS deliveries, saturated, M=100" tlsfan
echo "ratios are Chorus / that server, per round; relay is deploy/bench/relay.c, a floor, not a server anyone runs"
