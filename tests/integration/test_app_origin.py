"""The app is the one this run started (docs/scenario.md#the-app-is-the-one-this-run-started).

On a display shared with an older instance of the app's program (an xterm the
test started before the run, with the very title the scenario waits for), a
scenario with `launch:` never takes that instance for the app: a launch that
fails at once is app-failed/exited, and a launch that never brings the app is
never-appeared, each reason naming the older xterm by its pid; the older one is
left running. A launcher that daemonizes (`setsid -f`: the app leaves the
launch's session and is reparented to init) is still followed, by the run's tag
(KASM_RUNTIME_RUN_ID in the launched environment): the app is the new xterm,
`origin: tagged`. At the end of a run whatever the launch started that left its
process group (`setsid -f sleep 300`) is found by that tag and stopped (a
`cleanup` event names it), while the older xterm is left alone.
"""

import os
import signal
import subprocess
import textwrap
import unittest

import ksr

RUN_TAG = "KASM_RUNTIME_RUN_ID"


def events(out, name):
    return [e for e in ksr.read_trace(out) if e.get("event") == name]


def run_id_pids(run_id):
    """Live processes whose environment carries KASM_RUNTIME_RUN_ID=run_id."""
    needle = ("%s=%s\0" % (RUN_TAG, run_id)).encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and ksr._proc_environ_has(int(entry), needle) and \
                ksr.proc_state(int(entry)) not in (None, "Z", "X"):
            found.append((int(entry), ksr.proc_name(int(entry))))
    return found


class AppOriginTest(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        self.display = self.start_xvfb()

    def older_xterm(self, title):
        """An xterm on the display before the run, as a shared session has one."""
        xt = subprocess.Popen(["xterm", "-T", title, "-e", "sleep", "600"],
                              env=self.env(DISPLAY=self.display), stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
        self.procs.append(xt)
        ksr.wait_window_title(self, self.display, title, timeout=60)
        return xt

    def run_scenario(self, text, timeout=120):
        path = self.scenario(textwrap.dedent(text))
        out = self.out()
        rc, so, se, el = self.run_rt(["run", path], env=self.env(DISPLAY=self.display),
                                     out=out, timeout=timeout)
        self.assertNoSanitizerReport(se)
        return out, rc, se

    def older_named(self, reason, xt, window=None):
        self.assertIn("an xterm (pid %d%s) older than this run is on the display; it is not "
                      "the app this run launched" % (xt.pid, ', window "%s"' % window
                                                      if window else ""), reason)

    def test_failed_launch_beside_an_older_instance_is_exited(self):
        xt = self.older_xterm("KSR Stale")
        out, rc, se = self.run_scenario("""\
            name: stale-instance
            launch: sh -c 'exit 1'
            process: ^xterm$
            window: ^KSR Stale$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "exited", rc=rc, stderr=se)
        self.assertRegex(report["reason"], r"^line 2: sh \(pid \d+\) exited with status 1")
        self.assertIn("no process matching '^xterm$' is left", report["reason"])
        self.older_named(report["reason"], xt)
        self.assertEqual(events(out, "app"), [], "no app was found")
        self.assertIsNone(xt.poll(), "the older xterm is left alone")

    def test_launch_that_never_brings_the_app_names_the_older_window(self):
        # window: only, so the older instance is seen by its window's _NET_WM_PID
        xt = self.older_xterm("KSR Stale")
        out, rc, se = self.run_scenario("""\
            name: stale-window
            launch: sleep 30
            window: ^KSR Stale$
            launch_timeout_s: 3
            settle_s: 1
            atspi: false
            """)
        report = self.assertEvidence(out, "app-failed", "never-appeared", rc=rc, stderr=se)
        self.older_named(report["reason"], xt, window="KSR Stale")
        self.assertIsNone(xt.poll(), "the older xterm is left alone")
        self.assertEqual(run_id_pids(events(out, "run.start")[0]["run_id"]), [])

    def test_daemonizing_launcher_is_followed_by_the_run_tag(self):
        xt = self.older_xterm("KSR App")
        out, rc, se = self.run_scenario("""\
            name: daemonized
            launch: setsid -f xterm -T 'KSR App' -e sleep 600
            process: ^xterm$
            window: ^KSR App$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            """)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        app = events(out, "app")[-1]
        self.assertNotEqual(app["pid"], xt.pid, "the older xterm is not the app")
        # the new xterm left the launch's group: the run's tag stopped it at the end
        left = [(p, n) for p, n in ksr.wait_tagged_gone(self.tag, ["xterm"], timeout=2.0)
                if p != xt.pid]
        self.assertEqual(left, [], "the daemonized xterm outlived the run")
        launch = events(out, "launch")[0]
        run_id = events(out, "run.start")[0]["run_id"]
        self.assertEqual(launch["tag"], "%s=%s" % (RUN_TAG, run_id))
        self.assertEqual((app["launched"], app["origin"]), (True, "tagged"))
        cleanup = events(out, "cleanup")
        self.assertEqual(len(cleanup), 1, cleanup)
        self.assertIn(app["pid"], [p["pid"] for p in cleanup[0]["left_group"]])
        self.assertEqual(run_id_pids(run_id), [])
        self.assertIsNone(xt.poll(), "the older xterm is left alone")

    def test_helper_that_left_the_group_is_stopped(self):
        out, rc, se = self.run_scenario("""\
            name: left-group
            launch: setsid -f sleep 300; exec xterm -T 'KSR Left'
            process: ^xterm$
            window: ^KSR Left$
            launch_timeout_s: 30
            settle_s: 1
            atspi: false
            """)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        # by the test's own tag, which any runtime passes on
        self.assertAppGone(["sleep", "xterm"], timeout=2.0)
        self.assertEqual(events(out, "app")[-1]["origin"], "descendant")
        run_id = events(out, "run.start")[0]["run_id"]
        self.assertEqual(run_id_pids(run_id), [])
        cleanup = events(out, "cleanup")
        # The sleep left the group; the xterm's own shell (a session of its
        # pty, tagged too) may still be on its way out when the scan runs,
        # and may end by itself before its signal: each process says how it
        # ended, and the counts add up to the list either way.
        left = cleanup[0]["left_group"]
        names = [p.get("name") for p in left]
        self.assertIn("sleep", names)
        self.assertEqual(set(names) - {"sleep", "bash", "sh"}, set(), names)
        ends = {p["pid"]: p.get("end") for p in left}
        self.assertEqual([p["end"] for p in left if p.get("name") == "sleep"], ["stopped"])
        self.assertEqual(set(ends.values()) - {"stopped", "exited"}, set(), left)
        self.assertEqual((cleanup[0]["stopped"], cleanup[0]["exited"],
                          cleanup[0]["still_running"]),
                         (list(ends.values()).count("stopped"),
                          list(ends.values()).count("exited"), 0))

if __name__ == "__main__":
    unittest.main()
