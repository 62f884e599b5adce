#!/usr/bin/env python3
"""How long a line takes from one node of a cluster to a client of another: two chorusd on one
PostgreSQL schema, a sender on the first and a watcher on the second in one room; the sender says a
line, waits for the watcher to have it, and says the next 20 ms later. A TAGMSG (typing: no history,
it crosses on the bus) and a PRIVMSG (a history line), each `N` times; prints p50, p90 and p99.

    python3 deploy/bench/cross_node_line.py .build/release/chorusd "$CHORUS_TEST_POSTGRES" [N]

Loopback only; the nodes run on a new schema and are stopped at the end.
"""
import os, socket, statistics, subprocess, sys, tempfile, time, uuid


def start(chorusd, store, port, folder):
    return subprocess.Popen([chorusd, "serve", "--data", folder, "--store", store, "--tls", "off", "--web", "off",
                             "--plain", f"127.0.0.1:{port}", "--no-limits", "--rooms", "open"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Client:
    def __init__(self, port, nick):
        for _ in range(100):
            try:
                self.sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.1)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.settimeout(10)
        self.buffer = b""
        self.send(f"CAP REQ :message-tags\r\nNICK {nick}\r\nUSER {nick} 0 * :{nick}\r\nCAP END")
        self.until(lambda line: b" 376 " in line or b" 422 " in line)

    def send(self, text):
        self.sock.sendall(text.encode() + b"\r\n")

    def until(self, found):
        while True:
            while b"\r\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\r\n", 1)
                if found(line):
                    return line
            self.buffer += self.sock.recv(65536)


def main():
    chorusd, url = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    store = url + ("&" if "?" in url else "?") + "schema=bench_" + uuid.uuid4().hex
    nodes = [start(chorusd, store, port, tempfile.mkdtemp()) for port in (16667, 17667)]
    try:
        sender, watcher = Client(16667, "sender"), Client(17667, "watcher")
        sender.send("JOIN #t")
        sender.until(lambda line: b" 366 " in line)
        time.sleep(1)
        watcher.send("JOIN #t")
        watcher.until(lambda line: b" 366 " in line)
        time.sleep(1)
        for kind in ("TAGMSG", "PRIVMSG"):
            took = []
            for i in range(count):
                started = time.perf_counter()
                if kind == "TAGMSG":
                    sender.send(f"@+typing=active;+example.com/n={i} TAGMSG #t")
                    mark = f"+example.com/n={i};".encode(), f"+example.com/n={i} ".encode()
                else:
                    sender.send(f"PRIVMSG #t :line {i}")
                    mark = (f":line {i}".encode(),)
                watcher.until(lambda line: kind.encode() in line and any(m in line for m in mark))
                took.append((time.perf_counter() - started) * 1000)
                time.sleep(0.02)
            took.sort()
            print(f"{kind:8} n={count}  p50 {statistics.median(took):.2f} ms  p90 {took[int(count * 0.9)]:.2f} ms  "
                  f"p99 {took[max(0, int(count * 0.99) - 1)]:.2f} ms")
    finally:
        for node in nodes:
            node.terminate()
            node.wait(timeout=10)


if __name__ == "__main__":
    main()
