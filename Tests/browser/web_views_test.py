#!/usr/bin/env python3
"""The Jobs and Chores views of the web client, at a phone's size and a desktop's, beside a
teammate on TCP.

Jobs: pat makes a job with the form, adds a task and ticks it, sees sam's comment arrive, starts
and finishes the job from its page, and finds it under Done; a job's card in the chat opens its
page. Chores: pat's turn is done from its card and passes to sam, the week's turns are listed, and
a shared list is started, added to and ticked. Requests: one posted with the form, sam's offer
arriving on its page, hired, done, confirmed and reviewed. Time: a timer started and stopped, yesterday's
entry in the chart. Me: the open jobs across rooms. Every change is a !command the room hears, which
sam (an IRC client) checks.

Usage: Tests/browser/web_views_test.py [path/to/chorusd] [screenshot.png]
"""
import json
import os
import shutil
import sys
import tempfile
import time

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, IRCClient, Results, Server, axe_violations, phone_browser, report_failure, soon

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-views.png"


# Visible buttons, inputs and selects without an accessible name.
UNNAMED = """
const named = (n) => (n.getAttribute('aria-label') || '').trim() || (n.labels && [...n.labels].some((l) => l.textContent.trim()))
  || (n.tagName === 'BUTTON' && n.textContent.trim()) || (n.getAttribute('aria-labelledby') || '').trim() || (n.title || '').trim();
return [...document.querySelectorAll('button, input:not([type=hidden]), select, textarea')]
  .filter((n) => n.offsetParent !== null && !n.closest('[inert]') && !n.classList.contains('offscreen') && !named(n))
  .map((n) => n.outerHTML.slice(0, 80));
"""


def click_fresh(driver, wait, selector):
    """Clicks what the selector finds once the view has settled (it is drawn again on each change)."""
    for _ in range(5):
        try:
            wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, selector))).click()
            return True
        except (StaleElementReferenceException, ElementNotInteractableException):
            continue
    return False


def type_fresh(driver, wait, selector, text):
    """Types into what the selector finds, again if the view was drawn anew meanwhile."""
    for _ in range(5):
        try:
            wait.until(ready.element_to_be_clickable((By.CSS_SELECTOR, selector))).send_keys(text)
            return True
        except (StaleElementReferenceException, ElementNotInteractableException):
            continue
    return False


def open_conversation(driver, wait, name):
    """Opens a room or the Chorus conversation from the list of conversations."""
    menu = driver.find_element(By.ID, "menu")
    if menu.is_displayed() and not driver.execute_script("return document.querySelector('#app').classList.contains('drawer')"):
        menu.click()  # on a phone the conversations are a drawer; on a desktop always there
    click_fresh(driver, wait, f"#sidebar li[data-name='{name}'] button")


def check_accessibility(check, driver, wait, where, views):
    """axe-core's WCAG 2.1 A and AA rules on each of the views (what a click on a tab or a button
    opens, with its name), in both themes."""
    for view, label in views:
        click_fresh(driver, wait, view)
        time.sleep(0.5)
        for scheme in ["light", "dark"]:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
            found = axe_violations(driver)
            if found is None:
                print("axe-core not run: CHORUS_AXE_JS names no file", flush=True)
                return
            check(f"{where}: axe-core finds nothing against WCAG 2.1 AA in {label}, {scheme} theme", not found, found)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def log_text(driver):
    return driver.find_element(By.ID, "log").get_attribute("textContent")


def read_json(path):
    """The JSON in the file at path, or None while it is not there whole."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def view_text(driver):
    return driver.find_element(By.ID, "room-view").get_attribute("textContent")


def walk(results, server, width, height, room, sam_nick):
    check = results.check
    driver = phone_browser(width, height)
    try:
        # The views are drawn anew on each change: an element found a moment ago may be gone.
        wait = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException, ElementNotInteractableException])
        driver.get(f"https://127.0.0.1:{server.web}/")
        wait.until(ready.visibility_of_element_located((By.ID, "account")))
        driver.find_element(By.ID, "register-button").click()
        me = f"pat{width}"
        driver.find_element(By.ID, "account").send_keys(me)
        driver.find_element(By.ID, "password").send_keys("pat-password-1")
        driver.find_element(By.ID, "register-button").click()
        wait.until(lambda d: d.find_elements(By.ID, "first-room"))
        driver.find_element(By.ID, "first-room").send_keys(room + "\n")
        wait.until(lambda d: d.find_element(By.ID, "title").text == room)
        sam = IRCClient(server.plain, sam_nick, "sam-password-1")
        line = driver.find_element(By.ID, "line")
        line.send_keys(f"!room add {sam_nick}\n")
        sam.send(f"JOIN {room}")
        sam.wait_for(lambda l: " 366 " in l)
        size = f"at {width}px"

        driver.find_element(By.ID, "tab-jobs").click()
        check(f"{size}: a room without jobs says how to make one",
              soon(wait, lambda d: "No open jobs" in view_text(d) and "New job" in view_text(d)), view_text(driver))

        # The form makes the job as !job add would.
        click_fresh(driver, wait, "#room-view .chips .new")
        form = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.job-form"))
        fields = form.find_elements(By.CSS_SELECTOR, "input")
        fields[0].send_keys("Paint the fence")
        fields[1].send_keys("me")
        driver.execute_script("arguments[0].value = '2030-05-01T10:00'", fields[2])
        fields[3].send_keys("two coats")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        created = sam.wait_for(lambda l: "chorus/event=job.created" in l)
        check(f"{size}: the form's job reaches the room with its assignee and due time",
              created and f"chorus/assignee={me}" in created and "chorus/due=2030-05-01" in created, created)
        job = created.split("chorus/job=")[1].split(";")[0] if created else "0"
        row = soon(wait, lambda d: d.find_element(By.CSS_SELECTOR, f"#room-view .jobs-list button[data-job='{job}']").text)
        check(f"{size}: the new job is listed with who and when",
              row and "Paint the fence" in row and f"→ {me}" in row and "1 May" in row.replace("May 1", "1 May"), row)

        # Its page: a task added and ticked, a teammate's comment arriving by itself.
        click_fresh(driver, wait, f"#room-view .jobs-list button[data-job='{job}']")
        wait.until(lambda d: f"Job {job}: Paint the fence" in view_text(d))
        # Edit: the form holds the job's fields; each one changed is its own !edit.
        click_fresh(driver, wait, f"#room-view button[data-command='!edit {job}']")
        title = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.job-form input"))
        check(f"{size}: the edit form holds the job's title", title.get_attribute("value") == "Paint the fence", title.get_attribute("value"))
        title.clear()
        title.send_keys("Paint the fence white\n")
        edited = sam.wait_for(lambda l: "chorus/event=job.edited" in l)
        check(f"{size}: saving sends !edit and the room hears the new title", edited and "Paint the fence white" in edited, edited)
        check(f"{size}: the page shows the new title", soon(wait, lambda d: f"Job {job}: Paint the fence white" in view_text(d)))
        type_fresh(driver, wait, "#room-view form.add-task input", "buy paint\n")
        shown = soon(wait, lambda d: "buy paint" in view_text(d) and d.find_elements(By.CSS_SELECTOR, "#room-view ul.tasks input[type=checkbox]"))
        check(f"{size}: a task added on the page shows there", shown, view_text(driver)[:300])
        click_fresh(driver, wait, "#room-view ul.tasks input[type=checkbox]")
        ticked = sam.wait_for(lambda l: "chorus/event=task.done" in l)
        check(f"{size}: ticking the task is !task done, heard by the room", ticked and "chorus/progress=1/1" in ticked, ticked)
        check(f"{size}: the ticked task stays ticked", soon(wait, lambda d: d.execute_script(
            "const b = document.querySelector('#room-view ul.tasks input'); return b && b.checked && b.disabled")))
        sam.send(f"PRIVMSG {room} :!comment {job} looks good")
        check(f"{size}: a teammate's comment appears on the open page by itself",
              soon(wait, lambda d: "looks good" in view_text(d)), view_text(driver)[:400])

        # Start and Done from the page; the job moves from Open to Done.
        click_fresh(driver, wait, f"#room-view button[data-command='!start {job}']")
        check(f"{size}: Start starts it", soon(wait, lambda d: "in-progress" in view_text(d)))
        click_fresh(driver, wait, f"#room-view button[data-command='!done {job}']")
        check(f"{size}: Done completes it, and it can be reopened",
              soon(wait, lambda d: d.find_elements(By.CSS_SELECTOR, f"#room-view button[data-command='!reopen {job}']")))
        click_fresh(driver, wait, "#room-view > button.link")
        check(f"{size}: the Open list no longer has it", soon(wait, lambda d: "No open jobs" in view_text(d)))
        next(b for b in driver.find_elements(By.CSS_SELECTOR, "#room-view .chips button") if b.text == "Done").click()
        check(f"{size}: the Done list has it", soon(wait, lambda d: d.find_elements(By.CSS_SELECTOR, f"#room-view .jobs-list button[data-job='{job}']")))

        # The chat stays the home: a job's card opens its page.
        driver.find_element(By.ID, "tab-chat").click()
        wait.until(lambda d: d.find_element(By.ID, "log").is_displayed())
        driver.find_element(By.CSS_SELECTOR, f"#log .card[data-job='{job}'] .open-job").click()
        check(f"{size}: a job's card in the chat opens its page",
              soon(wait, lambda d: d.find_element(By.ID, "tab-jobs").get_attribute("aria-selected") == "true"
                   and f"Job {job}: Paint the fence white" in view_text(d)))
        # Chores: whose turn, Done from the card, the week ahead, a shared list.
        driver.find_element(By.ID, "tab-chat").click()
        driver.find_element(By.ID, "line").send_keys(f"!chore add bins every week at 19:00 among {me} {sam_nick}\n")
        sam.wait_for(lambda l: "chorus/event=turn.started" in l)
        driver.find_element(By.ID, "tab-chores").click()
        card = soon(wait, lambda d: d.find_element(By.CSS_SELECTOR, "#room-view .chore-card[data-chore='bins']").text)
        check(f"{size}: the chore's card says it is the viewer's turn, and when",
              card and "Your turn, due" in card and f"{me} → {sam_nick}" in card, card)
        check(f"{size}: the week's turns are listed", "— bins: " in view_text(driver), view_text(driver)[:300])
        click_fresh(driver, wait, "#room-view .chore-card[data-chore='bins'] button[data-command='!done bins']")
        done = sam.wait_for(lambda l: "chorus/event=turn.done" in l)
        check(f"{size}: Done on the card is !done, heard by the room", done and f"chorus/actor={me}" in done, done)
        check(f"{size}: the card follows: now it is the teammate's turn",
              soon(wait, lambda d: f"{sam_nick}'s turn" in d.find_element(By.CSS_SELECTOR, "#room-view .chore-card[data-chore='bins']").text))
        type_fresh(driver, wait, "#room-view form.new-list input", "groceries milk\n")
        check(f"{size}: a list started from the view shows its first item",
              soon(wait, lambda d: d.find_elements(By.CSS_SELECTOR, "#room-view form.add-item-groceries") and "milk" in view_text(d)))
        type_fresh(driver, wait, "#room-view form.add-item-groceries input", "eggs\n")
        check(f"{size}: an item added to the list shows", soon(wait, lambda d: "eggs" in view_text(d)))
        click_fresh(driver, wait, "#room-view .list-card input[type=checkbox]")
        ticked = sam.wait_for(lambda l: "chorus/event=list.item.done" in l)
        check(f"{size}: ticking an item is !list done, heard by the room", ticked and "milk" in ticked, ticked)

        # Chorus's own views: Time (Start, Stop, the last seven days) and Me (what is mine to do).
        driver.find_element(By.ID, "tab-chat").click()
        line = driver.find_element(By.ID, "line")
        line.send_keys("!track add work 9:00-10:30 yesterday\n")
        line.send_keys("!job add Sweep the yard @me\n")
        sam.wait_for(lambda l: "Sweep the yard" in l)
        open_conversation(driver, wait, "Chorus")
        click_fresh(driver, wait, "#tab-time")
        check(f"{size}: Time says no timer runs and offers Start",
              soon(wait, lambda d: "No timer runs." in view_text(d) and d.find_elements(By.CSS_SELECTOR, "#room-view button.start")))
        bars = driver.execute_script("return document.querySelector('#room-view .week-chart').getAttribute('aria-label')")
        check(f"{size}: the last seven days' chart holds yesterday's 1h 30m", "1h 30m" in bars, bars)
        click_fresh(driver, wait, "#room-view button.start")
        check(f"{size}: Start starts the timer, and Stop is offered",
              soon(wait, lambda d: "work since" in view_text(d) and d.find_elements(By.CSS_SELECTOR, "#room-view button.stop")))
        click_fresh(driver, wait, "#room-view button.stop")
        check(f"{size}: Stop stops it", soon(wait, lambda d: "No timer runs." in view_text(d)))
        # Time added for today with the form, then its end moved: each change is its own !track edit.
        times = driver.execute_script("""const at = (m) => { const d = new Date(Date.now() - m * 60000);
            return d.getDate() === new Date().getDate() ? `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}` : null; };
            const shown = (hhmm) => { if (!hhmm) return null; const d = new Date(); d.setHours(+hhmm.slice(0, 2), +hhmm.slice(3), 0, 0); return timeFormat.format(d); };
            return [at(50), at(40), at(30)].flatMap((t) => [t, shown(t)]);""")
        if None in times:
            print(f"(skipped at {size}: adding time for today needs 50 minutes of today behind us)")
        else:
            start, start_shown, end, end_shown, later, later_shown = times
            click_fresh(driver, wait, "#room-view button.add-entry")
            form = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.entry-form"))
            driver.execute_script("const t = arguments[0].querySelectorAll('input[type=time]'); t[0].value = arguments[1]; t[1].value = arguments[2];",
                                  form, start, end)
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            check(f"{size}: Add time adds today's entry", soon(wait, lambda d: f"{start_shown}–{end_shown} work (10m)" in view_text(d)), view_text(driver)[-300:])
            edit = soon(wait, lambda d: [b for b in d.find_elements(By.CSS_SELECTOR, "#room-view .entries button")
                                          if b.get_attribute("data-command").startswith("!track edit") and f"{start_shown}–{end_shown}" in
                                          b.find_element(By.XPATH, "..").text])
            if edit:
                edit[0].click()
                form = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.entry-form"))
                driver.execute_script("arguments[0].querySelectorAll('input[type=time]')[1].value = arguments[1];", form, later)
                form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            check(f"{size}: Edit moves the entry's end, and the list shows it",
                  soon(wait, lambda d: f"{start_shown}–{later_shown} work (20m)" in view_text(d)), view_text(driver)[-300:])
        # Requests: one posted with the form, the teammate's offer arriving, hired, done, confirmed.
        sam.send("PRIVMSG Chorus :!contractor on")
        sam.send("PRIVMSG Chorus :!contractor skills plumbing")
        sam.wait_for(lambda l: "plumbing" in l and "NOTICE" in l)
        click_fresh(driver, wait, "#tab-requests")
        click_fresh(driver, wait, "#room-view .chips .new")
        form = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.job-form"))
        fields = form.find_elements(By.CSS_SELECTOR, "input")
        fields[0].send_keys("plumbing")
        fields[1].send_keys("Fix the dripping tap")
        fields[3].send_keys("80")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        posted = sam.wait_for(lambda l: "chorus/event=request.posted" in l)
        check(f"{size}: a request posted with the form reaches a contractor with that skill",
              posted and "Fix the dripping tap" in posted and "chorus/budget=80" in posted, posted)
        number = posted.split("chorus/request=")[1].split(";")[0] if posted else "0"
        click_fresh(driver, wait, f"#room-view .jobs-list button[data-request='{number}']")
        wait.until(lambda d: f"Request {number}: plumbing" in view_text(d))
        sam.send(f"PRIVMSG Chorus :!offer {number} 70 can come at 10")
        check(f"{size}: the contractor's offer appears on the request's page by itself, with Hire",
              soon(wait, lambda d: f"{sam_nick}: 70 — can come at 10" in view_text(d)
                   and d.find_elements(By.CSS_SELECTOR, f"#room-view button[data-command='!hire {number} {sam_nick}']")), view_text(driver)[:300])
        click_fresh(driver, wait, f"#room-view button[data-command='!hire {number} {sam_nick}']")
        check(f"{size}: Hire is !hire, and the contractor is told", sam.wait_for(lambda l: "chorus/event=request.hired" in l))
        sam.send(f"PRIVMSG Chorus :!request done {number}")
        click_fresh(driver, wait, f"#room-view button[data-command='!request confirm {number}']")
        check(f"{size}: once the work is done, Confirm is offered and confirms it",
              sam.wait_for(lambda l: "chorus/event=request.confirmed" in l))
        review = soon(wait, lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.review input"))
        if review:
            type_fresh(driver, wait, "#room-view form.review input", "quick and tidy\n")
        check(f"{size}: a review is left from the page", sam.wait_for(lambda l: "chorus/event=request.reviewed" in l and "quick and tidy" in l))

        click_fresh(driver, wait, "#tab-me")
        check(f"{size}: Me lists the person's open jobs across rooms and their rooms",
              soon(wait, lambda d: "Sweep the yard" in view_text(d) and f"{room} (manager)" in view_text(d)), view_text(driver)[:300])
        # The profile, edited with a form: each field changed is its own !profile set, seen by others.
        check(f"{size}: Me shows the profile, and this device's login among the tokens",
              soon(wait, lambda d: "No name given" in view_text(d) and "(this device)" in view_text(d)), view_text(driver)[-300:])
        click_fresh(driver, wait, "#room-view .profile button")
        form = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.profile-form"))
        form.find_elements(By.CSS_SELECTOR, "input")[0].send_keys("Pat")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        check(f"{size}: the new first name is shown", soon(wait, lambda d: "Pat" in d.find_element(By.CSS_SELECTOR, "#room-view .profile").text))
        sam.send(f"PRIVMSG Chorus :!profile {me}")
        check(f"{size}: and is the account's for everyone", sam.wait_for(lambda l: f"{me} (Pat)" in l))
        # A token made in chat is listed, and revoked from Me.
        driver.find_element(By.ID, "tab-chat").click()
        driver.find_element(By.ID, "line").send_keys("!token new spare script\n")
        soon(wait, lambda d: "chorus-" in log_text(d))
        click_fresh(driver, wait, "#tab-me")
        revoke = soon(wait, lambda d: [b for b in d.find_elements(By.CSS_SELECTOR, "#room-view .tokens button")
                                       if "spare script" in b.find_element(By.XPATH, "..").text])
        check(f"{size}: a token made in chat is listed with Revoke", revoke, view_text(driver)[-300:])
        if revoke:
            revoke[0].click()
            check(f"{size}: Revoke ends it, and the list drops it", soon(wait, lambda d: "spare script" not in d.find_element(By.CSS_SELECTOR, "#room-view .tokens").text))
        # My data: the whole account as one JSON file, downloaded into a folder of the test's.
        downloads = tempfile.mkdtemp(prefix="chorus-downloads-")
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
        click_fresh(driver, wait, "#room-view .my-data button")
        saved = os.path.join(downloads, f"chorus-{me}.json")
        got = soon(wait, lambda d: read_json(saved))
        check(f"{size}: Download my data saves the account's data, its jobs among it",
              got and got["accounts"][0]["name"] == me and any(j["title"] == "Sweep the yard" for j in got.get("jobs", [])),
              str(got)[:300])
        shutil.rmtree(downloads, ignore_errors=True)

        # Every control on the screen has a name a screen reader can say (text, a label or aria-label).
        for view in ["tab-chat", "tab-time", "tab-requests", "tab-me"]:
            click_fresh(driver, wait, f"#{view}")
            time.sleep(0.5)
            nameless = driver.execute_script(UNNAMED)
            check(f"{size}: every control in {view[4:]} is named", not nameless, nameless)

        check_accessibility(check, driver, wait, size, [("#tab-chat", "Chat"), ("#tab-time", "Time"),
                                                        ("#tab-requests", "Requests"), ("#tab-me", "Me")])
        open_conversation(driver, wait, room)
        check_accessibility(check, driver, wait, f"{size} in {room}",
                            [("#tab-chat", "Chat"), ("#tab-jobs", "Jobs"), ("#room-view .chips .new", "the new-job form"),
                             ("#tab-chores", "Chores"), ("#tab-jobs", "Jobs again"), ("#room-view .jobs-list button[data-job]", "a job's page")])

        width_now = driver.execute_script("return document.documentElement.scrollWidth")
        check(f"{size}: nothing is wider than the screen", width_now <= width, width_now)
        driver.save_screenshot(SCREENSHOT.replace(".png", f"-{width}.png"))
        sam.close()
    except Exception as error:
        report_failure(results, driver, error, SCREENSHOT)
    finally:
        driver.quit()


def main():
    results = Results()
    server = Server(CHORUSD, prefix="chorus-jobs-")
    try:
        walk(results, server, 375, 800, "#shed", "sam")
        walk(results, server, 1280, 800, "#office", "kim")
    finally:
        server.finish(show_log=results.failed > 0)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
