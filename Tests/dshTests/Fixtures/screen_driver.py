"""Runs dsh under a pseudo-terminal and reads its screen through a terminal emulator (pyte).

BrowseTests drives it with one JSON request a line on standard input and reads one JSON answer
a line on standard output:

  {"start": [ARGS...], "rows": R, "columns": C, "env": {...}}   starts dsh
  {"type": "TEXT"}                                             types the text (keys as bytes)
  {"wait": "TEXT", "seconds": S, "line": N}                    reads until TEXT is on the screen
                                                               (on line N when given; -1 is the last)
  {"resize": [R, C]}                                           resizes the window (SIGWINCH)
  {"signal": "TERM"}                                           signals dsh
  {"exit": S}                                                  waits for dsh to end, says its status
  {"screen": true}                                             the screen now
  {"modes": true}                                              the terminal's echo and line modes

Every answer carries the screen's lines ("screen"), so a failed check shows what a user saw.
pyte has no alternate screen: the driver keeps the main screen aside while one is up (private
mode 1049), as a terminal does, so the screen after browse is the one from before it.
"""

import copy
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

import pyte

child = None
fd = None
screen = None
stream = None
kept = None
modes = {}


def feed(data):
    global kept
    while data:
        at = data.find(b"\x1b[?1049")
        if at < 0:
            stream.feed(data)
            return
        stream.feed(data[:at])
        mode, data = data[at + 7:at + 8], data[at + 8:]
        modes["alternate"] = mode == b"h"
        if mode == b"h":
            kept = (copy.deepcopy(screen.buffer), screen.cursor.x, screen.cursor.y)
            screen.erase_in_display(2)
        elif kept is not None:
            screen.erase_in_display(2)
            buffer, x, y = kept
            for row, line in buffer.items():
                screen.buffer[row] = line
            screen.cursor.x, screen.cursor.y = x, y
            kept = None


def pump(seconds):
    """Reads what dsh wrote for up to `seconds`; False when it has ended."""
    end = time.time() + seconds
    while True:
        left = end - time.time()
        if left <= 0:
            return True
        ready, _, _ = select.select([fd], [], [], min(left, 0.05))
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            feed(data)


def lines():
    return [line.rstrip() for line in screen.display]


def answer(**fields):
    fields["screen"] = lines() if screen else []
    fields["alternate"] = modes.get("alternate", False)
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def on_screen(text, line):
    shown = lines()
    if line is None:
        return any(text in row for row in shown)
    return text in shown[line]


for request_text in sys.stdin:
    request = json.loads(request_text)
    if "start" in request:
        rows, columns = request.get("rows", 24), request.get("columns", 80)
        screen = pyte.Screen(columns, rows)
        stream = pyte.ByteStream(screen)
        child, fd = pty.fork()
        if child == 0:
            os.environ.update(request.get("env", {}))
            os.environ["TERM"] = "xterm"
            os.execv(request["start"][0], request["start"])
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        answer(ok=True)
    elif "type" in request:
        os.write(fd, request["type"].encode())
        pump(0.05)
        answer(ok=True)
    elif "wait" in request:
        deadline = time.time() + request.get("seconds", 60)
        found = on_screen(request["wait"], request.get("line"))
        while not found and time.time() < deadline:
            if not pump(0.1):
                found = on_screen(request["wait"], request.get("line"))
                break
            found = on_screen(request["wait"], request.get("line"))
        answer(ok=found)
    elif "resize" in request:
        rows, columns = request["resize"]
        screen.resize(rows, columns)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        answer(ok=True)
    elif "signal" in request:
        os.kill(child, getattr(signal, "SIG" + request["signal"]))
        answer(ok=True)
    elif "exit" in request:
        deadline = time.time() + request["exit"]
        status = None
        while time.time() < deadline:
            pump(0.1)
            done, code = os.waitpid(child, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(code)
                break
        pump(0.1)
        answer(ok=status is not None, status=status)
    elif "modes" in request:
        # The master side of a pseudo-terminal reads the modes its slave was left in.
        lflag = termios.tcgetattr(fd)[3]
        answer(ok=True, echo=bool(lflag & termios.ECHO), canonical=bool(lflag & termios.ICANON))
    elif "screen" in request:
        pump(0.1)
        answer(ok=True)
