"""The display and the evidence folder: no display, an unwritable OUT, a second
run locked out of a live run's folder, a later run replacing an earlier
run's DONE without ever exposing the stale one, and the earlier run's files
moved to OUT/previous/ (one generation) while files no run wrote stay."""

import json
import os
import signal
import textwrap
import time
import unittest

import ksr

APP = "ksr-testapp"


class RunOutputTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    # ---- display ------------------------------------------------------------

    def test_no_display(self):
        out = self.out()
        rc, so, se, el = self.run_rt(["run", ksr.scenario_path("testapp-pass.yaml")], out=out,
                                     timeout=60)
        self.assertNoSanitizerReport(se)
        self.assertEqual(so, "")
        report = self.assertEvidence(out, "test-error", "no-display", rc=rc, stderr=se)
        self.assertLess(el, 20, "DISPLAY unset is known at once; no boot wait needed")
        self.assertIn("DISPLAY", report["reason"])
        self.assertEqual(ksr.tagged_pids(self.tag), [], "nothing launched without a display")

    def test_unreachable_display_boot_timeout(self):
        path = self.scenario(textwrap.dedent("""\
            name: unreachable
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            boot_timeout_s: 2
            atspi: false
            """))
        out = self.out()
        display = ksr.unused_display()
        rc, so, se, el = self.run_rt(["run", path], out=out, timeout=60,
                                     env=self.env(DISPLAY=display))
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "no-display", rc=rc, stderr=se)
        self.assertGreaterEqual(el, 1.5, "the boot wait lasts boot_timeout_s")
        self.assertLess(el, 20, "and not much longer")
        self.assertIn(ksr.stage(report, "boot-wait")["status"], ("timeout", "failed"))
        self.assertIn(display, report["reason"], "the reason names the display")
        self.assertEqual(ksr.tagged_pids(self.tag), [])

    # ---- unwritable OUT --------------------------------------------------------

    def test_unwritable_out(self):
        blocker = os.path.join(self.tmp, "file")
        with open(blocker, "w") as f:
            f.write("a regular file\n")
        out = os.path.join(blocker, "out")
        for how in ("flag", "env"):
            with self.subTest(how=how):
                if how == "flag":
                    rc, so, se, el = self.run_rt(["run", "--xvfb",
                                                  ksr.scenario_path("testapp-pass.yaml")],
                                                 out=out, timeout=120)
                else:
                    rc, so, se, el = self.run_rt(["run", "--xvfb",
                                                  ksr.scenario_path("testapp-pass.yaml")],
                                                 env=self.env(KASM_RUNTIME_OUT=out), timeout=120)
                self.assertNoSanitizerReport(se)
                self.assertEqual(rc, 2, "unwritable OUT is a test-error; stderr:\n" + se)
                self.assertEqual(so, "")
                self.assertTrue(any(out in line for line in se.splitlines()),
                                "a stderr line names the OUT path:\n" + se)
                with open(blocker) as f:
                    self.assertEqual(f.read(), "a regular file\n", "the blocking file is untouched")
                self.assertEqual(ksr.wait_tagged_gone(self.tag), [])

    # ---- two runs, one folder ---------------------------------------------------

    def test_concurrent_second_run_is_locked_out(self):
        out = self.out()
        path_a = self.scenario(textwrap.dedent("""\
            name: holder
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 60
            atspi: false
            """), "a.yaml")
        a = self.start_rt(["run", "--xvfb", path_a], out=out)
        ksr.wait_for_trace_event(out, ksr.in_stage("settle"), timeout=60, proc=a)
        # (trace.jsonl grows and launch.log takes the app's output while A runs)
        before = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in ksr.list_files(out)
                  if n != "trace.jsonl" and not n.endswith(".log")}
        trace_before = open(os.path.join(out, "trace.jsonl"), "rb").read()

        # B, with a scenario that would pass at once if it ran, and another that
        # finishes on its own; both must be refused at once
        rc, so, se, el = self.run_rt(["run", "--xvfb", ksr.scenario_path("testapp-pass.yaml")],
                                     out=out, timeout=60)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 2, "the second run is refused:\n" + se)
        self.assertLess(el, 10, "refused at once, not after waiting")
        self.assertIn(str(a.pid), se, "the message names the PID holding the folder")
        self.assertIsNone(a.poll(), "the first run is unaffected")
        self.assertFalse(os.path.exists(os.path.join(out, "DONE")), "B wrote no DONE")
        self.assertFalse(os.path.exists(os.path.join(out, "report.json")), "B wrote no report")
        after = {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in ksr.list_files(out)
                 if n != "trace.jsonl" and not n.endswith(".log")}
        self.assertEqual(after, before, "B touched nothing in A's folder")
        self.assertTrue(open(os.path.join(out, "trace.jsonl"), "rb").read().startswith(trace_before),
                        "A's trace is only appended to, never restarted")

        # A ends normally (interrupted) with its own evidence
        a.signal(signal.SIGTERM)
        rc_a = a.wait(timeout=30)
        self.assertEvidence(out, "test-error", "interrupted", rc=rc_a, pid=a.pid, stderr=a.stderr)
        # the lock is released: a third run may use the folder now
        rc, so, se, el = self.run_rt(["run", "--xvfb", ksr.scenario_path("testapp-pass.yaml")],
                                     out=out, timeout=120)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)

    def test_sequential_run_replaces_done(self):
        out = self.out()
        # run 1: pass
        rc1, so, se1, el = self.run_rt(["run", "--xvfb", ksr.scenario_path("testapp-pass.yaml")],
                                       out=out, timeout=120)
        first = self.assertEvidence(out, "pass", "completed", rc=rc1, stderr=se1)
        first_start = ksr.read_trace(out)[0]

        # run 2: app-failed after a while, into the same folder
        path2 = self.scenario(textwrap.dedent("""\
            name: second
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
              - sleep: 1
              - shell: exit 1
            """), "second.yaml")
        b = self.start_rt(["run", "--xvfb", path2], out=out)
        done = os.path.join(out, "DONE")
        trace_is_new = False
        seen_done = []
        deadline = time.monotonic() + 120
        # From the moment B's trace has started, a watcher must never read a
        # stale DONE: either none, or B's own ("app-failed").
        while b.poll() is None and time.monotonic() < deadline:
            if not trace_is_new:
                ev = ksr.read_trace(out)
                trace_is_new = bool(ev) and ev[0].get("event") == "run.start" \
                    and ev[0].get("pid") == b.pid
            else:
                try:
                    with open(done) as f:
                        seen_done.append(f.read())
                except FileNotFoundError:
                    pass
            time.sleep(0.05)
        rc2 = b.wait(timeout=30)
        self.assertTrue(trace_is_new, "B's run.start was seen while it ran")
        self.assertNotIn("pass\n", seen_done, "a stale DONE was visible during the second run")
        second = self.assertEvidence(out, "app-failed", "step-failed", rc=rc2, pid=b.pid,
                                     stderr=b.stderr)
        second_start = ksr.read_trace(out)[0]
        self.assertNotEqual(second_start["run_id"], first_start["run_id"])
        self.assertEqual(second["scenario"]["name"], "second")
        with open(done) as f:
            self.assertEqual(f.read(), "app-failed\n")
        self.assertNotEqual(first["verdict"], second["verdict"])

    def test_earlier_run_moves_to_previous(self):
        out = self.out()
        failing = self.scenario(textwrap.dedent("""\
            name: failing
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0.5
            atspi: false
            steps:
              - shell: exit 1
            """), "failing.yaml")
        passing = ksr.scenario_path("testapp-pass.yaml")
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", failing], out=out, timeout=120)
        first = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertTrue(os.path.exists(os.path.join(out, "99-failure.png")))
        first_files = set(ksr.list_files(out)) - {".lock"}
        with open(os.path.join(out, "notes.txt"), "w") as f:
            f.write("the user's own file\n")

        rc, _so, se, _el = self.run_rt(["run", "--xvfb", passing], out=out, timeout=120)
        second = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        here = set(os.listdir(out))
        self.assertNotIn("99-failure.png", here, "the earlier run's failure screenshot moved")
        self.assertIn("notes.txt", here, "a file no run wrote stays")
        prev = os.path.join(out, "previous")
        self.assertEqual(set(ksr.list_files(prev)), {os.path.basename(p) for p in first_files})
        with open(os.path.join(prev, "DONE")) as f:
            self.assertEqual(f.read(), "app-failed\n")
        with open(os.path.join(prev, "report.json")) as f:
            self.assertEqual(json.load(f)["run_id"], first["run_id"])
        folder = second["evidence_folder"]
        self.assertEqual(folder["previous"], "previous")
        self.assertEqual(folder["foreign"], ["notes.txt"])
        self.assertEqual(set(folder["moved"]), first_files)

        # one generation: the third run's previous/ is the second run's alone
        rc, _so, se, _el = self.run_rt(["run", "--xvfb", passing], out=out, timeout=120)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertNotIn("99-failure.png", os.listdir(prev))
        with open(os.path.join(prev, "report.json")) as f:
            self.assertEqual(json.load(f)["run_id"], second["run_id"])
        self.assertIn("notes.txt", os.listdir(out))


if __name__ == "__main__":
    unittest.main()
