#!/usr/bin/env python3
"""Two people on the web client, one on a phone (375×800) and one at a desk (1280×800), working on
one job: what one does reaches the other's open view by itself, without a reload.

alice makes #flat and adds bob; bob, whose Jobs view is open, sees the job alice makes with the
form appear in it; he starts it from its page and alice's open page says so; the task she adds
shows on his page, he ticks it, and her page shows it ticked; his comment, sent from the page's
form, appears on hers. After a reload alice's page shows the same, and her chat has each of the
job's cards once.

Usage: Tests/browser/web_two_people_test.py [path/to/chorusd] [screenshot.png]
"""
import sys

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ready
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, Results, Server, soon, walk_through
from web_views_test import click_fresh, type_fresh, view_text

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-two-people.png"


def register(driver, server, me, password):
    """Makes an account on the page; answers the page's wait, once its first screen asks for a room."""
    wait = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException, ElementNotInteractableException])
    driver.get(f"https://127.0.0.1:{server.web}/")
    wait.until(ready.visibility_of_element_located((By.ID, "account")))
    driver.find_element(By.ID, "register-button").click()
    driver.find_element(By.ID, "account").send_keys(me)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "register-button").click()
    wait.until(lambda d: d.find_elements(By.ID, "first-room"))
    return wait


def log_in(driver, server, me, password):
    """Logs in to an existing account on the page."""
    wait = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException, ElementNotInteractableException])
    driver.get(f"https://127.0.0.1:{server.web}/")
    wait.until(ready.visibility_of_element_located((By.ID, "account")))
    driver.find_element(By.ID, "account").send_keys(me)
    driver.find_element(By.ID, "password").send_keys(password)
    driver.find_element(By.ID, "login-button").click()
    wait.until(ready.visibility_of_element_located((By.ID, "line")))
    return wait


def lines_with(driver, text):
    """The nick of each chat line that says `text`."""
    return driver.find_elements(By.XPATH, f"//div[@id='log']//div[contains(@class,'line')][contains(., '{text}')]//span[@class='nick']")


def nick(node):
    return node.get_attribute("textContent")


def enter(driver, wait, room):
    """Into the room from the first screen's prompt, or (added to it meanwhile) already there."""
    wait.until(lambda d: d.find_element(By.ID, "title").text == room or d.find_elements(By.ID, "first-room"))
    if driver.find_element(By.ID, "title").text != room:
        driver.find_element(By.ID, "first-room").send_keys(room + "\n")
    wait.until(lambda d: d.find_element(By.ID, "title").text == room)


def open_job(driver, wait, job, title):
    click_fresh(driver, wait, f"#room-view .jobs-list button[data-job='{job}']")
    wait.until(lambda d: f"Job {job}: {title}" in view_text(d))


def ticked(driver):
    return driver.execute_script("const b = document.querySelector('#room-view ul.tasks input'); return !!(b && b.checked)")


def main():
    results = Results()
    check = results.check
    server = Server(CHORUSD, prefix="chorus-two-")
    with walk_through(results, server, SCREENSHOT) as walk:
        alice, bob = walk.browser(375, 800), walk.browser(1280, 800)
        bob_wait = register(bob, server, "bob", "bob-password-1")
        alice_wait = register(alice, server, "alice", "alice-password-1")
        enter(alice, alice_wait, "#flat")
        alice.find_element(By.ID, "line").send_keys("!room add bob\n")
        check("alice adds bob to #flat", soon(alice_wait, lambda d: "added bob" in d.find_element(By.ID, "log").get_attribute("textContent")))
        enter(bob, bob_wait, "#flat")

        # bob's Jobs view is open before the job exists: it must come to him.
        bob.find_element(By.ID, "tab-jobs").click()
        check("bob's Jobs view starts empty", soon(bob_wait, lambda d: "No open jobs" in view_text(d)), view_text(bob))
        alice.find_element(By.ID, "tab-jobs").click()
        click_fresh(alice, alice_wait, "#room-view .chips .new")
        form = alice_wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#room-view form.job-form"))
        fields = form.find_elements(By.CSS_SELECTOR, "input")
        fields[0].send_keys("Fix the sink")
        fields[1].send_keys("bob")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        row = soon(bob_wait, lambda d: d.find_element(By.CSS_SELECTOR, "#room-view .jobs-list button[data-job]"))
        check("the job alice made with the form appears in bob's open list, assigned to him",
              row and "Fix the sink" in row.text and "→ bob" in row.text, row and row.text)
        job = row.get_attribute("data-job") if row else "0"

        # Both on the job's page; each change by one shows on the other's.
        open_job(alice, alice_wait, job, "Fix the sink")
        open_job(bob, bob_wait, job, "Fix the sink")
        click_fresh(bob, bob_wait, f"#room-view button[data-command='!start {job}']")
        check("bob starts it, and alice's open page says it is in progress",
              soon(alice_wait, lambda d: "in-progress" in view_text(d)), view_text(alice)[:300])
        type_fresh(alice, alice_wait, "#room-view form.add-task input", "buy a washer\n")
        check("the task alice adds shows on bob's page",
              soon(bob_wait, lambda d: "buy a washer" in view_text(d) and d.find_elements(By.CSS_SELECTOR, "#room-view ul.tasks input[type=checkbox]")),
              view_text(bob)[:300])
        click_fresh(bob, bob_wait, "#room-view ul.tasks input[type=checkbox]")
        check("bob ticks it, and it is ticked on alice's page", soon(alice_wait, lambda d: ticked(d)))
        type_fresh(bob, bob_wait, "#room-view form.add-comment input", "washer fitted, no more drips\n")
        check("bob's comment from the page's form appears on alice's",
              soon(alice_wait, lambda d: "washer fitted, no more drips" in view_text(d)), view_text(alice)[:400])

        # A reload: the same page, and each of the job's cards once in the chat.
        alice.refresh()
        alice_wait.until(lambda d: d.find_element(By.ID, "title").text == "#flat")
        alice.find_element(By.ID, "tab-jobs").click()
        open_job(alice, alice_wait, job, "Fix the sink")
        check("after a reload alice's page shows it started, the task ticked and the comment",
              soon(alice_wait, lambda d: "in-progress" in view_text(d) and ticked(d) and "no more drips" in view_text(d)),
              view_text(alice)[:400])
        alice.find_element(By.ID, "tab-chat").click()
        cards = {event: len(alice.find_elements(By.CSS_SELECTOR, f"#log .card[data-job='{job}'][data-event='{event}']"))
                 for event in ["job.created", "job.status", "task.added", "task.done", "job.comment"]}
        check("after the reload each of the job's events is in alice's chat once", set(cards.values()) == {1}, cards)

        # alice logs in on her laptop too: she is alice there (not alice_123), in #flat, and the
        # room sees one alice; what she says from the laptop shows on her phone as her own line.
        laptop = walk.browser(1280, 800)
        laptop_wait = log_in(laptop, server, "alice", "alice-password-1")
        click_fresh(laptop, laptop_wait, "#rooms li[data-name='#flat'] button")
        laptop_wait.until(lambda d: d.find_element(By.ID, "title").text == "#flat")
        type_fresh(laptop, laptop_wait, "#line", "sent from my laptop\n")
        check("bob sees the laptop's line as alice's",
              soon(bob_wait, lambda d: any(nick(n) == "alice" for n in lines_with(d, "sent from my laptop"))),
              [nick(n) for n in lines_with(bob, "sent from my laptop")])
        check("alice's phone shows it as her own line",
              soon(alice_wait, lambda d: d.find_elements(By.XPATH, "//div[contains(@class,'self')][contains(., 'sent from my laptop')]")))
        check("the room never heard of an alice_", "alice_" not in bob.find_element(By.ID, "log").get_attribute("textContent"))
        alice.save_screenshot(SCREENSHOT.replace(".png", "-alice.png"))
        bob.save_screenshot(SCREENSHOT.replace(".png", "-bob.png"))
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
