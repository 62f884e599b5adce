#!/usr/bin/env python3
"""The web client as a newcomer on a phone meets it: headless Chromium at 375×800, beside IRC on TCP.

Walks through what a person does in their first minutes and checks each thing that once went wrong
there: the first screen says what to do, a room joined from the drawer opens, the closed drawer is
out of the Tab order, the page's own commands never show as the person's lines, an answer goes to the
conversation its command was typed in, completion lists each command once, report links and the
chart read right on a narrow screen, cards name events in words, days are told apart, a chore's
Done leaves its passed turns after a reload, lines said while the page joins land in order, a line
typed while the server is away is sent once when it is back, Chorus's conversation is kept across a
reload, both themes' buttons are readable, a photo taken for a job loses its location, the app
installs and opens on its last known state with the server out of reach, and a device that cannot
keep its login says so.

Usage: Tests/browser/web_phone_test.py [path/to/chorusd] [screenshot.png]
"""
import os
import re
import sys
import threading
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, IRCClient, Results, Server, end_walk, soon, walk_through

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-phone.png"
# A phone's photo: EXIF with the camera and a GPS position, and a comment naming the place.
PHOTO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "photos", "gps.jpg"))

# WCAG's contrast ratio between an element's text and the first opaque background behind it.
CONTRAST = """
const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const background = (node) => {
  for (; node; node = node.parentElement) {
    const c = rgb(getComputedStyle(node).backgroundColor);
    if (c.length === 3 || c[3] > 0.5) return c.slice(0, 3);
  }
  return [255, 255, 255];
};
const ratio = (node) => {
  const a = lum(rgb(getComputedStyle(node).color)), b = lum(background(node));
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
};
return [...document.querySelectorAll(arguments[0])]
  .filter((n) => n.offsetParent !== null && !n.disabled && n.textContent.trim())
  .map((n) => [n.textContent.trim().slice(0, 30), Math.round(ratio(n) * 100) / 100]);
"""


def log_text(driver):
    return driver.find_element(By.ID, "log").get_attribute("textContent")


def open_conversation(driver, wait, name):
    if not driver.execute_script("return document.querySelector('#app').classList.contains('drawer')"):
        driver.find_element(By.ID, "menu").click()
    wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f"#sidebar li[data-name='{name}'] button").is_displayed())
    driver.find_element(By.CSS_SELECTOR, f"#sidebar li[data-name='{name}'] button").click()
    wait.until(lambda d: d.find_element(By.ID, "title").text == name)


def type_line(driver, text):
    line = driver.find_element(By.ID, "line")
    line.clear()
    line.send_keys(text + "\n")


def main():
    results = Results()
    check = results.check
    # Sam talks fast while the page joins: his burst is not taken for a flood.
    server = Server(CHORUSD, prefix="chorus-phone-", config="flood-burst = 400\n")
    with walk_through(results, server, SCREENSHOT) as walk:
        driver = walk.browser()
        wait = WebDriverWait(driver, WAIT)
        driver.get(f"https://127.0.0.1:{server.web}/")
        wait.until(ready.visibility_of_element_located((By.ID, "account")))
        driver.find_element(By.ID, "register-button").click()
        driver.find_element(By.ID, "account").send_keys("pat")
        driver.find_element(By.ID, "password").send_keys("pat-password-1")
        driver.find_element(By.ID, "register-button").click()

        # W16: a new person's first screen says what to do, and its form makes the first room.
        wait.until(ready.visibility_of_element_located((By.ID, "line")))
        steps = soon(wait, lambda d: d.find_elements(By.CSS_SELECTOR, "#log .first-steps"))
        check("W16 a new person's first screen says what to do first", steps and "Welcome, pat" in steps[0].text and "room" in steps[0].text,
              steps and steps[0].text)
        if steps:
            driver.find_element(By.ID, "first-room").send_keys("kitchen\n")
        else:
            type_line(driver, "/join #kitchen")
        check("W16 the first screen's form joins (and makes) the room",
              soon(wait, lambda d: d.find_element(By.ID, "title").text == "#kitchen") and steps)

        # W11: the closed drawer is out of the Tab order and named as closed.
        inert, expanded = driver.execute_script("return [document.querySelector('#sidebar').inert, "
                                                "document.querySelector('#menu').getAttribute('aria-expanded')]")
        focusable = driver.execute_script("document.querySelector('#join-name').focus(); "
                                          "return document.activeElement === document.querySelector('#join-name')")
        check("W11 the closed drawer cannot take focus", inert is True and not focusable and expanded == "false",
              (inert, focusable, expanded))
        driver.find_element(By.ID, "menu").click()
        opened = driver.execute_script("return [document.querySelector('#sidebar').inert, "
                                       "document.querySelector('#menu').getAttribute('aria-expanded')]")
        check("W11 the open drawer can", opened == [False, "true"], opened)

        # W7: a room joined from the drawer opens.
        driver.find_element(By.ID, "join-name").send_keys("#pantry\n")
        check("W7 a room joined from the drawer opens", soon(wait, lambda d: d.find_element(By.ID, "title").text == "#pantry"))
        check("W11 choosing closes the drawer", driver.execute_script("return document.querySelector('#sidebar').inert"))

        # W6: what the page asked Chorus itself (its token, the command list) is not the person's.
        open_conversation(driver, wait, "Chorus")
        text = log_text(driver)
        check("W6 the page's own !token new and !help are not shown as the person's lines",
              "!token new" not in text and "!help" not in text and "chorus-" not in text, text[-300:])

        # W4: an answer goes to where its command was typed, after a command in a room.
        open_conversation(driver, wait, "#kitchen")
        type_line(driver, "!jobs")
        wait.until(lambda d: "No jobs" in log_text(d) or "jobs" in log_text(d).lower())
        type_line(driver, "/msg Chorus !rooms")
        wait.until(lambda d: d.find_element(By.ID, "title").text == "Chorus")
        soon(wait, lambda d: "Your rooms (2)" in log_text(d))
        open_conversation(driver, wait, "#kitchen")
        check("W4 the answer to /msg Chorus !… stays in Chorus's conversation", "Your rooms" not in log_text(driver), log_text(driver)[-300:])

        # W10: completion offers each command once, the long !help's last line included.
        line = driver.find_element(By.ID, "line")
        line.clear()
        line.send_keys("!")
        offered = [b.text for b in wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions button"))]
        line.clear()
        line.send_keys("!re")
        later = [b.text for b in wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#suggestions button"))]
        check("W10 completion lists each command once", len(offered) == len(set(offered)) and "!report" in later, (offered, later))
        line.clear()

        # W1, W14: a report's links point at this page's host with the sentence intact; its chart
        # keeps a readable size and scrolls inside the conversation.
        type_line(driver, "!track add work 1:00-2:30 yesterday")
        type_line(driver, "!report yesterday")
        chart = wait.until(lambda d: d.execute_script(
            "const i = document.querySelector('img.report'); return i && i.complete && i.naturalWidth > 0 ? i : null"))
        sentence = driver.execute_script("return arguments[0].closest('.text').textContent", chart)
        links = driver.execute_script("return [...arguments[0].closest('.text').querySelectorAll('a')].map((a) => [a.textContent, a.href])", chart)
        origin = f"https://127.0.0.1:{server.web}/"
        check("W1 a report line's text survives its links being pointed at this host",
              sentence.strip() == "Chart: Chart · CSV: CSV" and [t for t, _ in links] == ["Chart", "CSV"]
              and all(h.startswith(origin + "report.") for _, h in links), (sentence, links))
        widths = driver.execute_script("return [arguments[0].clientWidth, arguments[0].parentElement.scrollWidth > arguments[0].parentElement.clientWidth, "
                                       "document.documentElement.scrollWidth]", chart)
        check("W14 the chart is drawn at its own width and scrolls, the page does not", widths[0] >= 600 and widths[1] and widths[2] <= 375, widths)

        # Sam joins, for a chore in turn and for lines said while the page joins.
        sam = IRCClient(server.plain, "sam", "sam-password-1")
        type_line(driver, "!room add sam")
        sam.send("JOIN #kitchen")
        sam.wait_for(lambda l: " 366 " in l)

        # W13, W17: a chore's card offers Done for the current turn only, after a reload too.
        type_line(driver, "!chore add dishes every day at 20:00 among pat sam")
        done = wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, ".card[data-event='turn.started'] button[data-command='!done dishes']")))
        kinds = [k.get_attribute("textContent") for k in driver.find_elements(By.CSS_SELECTOR, ".card .kind")]
        check("W17 cards name events in words, not by internal names", kinds and not any(re.search(r"[a-z]\.[a-z]", k) for k in kinds), kinds)
        done.click()
        wait.until(lambda d: "It is sam's turn for dishes" in log_text(d))
        check("W13 once pat's turn is done, no card offers pat Done",
              not driver.find_elements(By.CSS_SELECTOR, ".card button[data-command='!done dishes']"))

        # W15: lines are under the day they were said, and each time carries its full date.
        days = [d.text for d in driver.find_elements(By.CSS_SELECTOR, "#log .day")]
        title = driver.find_element(By.CSS_SELECTOR, "#log .line time").get_attribute("title")
        check("W15 today's lines sit under one 'Today', and a time's full date is at hand",
              days == ["Today"] and str(time.gmtime().tm_year) in title, (days, title))

        # W2: lines said while the page reloads and joins are drawn once each, in the order said.
        def chatter():
            for n in range(1, 301):
                sam.send(f"PRIVMSG #kitchen :count {n}")
                time.sleep(0.005)
        talker = threading.Thread(target=chatter)
        talker.start()
        driver.refresh()
        talker.join()
        wait.until(lambda d: d.find_element(By.ID, "title").text == "#kitchen" and "count 300" in log_text(d))
        said = [n.get_attribute("textContent") for n in driver.find_elements(By.CSS_SELECTOR, "#log .line .text")]
        counts = [int(t[6:]) for t in said if re.fullmatch(r"count \d+", t)]
        check("W2 lines said while the page joins are drawn in order, each once",
              counts == sorted(set(counts)) and counts[-1] == 300, counts)
        check("W13 after a reload, a passed turn's card still offers no Done",
              not driver.find_elements(By.CSS_SELECTOR, ".card button[data-command='!done dishes']"))

        # W5: Chorus's conversation is listed and kept after the reload.
        open_conversation(driver, wait, "Chorus")
        check("W5 Chorus's conversation and its answers are kept across a reload", "Your rooms (2)" in log_text(driver), log_text(driver)[-200:])
        open_conversation(driver, wait, "#kitchen")

        # W3: lines typed while the server is away are kept, shown as waiting, and sent once it is back.
        sam.close()
        server.stop()
        wait.until(lambda d: "offline" in d.find_element(By.ID, "status").text)
        type_line(driver, "typed while the server was away")
        type_line(driver, "!job add Buy soap")
        waiting = [n.text for n in driver.find_elements(By.CSS_SELECTOR, "#log .line.pending")]
        check("W3 a line typed offline is shown as waiting", len(waiting) == 2 and "waiting" in waiting[0], waiting)
        time.sleep(0.7)  # kept on the device half a second after it is typed
        driver.refresh()  # the server still away: the page comes from the service worker
        kept = soon(wait, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#log .line.pending")) == 2)
        check("W3 lines waiting to be sent survive a reload", kept, [n.text for n in driver.find_elements(By.CSS_SELECTOR, "#log .line.pending")])
        server.start()
        sam = IRCClient(server.plain, "sam", "sam-password-1", register=False)
        sam.send("JOIN #kitchen")
        driver.execute_script("window.dispatchEvent(new Event('online'))")  # as a phone's browser says when the network is back
        heard = sam.wait_for(lambda l: "typed while the server was away" in l, timeout=40)
        created = sam.wait_for(lambda l: "chorus/event=job.created" in l and "Buy soap" in l)
        soon(wait, lambda d: not d.find_elements(By.CSS_SELECTOR, "#log .line.pending"))
        time.sleep(1)
        sam.send("PRIVMSG #kitchen :after the return")
        wait.until(lambda d: "after the return" in log_text(d))
        text = log_text(driver)
        check("W3 what was typed offline reaches the room once the server is back, once",
              heard and created and text.count("typed while the server was away") == 1 and text.count("Buy soap") == 2
              and sum("typed while the server was away" in l for l in sam.lines) == 1, text[-400:])

        # W12: buttons and the text on cards read at WCAG AA in both themes.
        type_line(driver, "!job add Mop the floor @me")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, ".card button[data-command^='!start']"))
        selectors = "button, .card .kind, .line time, .status, .day"
        for scheme in ["light", "dark"]:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            low = [r for r in driver.execute_script(CONTRAST, selectors) if r[1] < 4.5]
            check(f"W12 every button and label reads at 4.5:1 or more in the {scheme} theme", not low, low)
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})

        # A photo taken for a job: uploaded with the device's token, on the job as its link, shown,
        # and served without where it was taken.
        driver.find_element(By.CSS_SELECTOR, ".card button[data-command^='!photo']").click()
        driver.find_element(By.ID, "photo-file").send_keys(PHOTO)
        shown = soon(wait, lambda d: d.execute_script(
            "const i = document.querySelector(\".card[data-event='job.photo'] img.photo\"); return i && i.complete && i.naturalWidth ? i.naturalWidth : null"))
        check("a photo chosen on a job's card is uploaded, put on the job and shown", shown == 48, shown)
        kept = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const src = document.querySelector(".card[data-event='job.photo'] img.photo").src;
            fetch(src).then((r) => r.arrayBuffer()).then((b) => done(String.fromCharCode(...new Uint8Array(b))));
        """) if shown else ""
        check("the photo comes back without its location, camera or comment",
              kept.startswith("\xff\xd8") and not any(s in kept for s in ["Exif", "PhoneMaker", "taken at home"]), kept[:40])
        check("the room hears the photo on the job", sam.wait_for(lambda l: "chorus/event=job.photo" in l and "/photo/" in l))

        # Installable: a manifest, and a service worker that keeps the page, so that with the server
        # out of reach the app still opens, showing what it last knew.
        manifest = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch(document.querySelector('link[rel=manifest]').href).then((r) => r.json()).then(done, () => done(null));
        """)
        check("the web app manifest names the app, opens standalone and has an icon",
              manifest and manifest.get("name") == "Chorus" and manifest.get("display") == "standalone" and manifest.get("icons"), manifest)
        worker = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            navigator.serviceWorker.ready.then((r) => done(r.active ? r.active.state : null), () => done(null));
            setTimeout(() => done('timeout'), 10000);
        """)
        check("a service worker keeps the page's files", worker == "activated", worker)
        sam.close()
        server.stop()
        driver.refresh()
        offline = soon(wait, lambda d: d.find_element(By.ID, "title").text == "#kitchen" and "after the return" in log_text(d))
        check("with the server out of reach, a reload opens the app on its last known lines", offline,
              driver.find_element(By.ID, "title").text + " | " + log_text(driver)[-200:])
        server.start()
        check("and it comes back by itself when the server does",
              soon(WebDriverWait(driver, 40), lambda d: d.find_element(By.ID, "status").text == ""))

        # W9: logging in again on a device renews its token instead of adding one.
        driver.execute_script("localStorage.removeItem('chorus.login')")
        driver.refresh()
        wait.until(ready.visibility_of_element_located((By.ID, "account")))
        driver.find_element(By.ID, "account").send_keys("pat")
        driver.find_element(By.ID, "password").send_keys("pat-password-1\n")
        wait.until(lambda d: d.execute_script("return localStorage.getItem('chorus.login')"))
        bot = IRCClient(server.plain, "patbot", "pat-password-1", register=False, account="pat")
        bot.send("PRIVMSG Chorus :!token")
        listed = bot.wait_for(lambda l: "Your tokens" in l or "no tokens" in l)
        check("W9 a second login on the same device leaves it one token", listed and "Your tokens (1)" in listed, listed)

        # W9: a device that cannot get a token (the account has its 20) says so, not silently later.
        for n in range(20):
            bot.send(f"PRIVMSG Chorus :!token new bot{n}")
        bot.wait_for(lambda l: "already" in l or ("Token" in l and "bot19" in l))
        bot.close()
        driver.execute_script("localStorage.clear()")
        driver.refresh()
        wait.until(ready.visibility_of_element_located((By.ID, "account")))
        driver.find_element(By.ID, "account").send_keys("pat")
        driver.find_element(By.ID, "password").send_keys("pat-password-1\n")
        wait.until(ready.visibility_of_element_located((By.ID, "line")))
        open_conversation(driver, wait, "Chorus")
        said = soon(wait, lambda d: "could not keep you logged in" in log_text(d))
        check("W9 a login that could not be kept says so at once", said)

        end_walk(results, driver, SCREENSHOT)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
