#!/usr/bin/env python3
"""Instructions per delivered message, counted by callgrind, for one build of chorusd.

    python3 deploy/bench/instructions.py [--chorusd PATH] [--members 100] [--messages 500 2500]
                                         [--rate 2000] [--top 30]

Wall-clock figures drift with this machine's speed; instruction counts do not, so this is how two
builds are compared (BENCHMARKS.md, "Instructions per delivery"). chorusd runs under callgrind.
After a first `chorus-bench fanout` that is not counted, two more run against it (one room of
--members, four senders, at --rate deliveries a second), with the counters zeroed before each and
dumped after. Their difference, over the difference in deliveries, is what one more delivery
costs: the members' connecting and joining, the same in every run, falls out. The script prints
that figure by thread and by function (each function's own instructions, not its callees').

On demand only, never in CI: a run takes a few minutes. Needs valgrind, a C compiler and a release
build (`bash deploy/build-release.sh`); chorus-bench is taken from --bench (this tree's by
default), so two builds are driven by the same generator.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def wait_for_port(port, process, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"chorusd under callgrind exited ({process.returncode}) before it listened")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"chorusd under callgrind did not listen on 127.0.0.1:{port} within {seconds} s")


def control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)


def dump(pid, folder, hint):
    """Asks callgrind to write its counters (a file per thread) and returns the new files' paths."""
    before = set(os.listdir(folder))
    control(pid, f"--dump={hint}")
    for _ in range(600):
        new = sorted(f for f in set(os.listdir(folder)) - before if f.startswith("callgrind.out"))
        if new:
            time.sleep(1)  # let callgrind finish writing them
            return [os.path.join(folder, f) for f in sorted(set(os.listdir(folder)) - before)
                    if f.startswith("callgrind.out")]
        time.sleep(0.1)
    sys.exit("callgrind wrote no dump within a minute")


def total(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"totals:\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return 0  # a thread that ran nothing since the last dump


def functions(path):
    """Each function's own instructions in a dump, by name. Read here rather than by
    callgrind_annotate, which gives a thread's whole cost to `clone` when threads are dumped apart."""
    names, objects, costs = {}, {}, {}
    function, obj, after_call = None, "", False

    def compressed(table, text):  # "(12) name" defines 12, "(12)" refers to it
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), text)

    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                obj = os.path.basename(compressed(objects, line[3:].strip()))
            elif line.startswith("fn="):
                function = compressed(names, line[3:].strip())
                if function.startswith("0x"):  # no symbol: say whose code it is
                    function += " in " + obj
            elif line.startswith(("cob=", "cfn=")):
                compressed(objects if line.startswith("cob=") else names, line[4:].strip())
            elif line.startswith("calls="):
                after_call = True  # the next cost line is the callee's, not this function's own
            elif function and line[:1] in "0123456789+-*":
                if after_call:
                    after_call = False
                    continue
                costs[function] = costs.get(function, 0) + int(line.split()[-1])
    return costs


class Run:
    """One fan-out's counts: by thread (callgrind's thread number) and by function, all threads."""

    def __init__(self, deliveries, paths):
        self.deliveries = deliveries
        self.threads = {}
        self.functions = {}
        for path in paths:
            thread = re.search(r"-(\d+)$", path)
            cost = total(path)
            if not cost:
                continue
            own = functions(path)
            top = max(own, key=own.get)
            self.threads[int(thread.group(1)) if thread else 0] = (cost, top)
            for name, c in own.items():
                self.functions[name] = self.functions.get(name, 0) + c

    @property
    def instructions(self):
        return sum(cost for cost, _ in self.threads.values())


def demangled(names):
    tool = shutil.which("swift-demangle")
    if not tool or not names:
        return names
    out = subprocess.run([tool, "--simplified", "--compact"], input="\n".join(names), capture_output=True,
                         text=True).stdout.splitlines()
    return out if len(out) == len(names) else names


def fanout(bench, pid, port, members, messages, rate):
    args = [bench, "fanout", "--pid", str(pid), "--port", str(port), "--members", str(members),
            "--messages", str(messages), "--timeout", "1200"]
    if rate:
        args += ["--rate", str(rate)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    m = re.search(r"^deliveries\s+([\d.]+)", out, re.M)
    if not m:
        sys.exit("chorus-bench printed no deliveries:\n" + out)
    return int(float(m.group(1)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chorusd", default=".build/release/chorusd")
    p.add_argument("--bench", default=os.path.join(HERE, "../../.build/release/chorus-bench"))
    p.add_argument("--members", type=int, default=100)
    p.add_argument("--messages", type=int, nargs=2, default=[500, 2500], metavar=("FEW", "MANY"))
    p.add_argument("--rate", type=float, default=2000,
                   help="deliveries a second asked of chorus-bench (0: saturated). The default is slow enough "
                        "under callgrind for every message to be read and written on its own, so the count "
                        "does not depend on how the machine's timing batched them")
    p.add_argument("--top", type=int, default=30, help="functions listed")
    p.add_argument("--keep", metavar="DIR", help="copy callgrind's dumps here (for callgrind_annotate or kcachegrind)")
    p.add_argument("--save", metavar="JSON", help="keep the figures (per delivery, total and by function) in this file")
    p.add_argument("--against", metavar="JSON", help="list the functions whose cost changed most since the build "
                                                    "whose figures --save kept in this file")
    a = p.parse_args()

    work = tempfile.mkdtemp(prefix="chorus-callgrind-")
    server = None
    try:
        # valgrind 3.19 cannot read the DWARF of Swift 6.3: a copy with symbols and no debug info.
        binary = os.path.join(work, "chorusd")
        shutil.copy(a.chorusd, binary)
        subprocess.run(["strip", "--strip-debug", binary], check=True)
        shim = os.path.join(work, "sigsuspend_copy.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", os.path.join(HERE, "sigsuspend_copy.c"), "-o", shim],
                       check=True)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = dict(os.environ, LD_PRELOAD=shim)
        # Only the plaintext listener; older builds have no web listener or room policy to set.
        usage = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
        options = ["--tls", "off"] + (["--web", "off"] if "--web " in usage else []) \
            + (["--rooms", "open"] if "--rooms " in usage else [])
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--separate-threads=yes",
             f"--callgrind-out-file={work}/callgrind.out", binary, "serve", "--data", f"{work}/data",
             "--plain", f"127.0.0.1:{port}", "--no-limits", *options],
            env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "valgrind.log"), "w"),
            start_new_session=True)
        wait_for_port(port, server, 300)

        # A first run pays what is done once (the first casts, the first statements prepared) and
        # is not counted. Counting is never switched off: switched off before a dump, callgrind 3.19
        # writes a summary that has wrapped below zero.
        fanout(a.bench, server.pid, port, a.members, 100, a.rate)
        runs = []
        for messages in a.messages:
            control(server.pid, "--zero")
            run = Run(fanout(a.bench, server.pid, port, a.members, messages, a.rate),
                      dump(server.pid, work, f"messages-{messages}"))
            runs.append(run)
            print(f"{messages} messages: {run.deliveries} deliveries, {run.instructions:,} instructions", flush=True)

        few, many = runs
        deliveries = many.deliveries - few.deliveries
        per = (many.instructions - few.instructions) / deliveries
        print(f"\ninstructions per delivery: {per:,.0f}  (chorusd {a.chorusd}, {a.members} members, "
              + (f"{a.rate:g} deliveries/s" if a.rate else "saturated") + ")")
        for thread, (cost, top) in sorted(many.threads.items()):
            cost -= few.threads.get(thread, (0, ""))[0]
            if cost / deliveries >= 1:
                print(f"  thread {thread}: {cost / deliveries:8,.0f}  (most in {demangled([top])[0][:100]})")
        run_shape = {"members": a.members, "messages": a.messages, "rate": a.rate}
        names = sorted(set(few.functions) | set(many.functions))
        by_function = {}  # demangled names, simplified: two specializations may read the same
        for name, plain in zip(names, demangled(names)):
            cost = many.functions.get(name, 0) - few.functions.get(name, 0)
            by_function[plain] = by_function.get(plain, 0) + cost / deliveries
        if a.save:
            with open(a.save, "w") as f:
                json.dump({"chorusd": a.chorusd, "run": run_shape, "per_delivery": per, "functions": by_function}, f)
        if a.against:
            with open(a.against) as f:
                before = json.load(f)
            print(f"before ({before['chorusd']}): {before['per_delivery']:,.0f}, change {per - before['per_delivery']:+,.0f}")
            if before.get("run") != run_shape:
                print(f"  (not comparable: measured with {before.get('run')}, this run with {run_shape})")
            old = before["functions"]
            change = sorted(((by_function.get(n, 0) - old.get(n, 0)), n) for n in set(old) | set(by_function))
            print(f"\n{'before':>8}  {'now':>8}  {'change':>8}  function (own instructions per delivery)")
            for delta, name in sorted(change, key=lambda c: -abs(c[0]))[: a.top]:
                print(f"{old.get(name, 0):8,.0f}  {by_function.get(name, 0):8,.0f}  {delta:+8,.0f}  {name[:140]}")
        else:
            print(f"\n{'per delivery':>12}  {'share':>6}  function (own instructions)")
            for name, cost in sorted(by_function.items(), key=lambda f: -f[1])[: a.top]:
                print(f"{cost:12,.0f}  {cost / per:6.1%}  {name[:150]}")
        if a.keep:
            os.makedirs(a.keep, exist_ok=True)
            for f in os.listdir(work):
                if f.startswith("callgrind.out."):
                    shutil.copy(os.path.join(work, f), a.keep)
    finally:
        if server and server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
