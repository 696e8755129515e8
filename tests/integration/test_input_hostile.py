"""Input that did not land is not a pass (issue 31, docs/acting.md#grabs-and-overlays):
another X client of the session takes the input away from the app, and the
step must not say `ok`. The hostile client is real and the tests' own
(tests/app/ksr-hostile-x.c) on a real Xvfb + openbox: an active keyboard grab,
an active pointer grab, an override-redirect window over the app. What the app
received is read from the test app's --record file, never from the runtime.

Before issue 31 all three passed: the keys and the click went to the hostile
client, the step said ok ("focus": "obtained"), the verdict was pass."""

import json
import os
import subprocess
import unittest

import ksr

HOSTILE = os.environ.get("KSR_HOSTILE_X", "")
TARGETS = """targets:
  press: [0.5, 0.13]
  field: [0.5, 0.47]
"""


def rec_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


class HostileInputTest(ksr.KsrTestCase):

    def setUp(self):
        super().setUp()
        if not HOSTILE or not os.access(HOSTILE, os.X_OK):
            self.fail("KSR_HOSTILE_X is not the built ksr-hostile-x: %r" % HOSTILE)
        self.display = self.start_xvfb()

    def env(self, **extra):
        extra.setdefault("KSR_TESTAPP", ksr.TESTAPP)
        return super().env(**extra)

    def hostile(self, *args):
        """Start ksr-hostile-x on the test's display; return once it holds."""
        p = subprocess.Popen([HOSTILE] + list(args), env=self.env(DISPLAY=self.display),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        self.procs.append(p)
        line = p.stdout.readline().decode().strip()
        if line != "ready":  # it exited: its stderr says why
            self.fail("ksr-hostile-x %s: %s" % (args, p.stderr.read().decode()))
        return p

    def run_steps(self, steps):
        rec = os.path.join(self.tmp, "rec.txt")
        path = self.scenario(
            "name: hostile-input\n"
            "launch: ${KSR_TESTAPP} --record %s\n"
            "process: ^ksr-testapp$\n"
            "window: ^KSR Test App$\n"
            "settle_s: 0.5\n"
            "atspi: false\n" % rec + TARGETS + "steps:\n" + steps)
        out = self.out()
        rc, _so, se, _el = self.run_rt(["run", path], out=out, timeout=180,
                                       env=self.env(DISPLAY=self.display, NO_AT_BRIDGE="1"))
        self.assertNoSanitizerReport(se)
        return out, rc, se, rec

    def last_step(self, out):
        rows = [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]
        self.assertTrue(rows, "a step ran")
        return rows[-1]

    def test_type_under_a_foreign_keyboard_grab_is_a_test_error(self):
        self.hostile("--grab-keyboard")
        out, rc, se, rec = self.run_steps('  - type: "hello"\n')
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertRegex(report["reason"],
                         r"keyboard is grabbed by another client \(X does not say which\)")
        row = self.last_step(out)
        self.assertEqual(row["status"], "error", row)
        self.assertEqual(row["ready"]["never"], "input", row)
        self.assertNotIn("text:hello", rec_lines(rec))

    def test_key_under_a_foreign_keyboard_grab_is_a_test_error(self):
        self.hostile("--grab-keyboard")
        out, rc, se, rec = self.run_steps("  - key: ctrl+a\n")
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertRegex(report["reason"], r"keyboard is grabbed by another client")

    def test_click_under_a_foreign_pointer_grab_is_a_test_error(self):
        self.hostile("--grab-pointer")
        out, rc, se, rec = self.run_steps("  - click: press\n")
        report = self.assertEvidence(out, "test-error", "backend-unavailable", rc=rc, stderr=se)
        self.assertRegex(report["reason"], r"pointer is grabbed by another client")
        self.assertNotIn("pressed", rec_lines(rec))

    def test_click_on_a_point_covered_by_an_override_redirect_window_fails_as_covered(self):
        self.hostile("--override", "1280x720+0+0")
        out, rc, se, rec = self.run_steps("  - click: press\n    timeout_s: 2\n")
        report = self.assertEvidence(out, "app-failed", "step-failed", rc=rc, stderr=se)
        self.assertRegex(report["reason"],
                         r"covered by another client's override-redirect window 0x[0-9a-f]+ "
                         r"\(\"KSR Hostile Overlay\", pid \d+\)")
        self.assertEqual(self.last_step(out)["ready"]["never"], "uncovered")
        self.assertNotIn("pressed", rec_lines(rec))

    def test_the_apps_own_menu_grab_is_no_failure(self):
        """GTK's context menu of the entry grabs the keyboard and the pointer:
        the key that closes it goes to the app, which is no failure."""
        out, rc, se, rec = self.run_steps("  - right_click: field\n"
                                          "  - key: Escape\n"
                                          '  - type: "after"\n')
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        rows = [e for e in ksr.read_trace(out) if e.get("event") == "step.end"]
        self.assertTrue(rows[1]["ready"]["input"].startswith("grabbed by the app"), rows[1])
        self.assertIn("text:after", rec_lines(rec))

    def test_without_hostility_input_lands_and_passes(self):
        out, rc, se, rec = self.run_steps("  - click: press\n"
                                          "  - click: field\n"
                                          '  - type: "hello"\n')
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        lines = rec_lines(rec)
        self.assertIn("pressed", lines)
        self.assertIn("text:hello", lines)
        self.assertEqual(self.last_step(out)["ready"]["input"], "free")

    # ---- the MCP server's input tools ask the same question -------------------

    def mcp_calls(self, calls):
        """kasm-session-runtime mcp on the test's display over stdio, one
        stateless 2026-07-28 request per line; the answers by id."""
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        lines = "".join(json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                                    "params": {"name": name, "arguments": args,
                                               "_meta": meta}}) + "\n"
                        for i, (name, args) in enumerate(calls))
        p = subprocess.run([ksr.BIN, "mcp"], input=lines.encode(), capture_output=True,
                           timeout=60, env=self.env(DISPLAY=self.display))
        self.assertNoSanitizerReport(p.stderr.decode(errors="replace"))
        answers = {}
        for line in p.stdout.decode().splitlines():
            msg = json.loads(line)
            if "id" in msg:
                answers[msg["id"]] = msg
        return answers

    def tool_text(self, answer):
        res = answer["result"]
        return res.get("isError", False), " ".join(c.get("text", "") for c in res["content"])

    def test_mcp_input_under_foreign_grabs_is_refused(self):
        self.hostile("--grab-keyboard")
        a = self.mcp_calls([("input_type", {"text": "lost"}), ("input_key", {"keys": "Return"}),
                            ("input_click", {"x": 10, "y": 10})])
        for i in (1, 2):
            err, text = self.tool_text(a[i])
            self.assertTrue(err, text)
            self.assertIn("keyboard is grabbed by another client", text)
        err, text = self.tool_text(a[3])
        self.assertFalse(err, "the pointer is free: %s" % text)

    def test_mcp_click_under_a_foreign_pointer_grab_is_refused(self):
        self.hostile("--grab-pointer")
        err, text = self.tool_text(self.mcp_calls([("input_click", {"x": 10, "y": 10})])[1])
        self.assertTrue(err, text)
        self.assertIn("pointer is grabbed by another client", text)


if __name__ == "__main__":
    unittest.main()
