"""Rung 0 against a real Chromium from Debian under Xvfb, pages served by a
local HTTP server: form fill + submit + navigation + page: check; hidden,
covered, moving and disabled elements; a renderer crash; the browser killed
mid-command; no debugging port; and a scenario that launches Chromium itself."""

import os
import re
import shutil
import signal
import subprocess
import textwrap
import time
import unittest

import ksr

PAGES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pages")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Elements by text (docs/cdp.md), the same steps on both browsers (test_bidi):
# a button waited for by a pattern (any case) and clicked by its text; the next
# page's paragraph found by a pattern in a page: check.
TEXT_CLICK_STEPS = """\
    - page_wait: "text=/^SEND$/i"
    - page_fill: {selector: "#name", text: "Ada"}
    - page_click: "text=Send"
      checks:
        - page: {selector: "text=/^hello, ada </i", text: "Hello, Ada <>", title: "^KSR Done$"}
    """
# A text that matches nothing.
TEXT_FAIL_STEPS = """\
    - page_click: "text=No such button"
      timeout_s: 1
    """
# A page that throws and logs an error (pages/errors.html), on both browsers:
# each error is recorded with its step and raises a concern, not a failure.
ERROR_STEPS = """\
    - page_click: "#boom"
      checks:
        - page: {selector: "#status", text: "boomed"}
    - page_click: "#log"
      checks:
        - page: {selector: "#status", text: "logged"}
    """
FLAGS = ["--no-first-run", "--no-default-browser-check", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-gpu", "--no-sandbox",
         "--window-size=1000,700"]


class CdpTest(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not os.access(CHROMIUM, os.X_OK):
            self.fail("chromium is not installed (scripts/setup.sh deps)")
        self.http_port = self.start_http()

    # --- helpers ---------------------------------------------------------

    def start_http(self):
        """python3 -m http.server on 127.0.0.1, port 0: it prints the port it got."""
        p = subprocess.Popen(["/usr/bin/python3", "-u", "-m", "http.server", "--bind",
                              "127.0.0.1", "--directory", PAGES, "0"],
                             env=self.env(), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        self.addCleanup(p.stdout.close)
        line = p.stdout.readline().decode()
        m = re.search(r"port (\d+)", line)
        self.assertIsNotNone(m, "http.server did not report its port: %r" % line)
        return int(m.group(1))

    def url(self, page):
        return "http://127.0.0.1:%d/%s" % (self.http_port, page)

    def start_chromium(self, display, page, debug=True):
        """Chromium on display with a fresh profile; with debug, port 0 and the
        port read back from DevToolsActivePort. Returns (profile, port)."""
        profile = os.path.join(self.tmp, "profile-%d" % len(self.procs))
        args = [CHROMIUM, "--user-data-dir=" + profile] + FLAGS
        if debug:
            args.append("--remote-debugging-port=0")
        p = subprocess.Popen(args + [self.url(page)], env=self.env(DISPLAY=display),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        self.chromium = p
        if not debug:
            return profile, 0
        path = os.path.join(profile, "DevToolsActivePort")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    port = int(f.readline().strip() or "0")
                if port:
                    return profile, port
            except (OSError, ValueError):
                pass
            self.assertIsNone(p.poll(), "chromium exited early")
            time.sleep(0.1)
        self.fail("chromium wrote no DevToolsActivePort")

    def scenario_for(self, profile, port, title, steps, extra=""):
        text = textwrap.dedent("""\
            name: cdp-it
            process: ^chromium$
            process_cmdline: '%s'
            window: "%s"
            settle_s: 0.2
            atspi: false
            cdp: {port: %d}
            cdp_targets:
              submit: "#send"
            %s
            steps:
            """) % (re.escape(profile), title, port, extra)
        return self.scenario(text + textwrap.indent(textwrap.dedent(steps), "  "))

    def run_page(self, page, title, steps, timeout=90):
        display = self.start_xvfb()
        profile, port = self.start_chromium(display, page)
        path = self.scenario_for(profile, port, title, steps)
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                    timeout=timeout)
        self.assertNoSanitizerReport(se)
        return path, out, rc, se

    def step_ends(self, out):
        return [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]

    # --- the cases -------------------------------------------------------

    def test_form_fill_submit_navigation_page_check(self):
        path, out, rc, se = self.run_page("form.html", "KSR (Form|Done)", """\
            - cdp_wait: "#name"
              state: visible
            - cdp_fill: {selector: "#name", text: "Ada Lovelace"}
              checks:
                - page: {selector: "#events", text: "change,input"}
            - cdp_type: {selector: "#email", text: "ada@example.org"}
            - cdp_eval: "document.getElementById('email').value === 'ada@example.org'"
            - cdp_click: submit
              checks:
                - page: {selector: "#greeting", text: "Hello, Ada Lovelace <ada@example.org>", url: "/done\\\\.html\\\\?", title: "^KSR Done$"}
            - cdp_navigate: "%s"
            - cdp_wait: "#send"
            """ % self.url("form.html"))
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(ksr.stage(report, "browser-attach")["status"], "ok")
        self.assertEqual(len(report["steps"]), 7)
        for st in report["steps"]:
            self.assertEqual((st["backend"], st["rung"], st["status"]), ("cdp", "page", "ok"))
        self.assertEqual(report["steps"][4]["checks"][0]["status"], "held")
        ends = self.step_ends(out)
        click = ends[4]
        self.assertEqual(click["target"], "submit", "the cdp_targets name is recorded")
        self.assertEqual(click["selector"], "#send", "and the selector it named")
        self.assertGreater(click["box"]["w"], 0)
        self.assertTrue(click["box"]["x"] <= click["point"]["x"]
                        <= click["box"]["x"] + click["box"]["w"])
        self.assertEqual(ends[1]["selector"], "#name")

    def test_page_check_that_does_not_hold(self):
        path, out, rc, se = self.run_page("form.html", "KSR Form", """\
            - cdp_click: submit
              checks:
                - page: {selector: "#greeting", text: "Goodbye"}
                  timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertIn("Goodbye", report["reason"])

    def test_hidden_element(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_click: "#hidden"
              timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("#hidden is not visible", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "#hidden")))

    def test_hover_moves_the_page_mouse_without_a_click(self):
        """hover: {selector}: the element's mouseenter fires (the page records
        it), no button goes down, and the row says the page's mouse moved."""
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - hover: {selector: "#hoverme"}
              checks:
                - page: {selector: "#status", text: "hovered"}
            - cdp_eval: "document.getElementById('status').textContent === 'hovered'"
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        row = self.step_ends(out)[0]
        self.assertEqual((row["kind"], row["backend"], row["rung"]), ("hover", "cdp", "page"), row)
        self.assertEqual(row["selector"], "#hoverme")
        self.assertTrue(row["box"]["x"] <= row["point"]["x"] <= row["box"]["x"] + row["box"]["w"])
        self.assertEqual(report["steps"][0]["checks"][0]["status"], "held")

    def test_covered_element_names_the_interceptor(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_click: "#covered"
              timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn('is covered by <div id="overlay">', report["reason"])
        self.assertIn("box", self.step_ends(out)[0], "the box it resolved to is recorded")

    def test_disabled_button(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_click: "#off"
              timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("#off is disabled", report["reason"])

    def assert_text_click(self, out, rc, se):
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        ends = self.step_ends(out)
        self.assertEqual(ends[0]["selector"], "text=/^SEND$/i")
        click = ends[2]
        self.assertEqual((click["kind"], click["selector"]), ("page_click", "text=Send"))
        self.assertGreater(click["box"]["w"], 0, "the button's box, found by its text")
        self.assertEqual(report["steps"][2]["checks"][0]["status"], "held")

    def assert_text_fail(self, path, out, rc, se):
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("text=No such button matches no element", report["reason"])
        self.assertTrue(ksr.names_line(report["reason"], ksr.line_of(path, "No such")))

    def test_element_by_text(self):
        """page_wait and page_click by the button's text, and a page: check
        whose selector is a text pattern: one finder for the probe and the check."""
        self.assert_text_click(*self.run_page("form.html", "KSR (Form|Done)",
                                              TEXT_CLICK_STEPS)[1:])

    def test_element_by_text_that_matches_nothing(self):
        self.assert_text_fail(*self.run_page("form.html", "KSR Form", TEXT_FAIL_STEPS))

    def assert_page_errors(self, path, out, rc, se):
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        errs = report["page_errors"]
        self.assertEqual([(e["step"], e["kind"]) for e in errs],
                         [(1, "exception"), (2, "console")], errs)
        self.assertIn("boom from the button", errs[0]["text"])
        self.assertIn("errors.html", errs[0]["source"] or "")
        self.assertIn("logged <b>error</b> 42", errs[1]["text"])
        self.assertEqual([e["line"] for e in errs],
                         [ksr.line_of(path, "#boom"), ksr.line_of(path, "#log")])
        self.assertEqual([c["code"] for c in report["concerns"]], ["page-error"] * 2)
        self.assertIn("an uncaught exception during step 1", report["concerns"][0]["message"])
        self.assertIn("a console error during step 2", report["concerns"][1]["message"])
        traced = [e for e in ksr.read_trace(out) if e.get("event") == "page_error"]
        self.assertEqual([e["step"] for e in traced], [1, 2], "in the trace, with the step")
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        self.assertIn("## Page errors", md)
        self.assertIn("logged &lt;b&gt;error&lt;/b&gt; 42", md, "the page's text escaped")

    def test_page_errors_are_concerns(self):
        """An uncaught exception and a console.error, each in the step whose
        click caused it; console.log is not an error."""
        path, out, rc, se = self.run_page("errors.html", "KSR Errors", ERROR_STEPS)
        self.assert_page_errors(path, out, rc, se)

    def click_glider_at_rest(self, start):
        """start() sets #mover gliding; the click must wait until it is at rest
        (the page records when it stopped and when it was clicked)."""
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_eval: "%s()"
            - cdp_click: "#mover"
              checks:
                - page: {selector: "#status", text: "mover clicked"}
                  timeout_s: 2
            - cdp_eval: "window.stoppedAt !== null && window.clickedAt >= window.stoppedAt"
            """ % start)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        click = self.step_ends(out)[1]
        self.assertGreaterEqual(click["box"]["x"], 590, "clicked where it came to rest")

    def test_element_that_moves_until_stable(self):
        self.click_glider_at_rest("startMoving")

    def test_element_that_moves_every_other_frame(self):
        """A glider that moves on every other frame only (72 frames, then at rest
        at 600px): a box compared over one frame reads as still about half the
        time, so the old one-frame check clicked it in flight on one of its
        retries; over two frames it is seen moving on every probe."""
        self.click_glider_at_rest("startSteppedMoving")

    def test_renderer_crash(self):
        path, out, rc, se = self.run_page("form.html", "KSR Form", """\
            - cdp_navigate: "chrome://crash"
              timeout_s: 20
            """)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertIn("renderer crashed", report["reason"])

    def test_browser_killed_mid_command(self):
        display = self.start_xvfb()
        profile, port = self.start_chromium(display, "form.html")
        path = self.scenario_for(profile, port, "KSR Form", """\
            - cdp_eval: "(document.title = 'KSR in flight', new Promise(() => {}))"
              timeout_s: 300
            """)
        out = self.out()
        rt = self.start_rt(["run", path], env=self.env(DISPLAY=display), out=out)
        # Killed once the command is known to be in flight: the page ran it and
        # its window's title says so (an X property change, awaited by xdotool).
        ksr.wait_window_title(self, display, "KSR in flight", proc=rt)
        self.chromium.send_signal(signal.SIGKILL)
        # The step's own timeout is 300 s: the run must end long before it.
        rc = rt.wait(timeout=60)
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=rt.stderr)
        # Two real signals race to tell the death: the browser's pidfd (docs/
        # architecture.md, "The app is watched": the reason names the process
        # and the step) and the CDP socket closing (exec_cdp.c confirms the
        # exit on the pidfd before it says so). Either way the outcome is
        # crashed and the reason says that the browser exited.
        self.assertRegex(report["reason"],
                         r"chromium \(pid %d\) exited .* into step 1, line \d+|"
                         r"^line \d+: the browser exited during the step" % self.chromium.pid)

    def test_no_debugging_port(self):
        display = self.start_xvfb()
        profile, _ = self.start_chromium(display, "form.html", debug=False)
        text = textwrap.dedent("""\
            name: cdp-no-port
            process: ^chromium$
            process_cmdline: '%s'
            window: "KSR Form"
            settle_s: 0.1
            atspi: false
            cdp: true
            steps:
              - cdp_click: "#send"
            """) % re.escape(profile)
        path = self.scenario(text)
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                    timeout=90)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertIn("--remote-debugging-port", report["reason"])
        self.assertIn("--user-data-dir", report["reason"])
        self.assertEqual(ksr.stage(report, "browser-attach")["status"], "failed")
        self.assertEqual(report["steps"], [], "no step ran")

    def test_launches_chromium_and_passes(self):
        profile = os.path.join(self.tmp, "launched-profile")
        launch = " ".join([CHROMIUM, "--user-data-dir=" + profile, "--remote-debugging-port=0"]
                          + FLAGS + [self.url("form.html")])
        path = self.scenario(textwrap.dedent("""\
            name: cdp-launch
            launch: %s
            process: ^chromium$
            window: "KSR (Form|Done)"
            launch_timeout_s: 60
            settle_s: 0.5
            atspi: false
            cdp: true
            steps:
              - cdp_fill: {selector: "#name", text: "Grace"}
              - cdp_press: Tab
              - cdp_type: {selector: "#email", text: "g@h.org"}
              - cdp_press: Return
                checks:
                  - page: {selector: "#greeting", text: "Hello, Grace", title: "Done"}
            """) % launch)
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out, timeout=150)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        ksr.assert_full_stages(report)
        attach = ksr.stage(report, "browser-attach")
        self.assertEqual(attach["status"], "ok")
        self.assertIn("attached to", attach["reason"])
        self.assertTrue(report["app"]["launched"])
        self.assertAppGone(("chromium",), timeout=10)


if __name__ == "__main__":
    unittest.main()
