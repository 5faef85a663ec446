#!/usr/bin/env python3
"""A small JSON server for dsh's HTTP tests and benchmark, on 127.0.0.1 only.

Prints "PORT <n>" when it listens (port 0 picks a free one), then serves:
  /items?page=P&size=S&total=T    records, pages numbered from 1
  /offset?offset=O&size=S&total=T records, offsets from 0
  /nested                         {"data": {"items": [...]}}
  /slow?seconds=S                 an empty list, after S seconds
  /then-slow?key=K&total=T        T records at the first request for K; later ones wait 600 s
  /error                          HTTP 500
  /bad                            invalid JSON
  /object                         {"a": 1} (not a list)
  /endless                        a list that never ends (no Content-Length)
  /drip?seconds=S                 one byte every S seconds, forever
  /huge                           announces 10 GB in Content-Length, sends a little
  /redirect?to=URL                302 to URL (another host: http://localhost:PORT/…)
  /data/NAME                      the file Scripts/data/NAME, as a web server serves a file
It stops by itself after --idle seconds without a request, when the process that started it
ends, and at SIGTERM or SIGINT whatever signal mask it inherited (the tests also stop it).
"""
import json, os, signal, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse, parse_qs

last_request = time.time()
answered_keys = set()

def records(start, count, total):
    end = min(total, start + count)
    return [{"id": k, "name": f"item {k}", "group": f"g{k % 3}"} for k in range(start, end)]

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body):
        data = body.encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout or ^C test): nothing to answer

    def do_GET(self):
        global last_request
        last_request = time.time()
        url = urlparse(self.path)
        raw = parse_qs(url.query)
        # As a real API does: a parameter that is not a number is a bad request (a client that
        # sent a URL template such as page={page} as written is caught here).
        bad = [k for k, v in raw.items() if k in ("page", "offset", "size", "total", "seconds")
               and not v[0].lstrip("-").isdigit()]
        if bad:
            self.send(400, json.dumps({"error": f"{bad[0]} must be a number"}))
            return
        q = {k: int(v[0]) for k, v in raw.items() if v[0].lstrip("-").isdigit()}
        size, total = q.get("size", 100), q.get("total", 250)
        if url.path == "/items":
            self.send(200, json.dumps(records((q.get("page", 1) - 1) * size, size, total)))
        elif url.path == "/offset":
            self.send(200, json.dumps(records(q.get("offset", 0), size, total)))
        elif url.path == "/nested":
            self.send(200, json.dumps({"data": {"items": records(0, 3, 3)}}))
        elif url.path == "/slow":
            time.sleep(q.get("seconds", 1))
            self.send(200, "[]")
        elif url.path == "/then-slow":
            key = raw.get("key", [""])[0]
            if key in answered_keys:
                time.sleep(600)
            answered_keys.add(key)
            self.send(200, json.dumps(records(0, total, total)))
        elif url.path == "/error":
            self.send(500, '{"error": "boom"}')
        elif url.path == "/plain-error":
            self.send(503, "down for maintenance until 10:00\nretry later\n")
        elif url.path == "/html-error":
            self.send(404, "<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>")
        elif url.path == "/bad":
            self.send(200, '[{"id": 1,, }]')
        elif url.path == "/object":
            self.send(200, '{"a": 1}')
        elif url.path in ("/endless", "/drip"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                self.wfile.write(b"[")
                chunk = b'{"id": 1, "name": "again and again"}, ' * 1000
                while True:
                    if url.path == "/drip":
                        time.sleep(q.get("seconds", 1))
                        self.wfile.write(b" ")
                    else:
                        self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif url.path == "/huge":
            self.send_response(200)
            self.send_header("Content-Length", str(10 << 30))
            self.end_headers()
            try:
                self.wfile.write(b"[1, 2")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif url.path.startswith("/data/"):
            folder = os.path.join(os.path.dirname(__file__), "..", "..", "..", "Scripts", "data")
            name = url.path[len("/data/"):]
            path = os.path.join(folder, name)
            if "/" in name or not os.path.isfile(path):
                self.send(404, '{"error": "not found"}')
                return
            with open(path, "rb") as f:
                data = f.read()
            self.send_response(200)
            self.send_header("Content-Type", "text/csv" if name.endswith(".csv") else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", raw.get("to", ["/items"])[0])
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send(404, '{"error": "not found"}')

def main():
    # A test runner may start it with SIGTERM blocked or ignored (the mask and ignored signals
    # are inherited): it would then outlive the tests that started it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    parent = os.getppid()
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    idle = float(sys.argv[2]) if len(sys.argv) > 2 else 120
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    # Until idle, or until the process that started it has gone (it is then another's child).
    while time.time() - last_request < idle and os.getppid() == parent:
        time.sleep(0.5)
    # A request still being answered (an endless or a slow one) does not keep it alive.
    os._exit(0)

if __name__ == "__main__":
    main()
