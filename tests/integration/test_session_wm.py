"""The window manager's death mid-run is recorded (docs/report.md#events).

The run is on a display the test owns (Xvfb + openbox); a shell step kills
that openbox (by its pid: never another session's) and waits for it to be
gone (the test's zombie). The run records a `session` event `wm-lost` naming the window manager
and its check window, and a `wm-lost` concern: pass-with-concerns, since
nothing else failed. A run whose window manager stays has no such event.
"""

import textwrap
import unittest

import ksr


def events(out, name):
    return [e for e in ksr.read_trace(out) if e.get("event") == name]


class SessionWmTest(ksr.KsrTestCase):
    needs_testapp = False

    def run_on_own_display(self, steps):
        display, procs = ksr.start_xvfb(self.env())
        self.procs.extend(procs)
        wm = procs[-1]
        path = self.scenario(textwrap.dedent("""\
            name: wm-dies
            launch: exec xterm -T 'KSR WM'
            process: ^xterm$
            window: ^KSR WM$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            steps:
            """) + textwrap.indent(textwrap.dedent(steps % {"wm": wm.pid}), "  "))
        out = self.out()
        rc, so, se, el = self.run_rt(["run", path], env=self.env(DISPLAY=display), out=out,
                                     timeout=120)
        self.assertNoSanitizerReport(se)
        return out, rc, se, wm

    def test_wm_killed_during_the_steps_is_a_concern(self):
        out, rc, se, wm = self.run_on_own_display("""\
            - shell: >-
                kill %(wm)d; while [ -e /proc/%(wm)d ] &&
                [ "$(cut -d' ' -f3 /proc/%(wm)d/stat 2>/dev/null)" != Z ]; do sleep 0.05; done
            - sleep: 0.2
            """)
        self.assertIsNotNone(wm.poll(), "the shell step killed the window manager")
        report = self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        lost = [e for e in events(out, "session") if e.get("what") == "wm-lost"]
        self.assertEqual(len(lost), 1, events(out, "session"))
        name = lost[0]["wm"]["name"]
        self.assertTrue(name, "the window manager is named")
        self.assertRegex(lost[0]["wm"]["check_window"], r"^0x[0-9a-f]+$")
        self.assertIsNone(lost[0]["replaced_by"])
        self.assertRegex(lost[0]["seen_gone"], r"^the end of (step [12], line \d+|the \S+ stage)$")
        concerns = [c for c in report["concerns"] if c["code"] == "wm-lost"]
        self.assertEqual(len(concerns), 1, report["concerns"])
        self.assertIn("the window manager %s went away during the run" % name,
                      concerns[0]["message"])
        self.assertIn("no window manager manages the display now", concerns[0]["message"])

    def test_wm_that_stays_is_no_concern(self):
        out, rc, se, wm = self.run_on_own_display("""\
            - sleep: 0.2
            """)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertIsNone(wm.poll())
        sessions = events(out, "session")
        self.assertEqual([e["what"] for e in sessions], ["wm"])
        self.assertTrue(sessions[0]["wm"]["name"])
        self.assertEqual(report["concerns"], [])


if __name__ == "__main__":
    unittest.main()
