#!/usr/bin/env python3
"""Types a statement at dsh's prompt under a pseudo-terminal, presses ^C a second after, and
prints how long dsh took to say it was interrupted (seconds), for the benchmark.

usage: interrupt.py DSH STATEMENT
"""
import os, pty, select, sys, time

dsh, statement = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv("/usr/bin/setsid", ["setsid", "--ctty", "--wait", dsh])

def read_until(text, timeout):
    seen, end = b"", time.time() + timeout
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
            if text in seen:
                return True
    return False

read_until(b"dsh>", 10)
os.write(fd, statement.encode() + b"\r")
time.sleep(1)
pressed = time.time()
os.write(fd, b"\x03")
ok = read_until(b"interrupted", 10)
print(f"{time.time() - pressed:.3f}" if ok else "never", flush=True)
# ^D once the prompt is back; a shell that does not leave is killed.
read_until(b"dsh>", 5)
os.write(fd, b"\x04")
for _ in range(50):
    if os.waitpid(pid, os.WNOHANG)[0]:
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
