#!/usr/bin/env python3
"""What a served page sees, for ServeTests: dsh's /live socket, and pages in headless Chromium
driven through its DevTools protocol.

  live.py messages PORT TOKEN  prints "connected", then each /live message on a line of its own
  live.py pages PORT TOKEN N   opens N pages of http://127.0.0.1:PORT/?token=TOKEN in one headless Chromium,
                               sets window.dshMarker on each, prints "ready"; then for each line
                               "wait VERSION" on standard input, waits until every page shows
                               that state with nothing left to apply, and prints one JSON line:
                               each page's text, marker, state and fallbacks; "text WORDS" waits
                               instead until every page's text holds WORDS, "stopped" until every
                               page says serving stopped, "unanswered" until every page says
                               dsh does not answer; "scroll F" scrolls every page to F of
                               its height (0: the top, 1: the end) and prints nothing

  live.py flood PORT TOKEN      opens /live and sends one frame that claims 2.1 GB, as fast as dsh
                               takes it, until it takes no more for 3 s or 256 MB went: prints
                               "sent N" (N bytes), then holds the socket until standard input ends
  live.py idle PORT N          opens N connections that send nothing, prints "open N", and holds
                               them until standard input ends

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


def messages(port, token):
    socket = websocket.create_connection(f"ws://127.0.0.1:{port}/live?token={token}&after=0", timeout=CEILING)
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
  stopped: dshPreview.stopped, catchups: dshPreview.catchups, rows: dshPreview.rows,
  drawn: dshPreview.drawn, height: document.documentElement.scrollHeight,
  top: (() => { for (const row of document.querySelectorAll("main [data-row]")) {
    if (row.getBoundingClientRect().bottom > 22) return row.innerText; } return null; })(),
  banner: (document.getElementById("dsh-stopped") || {}).textContent || null,
  unanswered: (document.getElementById("dsh-unanswered") || {}).textContent || null,
  marker: window.dshMarker === undefined ? null : window.dshMarker,
  text: document.querySelector("main").innerText } : null)"""


def pages(port, token, count):
    browser = Browser()
    try:
        sessions = [browser.open(f"http://127.0.0.1:{port}/?token={token}") for _ in range(count)]
        for index, session in enumerate(sessions):
            # Loaded, its script running, its socket open: then marked, to see it is never reloaded.
            wait_until(lambda: browser.evaluate(session, "document.readyState === 'complete' && !!window.dshPreview"))
            browser.evaluate(session, f"window.dshMarker = {index + 1}")
        print("ready", flush=True)
        for line in sys.stdin:
            words = line.split(maxsplit=1)
            if words[:1] == ["scroll"]:
                fraction = float(words[1])
                for session in sessions:
                    browser.evaluate(session, "window.scrollTo(0, %f * (document.documentElement.scrollHeight"
                                              " - window.innerHeight))" % fraction)
                continue
            if words[:1] == ["wait"]:
                version = int(words[1])

                def arrived(f):
                    return f["version"] >= version
            elif words[:1] == ["stopped"]:

                def arrived(f):
                    return f["stopped"]
            elif words[:1] == ["unanswered"]:

                def arrived(f):
                    return f["unanswered"]
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


def handshake(port, path):
    import base64
    import socket as sockets
    connection = sockets.create_connection(("127.0.0.1", port), timeout=CEILING)
    key = base64.b64encode(os.urandom(16)).decode()
    connection.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += connection.recv(4096)
    if not reply.startswith(b"HTTP/1.1 101"):
        raise SystemExit("no upgrade: " + reply.decode(errors="replace"))
    return connection


def flood(port, token):
    import struct
    connection = handshake(port, f"/live?token={token}&after=0")
    # A text frame, masked as a client's are, claiming 2.1 GB.
    connection.sendall(bytes([0x81, 0x80 | 127]) + struct.pack(">Q", 2_100_000_000) + b"\x01\x02\x03\x04")
    connection.settimeout(3)
    block = b"x" * (1 << 20)
    sent = 0
    try:
        while sent < 256 << 20:
            sent += connection.send(block)
    except OSError:
        pass  # it takes no more: what was sent waits in the kernel's buffers
    print(f"sent {sent}", flush=True)
    sys.stdin.read()


def idle(port, count):
    import socket as sockets
    held = [sockets.create_connection(("127.0.0.1", port), timeout=CEILING) for _ in range(count)]
    print(f"open {len(held)}", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    if sys.argv[1] == "messages":
        messages(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "flood":
        flood(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "idle":
        idle(int(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1] == "pages":
        pages(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
