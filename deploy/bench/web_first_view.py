#!/usr/bin/env python3
"""How soon the web client shows a phone its first view: headless Chromium at 375×800 with the CPU
slowed 4× (Chrome's throttling), against a chorusd on loopback.

Two figures, each the median of N loads in fresh browser profiles:
  - first visit: from navigation to the login form drawn;
  - returning: a saved token, from navigation to the room open with its latest lines drawn
    (the history of 50 lines, 3 job cards).
Usage: deploy/bench/web_first_view.py [path/to/chorusd] [loads]
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "browser"))
from harness import IRCClient, Server, phone_browser  # noqa: E402

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/release/chorusd"
LOADS = int(sys.argv[2]) if len(sys.argv) > 2 else 7

# Notes the moment (performance.now()) a condition first holds, from the page's very start.
WATCH = """
window.__seen = {};
const note = (name, test) => { if (!window.__seen[name] && test()) window.__seen[name] = performance.now(); };
new MutationObserver(() => {
  note('login', () => { const a = document.getElementById('account'); return a && a.offsetParent !== null; });
  note('app', () => { const a = document.getElementById('app'); return a && !a.hidden; });
  note('registered', () => { const a = document.getElementById('app'), s = document.getElementById('status');
    return a && !a.hidden && s && s.textContent === ''; });
  note('joined', () => { const t = document.getElementById('title'); return t && t.textContent === '#bench'; });
  note('room', () => { const t = document.getElementById('title'), l = document.getElementById('log');
    return t && t.textContent === '#bench' && l && l.textContent.includes('line 50'); });
}).observe(document, { childList: true, subtree: true, characterData: true, attributes: true });
"""


def load(server, token=None):
    driver = phone_browser()
    try:
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": WATCH})
        if token:
            driver.get(f"https://127.0.0.1:{server.web}/health")
            driver.execute_script("localStorage.setItem('chorus.login', arguments[0])", token)
        driver.get(f"https://127.0.0.1:{server.web}/")
        name = "room" if token else "login"
        deadline = time.time() + 30
        while time.time() < deadline:
            seen = driver.execute_script("return window.__seen && window.__seen[arguments[0]]", name)
            if seen:
                if os.environ.get("PHASES"):
                    print(driver.execute_script("return JSON.stringify(window.__seen)"))
                    print(driver.execute_script("return JSON.stringify(performance.getEntries().map((e) => [e.name.split('/').pop() || e.entryType, Math.round(e.startTime), Math.round(e.responseEnd || e.duration || 0)]))"))
                return seen
            time.sleep(0.05)
        raise RuntimeError(f"{name} never drawn")
    finally:
        driver.quit()


def main():
    server = Server(CHORUSD, prefix="chorus-bench-web-", config="flood-burst = 400\n")
    try:
        bench = IRCClient(server.plain, "bench", "bench-password-1")
        bench.send("PRIVMSG Chorus :!token new web bench")
        token_line = bench.wait_for(lambda l: "chorus-" in l and "Token" in l)
        secret = token_line.split(": ")[-1].strip()
        bench.send("JOIN #bench")
        bench.wait_for(lambda l: " 366 " in l)
        for n in range(1, 4):
            bench.send(f"PRIVMSG #bench :!job add Job number {n} @me")
        for n in range(1, 51):
            bench.send(f"PRIVMSG #bench :line {n}")
        bench.wait_for(lambda l: "line 50" in l)
        bench.close()
        saved = '{"account": "bench", "token": "%s", "tokenId": "1"}' % secret
        first = [load(server) for _ in range(LOADS)]
        returning = [load(server, saved) for _ in range(LOADS)]
        print(f"first visit, login form drawn: median {statistics.median(first):.0f} ms (min {min(first):.0f}, max {max(first):.0f})")
        print(f"returning, room and its lines drawn: median {statistics.median(returning):.0f} ms (min {min(returning):.0f}, max {max(returning):.0f})")
    finally:
        server.finish(show_log=False)


if __name__ == "__main__":
    main()
