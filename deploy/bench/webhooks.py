#!/usr/bin/env python3
"""Webhooks under load: commands through the JSON API at a steady rate, each making an event in a
room whose hook POSTs it to a receiver here, on 127.0.0.1.

    python3 deploy/bench/webhooks.py .build/release/chorusd --rate 1000 --seconds 20 [--no-hook]
    python3 deploy/bench/webhooks.py .build/release/chorusd --rate 300 --seconds 10 --down 30

Prints the commands' request → answer latency, each event's delivery latency (the event's time to
its arrival at the receiver), whether every event arrived once and in order, and chorusd's CPU.
With --no-hook the same load runs without a hook (the A/B for the commands' latency). With --down
S the receiver answers 503 for the first S seconds: what was refused arrives once it is back.
"""
import argparse, http.client, http.server, json, multiprocessing, os, socket, subprocess, sys, tempfile, threading, time
from datetime import datetime


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    arrivals = []  # (arrival time, event id, event time)
    lock = threading.Lock()
    count = None  # shared with the bench: how many arrived
    down_until = None  # shared: refuse (503) until then

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        status = 503 if time.time() < Receiver.down_until.value else 200
        if status == 200:
            event = json.loads(body)
            at = datetime.fromisoformat(event["at"].replace("Z", "+00:00")).timestamp()
            with Receiver.lock:
                Receiver.arrivals.append((time.time(), event["id"], at))
                Receiver.count.value += 1
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def receive(port, count, down_until, results):
    """The receiver, in a process of its own: the bench's client threads do not hold its GIL."""
    Receiver.count, Receiver.down_until = count, down_until
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    port.send(server.server_address[1])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    results.recv()  # asked for what arrived
    with Receiver.lock:
        results.send(list(Receiver.arrivals))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("chorusd")
    parser.add_argument("--rate", type=int, default=1000, help="commands a second, all clients together")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--no-hook", action="store_true")
    parser.add_argument("--down", type=float, default=0, help="the receiver refuses for this long first")
    args = parser.parse_args()

    data = tempfile.mkdtemp(prefix="chorus-hooks-")
    irc, web = free_port(), free_port()
    with open(f"{data}/chorus.conf", "w") as f:
        f.write("webhooks-to-private = on\napi-rate = 0\n")
    subprocess.run([args.chorusd, "account", "add", "--data", data, "bench", "--password", "bench-password-1"], check=True,
                   capture_output=True)
    token = subprocess.run([args.chorusd, "account", "token", "--data", data, "bench"], check=True, capture_output=True,
                           text=True).stdout.split()
    token = next(word for word in token if word.startswith("chorus-"))
    server = subprocess.Popen([args.chorusd, "serve", "--config", f"{data}/chorus.conf", "--data", data, "--tls", "off",
                               "--plain", f"127.0.0.1:{irc}", "--web", "off", "--web-plain", f"127.0.0.1:{web}", "--no-limits"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", irc)).close()
                socket.create_connection(("127.0.0.1", web)).close()
                break
            except OSError:
                time.sleep(0.1)
        # The room is made by joining it over IRC.
        chat = socket.create_connection(("127.0.0.1", irc))
        chat.sendall(f"PASS bench:{token}\r\nNICK bench\r\nUSER bench 0 * :bench\r\nJOIN #bench\r\n".encode())
        chat.settimeout(0.2)
        seen = b""
        deadline = time.time() + 5
        while b" 366 " not in seen and time.time() < deadline:
            try:
                seen += chat.recv(65536)
            except socket.timeout:
                pass

        def post(conn, text, room=None):
            body = json.dumps({"text": text, **({"room": room} if room else {})})
            conn.request("POST", "/api/v1/commands", body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
            answer = conn.getresponse()
            return answer.status, json.loads(answer.read() or b"{}")

        setup = http.client.HTTPConnection("127.0.0.1", web)
        status, made = post(setup, "!job add bench target", "#bench")
        job = made["events"][0]["job"]
        count, down_until = multiprocessing.Value("i", 0), multiprocessing.Value("d", time.time() + 3600)
        (port_in, port_out), (results, results_child) = multiprocessing.Pipe(), multiprocessing.Pipe()
        receiver = multiprocessing.Process(target=receive, args=(port_out, count, down_until, results_child), daemon=True)
        receiver.start()
        receiver_port = port_in.recv()
        if not args.no_hook:
            status, hooked = post(setup, f"!hook add #bench http://127.0.0.1:{receiver_port}/in")
            assert status == 200, hooked
        down_until.value = time.time() + args.down

        per_client = args.rate * args.seconds // args.clients
        interval = args.clients / args.rate
        latencies, ids, lock = [], [], threading.Lock()

        def client(n):
            conn = http.client.HTTPConnection("127.0.0.1", web)
            start = time.time()
            mine, made = [], []
            for i in range(per_client):
                wait = start + i * interval - time.time()
                if wait > 0:
                    time.sleep(wait)
                sent = time.time()
                status, answer = post(conn, f"!comment {job} {n}-{i}", "#bench")
                mine.append(time.time() - sent)
                made += [event["id"] for event in answer.get("events", [])]
            with lock:
                latencies.extend(mine)
                ids.extend(made)

        cpu0, began = cpu_seconds(server.pid), time.time()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        load = time.time() - began
        expected = set(ids)
        if not args.no_hook:
            # A refused hook is tried again after a doubling pause of at most an hour, so its first
            # try after the receiver is back can come up to one such pause later.
            deadline = down_until.value + min(3_600, args.down) + 60
            while time.time() < deadline and count.value < len(expected):
                time.sleep(0.1)
        cpu = cpu_seconds(server.pid) - cpu0
        print(f"commands: {len(latencies)} in {load:.1f} s ({len(latencies) / load:.0f}/s), "
              f"request → answer p50 {percentile(latencies, .5) * 1000:.2f} ms, p99 {percentile(latencies, .99) * 1000:.2f} ms")
        print(f"chorusd CPU: {cpu:.2f} s ({cpu / max(1, len(latencies)) * 1e6:.0f} µs a command)")
        if not args.no_hook:
            results.send("done")
            arrivals = [a for a in results.recv() if a[1] in expected]
            got = [a[1] for a in arrivals]
            delays = [a[0] - a[2] for a in arrivals]
            print(f"delivered: {len(set(got))} of {len(expected)} events, {len(got) - len(set(got))} twice, "
                  f"in order: {got == sorted(got)}")
            if args.down:
                back = max((a[0] for a in arrivals), default=down_until.value) - down_until.value
                print(f"receiver down {args.down:.0f} s: the last event arrived {back:.1f} s after it was back")
            print(f"delivery latency p50 {percentile(delays, .5) * 1000:.1f} ms, p99 {percentile(delays, .99) * 1000:.1f} ms, "
                  f"max {max(delays, default=0) * 1000:.1f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
