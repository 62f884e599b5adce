#!/usr/bin/env python3
"""What a `kill -9` takes of room lines that were acknowledged: a talker with echo-message sends
numbered lines to a room at a steady rate, each line counted as acknowledged when its echo comes
back; after a random moment chorusd is killed with SIGKILL, started again on the same data folder,
and the room's history (CHATHISTORY LATEST, up to 5,000 lines) says which acknowledged lines were kept.

    python3 deploy/bench/kill_window.py .build/release/chorusd --runs 10 --rate 500

Prints, per run and in all, the lines acknowledged, those of them missing after the restart, and how
long before the kill the earliest missing one was acknowledged (the window README states).
"""
import argparse, os, random, signal, socket, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Line:
    def __init__(self, port, nick):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buffer = b""
        self.send("CAP LS 302")
        self.send(f"NICK {nick}")
        self.send(f"USER {nick} 0 * :{nick}")
        self.send("CAP REQ :echo-message message-tags server-time batch draft/chathistory")
        self.send("CAP END")
        self.until(lambda l: " 376 " in l or " 422 " in l)

    def send(self, text):
        self.sock.sendall((text + "\r\n").encode())

    def lines(self, timeout):
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(1 << 16)
        except (socket.timeout, ConnectionError, OSError):
            return None
        if not data:
            return None
        self.buffer += data
        *complete, self.buffer = self.buffer.split(b"\r\n")
        return [c.decode(errors="replace") for c in complete]

    def until(self, predicate, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for line in self.lines(0.5) or []:
                if line.startswith("PING"):
                    self.send("PONG" + line[4:])
                if predicate(line):
                    return line
        raise TimeoutError("no answer")


def start(chorusd, data, port):
    config = os.path.join(data, "chorus.conf")
    with open(config, "w") as file:
        file.write("history-page-limit = 5000\n")  # the last seconds' lines in one CHATHISTORY
    process = subprocess.Popen([chorusd, "serve", "--data", data, "--config", config, "--tls", "off", "--web", "off",
                                "--plain", f"127.0.0.1:{port}", "--name", "kill.test", "--no-limits"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("chorusd did not start")


def run(chorusd, rate, seconds):
    data = tempfile.mkdtemp(prefix="chorus-kill-")
    port = free_port()
    process = start(chorusd, data, port)
    talker = Line(port, "talker")
    talker.send("JOIN #floor")
    talker.until(lambda l: " 366 " in l)
    acked = {}  # number → time its echo came
    sent = 0
    kill_at = time.time() + seconds
    next_send = time.time()
    while time.time() < kill_at:
        while time.time() >= next_send and sent < rate * seconds * 2:
            talker.send(f"PRIVMSG #floor :line {sent}")
            sent += 1
            next_send += 1 / rate
        for line in talker.lines(0.0005) or []:
            if " PRIVMSG #floor :line " in line:
                acked[int(line.rsplit(" ", 1)[1])] = time.time()
    process.send_signal(signal.SIGKILL)
    killed = time.time()
    process.wait()
    talker.sock.close()
    process = start(chorusd, data, port)
    reader = Line(port, "reader")
    kept = set()
    reader.send("JOIN #floor")
    reader.until(lambda l: " 366 " in l)
    reader.send("CHATHISTORY LATEST #floor * 5000")
    while True:
        batch = reader.lines(2)
        if batch is None:
            break
        for line in batch:
            if " PRIVMSG #floor :line " in line:
                kept.add(int(line.rsplit(" ", 1)[1]))
        if any(line.startswith(":") and " BATCH -" in line for line in batch):
            break
    process.terminate()
    process.wait()
    recent = set(acked)
    missing = sorted(n for n in recent if n not in kept)
    window = (killed - acked[missing[0]]) * 1000 if missing else 0.0
    return len(acked), missing, window


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("chorusd")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rate", type=int, default=500, help="lines a second")
    args = parser.parse_args()
    total_acked = total_missing = 0
    windows = []
    for i in range(args.runs):
        acked, missing, window = run(args.chorusd, args.rate, random.uniform(1.0, 3.0))
        total_acked += acked
        total_missing += len(missing)
        windows.append(window)
        print(f"run {i + 1}: {acked} acknowledged, {len(missing)} missing after the restart"
              + (f", the earliest acknowledged {window:.1f} ms before the kill" if missing else ""), flush=True)
    print(f"in all: {total_acked} acknowledged, {total_missing} missing; widest window {max(windows):.1f} ms")


if __name__ == "__main__":
    sys.exit(main())
