#!/usr/bin/env python3
"""fake_openai.py - an OpenAI-compatible chat completions server of the
tests' own, on 127.0.0.1 (never anything else).

    fake_openai.py SCRIPT PORTFILE LOG

SCRIPT is a JSON list of answers, one per request to
POST /v1/chat/completions, in order; once it is used up the last entry
repeats.  An entry:
  {"status": 200, "headers": {...}, "body": {...}}   a JSON answer
  {"raw": "text"}                                  200 with that text
  {"sleep": S, ...}                                wait S s first
  {"oversize": N}                                  200 with N bytes of JSON
In a body, the string "{token}" becomes the first match of "token_regex"
(an entry key) in the tool messages of the request: the model uses what
the agent read; "{key}" becomes the key of the request's Authorization
header (a server that echoes it), and in a raw text "{key_u}" the key with
every character \\u-escaped.  The chosen port is written to PORTFILE; every
request is a JSON line in LOG: {"n", "auth", "model", "stream",
"messages", "tool_results"}.
"""
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
PORTFILE, LOG = sys.argv[2], sys.argv[3]
lock = threading.Lock()
count = [0]


def fill(obj, token, key=""):
    """obj with every "{token}" and "{key}" in its strings replaced."""
    if isinstance(obj, str):
        return obj.replace("{token}", token).replace("{key}", key)
    if isinstance(obj, list):
        return [fill(x, token, key) for x in obj]
    if isinstance(obj, dict):
        return {k: fill(v, token, key) for k, v in obj.items()}
    return obj


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send(self, status, body, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) if n > 0 else b""
        try:
            req = json.loads(raw)
        except ValueError:
            req = {}
        msgs = req.get("messages", []) if isinstance(req, dict) else []
        tools = [m.get("content") or "" for m in msgs
                 if isinstance(m, dict) and m.get("role") == "tool"]
        with lock:
            i = count[0]
            count[0] += 1
            with open(LOG, "a") as f:
                f.write(json.dumps({"n": i, "path": self.path,
                                    "auth": self.headers.get("Authorization"),
                                    "model": req.get("model") if isinstance(req, dict) else None,
                                    "stream": req.get("stream") if isinstance(req, dict) else None,
                                    "messages": len(msgs),
                                    "tool_results": tools}) + "\n")
        if self.path != "/v1/chat/completions":
            self.send(404, b'{"error":{"message":"not found"}}')
            return
        e = SCRIPT[min(i, len(SCRIPT) - 1)]
        if "sleep" in e:
            time.sleep(e["sleep"])
        if "oversize" in e:
            pad = b'{"choices":[{"message":{"role":"assistant","content":"'
            body = pad + b"x" * e["oversize"] + b'"}}]}'
            self.send(200, body)
            return
        auth = self.headers.get("Authorization") or ""
        key = auth[7:] if auth.startswith("Bearer ") else ""
        if "raw" in e:
            raw = e["raw"].replace("{key_u}",
                                   "".join("\\u%04x" % ord(c) for c in key))
            self.send(e.get("status", 200), raw.replace("{key}", key).encode())
            return
        token = ""
        rx = e.get("token_regex")
        if rx:
            for t in tools:
                m = re.search(rx, t)
                if m:
                    token = m.group(0)
                    break
        body = json.dumps(fill(e.get("body", {}), token, key)).encode()
        self.send(e.get("status", 200), body, e.get("headers"))


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass   # a client that hung up (the relay's cut of an oversize answer)


srv = Server(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(PORTFILE + ".tmp", PORTFILE)
srv.serve_forever()
