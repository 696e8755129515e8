"""Bounded inputs (issue 31, item 9; docs/scenario.md#limits, docs/cli.md#exit-codes):
a scenario path that is a FIFO or a directory is refused at once (never a hang); a
UTF-8 byte order mark is accepted; "\\0" in a quoted value is refused at its line:col;
a large ${VAR} used many times is refused while expanding, naming the variable; an
output that cannot be written (stdout or --junit on a full device) is exit 2 with a
message naming it; the largest scenario the loader accepts (16,600 steps) is reported
within the run's deadline. Through the binary, with a real Xvfb session for `run`."""

import json
import os
import stat
import subprocess
import textwrap
import time
import unittest

import ksr

APP = """\
    name: bounded
    launch: ${KSR_TESTAPP}
    process: ^ksr-testapp$
    window: ^KSR Test App$
    settle_s: 0
    atspi: false
    """


def full_device(tmp):
    """A node that reads as /dev/full does (every write: ENOSPC). As root, a fresh
    one in tmp (so nothing under /dev is at stake); otherwise /dev/full itself."""
    if os.geteuid() == 0:
        path = os.path.join(tmp, "full")
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        return path
    return "/dev/full"


class BoundedScenarioFileTest(ksr.KsrTestCase):
    needs_testapp = False

    def test_fifo_and_directory_are_refused_at_once(self):
        fifo = os.path.join(self.tmp, "scenario.yaml")
        os.mkfifo(fifo)
        for path in (fifo, self.tmp):
            rc, so, se, _ = self.run_rt(["validate", path], timeout=30)
            self.assertEqual(rc, 2, se)
            self.assertIn("%s:0:0: the scenario is a" % path, se)
            self.assertIn("not a regular file", se)

    def test_byte_order_mark_is_accepted(self):
        path = os.path.join(self.tmp, "bom.yaml")
        with open(path, "wb") as f:
            f.write(b"\xef\xbb\xbf" + textwrap.dedent(APP).encode())
        rc, so, se, _ = self.run_rt(["validate", path], env=self.env(KSR_TESTAPP="x"))
        self.assertEqual(rc, 0, se)
        self.assertIn("bom.yaml: ok", se)

    def test_nul_in_a_quoted_value_is_refused(self):
        path = self.scenario('process: ^x$\nname: "cut\\0here"\n')
        rc, so, se, _ = self.run_rt(["validate", path])
        self.assertEqual(rc, 2, se)
        self.assertIn("%s:2:7: a NUL character (\\0) in a value is not allowed" % path, se)

    def test_expansion_cap_names_the_variable(self):
        lines = ["process: ^x$", "steps:"] + ['  - shell: "echo ${KSR_T_BIG}"'] * 5000
        path = self.scenario("\n".join(lines) + "\n")
        rc, so, se, _ = self.run_rt(["validate", "--json", path],
                                    env=self.env(KSR_T_BIG="v" * 120000), timeout=60)
        self.assertEqual(rc, 2, se)
        errors = json.loads(so)
        self.assertEqual(len(errors), 1, "one message, not one per use: %r" % errors[:3])
        self.assertIn("expanding ${KSR_T_BIG} (120000 bytes) makes the scenario larger than "
                      "4194304 bytes", errors[0]["message"])
        self.assertEqual(errors[0]["line"], 2 + 35, "the use that crosses the cap")

    def test_validate_json_to_a_full_device_is_exit_2(self):
        path = self.scenario("process: ^x$\n")
        with open(full_device(self.tmp), "wb") as full:
            p = subprocess.run([ksr.BIN, "validate", "--json", path], stdout=full,
                               stderr=subprocess.PIPE, env=self.env(), timeout=30)
        se = p.stderr.decode()
        self.assertEqual(p.returncode, 2, se)
        self.assertIn("could not write the result to stdout: No space left on device", se)


class BoundedRunTest(ksr.KsrTestCase):

    def run_app(self, yaml_text, args, stdout=subprocess.PIPE, timeout=150):
        path = self.scenario(textwrap.dedent(APP) + yaml_text)
        out = self.out()
        p = subprocess.run([ksr.BIN, "run", "--xvfb", "--out", out] + args + [path],
                           stdout=stdout, stderr=subprocess.PIPE, timeout=timeout,
                           env=self.env(KSR_TESTAPP=ksr.TESTAPP), start_new_session=True)
        se = p.stderr.decode("utf-8", "replace")
        self.assertNoSanitizerReport(se)
        return out, p.returncode, se

    def test_fifo_scenario_does_not_hang_run(self):
        fifo = os.path.join(self.tmp, "scenario.yaml")
        os.mkfifo(fifo)
        out = self.out()
        rc, so, se, _ = self.run_rt(["run", "--xvfb", fifo], out=out, timeout=60)
        self.assertEqual(rc, 2, se)
        self.assertIn("not a regular file", se)
        self.assertEvidence(out, "test-error", "invalid-scenario", rc=rc, stderr=se)

    def test_outputs_on_a_full_device_are_exit_2(self):
        dev = full_device(self.tmp)
        with open(dev, "wb") as full:
            out, rc, se = self.run_app("", ["--json", "--junit", dev], stdout=full)
        self.assertEqual(rc, 2, se[-3000:])
        self.assertIn("kasm-session-runtime run: --json: could not write the report to "
                      "stdout: No space left on device", se)
        self.assertIn("kasm-session-runtime run: --junit: %s: No space left on device" % dev, se)
        self.assertTrue(stat.S_ISCHR(os.stat(dev).st_mode), "the device is still a device")
        with open(os.path.join(out, "DONE")) as f:
            self.assertEqual(f.read().strip(), "pass", "the run itself passed; its outputs did not")

    def test_largest_scenario_is_reported_within_its_deadline(self):
        """16,600 `sleep: 0` steps (near the loader's node limit): the report was
        quadratic in the steps (30 s); the run must end within --deadline 20."""
        steps = "steps:\n" + "  - sleep: 0\n" * 16600
        t0 = time.monotonic()
        out, rc, se = self.run_app(steps, ["--deadline", "20"], timeout=120)
        elapsed = time.monotonic() - t0
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se[-2000:])
        self.assertEqual(len(report["steps"]), 16600)
        self.assertLess(elapsed, 20, "the run ended past its 20 s deadline")


if __name__ == "__main__":
    unittest.main()
