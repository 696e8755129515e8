"""Launcher restarts are not crash loops (docs/scenario.md#launcher-restarts).

A launcher that ends the app's first process and starts a second one on purpose
(LibreOffice's oosplash restarting soffice.bin, exit status 81, on a new
profile; tests/app/relaunch-once.sh here) is followed: `app.relaunched`, the
new pid is the app (report, alive watch, final checks), and the run passes.
What still fails: an end by a signal (a crash, even when it comes back: then
`crash-loop`), and a second end (Kasm's restart loop around clean exits:
`crash-loop`). Diagnosis's "did not come back" must be true, also when the new
instance started before the crash was held.
"""

import os
import shutil
import textwrap
import unittest

import ksr

APP = "ksr-testapp"
RELAUNCH = os.path.join(ksr.SOURCE_DIR, "tests", "app", "relaunch-once.sh")
CRASHLOOP = os.path.join(ksr.SOURCE_DIR, "tests", "app", "crashloop.sh")


def events(out, name):
    return [e for e in ksr.read_trace(out) if e.get("event") == name]


class RelaunchTest(ksr.KsrTestCase):
    needs_testapp = True

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        extra.setdefault("KSR_IT_RELAUNCH", RELAUNCH)
        extra.setdefault("KSR_IT_CRASHLOOP", CRASHLOOP)
        return super().env(**extra)

    def run_scenario(self, text, timeout=180, session=None):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        saved = os.environ.get(ksr.SESSION_VAR)
        if session:
            os.environ[ksr.SESSION_VAR] = session  # clean_env reads it per call
        try:
            rc, so, se, _el = self.run_rt(["run", "--xvfb", path], out=out, timeout=timeout,
                                          env=self.env())
        finally:
            if session:
                if saved is None:
                    os.environ.pop(ksr.SESSION_VAR, None)
                else:
                    os.environ[ksr.SESSION_VAR] = saved
        self.assertNoSanitizerReport(se)
        return out, rc, se

    # --- a launcher's one restart ----------------------------------------

    def relaunch_once(self, session=None):
        out, rc, se = self.run_scenario("""\
            name: relaunch-once
            launch: exec sh ${KSR_IT_RELAUNCH} -f "--exit-after 1000" ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 5
            atspi: false
            """, session=session)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        rel = events(out, "app.relaunched")
        self.assertEqual(len(rel), 1, rel)
        rel = rel[0]
        self.assertEqual(rel["stage"], "settle")
        self.assertEqual(rel["by"], "parent")
        self.assertEqual(rel["old_exit"], "exited with status 0")
        self.assertNotEqual(rel["old_pid"], rel["new_pid"])
        launch = events(out, "launch")[0]
        self.assertEqual(rel["launcher_pid"], launch["pid"], "the launcher is relaunch-once.sh")
        self.assertEqual(report["app"]["pid"], rel["new_pid"], "the report names the new pid")
        self.assertEqual(report["app"]["window"]["title"], "KSR Test App")
        process = [c for c in report["final_checks"] if c["name"] == "process"]
        self.assertEqual([(c["ok"], c["detail"]) for c in process],
                         [(True, "pid %d is running" % rel["new_pid"])])
        self.assertEqual(report["failures"], [])
        self.assertEqual(events(out, "crash_recheck"), [], "no crash was held")
        self.assertAppGone([APP, "sh"])
        return out, report

    def test_launcher_restart_once_passes(self):
        self.relaunch_once()

    def test_launcher_restart_once_passes_on_xvnc(self):
        if not shutil.which("Xtigervnc") or not shutil.which("xfwm4"):
            self.fail("Xtigervnc and xfwm4 are installed by scripts/setup.sh")
        out, _ = self.relaunch_once(session="xvnc")
        boot = ksr.stage(ksr.load_report(out), "boot-wait")
        self.assertIn("Xtigervnc", boot.get("reason", ""))

    def test_restart_by_the_sessions_own_launcher(self):
        # the Kasm way: the session starts the app (custom_startup.sh), the
        # scenario has no launch:; the first instance is not the runtime's
        # child, so how it ended comes from the kernel
        import subprocess
        display = self.start_xvfb()
        env = self.env(DISPLAY=display, NO_AT_BRIDGE="1")
        launcher = subprocess.Popen(["sh", RELAUNCH, "-f", "--exit-after 4000", ksr.TESTAPP],
                                    env=env, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
        self.procs.append(launcher)
        path = self.scenario(textwrap.dedent("""\
            name: session-launcher
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 8
            atspi: false
            """))
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", path], out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        rel = events(out, "app.relaunched")
        self.assertEqual([(r["by"], r["launcher_pid"], r["old_exit"]) for r in rel],
                         [("parent", launcher.pid, "exited with status 0")])
        self.assertEqual(report["app"]["pid"], rel[0]["new_pid"])
        self.assertFalse(report["app"]["launched"])
        self.assertIsNone(launcher.poll(), "the session's launcher is left alone")

    def test_restart_after_settle_is_followed_by_the_watch(self):
        # the first instance ends during a step: the alive watch follows the
        # new pid, and the step goes on to its end
        out, rc, se = self.run_scenario("""\
            name: relaunch-in-steps
            launch: sh ${KSR_IT_RELAUNCH} -f "--exit-after 2500" ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 0.5
            atspi: false
            steps:
              - sleep: 8
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        rel = events(out, "app.relaunched")
        self.assertEqual([(r["stage"], r["old_exit"]) for r in rel],
                         [("steps", "exited with status 0")])
        self.assertEqual(report["app"]["pid"], rel[0]["new_pid"])
        self.assertEqual([s["status"] for s in report["steps"]], ["ok"])
        self.assertAppGone([APP, "sh"])

    # --- what is still a failure ------------------------------------------

    def test_restart_loop_of_clean_exits_is_a_crash_loop(self):
        # Kasm's custom_startup.sh loop around an app that keeps exiting 0:
        # the first restart is followed, the second end is a crash loop
        out, rc, se = self.run_scenario("""\
            name: clean-exit-loop
            launch: sh ${KSR_IT_CRASHLOOP} ${KSR_TESTAPP} --exit-after 300
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 10
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "crash-loop", rc=rc, stderr=se)
        rel = events(out, "app.relaunched")
        self.assertEqual(len(rel), 1, rel)
        self.assertIn("keeps crashing and coming back", report["reason"])
        self.assertIn("already the app's second instance", report["reason"])
        self.assertIn("pid %d exited with status 0" % rel[0]["old_pid"], report["reason"])
        self.assertAppGone([APP, "sh"])

    def signal_then_restart(self, session=None):
        # the launcher restarts at once, before the crash is held: that instance
        # came back (the diagnosis once said "did not come back" here)
        out, rc, se = self.run_scenario("""\
            name: crash-then-restart
            launch: sh ${KSR_IT_RELAUNCH} -f "--crash-after 300" ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 5
            atspi: false
            """, session=session)
        report = self.assertEvidence(out, "app-failed", "crash-loop", rc=rc, stderr=se)
        self.assertEqual(events(out, "app.relaunched"), [], "a crash is not a relaunch")
        self.assertRegex(report["reason"], r"signal 11\b.*SEGV")
        recheck = events(out, "crash_recheck")
        self.assertEqual([r["came_back"] for r in recheck], [True])
        self.assertIn("the app came back", ksr.stage(report, "diagnosis")["reason"])
        self.assertAppGone([APP, "sh"])

    def test_crash_by_signal_then_restart_is_a_crash_loop(self):
        self.signal_then_restart()

    def test_crash_by_signal_then_restart_is_a_crash_loop_on_xvnc(self):
        if not shutil.which("Xtigervnc") or not shutil.which("xfwm4"):
            self.fail("Xtigervnc and xfwm4 are installed by scripts/setup.sh")
        self.signal_then_restart(session="xvnc")

    def test_crash_of_a_grandchild_that_does_not_come_back(self):
        # the app is the launch shell's child, not the launch itself: how it
        # ended comes from the kernel (pidfd), and nothing comes back
        out, rc, se = self.run_scenario("""\
            name: grandchild-crash
            launch: ${KSR_TESTAPP} --crash-after 300; sleep 30
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 3
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertEqual(events(out, "app.relaunched"), [])
        self.assertRegex(report["reason"], r"signal 11\b.*SEGV")
        self.assertEqual([r["came_back"] for r in events(out, "crash_recheck")], [False])
        self.assertIn("the app did not come back", ksr.stage(report, "diagnosis")["reason"])
        self.assertAppGone([APP, "sh", "sleep"])

    # --- LibreOffice, a real launcher's restart -----------------------------

    def test_libreoffice_first_start_restart_is_followed(self):
        if not shutil.which("soffice"):
            self.skipTest("libreoffice-writer is not installed (an optional app)")
        # --xvfb gives the app a private, empty home: a new profile, so oosplash
        # restarts soffice.bin once (exit status 81) a moment after it starts
        out, rc, se = self.run_scenario("""\
            name: libreoffice-first-start
            launch: soffice --writer --norestore
            process: ^soffice\\.bin$
            window: LibreOffice
            launch_timeout_s: 90
            settle_s: 5
            atspi: false
            """, timeout=300)
        report = ksr.load_report(out)
        self.assertIn(report["verdict"], ("pass", "pass-with-concerns"),
                      "%s: %s\n%s" % (report["verdict"], report["reason"], se[-3000:]))
        self.assertEqual(report["outcome"], "completed")
        self.assertEqual(report["app"]["name"], "soffice.bin")
        for rel in events(out, "app.relaunched"):
            # seen when the app wait took the first soffice.bin (with the splash)
            self.assertEqual(rel["old_exit"], "exited with status 81")
            self.assertEqual(rel["by"], "parent")
            self.assertEqual(report["app"]["pid"], rel["new_pid"])
        process = [c for c in report["final_checks"] if c["name"] == "process"]
        self.assertEqual([(c["ok"], c["detail"]) for c in process],
                         [(True, "pid %d is running" % report["app"]["pid"])])
        self.assertAppGone(["soffice.bin", "oosplash"], timeout=15)


if __name__ == "__main__":
    unittest.main()
