#!/usr/bin/env python3
"""Notifications on a phone (Web Push, soju.im/webpush), from the server to the notification.

A push service is played by this test: an HTTP receiver on 127.0.0.1 (`push-to-private = on`) for a
device registered over IRC with a key pair of its own. A private line to its account, once the
account is offline, arrives there encrypted; the test opens it with Python's `cryptography` (OpenSSL,
an implementation independent of the server's swift-crypto) as RFC 8291 says a browser does, checks
the VAPID token's ES256 signature against the key the server advertises, and hands the line to the
page's service worker as a push service would (DevTools' ServiceWorker.deliverPushMessage), which
shows it as a notification naming who said what; a tap on one opens its conversation. The page reads
the server's push key (ISUPPORT VAPID) and offers notifications in Me; a browser that cannot reach its
push service (this one has none) is told so rather than left waiting.

Usage: Tests/browser/web_push_test.py [path/to/chorusd] [screenshot.png]
"""
import base64
import json
import os
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from harness import WAIT, IRCClient, Results, Server, end_walk, soon, walk_through

CHORUSD = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/chorusd"
SCREENSHOT = sys.argv[2] if len(sys.argv) > 2 else "/tmp/chorus-web-push.png"

NOTIFICATIONS = """const done = arguments[arguments.length - 1];
navigator.serviceWorker.getRegistration().then((r) => r.getNotifications())
  .then((all) => done(all.map((n) => [n.title, n.body, n.data && n.data.target])), (e) => done(String(e)));"""


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class PushService:
    """A push service for one device: keeps what the server POSTs, answers 201."""

    def __init__(self):
        self.requests = []
        received = self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def wait(self, count):
        deadline = time.time() + WAIT
        while time.time() < deadline and len(self.requests) < count:
            time.sleep(0.05)
        return self.requests[:count] if len(self.requests) >= count else None

    def close(self):
        self.http.shutdown()


class Device:
    """A browser's push subscription: a P-256 key pair and a secret, and RFC 8291's decryption."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.public = self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)

    @property
    def keys(self):
        return f"p256dh={b64url(self.public)};auth={b64url(self.auth)}"

    def open(self, body):
        salt, record_size, id_length = body[:16], struct.unpack(">I", body[16:20])[0], body[20]
        sender = body[21:21 + id_length]
        sealed = body[21 + id_length:]
        shared = self.key.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), sender))
        ikm = HKDF(hashes.SHA256(), 32, self.auth, b"WebPush: info\x00" + self.public + sender).derive(shared)
        cek = HKDF(hashes.SHA256(), 16, salt, b"Content-Encoding: aes128gcm\x00").derive(ikm)
        nonce = HKDF(hashes.SHA256(), 12, salt, b"Content-Encoding: nonce\x00").derive(ikm)
        padded = AESGCM(cek).decrypt(nonce, sealed, None).rstrip(b"\x00")
        assert padded.endswith(b"\x02") and len(sealed) <= record_size, "one record, ended by its delimiter"
        return padded[:-1].decode()


def vapid_holds(header, key, audience):
    """RFC 8292: `vapid t=<JWT>, k=<key>`, the key the server advertised, the token signed by it for
    the push service's origin, good for at most a day."""
    fields = dict(part.strip().split("=", 1) for part in header[len("vapid "):].split(","))
    head, claims, signature = fields["t"].split(".")
    raw = unb64url(signature)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
    try:
        public.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
                      f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    claims = json.loads(unb64url(claims))
    return (fields["k"] == key and json.loads(unb64url(head))["alg"] == "ES256" and claims["aud"] == audience
            and time.time() < claims["exp"] <= time.time() + 86400 and claims["sub"].startswith(("mailto:", "https://")))


def view_text(driver):
    return driver.find_element(By.ID, "room-view").get_attribute("textContent")


def deliver(driver, origin, line):
    """A push message for the page's service worker, as its push service would hand it over. The
    worker is started first (an idle one is stopped after a while, and DevTools' delivery does not
    wake it), and the message goes to each registration the page may have (DevTools names them by
    number, from 0)."""
    try:
        driver.execute_cdp_cmd("ServiceWorker.startWorker", {"scopeURL": origin + "/"})
    except Exception:
        pass
    delivered = False
    for registration in ["0", "1", "2"]:
        try:
            driver.execute_cdp_cmd("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": registration, "data": line})
            delivered = True
        except Exception:
            continue
    return delivered


def shown_after(driver, wait, origin, line, pick):
    """The notifications `pick` chooses once `line` is pushed: pushed again while none shows (the
    same message id is the same notification, so a second delivery replaces the first)."""
    def look(d):
        deliver(d, origin, line)
        time.sleep(0.3)
        return [n for n in d.execute_async_script(NOTIFICATIONS) if pick(n)] or None
    return soon(wait, look)


def main():
    results = Results()
    check = results.check
    server = Server(CHORUSD, prefix="chorus-push-", config="push-to-private = on\n")
    with walk_through(results, server, SCREENSHOT) as walk:
        service = walk.closing(PushService())
        driver = walk.browser()
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
        driver.find_element(By.ID, "line").send_keys("!job add Fix the tap\n")
        wait.until(lambda d: "created job 1" in d.find_element(By.ID, "log").get_attribute("textContent"))

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

        # A device registers over IRC for its account, which then goes offline; a private line to it
        # reaches the push service sealed for that device alone, and signed by the server.
        device = Device()
        quin = IRCClient(server.plain, "quin", "quin-password-1")
        endpoint = f"http://127.0.0.1:{service.port}/push/quin-phone"
        quin.send(f"WEBPUSH REGISTER {endpoint} {device.keys}")
        check("WEBPUSH REGISTER keeps the device", quin.wait_for(lambda l: f"WEBPUSH REGISTER {endpoint}" in l))
        quin.send("QUIT :bye")
        quin.close()
        sam = IRCClient(server.plain, "sam", "sam-password-1")
        time.sleep(0.3)
        sam.send("PRIVMSG quin :the plumber comes at 3")
        pushed = service.wait(1)
        check("a private line for an account nobody is connected as reaches its push service", pushed, service.requests)
        line = ""
        if pushed:
            path, headers, body = pushed[0]
            check("it is sealed with aes128gcm, for a day, urgent",
                  headers.get("content-encoding") == "aes128gcm" and headers.get("ttl") == "86400" and headers.get("urgency") == "high", headers)
            check("its VAPID token is signed by the key the server advertises, for this push service",
                  vapid_holds(headers.get("authorization", ""), vapid, f"http://127.0.0.1:{service.port}"), headers.get("authorization"))
            try:
                line = device.open(body)
            except Exception as error:
                line = repr(error)
            check("the device opens it with its own key (Python's cryptography): the IRC line, tags and all",
                  line.endswith(" PRIVMSG quin :the plumber comes at 3") and "msgid=" in line and ":sam!" in line, line)

        # The service worker turns each pushed line into a notification.
        driver.execute_cdp_cmd("ServiceWorker.enable", {})
        check("the push service hands the service worker that line", deliver(driver, origin, line))
        shown = shown_after(driver, wait, origin, line, lambda n: "plumber" in n[1])
        check("it shows as a notification from its sender", shown == [["sam", "the plumber comes at 3", "sam"]], shown)
        shown = shown_after(driver, wait, origin, "@msgid=m2;chorus/event=job.created;chorus/room=#flat :Chorus!chorus@browser.test NOTICE Chorus :sam added job 4 “Fix the tap” for pia",
                            lambda n: n[1].startswith("sam added job 4"))
        check("a pushed event shows as Chorus's, opening its room", shown == [["Chorus", "sam added job 4 “Fix the tap” for pia", "#flat"]], shown)
        shown = shown_after(driver, wait, origin, "@msgid=m3 :sam!sam@browser.test PRIVMSG #flat :\x01ACTION waves\x01", lambda n: "waves" in n[1])
        check("a room line reads who said it where, an action as a sentence", shown == [["sam in #flat", "sam waves", "#flat"]], shown)

        # A tap on a notification while the app is open shows its conversation, and a job's event
        # that job's page. (The tap itself is the browser's; its worker posts the page this message.)
        driver.find_element(By.ID, "tab-chat").click()
        driver.execute_script("navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: { open: 'sam', job: '' } }))")
        check("a private line's notification opens the conversation with its sender",
              soon(wait, lambda d: d.find_element(By.ID, "title").text == "sam"), driver.find_element(By.ID, "title").text)
        job = "1"  # the room's first job, made at the start
        driver.execute_script(f"navigator.serviceWorker.dispatchEvent(new MessageEvent('message', {{ data: {{ open: '#flat', job: '{job}' }} }}))")
        check("an event's notification opens its room on the job's page", soon(wait, lambda d: d.find_element(By.ID, "title").text == "#flat"
              and f"Job {job}: Fix the tap" in view_text(d)), driver.find_element(By.ID, "title").text)
        end_walk(results, driver, SCREENSHOT)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
