#!/usr/bin/env python3
"""The web client in a real browser: headless Chromium at a phone's size, beside an IRC client on TCP.

Starts `chorusd` (the debug build `swift build` made) on free loopback ports with a fresh data
folder, then, in the browser: creates an account, joins a room, exchanges lines with the TCP
client, adds a job for itself, sees its card, presses Done, and checks that the TCP client got the
`job.status` event. Saves a screenshot. Prints `N passed, N failed` and exits non-zero on a failure.

Usage: Tests/browser/web_client_test.py [path/to/chorusd] [screenshot.png]
Needs chromium, chromium-driver and python3-selenium (Debian's), which `.ci/run` installs.
"""
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, IRCClient, Results, Server, axe_violations, end_walk, soon, walk_through

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-client.png"


def main():
    results = Results()
    check = results.check
    server = Server(CHORUSD)
    plain, web = server.plain, server.web
    with walk_through(results, server, SCREENSHOT) as walk:
        driver = walk.browser()
        wait = WebDriverWait(driver, WAIT)
        driver.get(f"https://127.0.0.1:{web}/")
        check("the page loads with its login form", wait.until(ready.visibility_of_element_located((By.ID, "account"))))
        for scheme in ["light", "dark"]:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            found = axe_violations(driver)
            if found is not None:
                check(f"axe-core finds nothing against WCAG 2.1 AA on the login form, {scheme} theme", not found, found)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

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
              not driver.find_elements(By.CSS_SELECTOR, ".card[data-job='1'] .buttons button"))

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
        irc.close()
        server.restart()
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

        end_walk(results, driver, SCREENSHOT)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
