"""Bus faults told to the right party (issue 31, docs/reliability.md#fault-matrix):
an accessibility registry that stops answering while the app answers is the
session's fault, test-error / backend-unavailable naming the registry; an app
that stops answering stays the app's (app-failed). Both faults are real: the
session's own at-spi2-registryd, or the test app, SIGSTOPped mid-run."""

import os
import re
import signal
import subprocess
import textwrap
import time

import unittest

import ksr

REGISTRYD = "at-spi2-registryd"


def cont(pid):
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


class BusFaultsTest(ksr.KsrTestCase):

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def start_steps(self, steps):
        """A --xvfb run of the test app whose steps begin with a sleep (the
        moment the fault is applied), then `steps`."""
        path = self.scenario(textwrap.dedent("""\
            name: bus-fault
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0.5
            steps:
              - sleep: 4
            """) + steps)
        out = self.out()
        rt = self.start_rt(["run", "--xvfb", path], out=out)
        ksr.wait_for_trace_event(out, ksr.in_stage("steps"), timeout=90, proc=rt)
        return rt, out

    def tagged(self, name):
        pids = [p for p, n in ksr.tagged_pids(self.tag) if n == name]
        self.assertEqual(len(pids), 1, "one %s of this run: %r" % (name, ksr.tagged_pids(self.tag)))
        return pids[0]

    def stop(self, pid):
        self.addCleanup(cont, pid)
        os.kill(pid, signal.SIGSTOP)

    def test_frozen_registry_is_the_sessions_fault(self):
        rt, out = self.start_steps("  - click_element: Press me\n    timeout_s: 10\n")
        self.stop(self.tagged(REGISTRYD))
        rc = rt.wait(120)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc,
                                     pid=rt.pid, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"registry")
        self.assertRegex(report["reason"], r"org\.a11y\.atspi\.Registry")
        self.assertNotRegex(report["reason"], r"is the app hung")
        self.assertNoSanitizerReport(rt.stderr)

    def a11y_bus_daemon(self):
        """The accessibility bus's own dbus-daemon (at-spi-bus-launcher's child,
        started with accessibility.conf), not the session bus's."""
        pids = []
        for pid, name in ksr.tagged_pids(self.tag):
            if name != "dbus-daemon":
                continue
            try:
                with open("/proc/%d/cmdline" % pid, "rb") as f:
                    if b"accessibility.conf" in f.read():
                        pids.append(pid)
            except OSError:
                pass
        self.assertEqual(len(pids), 1, "one a11y bus daemon of this run: %r"
                         % ksr.tagged_pids(self.tag))
        return pids[0]

    def test_frozen_bus_daemon_is_the_sessions_fault(self):
        """The a11y bus's dbus-daemon SIGSTOPped after the app was found (the
        steps have begun): nothing on that bus answers, the app included, but
        the app answers _NET_WM_PING on X, so the bus is at fault."""
        rt, out = self.start_steps("  - click_element: Press me\n    timeout_s: 10\n")
        self.stop(self.a11y_bus_daemon())
        rc = rt.wait(120)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc,
                                     pid=rt.pid, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"accessibility bus")
        self.assertNotRegex(report["reason"], r"is the app hung")
        self.assertNoSanitizerReport(rt.stderr)

    def test_frozen_bus_daemon_in_a_final_element_check(self):
        """The same fault met by an element check after the steps."""
        rt, out = self.start_steps("  - sleep: 0\n    checks:\n      - element: Press me\n"
                                   "        timeout_s: 10\n")
        self.stop(self.a11y_bus_daemon())
        rc = rt.wait(120)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc,
                                     pid=rt.pid, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"accessibility bus")
        self.assertNoSanitizerReport(rt.stderr)

    def bus_address(self, daemon):
        with open("/proc/%d/cmdline" % daemon, "rb") as f:
            args = f.read().decode().split("\0")
        found = [a.split("=", 1)[1] for a in args if a.startswith("--address=")]
        self.assertEqual(len(found), 1, args)
        return found[0]

    def connections_of(self, address, pid):
        """The unique names on the bus at address whose connection is pid's."""
        def call(method, *args):
            return subprocess.run(
                ["gdbus", "call", "--address", address, "--dest", "org.freedesktop.DBus",
                 "--object-path", "/org/freedesktop/DBus", "--method",
                 "org.freedesktop.DBus." + method] + list(args),
                capture_output=True, text=True, timeout=10).stdout
        names = re.findall(r"'(:[0-9.]+)'", call("ListNames"))
        return {n for n in names
                if re.search(r"uint32 %d\b" % pid, call("GetConnectionUnixProcessID", n))}

    def test_bus_daemon_frozen_mid_step_is_the_sessions_fault(self):
        """The a11y bus's dbus-daemon SIGSTOPped once the click_element step's own
        connection is on the bus (it polls for a control that never comes): its
        next calls go unanswered on a connection that worked. The daemon does not
        answer GetId and the app answers _NET_WM_PING on X: the session's fault."""
        rt, out = self.start_steps("  - click_element: Nothing like this\n    timeout_s: 30\n")
        daemon = self.a11y_bus_daemon()
        address = self.bus_address(daemon)
        before = self.connections_of(address, rt.pid)
        ksr.wait_for_trace_event(out, lambda e: e.get("event") == "step.start"
                                 and e.get("index") == 2, timeout=30, proc=rt)
        deadline = time.monotonic() + 20
        while not self.connections_of(address, rt.pid) - before:
            self.assertLess(time.monotonic(), deadline,
                            "the step's connection never showed on the accessibility bus")
            time.sleep(0.05)
        self.stop(daemon)
        rc = rt.wait(120)
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc,
                                     pid=rt.pid, stderr=rt.stderr)
        self.assertRegex(report["reason"], r"accessibility bus .* did not answer GetId")
        self.assertNotRegex(report["reason"], r"is the app hung")
        self.assertNoSanitizerReport(rt.stderr)

    def test_stopped_app_stays_the_apps_fault(self):
        rt, out = self.start_steps("  - click_element: Press me\n    timeout_s: 10\n")
        self.stop(self.tagged("ksr-testapp"))
        rc = rt.wait(120)
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, pid=rt.pid,
                                     stderr=rt.stderr)
        self.assertNotRegex(report["reason"], r"registry")
        self.assertNoSanitizerReport(rt.stderr)


if __name__ == "__main__":
    unittest.main()
