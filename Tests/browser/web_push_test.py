#!/usr/bin/env python3
"""Notifications on a phone (Web Push, soju.im/webpush), as far as a headless Chromium goes.

The page reads the server's push key (ISUPPORT VAPID) and offers notifications in Me; a browser that
cannot reach its push service (this one has none) is told so rather than left waiting. Push messages
are delivered to the page's service worker as a push service would deliver them (DevTools'
ServiceWorker.deliverPushMessage): each IRC line the server pushes shows as a notification naming
who said what, and a tap on one opens its conversation. That the server pushes, encrypted and
signed, is PushTests' to check.

Usage: Tests/browser/web_push_test.py [path/to/chorusd] [screenshot.png]
"""
import base64
import sys
import time

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, Results, Server, end_walk, phone_browser, report_failure, soon

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-push.png"

NOTIFICATIONS = """const done = arguments[arguments.length - 1];
navigator.serviceWorker.getRegistration().then((r) => r.getNotifications())
  .then((all) => done(all.map((n) => [n.title, n.body, n.data && n.data.target])), (e) => done(String(e)));"""


def view_text(driver):
    return driver.find_element(By.ID, "room-view").get_attribute("textContent")


def deliver(driver, origin, line):
    """A push message for the page's service worker, as its push service would hand it over."""
    for registration in ["0", "1", "2"]:
        try:
            driver.execute_cdp_cmd("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": registration, "data": line})
            return True
        except Exception:
            continue
    return False


def main():
    results = Results()
    check = results.check
    server = Server(CHORUSD, prefix="chorus-push-")
    driver = None
    try:
        driver = phone_browser()
        origin = f"https://127.0.0.1:{server.web}"
        # The person taps "Allow" when the browser asks.
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]})
        wait = WebDriverWait(driver, WAIT, ignored_exceptions=[StaleElementReferenceException, ElementNotInteractableException])
        driver.get(origin + "/")
        wait.until(lambda d: d.find_element(By.ID, "account").is_displayed())
        driver.find_element(By.ID, "register-button").click()
        driver.find_element(By.ID, "account").send_keys("pia")
        driver.find_element(By.ID, "password").send_keys("pia-password-1")
        driver.find_element(By.ID, "register-button").click()
        wait.until(lambda d: d.find_elements(By.ID, "first-room"))
        driver.find_element(By.ID, "first-room").send_keys("#flat\n")
        wait.until(lambda d: d.find_element(By.ID, "title").text == "#flat")

        vapid = soon(wait, lambda d: d.execute_script("return state.vapid"))
        key = base64.urlsafe_b64decode(vapid + "=" * (-len(vapid) % 4)) if vapid else b""
        check("the page reads the server's push key (VAPID in ISUPPORT): an uncompressed P-256 key", len(key) == 65 and key[0] == 4, vapid)

        if not driver.execute_script("return document.querySelector('#app').classList.contains('drawer')"):
            driver.find_element(By.ID, "menu").click()
        wait.until(lambda d: d.find_element(By.CSS_SELECTOR, "#sidebar li[data-name='Chorus'] button").is_displayed())
        driver.find_element(By.CSS_SELECTOR, "#sidebar li[data-name='Chorus'] button").click()
        wait.until(lambda d: d.find_element(By.ID, "tab-me").is_displayed())
        driver.find_element(By.ID, "tab-me").click()
        check("Me offers notifications on this device, off until turned on",
              soon(wait, lambda d: "Notifications on this device" in view_text(d) and "Off: turn them on" in view_text(d)
                   and d.find_elements(By.CSS_SELECTOR, "#room-view .notifications button")), view_text(driver)[-300:])
        driver.find_element(By.CSS_SELECTOR, "#room-view .notifications button").click()
        check("a browser whose push service does not answer is told so, not left waiting",
              soon(WebDriverWait(driver, 20), lambda d: "could not subscribe to notifications: its push service did not answer" in view_text(d)),
              view_text(driver)[-300:])

        # The service worker turns each pushed line into a notification.
        driver.execute_cdp_cmd("ServiceWorker.enable", {})
        check("the push service hands the service worker a message",
              deliver(driver, origin, "@time=2026-11-28T10:00:00.000Z;msgid=m1;account=sam :sam!sam@browser.test PRIVMSG pia :the plumber comes at 3"))
        shown = soon(wait, lambda d: d.execute_async_script(NOTIFICATIONS) or None)
        check("a pushed private line shows as a notification from its sender", shown == [["sam", "the plumber comes at 3", "sam"]], shown)
        deliver(driver, origin, "@msgid=m2;chorus/event=job.created;chorus/room=#flat :Chorus!chorus@browser.test NOTICE Chorus :sam added job 4 “Fix the tap” for pia")
        shown = soon(wait, lambda d: [n for n in d.execute_async_script(NOTIFICATIONS) if n[1].startswith("sam added job 4")] or None)
        check("a pushed event shows as Chorus's, opening its room", shown == [["Chorus", "sam added job 4 “Fix the tap” for pia", "#flat"]], shown)
        deliver(driver, origin, "@msgid=m3 :sam!sam@browser.test PRIVMSG #flat :\x01ACTION waves\x01")
        shown = soon(wait, lambda d: [n for n in d.execute_async_script(NOTIFICATIONS) if "waves" in n[1]] or None)
        check("a room line reads who said it where, an action as a sentence", shown == [["sam in #flat", "sam waves", "#flat"]], shown)

        # A tap on a notification while the app is open shows its conversation.
        driver.find_element(By.ID, "tab-chat").click()
        # (The tap itself is the browser's; its worker posts the page this message.)
        driver.execute_script("navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: { open: '#flat' } }))")
        check("opening a notification's conversation shows it", soon(wait, lambda d: d.find_element(By.ID, "title").text == "#flat"),
              driver.find_element(By.ID, "title").text)
        end_walk(results, driver, SCREENSHOT)
    except Exception as error:  # a step that timed out: counted, and the browser's last words shown
        report_failure(results, driver, error, SCREENSHOT)
    finally:
        if driver:
            driver.quit()
        server.finish(show_log=results.failed > 0)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
