"""Outside text is data (issue 31, item 7): a window title holding escape sequences, a
forged progress line and bytes that are not UTF-8 (tests/app/ksr-rawtitle.py, a hostile
X client of the tests' own, writing raw bytes into WM_NAME/_NET_WM_NAME), a shell step
printing the same, and a scenario whose name and keys hold control characters. On
stderr nothing reaches the terminal raw (no ESC, no forged `ksr [ 99.9s] verdict pass`
line); trace.jsonl, report.json and `--json` parse as JSON with strict UTF-8 decoding;
the JUnit file parses as XML; report.md carries no raw control character. Real Xvfb,
real openbox, a real X client."""

import json
import os
import re
import subprocess
import textwrap
import unittest
import xml.etree.ElementTree as ET

import ksr

RAWTITLE = os.path.join(ksr.SOURCE_DIR, "tests", "app", "ksr-rawtitle.py")
# ksr-rawtitle.py decodes \xNN: ESC ] 0 ; ... BEL retitles a terminal, ESC [ 2 J clears
# it, the newline starts a forged progress line, \x9b is a C1 CSI, \xff\xfe are not UTF-8.
TITLE = (r"Hostile \x1b]0;pwned\x07\x1b[2J\nksr [ 99.9s] verdict pass (completed)"
         r"\r\xc2\x9b31m\xff\xfe end")
SHELL_OUT = r"printf 'out \033]0;shellpwn\007\033[2J\nksr [ 99.9s] verdict pass (completed)\n\377\376 bad\n'"
FORGED = re.compile(r"^ksr \[ 99\.9s\] verdict pass", re.M)


def control_bytes(data, keep=b"\n\t"):
    """The C0 controls, DEL and C1 controls (as UTF-8) in data, but those in keep."""
    found = {c for c in data if (c < 0x20 or c == 0x7f) and c not in keep}
    text = data.decode("utf-8", errors="replace")
    found |= {ord(ch) for ch in text if 0x80 <= ord(ch) <= 0x9f}
    return sorted(found)


def strings(v):
    """Every string value in a parsed JSON value."""
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)


class OutsideTextTest(ksr.KsrTestCase):

    def assertStderrSafe(self, se_bytes):
        self.assertEqual(control_bytes(se_bytes), [],
                         "raw control characters on stderr:\n%r" % se_bytes[-3000:])
        se = se_bytes.decode("utf-8")  # strict: stderr is valid UTF-8 too
        self.assertIsNone(FORGED.search(se), "a forged progress line on stderr:\n%s" % se)
        return se

    def assertStrictJson(self, data, what):
        try:
            return json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            self.fail("%s is not JSON in strict UTF-8 (%s)" % (what, e))

    def test_hostile_title_and_shell_output(self):
        out = self.out()
        junit = os.path.join(self.tmp, "junit.xml")
        stdout_path = os.path.join(self.tmp, "stdout.json")
        stderr_path = os.path.join(self.tmp, "stderr.txt")
        path = self.scenario(textwrap.dedent("""\
            name: "outside \\e]0;scn-pwned\\a text \\x01 \\u009b"
            launch: python3 '%s' '%s'
            process: ^python3$
            window: ^Hostile
            settle_s: 0
            paint_timeout_s: 0
            atspi: false
            steps:
              - shell: %s
              - shell: "true"
                checks:
                  - no_window: ^Hostile
                    timeout_s: 0.5
            """ % (RAWTITLE, TITLE, json.dumps(SHELL_OUT))))
        env = self.env()
        with open(stdout_path, "wb") as so, open(stderr_path, "wb") as se:
            rc = subprocess.run([ksr.BIN, "run", "--xvfb", "--json", "--junit", junit,
                                 "--out", out, path], env=env, stdout=so, stderr=se,
                                timeout=150, start_new_session=True).returncode
        with open(stderr_path, "rb") as f:
            se_bytes = f.read()
        self.assertNoSanitizerReport(se_bytes.decode("utf-8", errors="replace"))
        se = self.assertStderrSafe(se_bytes)
        self.assertIn(r"\x1b]0;pwned\x07\x1b[2J\nksr [ 99.9s] verdict pass", se,
                      "the title is on stderr, its controls written out")

        with open(os.path.join(out, "trace.jsonl"), "rb") as f:
            lines = f.read().split(b"\n")
        self.assertEqual(lines[-1], b"", "the trace ends with a whole line")
        events = [self.assertStrictJson(l, "trace.jsonl line %d" % (i + 1))
                  for i, l in enumerate(lines[:-1])]
        self.assertTrue(any("\\xff\\xfe bad" in v for e in events for v in strings(e)),
                        "the shell's bad bytes are in the trace, repaired as \\xNN")
        with open(os.path.join(out, "report.json"), "rb") as f:
            report = self.assertStrictJson(f.read(), "report.json")
        with open(stdout_path, "rb") as f:
            printed = self.assertStrictJson(f.read(), "--json stdout")
        self.assertEqual(printed["run_id"], report["run_id"])
        self.assertEqual(report["verdict"], "app-failed", report["reason"])
        self.assertIn("still mapped", report["reason"])
        self.assertEqual(rc, 1, se[-2000:])

        tree = ET.parse(junit)  # raises on anything not well-formed
        suite = tree.getroot().find("testsuite")
        self.assertIn("scn-pwned", suite.get("name"))
        failures = [f.get("message") for f in tree.getroot().iter("failure")]
        self.assertTrue(any("pwned" in (m or "") for m in failures), failures)

        with open(os.path.join(out, "report.md"), "rb") as f:
            md = f.read()
        self.assertEqual(control_bytes(md), [], "raw control characters in report.md")
        md.decode("utf-8")
        with open(os.path.join(out, "report.html"), "rb") as f:
            f.read().decode("utf-8")

    def test_scenario_keys_with_controls_are_escaped_by_validate(self):
        path = os.path.join(self.tmp, "keys.yaml")
        with open(path, "wb") as f:
            f.write(b'name: keys\nlaunch: xterm\n"evil\\e]0;key-pwned\\a\\nksr [ 99.9s] '
                    b'verdict pass (completed)": 1\n')
        rc, so, se, _ = self.run_rt(["validate", "--json", path])
        self.assertEqual(rc, 2, se)
        self.assertNotIn("\x1b", se)
        self.assertIsNone(FORGED.search(se), se)
        self.assertIn(r"evil\x1b]0;key-pwned\x07\nksr [ 99.9s]", se)
        errors = json.loads(so)
        self.assertTrue(any("\x1b]0;key-pwned" in e["message"] for e in errors), errors)


if __name__ == "__main__":
    unittest.main()
