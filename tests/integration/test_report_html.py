"""report.html of a passing, a failing and an interrupted run (each with the
run's video), loaded from file:// in a real headless Chromium driven over CDP
(python3-websocket): no console errors, no request outside the evidence
folder, every image and the video load, the failing step is open and in view,
clicking a step seeks the video to it; text from the window title and a
shell step's output that looks like HTML stays text. The video checked with
ffprobe (duration, chapters) against the run's own timeline. The fleet page
(watch --html) lists every run, linked to its report.html.

KSR_REPORT_SHOTS=DIR also saves a screenshot of each page there (docs/img/)."""

import json
import os
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
import unittest
import urllib.request
import uuid

import websocket

import ksr

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FFPROBE = shutil.which("ffprobe") or "/usr/bin/ffprobe"
# A window title and a shell output that would run script if they were not escaped.
EVIL_TITLE = 'KSR <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "q"'
EVIL_OUTPUT = "</pre><script>window.__pwned=3</script><a href=javascript:alert(1)>x</a>"

COMMON = textwrap.dedent("""\
    launch: ${KSR_TESTAPP} --title "$KSR_EVIL_TITLE"
    process: ^ksr-testapp$
    window: ^KSR <img
    launch_timeout_s: 30
    settle_s: 1
    video: true
    """)

PASS = "name: report-pass\n" + COMMON + textwrap.dedent("""\
    steps:
      - click: center
      - shell: printf '%s' "$KSR_EVIL_OUTPUT"
      - key: Tab
      - sleep: 0.5
    """)

FAIL = "name: report-fail\natspi: false\n" + COMMON + textwrap.dedent("""\
    steps:
      - click: center
      - shell: printf '%s' "$KSR_EVIL_OUTPUT"
      - sleep: 0.1
        checks:
          - window: ^No Such Window$
            timeout_s: 1
      - sleep: 0.1
    """)

# The app dies of SIGSEGV during the sleep step: the video is finished all the same.
CRASH = ("name: report-crash\natspi: false\n"
         + COMMON.replace('--title "$KSR_EVIL_TITLE"', '--title "$KSR_EVIL_TITLE" --crash-after 3000')
         + textwrap.dedent("""\
    steps:
      - click: center
      - sleep: 20
    """))

INTERRUPTED = "name: report-interrupted\natspi: false\n" + COMMON + textwrap.dedent("""\
    steps:
      - click: center
      - sleep: 60
    """)


class Cdp:
    """One page of a headless Chromium, over its DevTools WebSocket."""

    def __init__(self, port):
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise AssertionError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            self.events.append(msg)
            if msg.get("method") == method:
                return msg
        raise AssertionError("no %s within %ss" % (method, timeout))

    def eval(self, expr, timeout=30):
        r = self.call("Runtime.evaluate", expression=expr, awaitPromise=True,
                      returnByValue=True, timeout=timeout * 1000)
        if "exceptionDetails" in r:
            raise AssertionError("%s: %s" % (expr[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def close(self):
        self.ws.close()


def ffprobe(path):
    res = subprocess.run([FFPROBE, "-v", "error", "-show_format", "-show_streams",
                          "-show_chapters", "-of", "json", path],
                         capture_output=True, timeout=60)
    if res.returncode != 0:
        raise AssertionError("ffprobe %s: %s" % (path, res.stderr.decode()[-2000:]))
    return json.loads(res.stdout)


class ReportHtmlTest(unittest.TestCase):
    """The three runs are made once; each test looks at them from one side."""

    runs = {}

    @classmethod
    def setUpClass(cls):
        for tool in (CHROMIUM, FFPROBE):
            if not os.access(tool, os.X_OK):
                raise AssertionError("%s is not installed (scripts/setup.sh deps)" % tool)
        ksr.require_binaries(unittest.TestCase())
        cls.tmp = tempfile.mkdtemp(prefix="ksr-it-report-html-")
        cls.tag = uuid.uuid4().hex
        env = ksr.clean_env(cls.tag, KSR_TESTAPP=ksr.TESTAPP, KSR_EVIL_TITLE=EVIL_TITLE,
                            KSR_EVIL_OUTPUT=EVIL_OUTPUT)
        try:
            for name, text in (("pass", PASS), ("fail", FAIL), ("crash", CRASH)):
                path = ksr.write_scenario(cls.tmp, text, name + ".yaml")
                out = os.path.join(cls.tmp, "runs", name)
                rc, so, se, _ = ksr.run_runtime(["run", "--xvfb", path], env=env, out=out,
                                                timeout=180)
                cls.runs[name] = {"out": out, "rc": rc, "stderr": se, "path": path}
            cls.runs["interrupted"] = cls.interrupted_run(env)
        except BaseException:
            ksr.kill_tagged(cls.tag)
            raise

    @classmethod
    def interrupted_run(cls, env):
        path = ksr.write_scenario(cls.tmp, INTERRUPTED, "interrupted.yaml")
        out = os.path.join(cls.tmp, "runs", "interrupted")
        rt = ksr.start_runtime(["run", "--xvfb", path], env=env, out=out, logdir=cls.tmp)
        try:
            ksr.wait_for_trace_event(
                out, lambda e: e.get("event") == "step.start" and e.get("index") == 2,
                timeout=120, proc=rt)
            time.sleep(1)  # inside the sleep step's wait
            rt.signal(signal.SIGTERM)
            rc = rt.wait(timeout=60)
        finally:
            rt.kill()
        return {"out": out, "rc": rc, "stderr": rt.stderr, "path": path}

    @classmethod
    def tearDownClass(cls):
        ksr.kill_tagged(cls.tag)
        if os.environ.get("KSR_IT_KEEP") == "1":
            print("kept", cls.tmp)
        else:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- helpers -------------------------------------------------------------

    def report(self, kind):
        run = self.runs[kind]
        want = {"pass": ("pass", "completed"), "fail": ("app-failed", "check-failed"),
                "crash": ("app-failed", "crashed"),
                "interrupted": ("test-error", "interrupted")}[kind]
        for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:"):
            self.assertNotIn(marker, run["stderr"], run["stderr"][-3000:])
        try:
            return ksr.assert_evidence(run["out"], *want)
        except AssertionError as e:
            self.fail("%s\n%s" % (e, run["stderr"][-3000:]))

    def chromium(self):
        profile = tempfile.mkdtemp(prefix="profile-", dir=self.tmp)
        p = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                              "--no-first-run", "--no-default-browser-check",
                              "--disable-background-networking", "--disable-component-update",
                              "--disable-sync", "--mute-audio", "--window-size=1280,900",
                              "--remote-debugging-port=0", "--user-data-dir=" + profile,
                              "about:blank"],
                             env=ksr.clean_env(self.tag), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self.addCleanup(lambda: (ksr.kill_group(p), p.wait(timeout=10)))
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    port = f.readline().strip()
                if port:
                    cdp = Cdp(int(port))
                    self.addCleanup(cdp.close)
                    return cdp
            self.assertIsNone(p.poll(), "chromium exited early")
            time.sleep(0.1)
        self.fail("chromium wrote no DevToolsActivePort")

    def load(self, cdp, page):
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.call(domain + ".enable")
        cdp.call("Page.navigate", url="file://" + page)
        cdp.wait_event("Page.loadEventFired")
        return cdp

    def problems(self, cdp, folder):
        """Console errors, exceptions, failed loads and requests outside folder."""
        bad, urls = [], []
        for ev in cdp.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                bad.append(("console", p.get("args")))
            elif m == "Runtime.exceptionThrown":
                bad.append(("exception", p.get("exceptionDetails")))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                bad.append(("log", p["entry"].get("text"), p["entry"].get("url")))
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                bad.append(("failed", p.get("errorText"), p.get("requestId")))
            elif m == "Network.requestWillBeSent":
                urls.append(p["request"]["url"])
        # data: URLs fetch nothing; Chromium's own <video controls> draws its
        # buttons with them (the page's CSP does not allow data: images).
        outside = [u for u in urls
                   if not u.startswith("file://" + folder + "/") and not u.startswith("data:")]
        return bad, outside, urls

    def shot(self, cdp, name, full=False):
        """The page as shown (full: all of it) into KSR_REPORT_SHOTS (docs/img)."""
        where = os.environ.get("KSR_REPORT_SHOTS")
        if not where:
            return
        import base64
        args = {"format": "png"}
        if full:
            size = cdp.call("Page.getLayoutMetrics")["cssContentSize"]
            args.update(captureBeyondViewport=True,
                        clip={"x": 0, "y": 0, "width": size["width"],
                              "height": min(size["height"], 4000), "scale": 1})
        png = cdp.call("Page.captureScreenshot", **args)["data"]
        with open(os.path.join(where, name), "wb") as f:
            f.write(base64.b64decode(png))

    def check_page(self, kind):
        report = self.report(kind)
        out = os.path.realpath(self.runs[kind]["out"])
        page = os.path.join(out, "report.html")
        self.assertTrue(os.path.isfile(page), "report.html in %s" % out)
        cdp = self.load(self.chromium(), page)
        dom = cdp.eval("""new Promise(function (done) {
            var v = document.getElementById('video');
            function images() {
              return Array.prototype.map.call(document.querySelectorAll('main img'), function (i) {
                return [i.getAttribute('src'), i.complete && i.naturalWidth > 0];
              });
            }
            function finish(state) {
              done({video: state, images: images(), scripts: document.scripts.length,
                    pwned: window.__pwned || null,
                    onerror: document.querySelectorAll('[onerror]').length,
                    jslinks: document.querySelectorAll('a[href^="javascript"]').length,
                    text: document.body.innerText,
                    verdict: document.getElementById('verdict').textContent,
                    reason: document.getElementById('reason').textContent});
            }
            if (!v) return finish(null);
            function st() { return {ready: v.readyState, duration: v.duration,
                                    error: v.error && v.error.code,
                                    w: v.videoWidth, h: v.videoHeight}; }
            if (v.readyState >= 2) return finish(st());
            v.addEventListener('loadeddata', function () { finish(st()); });
            v.addEventListener('error', function () { finish(st()); });
            v.load();
          })""")
        bad, outside, urls = self.problems(cdp, out)
        self.assertEqual(bad, [], "no console errors or failed loads")
        self.assertEqual(outside, [], "no request outside the evidence folder")
        # The page shows what report.json says, escaped.
        self.assertIn(report["verdict"], dom["verdict"])
        self.assertIn(report["reason"], dom["reason"])
        self.assertEqual((dom["pwned"], dom["onerror"], dom["jslinks"], dom["scripts"]),
                         (None, 0, 0, 1), "window title and shell output stayed text")
        self.assertIn(EVIL_TITLE, dom["text"], "the window title is shown as written")
        # Every screenshot report.json names for a step is shown and loads.
        shown = dict(dom["images"])
        for step in report["steps"]:
            for key in ("screenshot", "annotated"):
                if step[key]:
                    self.assertIn(step[key], shown, "step %d's %s" % (step["index"], key))
        self.assertTrue(shown, "the page shows screenshots")
        self.assertEqual([s for s, ok in dom["images"] if not ok], [], "every image loads")
        self.assertTrue(any(u.endswith(".png") for u in urls), "image requests were seen")
        # The video plays: the one report.json names, decodable, as long as it says.
        video = report["video"]
        self.assertIsNotNone(video, "report.json records the video")
        self.assertIsNone(video["error"])
        self.assertIsNotNone(dom["video"], "the page has the video")
        self.assertIsNone(dom["video"]["error"], "the video decodes: %r" % dom["video"])
        self.assertGreaterEqual(dom["video"]["ready"], 2)
        self.assertEqual((dom["video"]["w"], dom["video"]["h"]), (1280, 720))
        self.assertAlmostEqual(dom["video"]["duration"] * 1000, video["duration_ms"], delta=100)
        # What each input step waited for (its ready and settled fields) is shown.
        for step in report["steps"]:
            ready = step["details"].get("ready")
            if not ready:
                continue
            waited = cdp.eval("(function () { var w = document.querySelector("
                              "'#step-%d dl.waited'); return w && w.textContent; })()"
                              % step["index"])
            self.assertIsNotNone(waited, "step %d shows what it waited for" % step["index"])
            self.assertIn("waited_ms %s" % ready["waited_ms"], waited)
        return report, cdp, out

    def check_failing_step_in_view(self, cdp, report):
        failed = [s for s in report["steps"] if s["status"] in ("failed", "error")]
        self.assertTrue(failed, "report.json has a failed step")
        view = cdp.eval("""(function () {
            var f = document.querySelector('details.failing');
            if (!f) return null;
            var r = f.getBoundingClientRect();
            return {id: f.id, open: f.open, top: r.top, bottom: r.bottom,
                    h: window.innerHeight, n: document.querySelectorAll('details.failing').length};
          })()""")
        self.assertIsNotNone(view, "a step is marked failing")
        self.assertEqual(view["id"], "step-%d" % failed[0]["index"])
        self.assertTrue(view["open"], "the failing step is opened")
        self.assertEqual(view["n"], 1)
        self.assertTrue(0 <= view["top"] < view["h"], "the failing step is in view: %r" % view)

    def check_seek(self, cdp, report):
        """Clicking a step's time seeks the video to that step's chapter."""
        step = report["steps"][-1]
        want = (step["start_ms"] - report["video"]["start_ms"]) / 1000.0
        t = cdp.eval("""new Promise(function (done) {
            var v = document.getElementById('video');
            var a = document.querySelector('#step-%d a.at');
            v.addEventListener('seeked', function () { done(v.currentTime); }, {once: true});
            a.click();
          })""" % step["index"])
        self.assertAlmostEqual(t, want, delta=0.05)

    def check_video_file(self, report, out):
        """ffprobe reads the file; it covers every step and ends with the run;
        a chapter at each step's start, titled with its index, line and kind."""
        video = report["video"]
        info = ffprobe(os.path.join(out, video["name"]))
        self.assertEqual([s["codec_name"] for s in info["streams"]], ["vp9"])
        dur_ms = float(info["format"]["duration"]) * 1000
        self.assertAlmostEqual(dur_ms, video["duration_ms"], delta=50)
        last = report["steps"][-1]
        end = video["start_ms"] + dur_ms
        self.assertGreaterEqual(end + 1, last["start_ms"] + last["duration_ms"],
                                "the video lasts past the last step")
        self.assertLessEqual(end, report["timings"]["duration_ms"], "and not past the run")
        chapters = {c["tags"]["title"]: float(c["start_time"]) * 1000 for c in info["chapters"]}
        for s in report["steps"]:
            title = "step %d (line %d): %s" % (s["index"], s["line"], s["kind"])
            self.assertIn(title, chapters, "a chapter for step %d" % s["index"])
            self.assertAlmostEqual(chapters[title], s["start_ms"] - video["start_ms"], delta=15)
        for st in report["stages"]:
            # every stage that ran (a skipped one has no start of its own)
            if (st["start_ms"] > video["start_ms"] and st["name"] != "report"
                    and st["status"] != "skipped"):
                self.assertIn("stage " + st["name"], chapters)
        starts = [float(c["start_time"]) for c in info["chapters"]]
        self.assertEqual(starts, sorted(starts))
        # At most max_fps frames a second: consecutive frames at least 1/max_fps
        # apart, but for the last one (the screen when the recording stopped).
        res = subprocess.run([FFPROBE, "-v", "error", "-select_streams", "v:0",
                              "-show_entries", "packet=pts_time", "-of", "csv=p=0",
                              os.path.join(out, video["name"])],
                             capture_output=True, text=True, timeout=60)
        pts = [float(t) for t in res.stdout.split()]
        self.assertEqual(len(pts), video["frames"], "every frame report.json counts")
        gaps = [b - a for a, b in zip(pts[:-2], pts[1:-1])]
        self.assertTrue(gaps, "more than two frames")
        self.assertGreaterEqual(min(gaps), 1.0 / video["max_fps"] - 0.002, pts)

    # ---- the tests -------------------------------------------------------------

    def test_passing_run(self):
        report, cdp, out = self.check_page("pass")
        self.assertEqual(cdp.eval("document.querySelectorAll('details.failing').length"), 0)
        a11y = report["accessibility"]
        self.assertEqual(a11y["status"], "ok", a11y)
        # The accessibility list filters as typed.
        n = cdp.eval("""(function () {
            var q = document.getElementById('a11y-q');
            var all = document.querySelectorAll('ul.a11y li').length;
            q.value = 'Press me'; q.dispatchEvent(new Event('input'));
            var shown = Array.prototype.filter.call(document.querySelectorAll('ul.a11y li'),
              function (li) { return !li.hidden; }).map(function (li) { return li.textContent; });
            return {all: all, shown: shown};
          })()""")
        self.assertEqual(n["all"], len(a11y["controls"]))
        self.assertTrue(n["shown"] and all("Press me" in t for t in n["shown"]), n)
        self.assertLess(len(n["shown"]), n["all"])
        cdp.eval("document.getElementById('a11y-q').value='';"
                 "document.getElementById('a11y-q').dispatchEvent(new Event('input'));"
                 "window.scrollTo(0,0)")
        self.check_seek(cdp, report)
        self.check_video_file(report, out)
        cdp.eval("window.scrollTo(0,0)")
        self.shot(cdp, "report-pass.png", full=True)

    def test_failing_run(self):
        report, cdp, out = self.check_page("fail")
        self.check_failing_step_in_view(cdp, report)
        self.check_video_file(report, out)
        self.shot(cdp, "report-fail.png")
        # The enlarged screenshot: a click on a step's image opens the lightbox.
        on = cdp.eval("""(function () {
            var i = document.querySelector('img.zoom');
            i.click();
            var lb = document.getElementById('lightbox');
            return lb.classList.contains('on') && lb.querySelector('img').src === i.src;
          })()""")
        self.assertTrue(on, "the screenshot is enlarged in place")

    def test_crashed_app(self):
        report, cdp, out = self.check_page("crash")
        self.check_failing_step_in_view(cdp, report)
        self.check_video_file(report, out)

    def test_interrupted_run(self):
        report, cdp, out = self.check_page("interrupted")
        self.check_failing_step_in_view(cdp, report)
        self.check_video_file(report, out)
        self.shot(cdp, "report-interrupted.png")

    def test_fleet_page(self):
        for kind in self.runs:
            self.report(kind)
        page = os.path.join(self.tmp, "fleet.html")
        rc, so, se, _ = ksr.run_runtime(["watch", "-r", "--timeout", "30", "--html", page,
                                         os.path.join(self.tmp, "runs")],
                                        env=ksr.clean_env(self.tag), timeout=120)
        self.assertEqual(rc, 2, "the worst of the runs is a test-error\n" + se)
        cdp = self.load(self.chromium(), page)
        rows = cdp.eval("""Array.prototype.map.call(document.querySelectorAll('tr.run'),
            function (tr) { var a = tr.querySelector('a');
              return {verdict: tr.dataset.verdict, href: a && a.href,
                      duration: tr.querySelector('.duration').textContent}; })""")
        bad, outside, _ = self.problems(cdp, os.path.realpath(self.tmp))
        self.assertEqual((bad, outside), ([], []))
        got = sorted((r["verdict"], r["href"]) for r in rows)
        want = sorted((ksr.load_report(r["out"])["verdict"],
                       "file://" + os.path.join(os.path.realpath(r["out"]), "report.html"))
                      for r in self.runs.values())
        self.assertEqual(got, want, "every run, linked to its report.html")
        for r in rows:
            self.assertRegex(r["duration"], r"^\d+\.\d s$")
        self.shot(cdp, "report-fleet.png", full=True)


if __name__ == "__main__":
    unittest.main(verbosity=2)
