"""`record` against Debian's own apps (issue 21): mousepad's Save As flow and
gtk3-widget-factory's toggles and pages, driven with xdotool (a person's
input as the X server sees it) while `record --xvfb` watches. Each written
scenario must validate, hold the steps at the rungs expected, and replay to a
pass on a fresh instance of the app; what the replay did is read back where
the app leaves it (the file mousepad saved), never from the runtime."""

import json
import os
import re
import shutil
import signal
import subprocess
import time
import unittest
import urllib.request

import ksr
import test_record

LINE = "héllo wörld € ünïcode"  # keycodes bound on the fly by xdotool
FACTORY = "^gtk3-widget-factory$"


def _acts(steps):
    return [(next(iter(s)), s[next(iter(s))]) for s in steps]


class RecordApps(test_record.RecordCase):
    needs_testapp = False

    def until(self, what, probe, timeout=60):
        """probe() until it returns something true; the bound is a deadline,
        not a sleep. Between cheap probes (a file read) it yields 50 ms: a
        loop that spun took a whole core from the browser and the recorder it
        waits for (on 2 cores with ctest -j2 the recorder's first Firefox
        connect then ran past its deadline)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = probe()
            if got:
                return got
            time.sleep(0.05)  # a poll interval, not a timed assertion
        self.fail("never: %s" % what)

    def find(self, controls, name, role, **states):
        for c in controls:
            if c["name"] == name and c.get("role") == role and "centre" in c and all(
                    (s in c.get("states", [])) == want for s, want in states.items()):
                return c
        return None

    def test_mousepad_save_as(self):
        """Type a line with non-ASCII, ctrl+s, a path into the Save As dialog,
        a click on its Save button: key, type, wait_window, a click in the
        dialog and a file: check; the replay saves the same line."""
        folder = os.path.join(self.tmp, "saved")
        os.mkdir(folder)
        saved = os.path.join(folder, "note.txt")
        rt, out, display = self.start_record("--watch-dir", folder, launch="exec mousepad")
        self.bind_keys(display, LINE)
        # The app answers on the bus (through its main loop, after the
        # keymap change reached it).
        self.until("mousepad's controls", lambda: self.inspect(display, "Mousepad$"))
        self.xdo(display, "type", "--delay", "20", LINE)
        self.xdo(display, "key", "ctrl+s")
        ksr.wait_window_title(self, display, "Save As", proc=rt.proc)
        # The dialog's name field has the keyboard before the path is typed.
        self.until("a focused text field in Save As", lambda: [
            c for c in self.inspect(display, "^Save As$")
            if c.get("role") == "text" and "focused" in c.get("states", [])])
        self.xdo(display, "type", "--delay", "20", saved)
        save = self.until("the Save button", lambda: self.find(
            self.inspect(display, "^Save As$"), "Save", "push button", showing=True))
        self.click(display, save["centre"])
        deadline = time.monotonic() + 30
        while not (os.path.exists(saved) and test_record._read(saved).rstrip("\n") == LINE):
            self.assertLess(time.monotonic(), deadline, "mousepad did not save %s (%r)" % (
                saved, test_record._read(saved) if os.path.exists(saved) else None))
            time.sleep(0.05)  # a file has no X event: bounded polling
        self.stop(rt)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        acts = _acts(steps)
        kinds = [a[0] for a in acts]
        self.assertEqual(doc["process"], "^mousepad$", text)
        self.assertEqual(acts[0], ("type", LINE), text)
        self.assertEqual(acts[1], ("key", "ctrl+s"), text)
        self.assertEqual(acts[2], ("wait_window", "^Save As$"), text)
        self.assertEqual(acts[3], ("type", saved), text)
        self.assertEqual(steps[3]["target"], {"window": "^Save As$"}, text)
        self.assertEqual(len(acts), 5, text)
        click = steps[4]
        if kinds[4] == "click_element":
            self.assertEqual((acts[4][1], click["role"]), ("Save", "push button"), text)
        else:  # a declared point of the dialog
            self.assertEqual((kinds[4], click.get("target")), ("click", {"window": "^Save As$"}),
                             text)
        self.assertIn({"file": saved, "timeout_s": 10}, click.get("checks", []), text)
        self.assertIn("rm -f -- '%s'" % saved, doc["launch"])
        self.validate(out)
        os.unlink(saved)
        self.replay(out)
        self.assertEqual(test_record._read(saved).rstrip("\n"), LINE)

    def test_widget_factory_toggles_and_pages(self):
        """A check box whose name others share is a declared point (a
        click_element would find another); switching to Page 3 and toggling
        Record are click_element steps with expect_state; the replay passes."""
        rt, out, display = self.start_record(launch="exec gtk3-widget-factory")
        controls = self.until("the factory's controls", lambda: self.inspect(display, FACTORY))
        box = self.find(controls, "checkbutton", "check box", sensitive=True, checked=False)
        self.assertTrue(box, "an unchecked, sensitive 'checkbutton' on Page 1")
        self.click(display, box["centre"])
        self.until("the check box checked", lambda: [
            c for c in self.inspect(display, FACTORY) if c.get("centre") == box["centre"] and
            c.get("role") == "check box" and "checked" in c.get("states", [])])
        page3 = self.find(controls, "Page 3", "radio button", showing=True)
        self.click(display, page3["centre"])
        record = self.until("Page 3 showing Record", lambda: self.find(
            self.inspect(display, FACTORY), "Record", "toggle button", showing=True))
        self.click(display, record["centre"])
        self.until("Record checked", lambda: self.find(
            self.inspect(display, FACTORY), "Record", "toggle button", checked=True))
        self.stop(rt)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        acts = _acts(steps)
        self.assertEqual(doc["window"], FACTORY, text)
        self.assertEqual(len(acts), 3, text)
        self.assertEqual(acts[0][0], "click", text)
        self.assertRegex(text, r'# a click at %d,%d on check box "checkbutton" .*another '
                         r'control has its name and role' % box["centre"])
        self.assertEqual((acts[1], steps[1]["role"], steps[1]["expect_state"]),
                         (("click_element", "Page 3"), "radio button", "Page 3 checked"), text)
        self.assertEqual((acts[2], steps[2]["role"], steps[2]["expect_state"]),
                         (("click_element", "Record"), "toggle button", "Record checked"), text)
        self.validate(out)
        self.replay(out)
        rows = [e for e in ksr.read_trace(self.out("replay")) if e.get("event") == "step.end"]
        self.assertEqual([r["kind"] for r in rows], ["click", "click_element", "click_element"])
        for r in rows[1:]:
            self.assertEqual([(c["kind"], c["status"]) for c in r["checks"]], [("state", "held")],
                             r)

    def test_chromium_page_clicks_are_cdp_clicks(self):
        """Clicks on page elements of a Chromium with a debugging port are
        cdp_click steps with the elements' ids; the replay submits the same
        form (the page server's own log has the query)."""
        http, port = self.page_server()
        profile, launch = self.chromium(port)
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Form", proc=rt.proc)
        page = self.page_points(display, profile, ["#name", "#send"])
        self.click(display, page["#name"])
        self.xdo(display, "key", "ctrl+a")
        self.xdo(display, "type", "Ada")
        self.click(display, page["#send"])
        ksr.wait_window_title(self, display, "KSR Done", proc=rt.proc)
        self.stop_by_key(rt, display)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        acts = _acts(steps)
        self.assertEqual(acts, [("page_click", "#name"), ("key", "ctrl+a"), ("type", "Ada"),
                                ("page_click", "#send")], text)
        self.assertIn({"window": "^KSR Done - Chromium$", "timeout_s": 10}, steps[3]["checks"],
                      text)
        # The first title (about:blank's) and the page's, at the first click.
        self.assertRegex(doc["window"], r"^\^\(\?:.*\|KSR Form - Chromium\)\$$", text)
        self.validate(out)
        shutil.rmtree(profile)  # a fresh profile for the replay's browser
        self.replay(out)
        http.terminate()
        log = http.communicate(timeout=30)[1].decode()
        self.assertEqual(len(re.findall(r"GET /done\.html\?name=Ada&email= ", log)), 2, log)

    def test_chromium_click_that_navigates_is_the_pressed_element(self):
        """A press whose handler leaves the page at once (nav.html's #go, on
        mousedown) is recorded as the element pressed, although the recorder
        reads the press only once the next page is up: it is held back
        (SIGSTOP) from before the press until the title says done.html came.
        The old recorder asked the page at that point then and wrote
        done.html's element there; the page now names the element in the
        press's own handler and reports it out of band."""
        http, port = self.page_server()
        profile, launch = self.chromium(port, "nav.html")
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Nav", proc=rt.proc)
        page = self.page_points(display, profile, ["#q", "#go"], title="KSR Nav")
        self.navigating_click(rt, out, display, page)
        self.assertIn("(CDP)", rt.stderr)
        http.terminate()
        http.communicate(timeout=30)

    def test_firefox_click_that_navigates_is_the_pressed_element(self):
        """As in Chromium: Firefox's WebDriver BiDi session carries the
        page's report of the press (script.message) past the navigation."""
        http, port = self.page_server()
        profile, launch = self.firefox(port, "nav.html")
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Nav", proc=rt.proc)
        page = self.firefox_points(profile, ["#q", "#go"])
        self.navigating_click(rt, out, display, page)
        self.assertIn("(WebDriver BiDi)", rt.stderr)
        http.terminate()
        http.communicate(timeout=30)

    def test_chromium_first_click_that_navigates_is_its_point(self):
        """The recorder connects to the page at its first page click, so no
        listener saw that press: the page is read after it. When the press
        navigated at once (the recorder held back until done.html is up),
        the document read began after the press: the click is recorded at
        its point, saying so, never as done.html's element there (the old
        recorder wrote '#greeting')."""
        http, port = self.page_server()
        profile, launch = self.chromium(port, "nav.html")
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Nav", proc=rt.proc)
        page = self.page_points(display, profile, ["#go"], title="KSR Nav")
        self.click_while_held(rt, display, page["#go"])
        self.stop_by_key(rt, display)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        self.assertEqual([a for a, _v in _acts(steps)], ["click"], text)
        self.assertIn("the page changed before it could be read (a new document: "
                      "http://127.0.0.1:%d/done.html" % port, text)
        self.validate(out)
        http.terminate()
        http.communicate(timeout=30)

    def click_while_held(self, rt, display, point):
        """Click point with the recorder stopped (SIGSTOP) until the browser
        shows done.html: the recorder reads the press after the navigation."""
        rt.signal(signal.SIGSTOP)
        try:
            self.click(display, point)
            ksr.wait_window_title(self, display, "KSR Done")
        finally:
            rt.signal(signal.SIGCONT)

    def navigating_click(self, rt, out, display, page):
        """Click #q (the recorder connects to the page there), then #go with
        the recorder stopped until the browser shows done.html; the
        recording must name both pressed elements."""
        self.click(display, page["#q"])
        self.until("the recorder watching the page's presses",
                   lambda: "the page reports each press" in rt.stderr)
        self.click_while_held(rt, display, page["#go"])
        self.stop_by_key(rt, display)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        self.assertEqual(_acts(steps), [("page_click", "#q"), ("page_click", "#go")], text)
        self.assertIn('<button> "Go"', text)
        self.validate(out)

    def test_firefox_page_clicks_are_page_clicks(self):
        """Clicks on page elements of a Firefox with its WebDriver BiDi port
        (port 0, read from the profile) are page_click steps with the
        elements' ids, as in Chromium; the replay, on a fresh profile,
        submits the same form (the page server's own log has the query)."""
        http, port = self.page_server()
        profile, launch = self.firefox(port)
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Form", proc=rt.proc)
        page = self.firefox_points(profile, ["#name", "#send"])
        self.click(display, page["#name"])
        self.xdo(display, "key", "ctrl+a")
        self.xdo(display, "type", "Ada")
        self.click(display, page["#send"])
        ksr.wait_window_title(self, display, "KSR Done", proc=rt.proc)
        self.stop_by_key(rt, display)
        text = test_record._read(out)
        doc, steps = self.steps(out)
        acts = _acts(steps)
        self.assertEqual(acts, [("page_click", "#name"), ("key", "ctrl+a"), ("type", "Ada"),
                                ("page_click", "#send")], text)
        self.assertIn("WebDriver BiDi port", text)
        self.assertTrue([c for c in steps[3].get("checks", []) if "KSR Done" in
                         str(c.get("window", ""))], text)
        self.validate(out)
        self.firefox(port)  # a fresh profile for the replay's browser
        self.replay(out)
        http.terminate()
        log = http.communicate(timeout=30)[1].decode()
        self.assertEqual(len(re.findall(r"GET /done\.html\?name=Ada&email= ", log)), 2, log)

    def test_firefox_page_port_busy_at_the_first_click(self):
        """The recorder's first page connect fails (another client holds
        Firefox's one BiDi session): that click is recorded at its point with
        the reason, and the next click, once the session is free, is a
        page_click. The old recorder asked once and recorded every later page
        click as a plain click."""
        http, port = self.page_server()
        profile, launch = self.firefox(port)
        rt, out, display = self.start_record(launch=launch)
        ksr.wait_window_title(self, display, "KSR Form", proc=rt.proc)
        page, end_session = self.firefox_points(profile, ["#name", "#email"],
                                                keep_session=True)
        self.click(display, page["#name"])
        self.until("the recorder's first page connect failing",
                   lambda: "did not connect (try 1 of 3)" in rt.stderr)
        end_session()
        self.click(display, page["#email"])
        self.xdo(display, "type", "x")
        self.stop_by_key(rt, display)  # not SIGINT: it would cut the click's connect short
        text = test_record._read(out)
        doc, steps = self.steps(out)
        acts = _acts(steps)
        self.assertEqual(acts[0][0], "click", text)
        self.assertIn("did not connect (try 1 of 3)", text)
        self.assertIn(("page_click", "#email"), acts, text)

    def stop_by_key(self, rt, display):
        """Stop with the stop chord: the recorder reads it after the clicks
        before it, so each of them is placed in full first (SIGINT would cut
        the page asks of one still being placed)."""
        subprocess.run(["xdotool", "key", "ctrl+alt+F12"], env=self.env(DISPLAY=display),
                       capture_output=True, timeout=30)  # see test_record: no verdict
        self.assertEqual(rt.wait(60), 0, rt.stderr[-3000:])
        self.assertNoSanitizerReport(rt.stderr)
        self.assertIn("stopped by hotkey", rt.stderr)

    def page_server(self):
        """The test pages over a local HTTP server: (its process, its port);
        its stderr is its request log."""
        pages = os.path.join(ksr.SOURCE_DIR, "tests", "integration", "pages")
        http = subprocess.Popen(["/usr/bin/python3", "-u", "-m", "http.server", "--bind",
                                 "127.0.0.1", "--directory", pages, "0"], env=self.env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        self.procs.append(http)
        port = int(re.search(r"port (\d+)", http.stdout.readline().decode()).group(1))
        http.stdout.close()
        return http, port

    def chromium(self, port, page="form.html"):
        """A fresh Chromium profile dir and the launch line of a Chromium on
        page with its DevTools port 0: (profile, launch)."""
        profile = os.path.join(self.tmp, "profile")
        return profile, " ".join([
            "chromium", "--user-data-dir=" + profile, "--remote-debugging-port=0",
            "--no-first-run", "--no-default-browser-check", "--disable-component-update",
            "--disable-sync", "--disable-gpu", "--no-sandbox", "--window-size=1000,700",
            "http://127.0.0.1:%d/%s" % (port, page)])

    def firefox(self, port, page="form.html"):
        """A fresh Firefox profile (test_bidi's prefs) and the launch line of a
        Firefox on page with its WebDriver BiDi port 0: (profile, launch)."""
        import test_bidi
        profile = os.path.join(self.tmp, "ff-profile")
        shutil.rmtree(profile, ignore_errors=True)
        os.makedirs(profile)
        with open(os.path.join(profile, "user.js"), "w") as f:
            f.write(test_bidi.USER_JS)
        return profile, " ".join([
            test_bidi.FIREFOX, "--profile", profile, "--no-remote", "--remote-debugging-port",
            "0", "--width", "1000", "--height", "700",
            "http://127.0.0.1:%d/%s" % (port, page)])

    def firefox_points(self, profile, selectors, keep_session=False):
        """Screen centres of page elements, from the page itself over
        WebDriver BiDi (mozInnerScreenX/Y place the viewport on the screen);
        the session is ended so that the recorder can start its own (Firefox
        holds one at a time), unless keep_session: then (points, end) where
        end() ends it."""
        import websocket
        path = os.path.join(profile, "WebDriverBiDiServer.json")
        def ws_port():  # the file may be half written when first seen
            try:
                return json.loads(test_record._read(path)).get("ws_port")
            except (OSError, ValueError):
                return None
        port = self.until("Firefox's BiDi port", ws_port)
        ws = websocket.create_connection("ws://127.0.0.1:%d/session" % port, timeout=20,
                                         suppress_origin=True)
        ids = iter(range(1, 100))

        def call(method, params):
            n = next(ids)
            ws.send(json.dumps({"id": n, "method": method, "params": params}))
            while True:
                m = json.loads(ws.recv())
                if m.get("id") == n:
                    self.assertEqual(m.get("type"), "success", m)
                    return m["result"]
        call("session.new", {"capabilities": {}})
        ctx = call("browsingContext.getTree", {"maxDepth": 0})["contexts"][0]["context"]
        js = ("JSON.stringify(%s.map(s => { const b = document.querySelector(s)"
              ".getBoundingClientRect(), r = devicePixelRatio;"
              "return [(mozInnerScreenX + b.x + b.width / 2) * r,"
              " (mozInnerScreenY + b.y + b.height / 2) * r]; }))" % json.dumps(selectors))
        res = call("script.evaluate", {"expression": js, "target": {"context": ctx},
                                       "awaitPromise": False})
        boxes = json.loads(res["result"]["value"])
        points = {s: (int(b[0]), int(b[1])) for s, b in zip(selectors, boxes)}

        def end():
            call("session.end", {})
            ws.close()
        if keep_session:
            return points, end
        end()
        return points

    def page_points(self, display, profile, selectors, title="KSR Form"):
        """Screen centres of page elements: their boxes from the page (CDP),
        the viewport at the bottom of the browser's X window (inspect)."""
        import websocket  # python3-websocket, as test_cdp's browser helper
        with open(os.path.join(profile, "DevToolsActivePort")) as f:
            port = int(f.readline())
        with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
            tab = [t for t in json.load(r) if t["type"] == "page"][0]
        ws = websocket.create_connection(tab["webSocketDebuggerUrl"], timeout=10)
        js = ("JSON.stringify({h: innerHeight, w: innerWidth, boxes: %s.map(s => {"
              "const b = document.querySelector(s).getBoundingClientRect();"
              "return [b.x + b.width / 2, b.y + b.height / 2]; })})" % json.dumps(selectors))
        ws.send(json.dumps({"id": 1, "method": "Runtime.evaluate",
                            "params": {"expression": js, "returnByValue": True}}))
        while True:
            m = json.loads(ws.recv())
            if m.get("id") == 1:
                break
        ws.close()
        v = json.loads(m["result"]["result"]["value"])
        rc, so, se, _t = self.run_rt(["inspect", "--json", "--window", title,
                                      "--timeout", "60"], env=self.env(DISPLAY=display))
        self.assertEqual(rc, 0, se[-2000:])
        g = [w for w in json.loads(so)["windows"] if title in w["title"]][0]["geometry"]
        ox, oy = g["x"] + (g["w"] - v["w"]) // 2, g["y"] + g["h"] - v["h"]
        return {s: (int(ox + b[0]), int(oy + b[1])) for s, b in zip(selectors, v["boxes"])}


if __name__ == "__main__":
    unittest.main()
