#!/usr/bin/env python3
"""The web client in a real browser: headless Chromium at a phone's size, beside an IRC client on TCP.

Starts `chorusd` (the debug build `swift build` made) on free loopback ports with a fresh data
folder, then, in the browser: creates an account, joins a room, exchanges lines with the TCP
client, adds a job for itself, sees its card, presses Done, and checks that the TCP client got the
`job.status` event. Saves a screenshot. Prints `N passed, N failed` and exits non-zero on a failure.

Usage: Tests/browser/web_client_test.py [path/to/chorusd] [screenshot.png]
Needs chromium, chromium-driver and python3-selenium (Debian's), which `.ci/run` installs.
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-client.png"
WAIT = 15  # seconds any one step may take

results = []


def check(name, condition, detail=""):
    results.append((name, bool(condition)))
    print(("ok      " if condition else "FAILED  ") + name + ("" if condition else f": {detail}"), flush=True)
    return bool(condition)


def failed_yet(results):
    return any(not ok for _, ok in results)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class IRCClient:
    """A line-based IRC client on plaintext TCP that keeps every line it reads."""

    def __init__(self, port, nick, password, register=True):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.buffer = b""
        self.lines = []
        self.send("CAP LS 302")
        if not register:
            self.send(f"PASS {nick}:{password}")
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


def start_server(data, plain, web):
    server = subprocess.Popen([CHORUSD, "serve", "--data", data, "--tls", "off", "--plain", f"127.0.0.1:{plain}",
                               "--web", f"127.0.0.1:{web}", "--name", "browser.test"],
                              stdout=subprocess.DEVNULL, stderr=open(os.path.join(data, "chorusd.log"), "a"))
    deadline = time.time() + WAIT
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", web), timeout=1).close()
            break
        except OSError:
            time.sleep(0.2)
    return server


def main():
    data = tempfile.mkdtemp(prefix="chorus-browser-")
    plain, web = free_port(), free_port()
    server = start_server(data, plain, web)
    driver = None
    try:

        options = webdriver.ChromeOptions()
        for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--ignore-certificate-errors"]:
            options.add_argument(flag)
        # A phone's screen: Chrome's windows are no narrower than 500 px, its emulated devices are.
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 375, "height": 800, "pixelRatio": 2}})
        driver = webdriver.Chrome(options=options)
        wait = WebDriverWait(driver, WAIT)
        driver.get(f"https://127.0.0.1:{web}/")
        check("the page loads with its login form", wait.until(ready.visibility_of_element_located((By.ID, "account"))))

        driver.find_element(By.ID, "register-button").click()  # shows the email field
        driver.find_element(By.ID, "account").send_keys("pat")
        driver.find_element(By.ID, "password").send_keys("pat-password-1")
        driver.find_element(By.ID, "register-button").click()
        wait.until(ready.visibility_of_element_located((By.ID, "line")))
        me = driver.find_element(By.ID, "me").get_attribute("textContent")  # in the closed drawer: not visible
        check("registering opens the app", me == "pat", me)
        saved = wait.until(lambda d: d.execute_script("return localStorage.getItem('chorus.login')"))
        check("a token, not the password, is kept on the device", saved and "chorus-" in saved and "pat-password-1" not in saved, saved)

        line = driver.find_element(By.ID, "line")
        line.send_keys("/join #kitchen\n")
        wait.until(lambda d: d.find_element(By.ID, "title").text == "#kitchen")
        check("joining a room selects it", True)

        irc = IRCClient(plain, "sam", "sam-password-1")
        irc.send("JOIN #kitchen")
        check("a room pat made is pat's: sam, not a member, is turned away",
              irc.wait_for(lambda l: " 473 " in l and "#kitchen" in l), irc.lines[-3:])
        line.send_keys("!room add sam\n")
        check("once pat adds sam, sam is in the room", irc.wait_for(lambda l: " 366 " in l), irc.lines[-3:])
        irc.send("PRIVMSG #kitchen :hello from irssi")
        check("a line from TCP appears in the browser",
              wait.until(lambda d: "hello from irssi" in d.find_element(By.ID, "log").text))
        line.send_keys("hello from the phone\n")
        check("a line from the browser reaches TCP",
              irc.wait_for(lambda l: "PRIVMSG #kitchen :hello from the phone" in l), irc.lines[-5:])

        line.send_keys("!job add Fix the tap @me\n")
        done = wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, ".card[data-event='job.created'] button[data-command^='!done']")))
        check("the job's card offers Done", done.text == "Done", done.text)
        irc.lines.clear()
        done.click()
        status = irc.wait_for(lambda l: "chorus/event=job.status" in l)
        check("pressing Done sends !done and TCP gets job.status", status and "chorus/status=completed" in status, status)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".card[data-event='job.status']")) == 1)
        check("a done job's cards offer nothing more",
              not driver.find_elements(By.CSS_SELECTOR, ".card[data-job='1'] button"))

        line.send_keys("!track add work 1:00-2:30 yesterday\n")
        line.send_keys("!report yesterday\n")
        chart = wait.until(lambda d: d.execute_script(
            "const i = document.querySelector('img.report'); return i && i.complete && i.naturalWidth > 0 ? i.naturalWidth : null"))
        check("!report shows its chart in the conversation", chart == 640, chart)

        driver.find_element(By.ID, "line").send_keys("!")
        suggestions = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions button"))
        check("the command box suggests commands from !help", any(b.text == "!done" for b in suggestions),
              [b.text for b in suggestions][:10])

        driver.find_element(By.ID, "line").clear()

        # The server restarts: the page reconnects by itself with its token, and what was said
        # while it was away reaches it.
        irc.sock.close()
        server.terminate()
        server.wait(timeout=10)
        server = start_server(data, plain, web)
        irc = IRCClient(plain, "sam", "sam-password-1", register=False)
        irc.send("PRIVMSG #kitchen :said while the phone was away")
        check("after a restart the page logs in again and catches up",
              wait.until(lambda d: "said while the phone was away" in d.find_element(By.ID, "log").text))
        check("nothing is shown twice after catching up",
              driver.find_element(By.ID, "log").text.count("hello from irssi") == 1)

        # A private line, then the page is reloaded: the conversation is listed again, with it.
        irc.send("PRIVMSG pat :a word in private")
        wait.until(lambda d: "sam" in d.find_element(By.ID, "people").get_attribute("textContent"))
        irc.send("QUIT :gone")
        driver.refresh()
        listed = wait.until(lambda d: "sam" in d.find_element(By.ID, "people").get_attribute("textContent"))
        check("after a reload the private conversations are listed again, whoever is online", listed)

        width = driver.execute_script("return document.documentElement.scrollWidth")
        check("nothing is wider than a 375 px screen", width <= 375, width)
        driver.save_screenshot(SCREENSHOT)
        print(f"screenshot: {SCREENSHOT}", flush=True)
    except Exception as error:  # a step that timed out or broke: counted, shown, and the rest is cleaned up
        check("the walk-through ran to the end", False, repr(error))
        if driver:
            driver.save_screenshot(SCREENSHOT)
            for entry in driver.get_log("browser")[-10:]:
                print("browser:", entry, flush=True)
            print("page log:", driver.find_element(By.ID, "log").get_attribute("textContent")[-600:], flush=True)
    finally:
        if driver:
            driver.quit()
        server.terminate()
        server.wait(timeout=10)
        with open(os.path.join(data, "chorusd.log")) as log:
            problems = [l for l in log if " error " in l or "warning" in l or failed_yet(results)]
        if problems:
            print("chorusd said:\n" + "".join(problems[-10:]), flush=True)
        shutil.rmtree(data, ignore_errors=True)

    passed = sum(1 for _, ok in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
