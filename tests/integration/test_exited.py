"""An app that exits before its window ends the app wait at once
(docs/scenario.md#the-app-wait): a launch that prints VLC's refusal to run as
root and exits 1 is app-failed/exited, long before launch_timeout_s, with the
exit status and the message in the reason; a launcher that exits 0 after
starting the real app in the background (a hand-over) is not exited, the run
passes; a launch killed by a signal before its window is still crashed.
`inspect --launch` and `record --launch` stop as soon as the launched command
ended with nothing of its process group left, with the status and the last
output, and a launcher handing over to xterm is still inspected."""

import textwrap
import unittest

import ksr

REFUSAL = "VLC is not supposed to be run as root. Sorry."


class ExitedTest(ksr.KsrTestCase):
    needs_testapp = False

    def run_scenario(self, text, timeout=150):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=timeout)
        self.assertNoSanitizerReport(se)
        return out, rc, se, el

    def test_exit_status_ends_the_wait(self):
        out, rc, se, el = self.run_scenario("""\
            name: refuses-root
            launch: sh -c 'echo "%s" >&2; exit 1'
            process: ^vlc$
            window: VLC
            launch_timeout_s: 60
            """ % REFUSAL)
        report = self.assertEvidence(out, "app-failed", "exited", rc=rc, stderr=se)
        reason = report["reason"]
        self.assertRegex(reason, r"^line 2: sh \(pid \d+\) exited with status 1 after ")
        self.assertIn('"%s"' % REFUSAL, reason)
        self.assertIn("no process matching '^vlc$' is left", reason)
        self.assertIn("no window matching 'VLC' appeared", reason)
        self.assertEqual(ksr.stage(report, "app-wait")["status"], "failed")
        self.assertLess(report["timings"]["duration_ms"], 60000,
                        "ended before launch_timeout_s (60 s)")

    def test_output_is_data(self):
        # control characters and quotes in the output are escaped, the text cut
        out, rc, se, el = self.run_scenario("""\
            name: noisy-exit
            launch: sh -c 'printf "first line\\n\\033[31mred \\"quoted\\"\\n"; exit 3'
            process: ^nothing-runs-this$
            window: Nothing
            launch_timeout_s: 60
            """)
        report = self.assertEvidence(out, "app-failed", "exited", rc=rc, stderr=se)
        reason = report["reason"]
        self.assertIn("exited with status 3", reason)
        self.assertIn('"first line | ?[31mred \\"quoted\\""', reason)
        self.assertNotIn("\x1b", reason)

    def test_launcher_handing_over_passes(self):
        out, rc, se, el = self.run_scenario("""\
            name: hand-over
            launch: sh -c 'xterm -T Real & exit 0'
            process: ^xterm$
            window: Real
            launch_timeout_s: 60
            settle_s: 1
            """)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertAppGone(["xterm"])

    def test_signal_is_still_a_crash(self):
        out, rc, se, el = self.run_scenario("""\
            name: killed
            launch: sh -c 'kill -SEGV $$'
            process: ^vlc$
            window: VLC
            launch_timeout_s: 60
            """)
        report = self.assertEvidence(out, "app-failed", "crashed", rc=rc, stderr=se)
        self.assertIn("signal 11", report["reason"])


    def refusing_launch(self):
        return "sh -c 'echo \"%s\" >&2; exit 1'" % REFUSAL

    def assert_exit_told(self, rc, se, el, timeout):
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 2, se)
        self.assertIn("the app exited: sh (pid ", se)
        self.assertIn("exited with status 1 after ", se)
        self.assertIn('"%s"' % REFUSAL, se)
        self.assertLess(el, timeout, "ended before its %d s bound" % timeout)
        self.assertAppGone(["Xvfb"])

    def test_inspect_launch_that_exits(self):
        rc, _so, se, el = self.run_rt(["inspect", "--xvfb", "--timeout", "60", "--launch",
                                       self.refusing_launch(), "--wait-window", "VLC"],
                                      timeout=120)
        self.assert_exit_told(rc, se, el, 60)
        self.assertIn("no window matching VLC appeared: the app exited", se)

    def test_inspect_launcher_handing_over(self):
        rc, so, se, _el = self.run_rt(["inspect", "--xvfb", "--timeout", "60", "--launch",
                                       "sh -c 'xterm -T Real & exit 0'", "--wait-window",
                                       "Real"], timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se)
        self.assertIn('"Real"', so)
        self.assertAppGone(["xterm"])

    def test_record_launch_that_exits(self):
        # record's setup is bounded by 60 s
        rc, _so, se, el = self.run_rt(["record", "--xvfb", "-o",
                                       self.tmp + "/rec.yaml", "--launch",
                                       self.refusing_launch()], timeout=120)
        self.assert_exit_told(rc, se, el, 60)


if __name__ == "__main__":
    unittest.main()
