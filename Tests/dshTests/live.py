#!/usr/bin/env python3
"""What a served page sees, for ServeTests: dsh's /live socket, and pages in headless Chromium
driven through its DevTools protocol.

  live.py messages PORT        prints "connected", then each /live message on a line of its own
  live.py pages PORT N         opens N pages of http://127.0.0.1:PORT/ in one headless Chromium,
                               sets window.dshMarker on each, prints "ready"; then for each line
                               "wait VERSION" on standard input, waits until every page shows
                               that state with nothing left to apply, and prints one JSON line:
                               each page's text, marker, state and fallbacks; "text WORDS" waits
                               instead until every page's text holds WORDS

Needs the websocket-client package (Scripts/test.sh installs it) and Chromium.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import websocket

CEILING = 300  # seconds: only a hang is this slow


def messages(port):
    socket = websocket.create_connection(f"ws://127.0.0.1:{port}/live?after=0", timeout=CEILING)
    print("connected", flush=True)
    while True:
        message = socket.recv()
        if not message:
            return
        print(message.replace("\n", " "), flush=True)


class Browser:
    def __init__(self):
        chromium = os.environ.get("CHROMIUM") or next(
            p for p in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"] if os.path.exists(p))
        self.profile = tempfile.mkdtemp(prefix="dsh-live-")
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile, "--window-size=393,852", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + CEILING
        url = None
        while time.time() < deadline:
            line = self.process.stderr.readline()
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                url = found.group(1)
                break
        if not url:
            raise SystemExit("chromium did not start its DevTools server")
        self.socket = websocket.create_connection(url, timeout=CEILING)
        self.next_id = 0

    def call(self, method, params=None, session=None):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        self.socket.send(json.dumps(request))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url):
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        return self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def evaluate(self, session, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           session)
        return result["result"].get("value")

    def close(self):
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def wait_until(check):
    deadline = time.time() + CEILING
    while time.time() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit("timed out: the pages never got there")


STATE = """JSON.stringify(window.dshPreview ? {
  version: dshPreview.version, idle: dshPreview.idle, fallbacks: dshPreview.fallbacks,
  marker: window.dshMarker === undefined ? null : window.dshMarker,
  text: document.querySelector("main").innerText } : null)"""


def pages(port, count):
    browser = Browser()
    try:
        sessions = [browser.open(f"http://127.0.0.1:{port}/") for _ in range(count)]
        for index, session in enumerate(sessions):
            # Loaded, its script running, its socket open: then marked, to see it is never reloaded.
            wait_until(lambda: browser.evaluate(session, "document.readyState === 'complete' && !!window.dshPreview"))
            browser.evaluate(session, f"window.dshMarker = {index + 1}")
        print("ready", flush=True)
        for line in sys.stdin:
            words = line.split(maxsplit=1)
            if words[:1] == ["wait"]:
                version = int(words[1])

                def arrived(f):
                    return f["version"] >= version
            elif words[:1] == ["text"]:
                wanted = words[1].rstrip("\n")

                def arrived(f):
                    return wanted in f["text"]
            else:
                continue

            def states():
                found = [json.loads(browser.evaluate(s, STATE) or "null") for s in sessions]
                done = all(f and f["idle"] and arrived(f) for f in found)
                return found if done else None

            print(json.dumps(wait_until(states)), flush=True)
    finally:
        browser.close()


if __name__ == "__main__":
    if sys.argv[1] == "messages":
        messages(int(sys.argv[2]))
    elif sys.argv[1] == "pages":
        pages(int(sys.argv[2]), int(sys.argv[3]))
