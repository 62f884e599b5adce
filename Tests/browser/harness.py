"""What the browser tests share: a chorusd on free loopback ports, a TCP IRC client, a phone-sized
headless Chromium, and the `check` that counts results.

Needs chromium, chromium-driver and python3-selenium (Debian's), which `.ci/run` installs, and for
the accessibility checks axe-core's `axe.min.js`, named by CHORUS_AXE_JS (`.ci/run` fetches it).
"""
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time

from selenium import webdriver

WAIT = 15  # seconds any one step may take


class Results:
    def __init__(self):
        self.items = []

    def check(self, name, condition, detail=""):
        self.items.append((name, bool(condition)))
        print(("ok      " if condition else "FAILED  ") + name + ("" if condition else f": {detail}"), flush=True)
        return bool(condition)

    @property
    def failed(self):
        return sum(1 for _, ok in self.items if not ok)

    def summary(self):
        print(f"{len(self.items) - self.failed} passed, {self.failed} failed")
        return 1 if self.failed else 0


# axe-core's rules for WCAG 2.1 levels A and AA.
AXE_RUN = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
  .then((r) => done(r.violations.map((v) => [v.id, v.impact, v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ': ' + n.failureSummary.split('\\n').slice(1, 2).join(''))])))
  .catch((e) => done([['axe-error', String(e), []]]));
"""


def axe_violations(driver):
    """What axe-core finds against WCAG 2.1 A and AA on the page as it is drawn now, as
    [rule, impact, [element: why]]; None when CHORUS_AXE_JS names no file (the check is not run)."""
    path = os.environ.get("CHORUS_AXE_JS")
    if not path:
        return None
    with open(path, encoding="utf-8") as f:  # a path that names nothing fails the test, as it should
        source = f.read()
    # Through WebDriver, not a <script> element: the page's Content-Security-Policy allows no inline script.
    if not driver.execute_script("return !!window.axe"):
        driver.execute_script(source)
    return driver.execute_async_script(AXE_RUN)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class IRCClient:
    """A line-based IRC client on plaintext TCP that keeps every line it reads."""

    def __init__(self, port, nick, password, register=True, account=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.buffer = b""
        self.lines = []
        self.send("CAP LS 302")
        if not register:
            self.send(f"PASS {account or nick}:{password}")
        self.send(f"NICK {nick}")
        self.send(f"USER {nick} 0 * :TCP tester")
        self.send("CAP REQ :message-tags server-time draft/account-registration")
        self.wait_for(lambda l: " ACK " in l)
        if register:
            self.send(f"REGISTER {nick} * {password}")
            self.wait_for(lambda l: "REGISTER SUCCESS" in l)
        self.send("CAP END")
        self.wait_for(lambda l: " 376 " in l or " 422 " in l)

    def send(self, line):
        self.sock.sendall((line + "\r\n").encode())

    def wait_for(self, predicate, timeout=WAIT):
        deadline = time.time() + timeout
        seen = 0
        while time.time() < deadline:
            while seen < len(self.lines):
                line = self.lines[seen]
                seen += 1
                if predicate(line):
                    return line
            self.sock.settimeout(max(0.1, deadline - time.time()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            self.buffer += data
            *complete, self.buffer = self.buffer.split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace").rstrip("\r")
                if line.startswith("PING"):
                    self.send("PONG" + line[4:])
                self.lines.append(line)
        return None

    def close(self):
        self.sock.close()


class Server:
    """`chorusd serve` on a fresh data folder, plaintext IRC and the web side on free ports."""

    def __init__(self, chorusd, prefix="chorus-browser-", config=""):
        self.chorusd = chorusd
        self.data = tempfile.mkdtemp(prefix=prefix)
        self.plain, self.web = free_port(), free_port()
        self.process = None
        self.config = os.path.join(self.data, "chorus.conf")
        with open(self.config, "w") as file:
            file.write(config)
        self.start()

    def start(self):
        self.process = subprocess.Popen([self.chorusd, "serve", "--config", self.config, "--data", self.data, "--tls", "off",
                                         "--plain", f"127.0.0.1:{self.plain}", "--web", f"127.0.0.1:{self.web}", "--name", "browser.test"],
                                        stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.data, "chorusd.log"), "a"))
        deadline = time.time() + WAIT
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.web), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)

    def stop(self):
        if self.process:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self):
        self.stop()
        self.start()

    def finish(self, show_log):
        self.stop()
        with open(os.path.join(self.data, "chorusd.log")) as log:
            problems = [l for l in log if " error " in l or "warning" in l or show_log]
        if problems:
            print("chorusd said:\n" + "".join(problems[-10:]), flush=True)
        shutil.rmtree(self.data, ignore_errors=True)


def phone_browser(width=375, height=800):
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--ignore-certificate-errors"]:
        options.add_argument(flag)
    # A phone's screen: Chrome's windows are no narrower than 500 px, its emulated devices are.
    options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}})
    return webdriver.Chrome(options=options)


def soon(wait, condition):
    """The condition's value once it holds, or None when it does not within the wait: a check that
    fails is counted and the walk-through goes on."""
    from selenium.common.exceptions import TimeoutException
    try:
        return wait.until(condition)
    except TimeoutException:
        return None


def end_walk(results, driver, screenshot, width=375):
    """What a walk-through checks last: nothing wider than the screen; then its screenshot."""
    scroll = driver.execute_script("return document.documentElement.scrollWidth")
    results.check(f"nothing is wider than a {width} px screen", scroll <= width, scroll)
    driver.save_screenshot(screenshot)
    print(f"screenshot: {screenshot}", flush=True)


def report_failure(results, driver, error, screenshot):
    """A step that timed out or broke: counted and shown, so the rest is cleaned up."""
    results.check("the walk-through ran to the end", False, repr(error))
    if driver:
        driver.save_screenshot(screenshot)
        for entry in driver.get_log("browser")[-10:]:
            print("browser:", entry, flush=True)
        try:
            from selenium.webdriver.common.by import By
            print("page log:", driver.find_element(By.ID, "log").get_attribute("textContent")[-600:], flush=True)
        except Exception:
            pass


class Walk:
    """A walk-through's browsers, and whatever else is to be closed at its end."""

    def __init__(self):
        self.browsers, self.closers = [], []

    def browser(self, width=375, height=800):
        driver = phone_browser(width, height)
        self.browsers.append(driver)
        return driver

    def closing(self, thing):
        self.closers.append(thing)
        return thing


@contextlib.contextmanager
def walk_through(results, server, screenshot):
    """A walk-through's steps: one that breaks is counted and shown with the first browser's page,
    and the browsers, what else it opened and the server are closed whatever happens."""
    walk = Walk()
    try:
        yield walk
    except Exception as error:
        report_failure(results, walk.browsers[0] if walk.browsers else None, error, screenshot)
    finally:
        for driver in walk.browsers:
            driver.quit()
        for thing in walk.closers:
            thing.close()
        server.finish(show_log=results.failed > 0)
