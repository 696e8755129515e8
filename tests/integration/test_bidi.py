"""Rung 0 against a real Firefox ESR from Debian under Xvfb, over WebDriver
BiDi, on the pages the CDP tests use (served by a local HTTP server): form
fill + type + click + page: check; covered and disabled elements; hover and
a moving element; keys pressed; the protocol told from the browser and the
port read from the profile (port 0); the browser killed or stopped
mid-command, its content process crashed, a navigation during a step's
script, a page that never loads, no debugging port; one scenario file that
runs unchanged on Chromium and on Firefox; MCP's page tools and `inspect
--cdp` on a Firefox (recording a click: test_record_apps)."""

import os
import re
import shutil
import signal
import socket
import subprocess
import textwrap
import time
import unittest

import json

import ksr
import mcplib
import test_cdp
import test_faults

# Liveness bound after a fault (a wide margin, not a timing figure): the
# waits the faults interrupt would take minutes.
EXIT_BOUND_S = 40

FIREFOX = shutil.which("firefox-esr") or "/usr/bin/firefox-esr"
# A fresh profile must not open its first-run pages over the test's page.
USER_JS = """\
user_pref("browser.aboutwelcome.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("browser.tabs.warnOnClose", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.auto", false);
user_pref("browser.sessionstore.resume_from_crash", false);
"""
BOTH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios",
                    "page-form-both.yaml")


class BidiTest(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not os.access(FIREFOX, os.X_OK):
            self.fail("firefox-esr is not installed (scripts/setup.sh deps)")
        self.http_port = test_cdp.CdpTest.start_http(self)

    # --- helpers ---------------------------------------------------------

    def url(self, page):
        return "http://127.0.0.1:%d/%s" % (self.http_port, page)

    def profile(self):
        path = os.path.join(self.tmp, "ff-profile-%d" % len(self.procs))
        os.makedirs(path)
        with open(os.path.join(path, "user.js"), "w") as f:
            f.write(USER_JS)
        return path

    def firefox_args(self, profile, page):
        return [FIREFOX, "--profile", profile, "--no-remote", "--remote-debugging-port", "0",
                self.url(page)]

    def start_firefox(self, display, page):
        """Firefox on display with a fresh profile and port 0; the port read
        back from WebDriverBiDiServer.json. Returns (profile, port)."""
        profile = self.profile()
        p = subprocess.Popen(self.firefox_args(profile, page), env=self.env(DISPLAY=display),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        self.firefox = p
        path = os.path.join(profile, "WebDriverBiDiServer.json")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    port = int(re.search(r'"ws_port":\s*(\d+)', f.read()).group(1))
                if port:
                    return profile, port
            except (OSError, AttributeError, ValueError):
                pass
            self.assertIsNone(p.poll(), "firefox exited early")
            time.sleep(0.1)
        self.fail("firefox wrote no WebDriverBiDiServer.json")

    def run_page(self, page, title, steps, cdp=None, timeout=120):
        display = self.start_xvfb()
        profile, port = self.start_firefox(display, page)
        text = textwrap.dedent("""\
            name: bidi-it
            process: ^firefox-esr$
            process_cmdline: '%s'
            window: "%s"
            settle_s: 0.2
            atspi: false
            cdp: %s
            cdp_targets:
              submit: "#send"
            steps:
            """) % (re.escape(profile), title, cdp or "{port: %d, browser: firefox}" % port)
        path = self.scenario(text + textwrap.indent(textwrap.dedent(steps), "  "))
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                    timeout=timeout)
        self.assertNoSanitizerReport(se)
        return path, out, rc, se

    def step_ends(self, out):
        return [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]

    # --- the cases -------------------------------------------------------

    def test_form_fill_type_click_page_check(self):
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
        attach = ksr.stage(report, "browser-attach")
        self.assertEqual(attach["status"], "ok")
        self.assertIn("over WebDriver BiDi", attach["reason"])
        self.assertEqual(len(report["steps"]), 7)
        for st in report["steps"]:
            self.assertEqual((st["backend"], st["rung"], st["status"]), ("cdp", "page", "ok"))
        ends = self.step_ends(out)
        self.assertEqual({e["protocol"] for e in ends}, {"bidi"})
        click = ends[4]
        self.assertEqual(click["kind"], "cdp_click", "the older name, as written, is kept")
        self.assertEqual((click["target"], click["selector"]), ("submit", "#send"))
        self.assertTrue(click["box"]["x"] <= click["point"]["x"]
                        <= click["box"]["x"] + click["box"]["w"])

    def test_page_check_that_does_not_hold(self):
        path, out, rc, se = self.run_page("form.html", "KSR Form", """\
            - cdp_click: submit
              checks:
                - page: {selector: "#greeting", text: "Goodbye"}
                  timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertIn("Goodbye", report["reason"])

    def test_covered_element_names_the_interceptor(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_click: "#covered"
              timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn('is covered by <div id="overlay">', report["reason"])
        self.assertIn("box", self.step_ends(out)[0], "the box it resolved to is recorded")

    def test_disabled_button_and_falsy_eval(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - cdp_click: "#off"
              timeout_s: 1
            """)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("#off is disabled", report["reason"])

    def test_hover_and_moving_element(self):
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - hover: {selector: "#hoverme"}
              checks:
                - page: {selector: "#status", text: "hovered"}
            - cdp_eval: "startMoving()"
            - cdp_click: "#mover"
              checks:
                - page: {selector: "#status", text: "mover clicked"}
                  timeout_s: 2
            - cdp_eval: "window.stoppedAt !== null && window.clickedAt >= window.stoppedAt"
            """)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertGreaterEqual(self.step_ends(out)[2]["box"]["x"], 590)

    def test_element_that_moves_every_other_frame(self):
        """The glider that moves on every other frame only (test_cdp's case):
        seen moving on every probe, clicked where it came to rest."""
        path, out, rc, se = self.run_page("actions.html", "KSR Actions", """\
            - page_eval: "startSteppedMoving()"
            - page_click: "#mover"
              checks:
                - page: {selector: "#status", text: "mover clicked"}
                  timeout_s: 2
            - page_eval: "window.stoppedAt !== null && window.clickedAt >= window.stoppedAt"
            """)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertGreaterEqual(self.step_ends(out)[1]["box"]["x"], 590)

    def test_element_by_text(self):
        """test_cdp's steps by text, on Firefox: one finder for both protocols."""
        _, out, rc, se = self.run_page("form.html", "KSR (Form|Done)",
                                       test_cdp.TEXT_CLICK_STEPS)
        test_cdp.CdpTest.assert_text_click(self, out, rc, se)
        self.assertEqual(self.step_ends(out)[2]["protocol"], "bidi")

    def test_element_by_text_that_matches_nothing(self):
        test_cdp.CdpTest.assert_text_fail(
            self, *self.run_page("form.html", "KSR Form", test_cdp.TEXT_FAIL_STEPS))

    def test_page_errors_are_concerns(self):
        """test_cdp's page errors, on Firefox (log.entryAdded)."""
        test_cdp.CdpTest.assert_page_errors(
            self, *self.run_page("errors.html", "KSR Errors", test_cdp.ERROR_STEPS))

    def test_told_from_the_browser_port_from_the_profile(self):
        """cdp: true only: the attach sees a Firefox and reads its port 0's
        real port from the profile; keys are pressed into the page."""
        path, out, rc, se = self.run_page("form.html", "KSR (Form|Done)", """\
            - cdp_fill: {selector: "#name", text: "Grace"}
            - cdp_press: Tab
            - cdp_eval: "document.activeElement.id === 'email'"
            - cdp_type: {selector: "#email", text: "g@h.org"}
            - cdp_press: Return
              checks:
                - page: {selector: "#greeting", text: "Hello, Grace", title: "Done"}
            """, cdp="true")
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertIn("over WebDriver BiDi", ksr.stage(report, "browser-attach")["reason"])

    # --- faults ------------------------------------------------------------

    def test_browser_killed_mid_command(self):
        display = self.start_xvfb()
        profile, port = self.start_firefox(display, "form.html")
        path = self.scenario(textwrap.dedent("""\
            name: bidi-killed
            process: ^firefox-esr$
            process_cmdline: '%s'
            window: "KSR Form"
            settle_s: 0.2
            atspi: false
            cdp: {port: %d, browser: firefox}
            steps:
              - cdp_eval: "(document.title = 'KSR in flight', new Promise(() => {}))"
                timeout_s: 300
            """) % (re.escape(profile), port))
        out = self.out()
        rt = self.start_rt(["run", path], env=self.env(DISPLAY=display), out=out)
        # Killed once the command is in flight: the page ran it (its title says so).
        ksr.wait_window_title(self, display, "KSR in flight", proc=rt)
        os.killpg(self.firefox.pid, signal.SIGKILL)
        rc = rt.wait(timeout=60)  # the step's own timeout is 300 s
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"firefox-esr \(pid %d\) exited|"
                         r"the browser exited during the step" % self.firefox.pid)

    def kill_content_processes(self):
        """SIGKILL the tab content processes of the Firefox under test (its
        session's processes whose last argument is 'tab'), as a crash would."""
        out = subprocess.run(["ps", "-eo", "pid,sid,args"], capture_output=True,
                             text=True).stdout.splitlines()[1:]
        killed = 0
        for line in out:
            pid, sid, args = line.split(None, 2)
            if int(sid) == self.firefox.pid and args.split()[-1] == "tab":
                os.kill(int(pid), signal.SIGKILL)
                killed += 1
        self.assertGreater(killed, 0, "no content process found")

    def test_content_process_crash(self):
        """The tab's content process killed while a step waits on the page:
        Firefox shows its crash page, the step ends as crashed, not at its
        timeout."""
        display = self.start_xvfb()
        profile, port = self.start_firefox(display, "form.html")
        path = self.scenario(textwrap.dedent("""\
            name: bidi-content-crash
            process: ^firefox-esr$
            process_cmdline: '%s'
            window: "KSR Form"
            settle_s: 0.2
            atspi: false
            cdp: {port: %d, browser: firefox}
            steps:
              - cdp_eval: "(document.title = 'KSR waiting', true)"
              - cdp_wait: "#never"
                timeout_s: 300
            """) % (re.escape(profile), port))
        out = self.out()
        rt = self.start_rt(["run", path], env=self.env(DISPLAY=display), out=out)
        ksr.wait_window_title(self, display, "KSR waiting", proc=rt)
        self.kill_content_processes()
        rc = rt.wait(timeout=60)
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=rt.stderr)
        self.assertIn("content process crashed", report["reason"])

    def test_page_that_never_loads_is_bounded(self):
        """A server that accepts and never answers: the navigation ends at the
        step's timeout as a failed step, not a hang."""
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        self.addCleanup(silent.close)
        url = "http://127.0.0.1:%d/never" % silent.getsockname()[1]
        path, out, rc, se = self.run_page("form.html", "KSR Form", """\
            - cdp_navigate: "%s"
              timeout_s: 2
            """ % url)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertIn("after 2 s", report["reason"])

    def fault_scenario(self, name, profile, port, steps):
        return self.scenario(textwrap.dedent("""\
            name: %s
            process: ^firefox-esr$
            process_cmdline: '%s'
            window: "KSR Form"
            settle_s: 0.2
            atspi: false
            cdp: {port: %d, browser: firefox}
            steps:
            """) % (name, re.escape(profile), port) + textwrap.indent(
                textwrap.dedent(steps), "  "))

    def test_browser_stopped_mid_command(self):
        """Firefox's parent process relays every BiDi message: SIGSTOPped once
        the page runs the page_eval, nothing answers; the step ends at its
        own timeout as a failed step, and closing the session is bounded."""
        display = self.start_xvfb()
        profile, port = self.start_firefox(display, "form.html")
        path = self.fault_scenario("bidi-stopped", profile, port, """\
            - page_eval: "(document.title = 'KSR in flight',
                new Promise(r => setTimeout(() => r(true), 60000)))"
              timeout_s: 8
            """)
        out = self.out()
        rt = self.start_rt(["run", path], env=self.env(DISPLAY=display), out=out)
        ksr.wait_window_title(self, display, "KSR in flight", proc=rt)
        self.addCleanup(test_faults.cont, self.firefox.pid)
        os.kill(self.firefox.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        rc = rt.wait(timeout=EXIT_BOUND_S + 60)
        self.assertLess(time.monotonic() - t0, EXIT_BOUND_S, rt.stderr[-3000:])
        self.assertNoSanitizerReport(rt.stderr)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc,
                                     stderr=rt.stderr)
        self.assertIn("did not answer script.evaluate in time", report["reason"])

    def test_navigation_during_a_step_script(self):
        """The page navigates away while a page_eval awaits a promise of the
        old page: Firefox never answers that call; the new document's load
        ends the step at once as a failed step saying so, not at its
        timeout. The page: check after a navigating click (its probe may
        meet the old document) still holds."""
        display = self.start_xvfb()
        profile, port = self.start_firefox(display, "form.html")
        path = self.fault_scenario("bidi-navigated", profile, port, """\
            - page_click: "#send"
              checks:
                - page: {selector: "#greeting", text: "Hello"}
            - page_eval: "(setTimeout(() => location.href = 'form.html?again', 200),
                new Promise(() => {}))"
              timeout_s: 120
            """)
        out = self.out()
        t0 = time.monotonic()
        rc, so, se, _ = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                    timeout=180)
        self.assertLess(time.monotonic() - t0, EXIT_BOUND_S + 20, se[-3000:])
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertEqual(report["steps"][0]["status"], "ok", report["steps"])
        self.assertIn("loaded a new document (http://127.0.0.1:%d/form.html?again)"
                      % self.http_port, report["reason"])
        self.assertIn("result is lost", report["reason"])

    # --- the other front ends ------------------------------------------------

    def test_mcp_page_tools_on_firefox(self):
        """MCP's page tools over WebDriver BiDi: page_list_interactive finds
        the browser from the windows' processes (a Firefox: its BiDi port
        from the profile); cdp_fill, the older name, still answers; the
        click submits the form (the page server's log has the query)."""
        mcplib.require_client(self)
        display = self.start_xvfb()
        self.start_firefox(display, "form.html")
        ksr.wait_window_title(self, display, "KSR Form")
        client = mcplib.SdkClient(self, ["mcp"], self.env(DISPLAY=display))
        ans = client.call("page_list_interactive")
        self.assertTrue(ans.get("ok") and not ans["result"].get("isError"), ans)
        got = ans["result"]["structuredContent"]
        self.assertEqual(got["protocol"], "bidi", got)
        self.assertIn("/form.html", got["url"])
        named = {(e["role"], e["name"]) for e in got["elements"]}
        self.assertIn(("button", "Send"), named, got)
        self.assertIn(("textbox", "Name"), named, got)
        send = [e["id"] for e in got["elements"] if e["name"] == "Send"][0]
        ans = client.call("cdp_fill", {"ref": "#name", "text": "Ada"})
        self.assertFalse(ans["result"].get("isError"), ans)
        ans = client.call("page_click", {"ref": send})
        self.assertFalse(ans["result"].get("isError"), ans)
        ksr.wait_window_title(self, display, "KSR Done")
        ans = client.call("page_list_interactive")
        self.assertIn("/done.html?name=Ada&email=", ans["result"]["structuredContent"]["url"])
        self.assertNoSanitizerReport(client.close())

    def test_inspect_cdp_lists_a_firefox_page(self):
        """inspect --cdp PORT on Firefox's port: the page's elements over
        WebDriver BiDi (no DevTools endpoint answers there)."""
        display = self.start_xvfb()
        _profile, port = self.start_firefox(display, "form.html")
        ksr.wait_window_title(self, display, "KSR Form")
        rc, so, se, _ = self.run_rt(["inspect", "--json", "--cdp", str(port), "--window",
                                     "KSR Form", "--timeout", "60"],
                                    env=self.env(DISPLAY=display), timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se[-2000:])
        page = json.loads(so)["page"]
        self.assertEqual((page["status"], page.get("protocol")), ("ok", "bidi"), page)
        self.assertIn(("button", "Send"), {(e["role"], e["name"]) for e in page["elements"]})

    def test_no_debugging_port(self):
        display = self.start_xvfb()
        profile = self.profile()
        p = subprocess.Popen([FIREFOX, "--profile", profile, "--no-remote",
                              self.url("form.html")], env=self.env(DISPLAY=display),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(p)
        path = self.scenario(textwrap.dedent("""\
            name: bidi-no-port
            process: ^firefox-esr$
            process_cmdline: '%s'
            window: "KSR Form"
            settle_s: 0.1
            atspi: false
            cdp: true
            steps:
              - cdp_click: "#send"
            """) % re.escape(profile))
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                    timeout=90)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertIn("--remote-debugging-port", report["reason"])
        self.assertIn("--profile DIR", report["reason"])
        self.assertEqual(report["steps"], [], "no step ran")

    def run_both(self, cmd, proc):
        out = self.out()
        env = self.env(KSR_PAGE_BROWSER=cmd, KSR_PAGE_PROCESS=proc,
                       KSR_PAGE_URL=self.url("form.html"))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", BOTH], env=env, out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        return report, self.step_ends(out)

    def test_one_scenario_file_on_both_browsers(self):
        chromium = " ".join([test_cdp.CHROMIUM, "--user-data-dir=" + os.path.join(
            self.tmp, "chromium-profile"), "--remote-debugging-port=0"] + test_cdp.FLAGS)
        _, ends = self.run_both(chromium, "^chromium$")
        self.assertEqual({e["protocol"] for e in ends if "protocol" in e}, {"cdp"})
        self.assertEqual([e["kind"] for e in ends], ["page_fill", "page_type", "page_click"])
        firefox = " ".join(self.firefox_args(self.profile(), "form.html")[:-1])
        _, ends = self.run_both(firefox, "^firefox-esr$")
        self.assertEqual({e["protocol"] for e in ends if "protocol" in e}, {"bidi"})


if __name__ == "__main__":
    unittest.main()
