"""Headless Chromium over --remote-debugging-pipe (the DevTools protocol on fds 3/4), with
python3's standard library only. Used by Scripts/dashboard-test and Scripts/bridge-test, and
from the command line for a screenshot of a page that keeps a stream open (the dashboard):

    python3 Scripts/lib/chromium.py screenshot URL OUT.png [--size 1280x720] [--full-page] [--wait JS]
    python3 Scripts/lib/chromium.py open URL      (Scripts/open-page: the page stays open, its
                                                   console on stdout, until SIGINT or SIGTERM)

It waits (up to 30 s) until the page is loaded and, where the page says so, settled
(`<html data-settled="true">`, which the dashboard sets once the open session is all on the
page), or until the JS expression given with --wait is true.

Not `--dump-dom`/`--screenshot --virtual-time-budget`: virtual time stands still while any fetch
is pending, and a page's event stream is a fetch that never ends, so a virtual-time budget never
runs out. Every wait here is bounded in real time instead.
"""
import json, os, select, signal, subprocess, time


class Chromium:
    """One browser with one page; `report(ok, name, detail)` receives the verdicts of `wait`."""

    def __init__(self, tmp, report, size=(1400, 900)):
        argv = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--hide-scrollbars", f"--window-size={size[0]},{size[1]}",
                "--remote-debugging-pipe", f"--user-data-dir={tmp}/chrome", "about:blank"]
        a_r, a_w = os.pipe(); b_r, b_w = os.pipe()
        def child():  # the browser reads commands on fd 3 and writes answers on fd 4
            x, y = os.dup(a_r), os.dup(b_w)
            os.dup2(x, 3); os.dup2(y, 4)
            for fd in {a_r, a_w, b_r, b_w, x, y} - {3, 4}:
                os.close(fd)
        log = open(f"{tmp}/chrome.log", "w")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=False,
                                     start_new_session=True, preexec_fn=child)
        os.close(a_r); os.close(b_w)
        self.w, self.r, self.buf, self.n, self.session, self.report = a_w, b_r, b"", 0, None, report
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True}, browser=True)["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})

    def call(self, method, params=None, timeout=30, browser=False):
        self.n += 1
        msg = {"id": self.n, "method": method, "params": params or {}}
        if self.session and not browser: msg["sessionId"] = self.session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        end = time.time() + timeout
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                m = json.loads(raw)
                if m.get("id") == self.n:
                    if "error" in m: raise RuntimeError(f"{method}: {m['error'].get('message')}")
                    return m["result"]
            left = end - time.time()
            if left <= 0 or not select.select([self.r], [], [], left)[0]: raise TimeoutError(f"{method}: no answer in {timeout} s")
            chunk = os.read(self.r, 1 << 20)
            if not chunk: raise EOFError("chromium exited")
            self.buf += chunk

    def js(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r: raise RuntimeError(r["exceptionDetails"].get("exception", {}).get("description", "script error"))
        return r["result"].get("value")

    def wait(self, name, expr, timeout=30, show="null"):
        """Reports `name` passed once `expr` is true, or failed (with `show`'s value) after `timeout` s."""
        end, value = time.time() + timeout, None
        probe = f"(() => {{ try {{ return [!!({expr}), {show}]; }} catch (e) {{ return [false, String(e)]; }} }})()"
        while time.time() < end:
            ok, value = self.js(probe)
            if ok: self.report(True, name); return True
            time.sleep(0.1)
        self.report(False, name, f"still false after {timeout} s: {expr} (seen: {value})"); return False

    def close(self):
        try: self.call("Browser.close", browser=True, timeout=5)
        except Exception: pass
        try: self.proc.wait(10)
        except subprocess.TimeoutExpired: os.killpg(self.proc.pid, signal.SIGKILL); self.proc.wait()


def _screenshot(argv):
    import argparse, base64, sys, tempfile
    ap = argparse.ArgumentParser(prog="chromium.py screenshot", description="a PNG of URL once it has settled")
    ap.add_argument("url"); ap.add_argument("out")
    ap.add_argument("--size", default="1440x900", help="window WIDTHxHEIGHT (default 1440x900)")
    ap.add_argument("--full-page", action="store_true", help="the whole page, not the window only")
    ap.add_argument("--wait", default="document.readyState === 'complete' && (document.documentElement.dataset.settled ?? 'true') === 'true'",
                    help="JS expression to wait for (default: loaded, and settled where the page says so)")
    a = ap.parse_args(argv)
    w, h = (int(n) for n in a.size.lower().split("x"))
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        c = Chromium(tmp, lambda ok, name, detail="": verdicts.append((ok, detail)), size=(w, h))
        try:
            c.call("Page.navigate", {"url": a.url})
            if not c.wait("settled", a.wait):
                print(f"the page did not settle in 30 s: {verdicts[-1][1]}", file=sys.stderr); return 1
            data = c.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": a.full_page})["data"]
            with open(a.out, "wb") as f: f.write(base64.b64decode(data))
        finally:
            c.close()
    print(a.out)
    return 0


def _open(argv):
    """Keeps URL open in headless Chromium, printing its console, until SIGINT or SIGTERM."""
    import sys, tempfile
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: Scripts/open-page URL", file=sys.stderr); return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
    signal.signal(signal.SIGINT, lambda *_: stop.append(True))
    with tempfile.TemporaryDirectory() as tmp:
        c = Chromium(tmp, lambda ok, name, detail="": None)
        try:
            c.call("Runtime.enable")
            c.call("Page.navigate", {"url": argv[0]})
            print(f"open-page: {argv[0]} is open in headless Chromium (its console follows); Ctrl-C closes it", flush=True)
            while not stop:
                try:
                    ready = select.select([c.r], [], [], 0.5)[0]
                except InterruptedError:
                    continue
                if not ready: continue
                chunk = os.read(c.r, 1 << 20)
                if not chunk:
                    print("open-page: chromium exited", file=sys.stderr); return 1
                c.buf += chunk
                while b"\0" in c.buf:
                    raw, c.buf = c.buf.split(b"\0", 1)
                    m = json.loads(raw)
                    if m.get("method") == "Runtime.consoleAPICalled":
                        p = m["params"]
                        text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
                        print(f"console.{p.get('type', 'log')}: {text}", flush=True)
                    elif m.get("method") == "Runtime.exceptionThrown":
                        d = m["params"]["exceptionDetails"]
                        print(f"page error: {d.get('exception', {}).get('description', d.get('text'))}", flush=True)
        finally:
            c.close()
    print("open-page: closed", flush=True)
    return 0


if __name__ == "__main__":
    import sys
    commands = {"screenshot": _screenshot, "open": _open}
    if sys.argv[1:2] == [] or sys.argv[1] not in commands:
        sys.exit("usage: chromium.py screenshot URL OUT.png [--size WxH] [--full-page] [--wait JS] | chromium.py open URL")
    sys.exit(commands[sys.argv[1]](sys.argv[2:]))
