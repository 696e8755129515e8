"""`watch` over real runs of the GTK3 test app on private Xvfb sessions:
golden structure of the lines for a pass and an app failure (text and --json
say the same), an interrupted run, a run already finished, several runs at
once (--recursive), a runtime killed with SIGKILL (terminal_died), a folder
that never gets a run or is deleted; JUnit from run --junit and watch --junit
validated against tests/data/junit/junit-10.xsd."""

import os
import shutil
import signal
import textwrap
import time
import unittest

import ksr
import watchlib

PASS_STAGES = [("boot-wait", "ok"), ("launch", "ok"), ("app-wait", "ok"), ("settle", "ok"),
               ("accessibility-probe", "skipped"), ("first-look", "ok"),
               ("browser-attach", "skipped")]
END_STAGES = [("plan", "skipped"), ("goal-loop", "skipped"), ("final-checks", "ok")]


def scenario_text(name, steps):
    return textwrap.dedent("""\
        name: %s
        launch: ${KSR_TESTAPP}
        process: ^ksr-testapp$
        window: ^KSR Test App$
        launch_timeout_s: 30
        settle_s: 1
        atspi: false
        steps:
        """ % name) + steps


def stage_rows(rows):
    return [("EVENT", "stage", "R1", "name=%s" % n, "status=%s" % s) for n, s in rows]


def done_row(**counts):
    full = {"runs": 1, "pass": 0, "pass_with_concerns": 0, "app_failed": 0, "test_error": 0,
            "died": 0, "errors": 0, "blocked": 0, "exit_code": 0}
    full.update(counts)
    return ("DONE", "", tuple(sorted(full.items())))


class WatchTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def check_clean(self, *watches):
        for w in watches:
            self.assertNoSanitizerReport(w.stderr)

    def test_pass_golden_text_and_json_and_junit(self):
        out = self.out("run")
        sc = self.scenario(scenario_text("watch-pass", "  - sleep: 0.2\n"))
        # the folder does not exist yet: watch waits for it
        text = watchlib.Watch(self, [out, "--junit", os.path.join(self.tmp, "watch.xml")])
        js = watchlib.Watch(self, [out], json_mode=True)
        rc, so, se, _ = self.run_rt(["run", "--xvfb", "--junit",
                                     os.path.join(self.tmp, "run.xml"), sc], out=out)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(text.wait(30), 0)
        self.assertEqual(js.wait(30), 0)
        self.check_clean(text, js)
        expected = ([("READY", "", "R1", "watch-pass")] + stage_rows(PASS_STAGES) +
                    [("EVENT", "step", "R1", "status=ok", "index=1", "kind=sleep")] +
                    stage_rows([("steps", "ok")] + END_STAGES) +
                    [("EVENT", "terminal_pass", "R1", "verdict=pass", "outcome=completed",
                      "exit_code=0"), done_row(**{"pass": 1})])
        self.assertEqual(watchlib.structure(text.lines()), expected,
                         "\n".join(text.raw_lines()))
        self.assertEqual(js.lines(), text.lines(), "--json says the same as the text lines")
        start = ksr.read_trace(out)[0]
        ready, terminal = text.lines()[0], text.lines()[-2]
        self.assertEqual((ready["run"], ready["pid"]), (start["run_id"], start["pid"]))
        self.assertEqual(terminal["reason"], report["reason"])
        self.assertEqual(terminal["report"], os.path.join(out, "report.md"))
        self.assertEqual(terminal["report_html"], os.path.join(out, "report.html"))
        self.assertTrue(os.path.isfile(terminal["report_html"]))
        for path in ("run.xml", "watch.xml"):
            root = watchlib.validate_junit(self, os.path.join(self.tmp, path))
            cases = root.findall("testsuite/testcase")
            self.assertEqual([c.get("name") for c in cases], ["run", "step 01: sleep (line 9)"])
            self.assertEqual(root.findall(".//failure") + root.findall(".//error"), [])
            self.assertIn(os.path.realpath(out), cases[0].findtext("system-out"))

    def test_app_failed_golden(self):
        out = self.out("run")
        sc = self.scenario(scenario_text("watch-fail", textwrap.indent(textwrap.dedent("""\
            - sleep: 0.1
              checks:
                - file: /nonexistent/ksr-watch
                  timeout_s: 1
            """), "  ")))
        w = watchlib.Watch(self, [out, "--junit", os.path.join(self.tmp, "j.xml")])
        rc, _, se, _ = self.run_rt(["run", "--xvfb", sc], out=out)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertEqual(w.wait(30), 1, "watch exits with the run's exit code")
        self.check_clean(w)
        got = watchlib.structure(w.lines())
        self.assertIn(("EVENT", "step", "R1", "status=failed", "index=1", "kind=sleep"), got)
        self.assertEqual(got[-2:], [("EVENT", "terminal_app_failed", "R1", "verdict=app-failed",
                                     "outcome=check-failed", "exit_code=1"),
                                    done_row(app_failed=1, exit_code=1)])
        self.assertEqual(w.lines()[-2]["reason"], report["reason"])
        root = watchlib.validate_junit(self, os.path.join(self.tmp, "j.xml"))
        fails = root.findall(".//failure")
        self.assertEqual(len(fails), 2, "the run and its step failed")
        self.assertEqual(fails[0].get("message"), report["reason"])
        self.assertEqual(fails[0].get("type"), "check-failed")

    def test_interrupted(self):
        out = self.out("run")
        sc = self.scenario(scenario_text("watch-int", "  - sleep: 60\n"))
        w = watchlib.Watch(self, [out])
        rt = self.start_rt(["run", "--xvfb", sc], out=out)
        ksr.wait_for_trace_event(out, lambda e: e.get("event") == "step.start", 60, proc=rt)
        rt.signal(signal.SIGTERM)
        self.assertEqual(rt.wait(60), 2)
        self.assertEqual(w.wait(30), 2)
        self.check_clean(w)
        got = watchlib.structure(w.lines())
        self.assertEqual(got[-2:], [("EVENT", "terminal_test_error", "R1", "verdict=test-error",
                                     "outcome=interrupted", "exit_code=2"),
                                    done_row(test_error=1, exit_code=2)])

    def test_already_finished_prints_terminal_and_done_at_once(self):
        out = self.out("run")
        sc = self.scenario(scenario_text("watch-done", "  - sleep: 0.1\n"))
        rc, _, se, _ = self.run_rt(["run", "--xvfb", sc], out=out)
        self.assertEqual(rc, 0, se[-2000:])
        w = watchlib.Watch(self, [out])
        self.assertEqual(w.wait(10), 0)
        self.assertEqual(watchlib.structure(w.lines()), [
            ("READY", "", "R1", "watch-done"),
            ("EVENT", "terminal_pass", "R1", "verdict=pass", "outcome=completed", "exit_code=0"),
            done_row(**{"pass": 1})], "no history for a finished run")

    def test_several_at_once_recursive(self):
        runs = self.out("runs")
        ok_sc = self.scenario(scenario_text("multi-pass", "  - sleep: 0.5\n"), "a.yaml")
        bad_sc = self.scenario(scenario_text("multi-fail", "  - shell: exit 3\n"), "b.yaml")
        for n in ("a", "b"):
            os.makedirs(os.path.join(runs, n))
        w = watchlib.Watch(self, ["--recursive", runs, "--junit",
                                  os.path.join(self.tmp, "all.xml")])
        ra = self.start_rt(["run", "--xvfb", ok_sc], out=os.path.join(runs, "a"))
        rb = self.start_rt(["run", "--xvfb", bad_sc], out=os.path.join(runs, "b"))
        self.assertEqual(ra.wait(120), 0, ra.stderr[-2000:])
        self.assertEqual(rb.wait(120), 1, rb.stderr[-2000:])
        self.assertEqual(w.wait(30), 1, "worst exit code of the two")
        self.check_clean(w)
        lines = w.lines()
        terminals = sorted((l["event"], l["verdict"]) for l in lines
                           if l.get("event", "").startswith("terminal_"))
        self.assertEqual(terminals, [("terminal_app_failed", "app-failed"),
                                     ("terminal_pass", "pass")])
        self.assertEqual(sorted(l["scenario"] for l in lines if l["type"] == "READY"),
                         ["multi-fail", "multi-pass"])
        self.assertEqual(lines[-1]["type"], "DONE")
        self.assertEqual((lines[-1]["runs"], lines[-1]["pass"], lines[-1]["app_failed"]),
                         (2, 1, 1))
        # each run's lines come in its own order: READY first, terminal last
        for rid in {l["run"] for l in lines if "run" in l}:
            mine = [l for l in lines if l.get("run") == rid]
            self.assertEqual(mine[0]["type"], "READY")
            self.assertTrue(mine[-1]["event"].startswith("terminal_"))
        root = watchlib.validate_junit(self, os.path.join(self.tmp, "all.xml"))
        self.assertEqual(len(root.findall("testsuite")), 2)
        self.assertEqual(root.get("failures"), "2", "multi-fail's run and its shell step")

    def test_recursive_over_runs_started_after_the_watch(self):
        # A CI job: one run already finished, four folders made for runs that
        # start one after another once the watch is up. Every run gets its
        # terminal line, though at times every run READ so far has finished.
        runs = self.out("runs")
        sc = self.scenario(scenario_text("later-run", "  - sleep: 0.1\n"))
        names = ["r%d" % i for i in range(5)]
        for n in names:
            os.makedirs(os.path.join(runs, n))
        rc, _, se, _ = self.run_rt(["run", "--xvfb", sc], out=os.path.join(runs, names[0]))
        self.assertEqual(rc, 0, se[-2000:])
        w = watchlib.Watch(self, ["--recursive", runs])
        w.wait_line(lambda l: l.get("event") == "terminal_pass", 30)
        for n in names[1:]:
            self.assertIsNone(w.proc.poll(), "the watch ended before %s ran:\n%s"
                              % (n, "\n".join(w.raw_lines())))
            rt = self.start_rt(["run", "--xvfb", sc], out=os.path.join(runs, n))
            self.assertEqual(rt.wait(120), 0, rt.stderr[-2000:])
        self.assertEqual(w.wait(30), 0)
        self.check_clean(w)
        lines = w.lines()
        outs = sorted(os.path.basename(l["report"].rsplit("/", 1)[0]) for l in lines
                      if l.get("event", "").startswith("terminal_"))
        self.assertEqual(outs, names, "one terminal line a run")
        self.assertEqual((lines[-1]["type"], lines[-1]["runs"], lines[-1]["pass"]),
                         ("DONE", 5, 5))

    def test_sigkilled_runtime_is_terminal_died(self):
        out = self.out("run")
        sc = self.scenario(scenario_text("watch-died", "  - sleep: 60\n"))
        w = watchlib.Watch(self, [out, "--junit", os.path.join(self.tmp, "d.xml")])
        rt = self.start_rt(["run", "--xvfb", sc], out=out)
        ksr.wait_for_trace_event(out, lambda e: e.get("event") == "step.start", 60, proc=rt)
        os.kill(rt.pid, signal.SIGKILL)  # the runtime only: it cannot write DONE
        rt.proc.wait(timeout=10)
        self.assertEqual(w.wait(15), 2)
        self.check_clean(w)
        self.assertFalse(os.path.exists(os.path.join(out, "DONE")))
        got = watchlib.structure(w.lines())
        self.assertEqual(got[-2:], [("EVENT", "terminal_died", "R1", "verdict=test-error",
                                     "outcome=died", "exit_code=2"),
                                    done_row(died=1, exit_code=2)])
        self.assertIn(str(rt.pid), w.lines()[-2]["reason"])
        root = watchlib.validate_junit(self, os.path.join(self.tmp, "d.xml"))
        self.assertEqual(root.find(".//error").get("type"), "died")

    def test_folder_without_run_and_deleted_folder(self):
        never, gone = self.out("never/here"), self.out("gone")
        os.makedirs(gone)
        w = watchlib.Watch(self, ["--timeout", "2", never, gone])
        time.sleep(0.3)
        shutil.rmtree(gone)
        self.assertEqual(w.wait(15), 2)
        self.check_clean(w)
        got = [(l["type"], l.get("code"), l.get("path")) for l in w.lines()]
        self.assertIn(("ERROR", "no-run", never), got)
        self.assertIn(("ERROR", "no-run", gone), got)
        self.assertEqual(got[-1][0], "DONE")
        self.assertEqual(w.lines()[-1]["errors"], 2)

    def test_usage_errors(self):
        rc, so, se, _ = self.run_rt(["watch"])
        self.assertEqual(rc, 2)
        self.assertIn("OUT_DIR", se)
        rc, so, se, _ = self.run_rt(["watch", "--timeout", "x", "/tmp"])
        self.assertEqual(rc, 2)
        rc, so, se, _ = self.run_rt(["watch", "--help"])
        self.assertEqual(rc, 0)
        self.assertIn("--waiting-heartbeat", so)


if __name__ == "__main__":
    unittest.main()
