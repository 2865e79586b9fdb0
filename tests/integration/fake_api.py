#!/usr/bin/env python3
"""fake_api.py - the GitHub and Slack Web APIs as far as `ares fix` uses
them, a server of the tests' own on 127.0.0.1 (never anything else).

    fake_api.py PORTFILE LOG

POST /repos/OWNER/REPO/pulls   201 {"number": 1, "html_url": ...}
POST /slack/chat.postMessage   200 {"ok": true, "channel": C, "ts": ...};
                               a channel starting with "CFAIL" gets Slack's
                               refusal: 200 {"ok": false, "error":
                               "channel_not_found"}
anything else                  404
The chosen port is written to PORTFILE; every request is a JSON line in
LOG: {"method", "path", "headers" (all of them), "body" (parsed JSON, or
the raw text when it is not JSON)}.
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORTFILE, LOG = sys.argv[1], sys.argv[2]
lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(min(n, 4 << 20)) if n > 0 else b""
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with lock, open(LOG, "a") as f:
            f.write(json.dumps({"method": "POST", "path": self.path,
                                "headers": dict(self.headers.items()),
                                "body": body}) + "\n")
        parts = self.path.split("/")
        if len(parts) == 5 and parts[1] == "repos" and parts[4] == "pulls":
            self.send(201, {"number": 1, "html_url":
                            "http://127.0.0.1/%s/%s/pull/1" % (parts[2], parts[3])})
        elif self.path == "/slack/chat.postMessage":
            ch = body.get("channel", "") if isinstance(body, dict) else ""
            if ch.startswith("CFAIL"):
                self.send(200, {"ok": False, "error": "channel_not_found"})
            else:
                self.send(200, {"ok": True, "channel": ch, "ts": "1.000001"})
        else:
            self.send(404, {"message": "Not Found"})


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
