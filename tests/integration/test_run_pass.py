"""Runs that pass: xterm from Debian, the GTK3 test app, shell/sleep/wait_window
steps with checks, keep_running, and the environment knobs (KASM_RUNTIME_XVFB,
KASM_RUNTIME_XVFB_SIZE, KASM_RUNTIME_OUT)."""

import os
import time
import unittest

import ksr

APP = "ksr-testapp"
SESSION_PROCS = ("Xvfb", "openbox", "dbus-daemon", "at-spi-bus-launcher", "at-spi2-registryd")


class RunPassTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def check_pass_evidence(self, out, rc, se, size=(1280, 720)):
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        ksr.assert_full_stages(report)
        for name in ("boot-wait", "launch", "app-wait", "settle", "first-look", "final-checks"):
            self.assertEqual(ksr.stage(report, name)["status"], "ok", "stage %s" % name)
        self.assertEqual(ksr.stage(report, "accessibility-probe")["status"], "skipped",
                         "atspi: false skips the probe")
        for name in ("browser-attach", "plan", "goal-loop"):
            self.assertEqual(ksr.stage(report, name)["status"], "skipped", "stage %s" % name)
        self.assertEqual(report["concerns"], [])
        # report.json is rendered from the same events as trace.jsonl: every stage
        # that ran left events there, and a progress line on stderr
        traced = {ev.get("stage") for ev in ksr.read_trace(out)}
        for st in report["stages"]:
            if st["status"] == "ok":
                self.assertIn(st["name"], traced, "stage %s left no trace event" % st["name"])
            self.assertIn(st["name"], se, "no progress line for stage %s" % st["name"])
        self.assertNotIn("diagnosis", [s["name"] for s in report["stages"]],
                         "no diagnosis on a pass")
        self.assertTrue(report["app"]["launched"])
        self.assertIn(report["app"]["name"], (APP, "xterm"))
        shot = os.path.join(out, "00-first-look.png")
        self.assertTrue(os.path.exists(shot), "00-first-look.png written")
        self.assertEqual(ksr.png_size(shot), size, "first look is the whole screen")
        self.assertTrue(os.path.exists(os.path.join(out, "launch.log")), "launch.log written")
        self.assertFalse(os.path.exists(os.path.join(out, "99-failure.png")))
        return report

    def test_xterm_passes(self):
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", ksr.scenario_path("xterm-pass.yaml")],
                                     out=out, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(so, "")
        report = self.check_pass_evidence(out, rc, se)
        self.assertEqual(report["scenario"]["name"], "xterm-pass")
        self.assertEqual(report["steps"], [])
        # everything the run started is gone: the app, the private Xvfb, the WM, buses
        self.assertAppGone(None)

    def test_trace_lines_up_with_the_wall_clock_and_the_session_is_gone_at_exit(self):
        # run.start carries the wall clock of t_ms 0 (started_unix_ms), so that
        # what happened outside the process (exec, exit) can be placed on the
        # trace (bench/demo.sh); the display's parts are reaped after DONE is
        # written, still before the process exits
        out = self.out()
        before = time.time() * 1000
        rc, so, se, el = self.run_rt(["run", "--xvfb", ksr.scenario_path("xterm-pass.yaml")],
                                     out=out, timeout=120)
        after = time.time() * 1000
        self.assertNoSanitizerReport(se)
        self.check_pass_evidence(out, rc, se)
        trace = ksr.read_trace(out)
        start = trace[0]
        self.assertEqual(start["event"], "run.start")
        self.assertIn("started_unix_ms", start, start)
        self.assertIsInstance(start["started_unix_ms"], (int, float))
        self.assertGreaterEqual(start["started_unix_ms"], before - 1)
        self.assertLessEqual(start["started_unix_ms"] + trace[-1]["t_ms"], after + 1)
        self.assertAppGone(None)

    def test_testapp_passes_with_env_knobs(self):
        # KASM_RUNTIME_XVFB=1 instead of --xvfb, KASM_RUNTIME_OUT instead of --out,
        # and a non-default screen size
        out = self.out("env-out")
        env = self.env(KASM_RUNTIME_XVFB="1", KASM_RUNTIME_OUT=out,
                       KASM_RUNTIME_XVFB_SIZE="1024x768")
        rc, so, se, el = self.run_rt(["run", ksr.scenario_path("testapp-pass.yaml")],
                                     env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(so, "")
        report = self.check_pass_evidence(out, rc, se, size=(1024, 768))
        self.assertEqual(report["scenario"]["name"], "testapp-pass")
        self.assertAppGone(None)

    def test_default_out_is_ksr_out_in_cwd(self):
        # with neither --out nor KASM_RUNTIME_OUT, evidence lands in ./ksr-out
        cwd = os.path.join(self.tmp, "cwd")
        os.mkdir(cwd)
        import subprocess
        proc = subprocess.run([ksr.BIN, "run", "--xvfb", ksr.scenario_path("testapp-pass.yaml")],
                              env=self.env(), cwd=cwd, capture_output=True, timeout=120,
                              start_new_session=True)
        se = proc.stderr.decode("utf-8", "replace")
        self.assertEvidence(os.path.join(cwd, "ksr-out"), "pass", "completed",
                            rc=proc.returncode, stderr=se)

    def test_steps_and_checks(self):
        out = self.out()
        target = os.path.join(self.tmp, "written-by-step.txt")
        path = ksr.scenario_path("testapp-steps.yaml")
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=120,
                                     env=self.env(KSR_IT_FILE=target))
        self.assertNoSanitizerReport(se)
        report = self.check_pass_evidence(out, rc, se)
        self.assertEqual(ksr.stage(report, "steps")["status"], "ok")
        with open(target) as f:
            self.assertEqual(f.read(), "hello", "the shell step ran with the scenario's variable")
        steps = report["steps"]
        self.assertEqual(len(steps), 4, steps)
        expected = [("shell", "shell", "- shell: printf"), ("sleep", "none", "- sleep:"),
                    ("wait_window", None, "- wait_window:"), ("shell", "shell", "- shell: test")]
        for i, (row, (kind, backend, needle)) in enumerate(zip(steps, expected), 1):
            with self.subTest(step=i):
                self.assertEqual(row["index"], i)
                self.assertEqual(row["kind"], kind)
                self.assertEqual(row["line"], ksr.line_of(path, needle))
                if backend:
                    self.assertEqual(row["backend"], backend)
                self.assertEqual(row["status"], "ok")
        checks = steps[3]["checks"]
        self.assertEqual([c["kind"] for c in checks], ["window", "process", "no_window", "shell"])
        self.assertEqual([c["status"] for c in checks], ["held"] * 4)
        self.assertEqual(checks[0]["line"], ksr.line_of(path, "- window: KSR Steps"))
        self.assertEqual([c["kind"] for c in steps[0]["checks"]], ["file"])
        self.assertAppGone([APP])

    def test_keep_running_on_an_external_display(self):
        # the run's own Xvfb would take the app down with it, so use ours
        display = self.start_xvfb()
        out = self.out()
        env = self.env(DISPLAY=display, NO_AT_BRIDGE="1")
        rc, so, se, el = self.run_rt(["run", ksr.scenario_path("testapp-keep.yaml")],
                                     out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        time.sleep(1.0)
        alive = [(p, n) for p, n in ksr.tagged_pids(self.tag) if n == APP]
        self.assertEqual(len(alive), 1, "keep_running: true leaves the app running: %r" % alive)
        # our Xvfb is untouched by the run
        self.assertIsNone(self.procs[0].poll(), "the runtime must not stop a display it did not start")
        os.kill(alive[0][0], 9)

    def test_app_stopped_on_an_external_display(self):
        display = self.start_xvfb()
        out = self.out()
        path = self.scenario(
            "name: stop-at-end\n"
            "launch: ${KSR_TESTAPP} --title 'KSR Stop'\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Stop$\n"
            "settle_s: 1\n"
            "atspi: false\n")
        env = self.env(DISPLAY=display, NO_AT_BRIDGE="1")
        rc, so, se, el = self.run_rt(["run", path], out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertAppGone([APP])
        self.assertIsNone(self.procs[0].poll(), "the runtime must not stop a display it did not start")

    def test_window_class_and_pid_binding(self):
        # an app already running (not launched by the run) is found by process + window;
        # the run does not stop what it did not launch
        display = self.start_xvfb()
        env = self.env(DISPLAY=display, NO_AT_BRIDGE="1")
        import subprocess
        app = subprocess.Popen([ksr.TESTAPP, "--title", "KSR Preexisting"], env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(app)
        path = self.scenario(
            "name: preexisting\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Preexisting$\n"
            "window_class: ^ksr-testapp$\n"
            "launch_timeout_s: 30\n"
            "settle_s: 1\n"
            "atspi: false\n")
        out = self.out()
        rc, so, se, el = self.run_rt(["run", path], out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertFalse(os.path.exists(os.path.join(out, "launch.log")),
                         "no launch: means no launch.log")
        self.assertIsNone(app.poll(), "an app the run did not launch is left alone")


if __name__ == "__main__":
    unittest.main()
