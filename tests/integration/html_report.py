#!/usr/bin/env python3
"""html_report.py - drive Debian's chromium headless through chromedriver's
WebDriver HTTP API (python3's standard library only) over pages made by
`ares report DIR --html FILE`, and check what a reader sees.

usage: html_report.py CHROMEDRIVER CHROMIUM SHOT_DIR CHECK...
  CHECK is KIND:EXPECTED_VERDICT:FILE, KIND one of drill, trial, probe,
  nojs (a drill page with JavaScript disabled), leaky (a page edited to fetch
  something: the checks must catch it).

Every page: loads with no SEVERE console entry, shows the expected verdict,
fetches nothing but itself (performance entries, the DevTools network log)
and is saved as a screenshot in SHOT_DIR (never in the source tree).
Drill pages: stepping with the buttons and the keys changes the shown beat
and Poyo's pose, and the shown frame is the reducer's pose.  Trial pages:
the rate bars, the histogram and one linked row per run (each link an
existing run dir).  Exit 0 when every check holds, 1 otherwise.
"""
import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ELEM = "element-6066-11e4-a52e-4f735466cecf"
failures = []
expecting = [False]   # in a leaky check: failures are what must happen


def fail(msg):
    failures.append(msg)
    print(("caught, as it must be: " if expecting[0] else "FAIL: ") + msg,
          file=sys.stderr)


class Driver:
    def __init__(self, chromedriver, chromium, profile, js=True):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.log = open(os.path.join(profile, "chromedriver.log"), "w")
        self.proc = subprocess.Popen(
            [chromedriver, "--port=%d" % self.port],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.base = "http://127.0.0.1:%d" % self.port
        for _ in range(100):
            try:
                if self.call("GET", "/status")["value"].get("ready"):
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        else:
            raise RuntimeError("chromedriver did not come up")
        opts = {
            "binary": chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                "--no-first-run", "--disable-default-apps",
                "--user-data-dir=" + os.path.join(profile, "user-data"),
                "--window-size=1200,1400",
            ],
        }
        if not js:
            opts["prefs"] = {
                "profile.managed_default_content_settings.javascript": 2}
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": opts,
            "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
        }}}
        r = self.call("POST", "/session", caps, timeout=60)
        self.sid = r["value"]["sessionId"]
        # the browser's own start page is not ours: start from about:blank
        # with empty logs
        self.get("about:blank")
        time.sleep(0.3)
        self.logs("performance")
        self.logs("browser")

    def call(self, method, path, body=None, timeout=30):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data,
                                     method=method)
        req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.loads(resp.read().decode())
        except urllib.error.HTTPError as e:
            raise RuntimeError("%s %s: %s" % (method, path,
                               e.read().decode()[:500]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/" + self.sid + path, body)["value"]

    def get(self, url):
        self.s("POST", "/url", {"url": url})

    def js(self, script, *args):
        return self.s("POST", "/execute/sync",
                      {"script": script, "args": list(args)})

    def find(self, css):
        return self.s("POST", "/element",
                      {"using": "css selector", "value": css})[ELEM]

    def click(self, css):
        self.s("POST", "/element/" + self.find(css) + "/click", {})

    def key(self, k):
        self.s("POST", "/actions", {"actions": [{
            "type": "key", "id": "keyboard",
            "actions": [{"type": "keyDown", "value": k},
                        {"type": "keyUp", "value": k}]}]})
        self.s("DELETE", "/actions")

    def logs(self, kind):
        return self.s("POST", "/se/log", {"type": kind})

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def quit(self):
        try:
            self.call("DELETE", "/session/" + self.sid)
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def text(d, css):
    return d.js("var e=document.querySelector(arguments[0]);"
                "return e?e.textContent:null;", css)


def common(d, name, url, verdict, shots):
    """What every page must do: no console error, the verdict shown, no
    fetch but the page itself."""
    for e in d.logs("browser"):
        if e.get("level") == "SEVERE":
            fail("%s: console: %s" % (name, e.get("message")))
    shown = text(d, "#verdict")
    want = verdict.upper().replace("-", " ")
    if shown != want:
        fail("%s: verdict shown %r, want %r" % (name, shown, want))
    vis = d.js("var e=document.getElementById('verdict');"
               "var r=e.getBoundingClientRect();"
               "return r.width>0&&r.height>0&&r.top<window.innerHeight;")
    if not vis:
        fail("%s: the verdict is not visible on the first screen" % name)
    if not (text(d, "#cause") or "").strip():
        fail("%s: no cause" % name)
    res = d.js("return performance.getEntriesByType('resource')"
               ".map(function(e){return e.name;});")
    if res:
        fail("%s: resource entries: %r" % (name, res))
    nav = d.js("return performance.getEntriesByType('navigation')"
               ".map(function(e){return e.name;});")
    if nav != [url]:
        fail("%s: navigation entries %r, want [%r]" % (name, nav, url))
    for e in d.logs("performance"):
        try:
            m = json.loads(e["message"])["message"]
        except (KeyError, ValueError):
            continue
        if m.get("method") == "Network.requestWillBeSent":
            u = m["params"]["request"]["url"]
            doc = m["params"].get("documentURL", "")
            # chromium's own pages (chrome://) load their own resources
            if u != url and not doc.startswith("chrome://"):
                fail("%s: a request for %s" % (name, u))
    csp = d.js("var m=document.querySelector('meta[http-equiv="
               "\"Content-Security-Policy\"]');return m?m.content:null;")
    if not csp or "default-src 'none'" not in csp:
        fail("%s: no Content-Security-Policy default-src 'none'" % name)
    d.screenshot(os.path.join(shots, name + ".png"))


def state(d):
    return d.js(
        "var g=document.querySelectorAll('#poyo [data-pose]'),shown=[];"
        "for(var i=0;i<g.length;i++)if(getComputedStyle(g[i]).display!=="
        "'none')shown.push(g[i].getAttribute('data-pose'));"
        "var c=document.querySelector('#beats li.cur');"
        "return {pos:document.getElementById('b-pos').textContent,"
        "pose:document.getElementById('b-pose').textContent,"
        "kind:document.getElementById('b-kind').textContent,"
        "shown:shown,frames:g.length,"
        "tr:document.getElementById('poyo').getAttribute('transform'),"
        "cur:c?+c.getAttribute('data-i'):-1,"
        "n:document.querySelectorAll('#beats li').length};")


def check_pose(name, st, when):
    want = st["pose"] if st["pose"] in ("idle0", "walking0", "sniffing",
                                        "grabbing", "zapped", "frozen",
                                        "caught", "escaped") else "idle0"
    if st["frames"] == 0:
        fail("%s: no sprite frame drawn" % name)
    elif st["shown"] != [want]:
        fail("%s %s: shown frame(s) %r, pose %r" % (name, when, st["shown"],
                                                    st["pose"]))


def drill(d, name, url, verdict, shots):
    d.get(url)
    common(d, name, url, verdict, shots)
    if d.js("return document.documentElement.getAttribute('data-ready');") \
            != "1":
        fail("%s: the page's script did not run" % name)
        return
    if not d.js("return getComputedStyle(document.getElementById("
                "'controls')).display!=='none';"):
        fail("%s: the controls stay hidden with JavaScript" % name)
    end = state(d)
    n = end["n"]
    if n < 3 or end["pos"] != "beat %d / %d" % (n, n) or end["cur"] != n - 1:
        fail("%s: starts at %r (cur %d) of %d beats, want the last" %
             (name, end["pos"], end["cur"], n))
    check_pose(name, end, "at the end")
    if verdict == "breached":
        if end["pose"] != "escaped" or "translate(62" not in end["tr"]:
            fail("%s: at the end Poyo is %r at %r, want escaped outside" %
                 (name, end["pose"], end["tr"]))
    elif verdict == "contained":
        if end["pose"] not in ("caught", "frozen"):
            fail("%s: at the end Poyo is %r, want caught" % (name,
                                                             end["pose"]))
    d.click("#btn-start")
    st = state(d)
    if st["pos"] != "beat 1 / %d" % n or st["cur"] != 0:
        fail("%s: after start: %r" % (name, st["pos"]))
    if st["pose"] == end["pose"]:
        fail("%s: the pose at beat 1 is the end's (%r)" % (name, st["pose"]))
    check_pose(name, st, "at beat 1")
    d.click("#btn-next")
    st2 = state(d)
    if st2["pos"] != "beat 2 / %d" % n:
        fail("%s: next button: %r" % (name, st2["pos"]))
    d.key(".")
    st3 = state(d)
    if st3["pos"] != "beat 3 / %d" % n:
        fail("%s: key '.': %r" % (name, st3["pos"]))
    d.key("\ue012")   # left arrow
    if state(d)["pos"] != "beat 2 / %d" % n:
        fail("%s: left arrow: %r" % (name, state(d)["pos"]))
    # markers: ']' steps to the next marker beat, and the pose follows
    markers = ("bait", "lever-fired", "lever-verified", "lever-failed",
               "breach", "leak", "orphan", "verdict")
    poses = set()
    last = 1
    for _ in range(40):
        d.key("]")
        st = state(d)
        i = st["cur"]
        if i <= last - 1:
            break
        if st["kind"] not in markers:
            fail("%s: ']' stopped on a %r beat" % (name, st["kind"]))
        check_pose(name, st, "at marker %d" % (i + 1))
        poses.add(st["pose"])
        last = i + 1
        if i == n - 1:
            break
    if len(poses) < 2:
        fail("%s: stepping markers showed poses %r only" % (name, poses))
    d.key("g")
    if state(d)["cur"] != 0:
        fail("%s: key g: not at the start" % name)
    d.key("G")
    st = state(d)
    if st["cur"] != n - 1 or st["pose"] != end["pose"]:
        fail("%s: key G: %r %r" % (name, st["pos"], st["pose"]))
    # click a beat in the list
    d.click("#beat-1")
    if state(d)["cur"] != 1:
        fail("%s: clicking beat 2 did not show it" % name)
    # play runs on its own
    d.click("#btn-start")
    d.click("#btn-play")
    time.sleep(1.5)
    st = state(d)
    d.click("#btn-play")
    if st["cur"] < 1:
        fail("%s: play did not advance (%r)" % (name, st["pos"]))
    d.click("#btn-end")
    for e in d.logs("browser"):
        if e.get("level") == "SEVERE":
            fail("%s: console after stepping: %s" % (name, e.get("message")))
    d.screenshot(os.path.join(shots, name + "-end.png"))


def nojs(d, name, url, verdict, shots):
    d.get(url)
    common(d, name, url, verdict, shots)
    r = d.js("return {ready:document.documentElement.getAttribute("
             "'data-ready'),ctl:getComputedStyle(document.getElementById("
             "'controls')).display==='none'&&getComputedStyle(document."
             "getElementById('keys')).display==='none',"
             "n:document.querySelectorAll('#beats li').length,"
             "lev:document.querySelectorAll('#levers tbody tr').length,"
             "pos:document.getElementById('b-pos').textContent};")
    if r["ready"] is not None:
        fail("%s: the page's script ran with JavaScript disabled" % name)
    if not r["ctl"]:
        fail("%s: stepping controls shown without JavaScript" % name)
    if r["n"] < 3 or r["pos"] != "beat %d / %d" % (r["n"], r["n"]):
        fail("%s: without JavaScript: %d beats listed, %r shown" %
             (name, r["n"], r["pos"]))
    if r["lev"] < 1:
        fail("%s: no lever rows without JavaScript" % name)


def trial(d, name, url, verdict, shots):
    d.get(url)
    common(d, name, url, verdict, shots)
    r = d.js(
        "var a=document.querySelectorAll('#runs tbody tr a'),h=[];"
        "for(var i=0;i<a.length;i++)h.push(a[i].getAttribute('href'));"
        "return {bars:document.querySelectorAll('#rates .bar').length,"
        "bands:document.querySelectorAll('#rates .bar rect.band').length,"
        "hist:document.querySelectorAll('#ttk-hist rect.hbar').length,"
        "rows:document.querySelectorAll('#runs tbody tr').length,"
        "ttk:[].filter.call(document.querySelectorAll('#runs tbody tr'),"
        "function(t){return t.cells[6].textContent!=='-';}).length,"
        "links:h};")
    if r["bars"] != 4 or r["bands"] < 1:
        fail("%s: %d rate bars, %d interval bands" % (name, r["bars"],
                                                      r["bands"]))
    if r["ttk"] > 0 and r["hist"] < 1:
        fail("%s: %d run(s) with a time to kill, no histogram bar" %
             (name, r["ttk"]))
    page_dir = os.path.dirname(urllib.parse.urlparse(url).path)
    # every run with a run id links its dir (one that could not even
    # start has none)
    if r["rows"] < 1 or not r["links"] or len(r["links"]) > r["rows"]:
        fail("%s: %d run rows, %d links" % (name, r["rows"],
                                            len(r["links"])))
    for h in r["links"]:
        p = os.path.normpath(os.path.join(page_dir,
                                          urllib.parse.unquote(h)))
        if h.startswith("/") or not os.path.isdir(p) or \
                not os.path.isfile(os.path.join(p, "evidence.jsonl")):
            fail("%s: link %r is not a run dir relative to the page" %
                 (name, h))


def probe(d, name, url, verdict, shots):
    d.get(url)
    common(d, name, url, verdict, shots)
    r = d.js(
        "var t=document.querySelectorAll('#rows tbody tr'),res=[];"
        "for(var i=0;i<t.length;i++)res.push(t[i].cells[1].textContent);"
        "return res;")
    if not r:
        fail("%s: no probe rows" % name)
    for x in r:
        if x.split(" ")[0] not in ("pass", "fail", "warn", "error"):
            fail("%s: a row's result reads %r" % (name, x))


def leaky(d, name, url, verdict, shots):
    """A page changed to fetch something: the checks above must catch it
    (so they can fail)."""
    before = len(failures)
    d.get(url)
    time.sleep(0.3)
    expecting[0] = True
    try:
        common(d, name, url, verdict, shots)
    finally:
        expecting[0] = False
    got = failures[before:]
    del failures[before:]
    if not any(": console: " in f or ": a request for " in f or
               ": resource entries: " in f for f in got):
        fail("%s: a page that fetches passed the checks" % name)


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    chromedriver, chromium, shots = sys.argv[1:4]
    checks = [a.split(":", 2) for a in sys.argv[4:]]
    profile = tempfile.mkdtemp(prefix="ares-chromium-")
    run = {"drill": drill, "trial": trial, "nojs": nojs, "probe": probe,
           "leaky": leaky}
    drivers = {}
    try:
        for kind, verdict, path in checks:
            js = kind != "nojs"
            if js not in drivers:
                sub = os.path.join(profile, "js" if js else "nojs")
                os.mkdir(sub)
                drivers[js] = Driver(chromedriver, chromium, sub, js)
            url = "file://" + urllib.parse.quote(os.path.abspath(path))
            name = "%s-%s" % (kind, os.path.splitext(
                os.path.basename(path))[0])
            before = len(failures)
            run[kind](drivers[js], name, url, verdict, shots)
            print("%s %s (%s)" % ("ok  " if len(failures) == before
                                  else "FAIL", name, verdict))
    finally:
        for d in drivers.values():
            d.quit()
        subprocess.run(["rm", "-rf", profile])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
