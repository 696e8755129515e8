"""CI conveniences (issue #11): `run a.yaml b.yaml ...` runs each scenario into
OUT/<file name>/ (names made safe and unique, issue #17) on one shared private display, with
the worst exit code, one --json document and one JUnit file; `validate
--format github` prints one GitHub annotation per error."""

import json
import os
import re
import textwrap
import unittest
import xml.etree.ElementTree as ET

import ksr

PASS = """\
name: {name}
launch: ${{KSR_TESTAPP}} --title "{title}"
process: ^ksr-testapp$
window: ^{title}$
settle_s: 0.5
steps:
  - click: center
"""

FAIL = """\
name: {name}
launch: ${{KSR_TESTAPP}} --title "{title}"
process: ^ksr-testapp$
window: ^{title}$
settle_s: 0.5
steps:
  - shell: "false"
"""

ANNOTATION_RE = re.compile(r"^::error file=(?P<file>[^,:]+),line=(?P<line>\d+),col=(?P<col>\d+)"
                           r"::(?P<msg>.+)$")


class RunManyTest(ksr.KsrTestCase):

    def write(self, template, name, title, filename):
        return self.scenario(template.format(name=name, title=title), filename)

    def test_several_scenarios_share_one_display_worst_exit_code(self):
        a = self.write(PASS, "Same Name", "KSR Many A", "a.yaml")
        b = self.write(FAIL, "Same Name", "KSR Many B", "b.yaml")
        c = self.scenario("name: broken\nprocess: '^x$'\nwindow: '(unclosed'\n", "c.yaml")
        out, junit = self.out(), os.path.join(self.tmp, "junit.xml")
        rc, so, se, _ = self.run_rt(["run", "--xvfb", "--json", "--junit", junit, a, b, c],
                                    out=out, env=self.env(KSR_TESTAPP=ksr.TESTAPP),
                                    timeout=300)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 2, "worst of pass (0), app-failed (1), test-error (2)\n" + se)
        # Folders after the files: a and b share a name: and still get their own.
        dirs = {n for n in os.listdir(out) if os.path.isdir(os.path.join(out, n))}
        self.assertEqual(dirs, {"a", "b", "c"}, dirs)
        ra = self.assertEvidence(os.path.join(out, "a"), "pass", "completed")
        self.assertEvidence(os.path.join(out, "b"), "app-failed", "step-failed")
        self.assertEvidence(os.path.join(out, "c"), "test-error", "invalid-scenario")
        # One display for all: both runs name the same display in boot-wait,
        # and neither started a private one of its own.
        displays = []
        for d in ("a", "b"):
            events = ksr.read_trace(os.path.join(out, d))
            boot = [e for e in events if e.get("event") == "stage.end"
                    and e.get("name") == "boot-wait"]
            self.assertEqual(len(boot), 1)
            m = re.search(r"display (:\d+)", boot[0].get("reason", ""))
            self.assertIsNotNone(m, boot[0])
            self.assertNotIn("private display", boot[0]["reason"])
            displays.append(m.group(1))
        self.assertEqual(displays[0], displays[1], "the runs did not share the display")
        self.assertTrue(os.path.getsize(os.path.join(out, "session.log")) >= 0)
        # --json: one document
        doc = json.loads(so)
        self.assertEqual(doc["exit_code"], 2)
        self.assertEqual([r["exit_code"] for r in doc["runs"]], [0, 1, 2])
        self.assertEqual([r["scenario"] for r in doc["runs"]], [a, b, c])
        self.assertEqual(doc["runs"][0]["report"]["verdict"], "pass")
        self.assertEqual(doc["runs"][0]["report"]["runtime"], ra["runtime"])
        # --junit: one file, one suite per run
        suites = ET.parse(junit).getroot().findall("testsuite")
        self.assertEqual(len(suites), 3)
        self.assertAppGone(["ksr-testapp", "Xvfb", "openbox"])

    def test_one_scenario_keeps_out_as_given(self):
        """A single scenario still writes straight into OUT (no subfolder)."""
        path = ksr.scenario_path("testapp-pass.yaml")
        out = self.out()
        rc, _, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                   env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=180)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)

    def test_names_are_sanitised(self):
        """File names made safe (a hidden or odd one) and unique (two files of
        the same name in two folders, both with the same name:)."""
        hidden = self.write(PASS, "Same", "KSR Many C", "..h.yaml")
        odd = self.write(PASS, "Same", "KSR Many D", "a b*.yml")
        os.makedirs(os.path.join(self.tmp, "x"))
        os.makedirs(os.path.join(self.tmp, "y"))
        twin1 = self.write(PASS, "Same", "KSR Many E", "x/t.yaml")
        twin2 = self.write(PASS, "Same", "KSR Many F", "y/t.yaml")
        out = self.out()
        rc, _, se, _ = self.run_rt(["run", "--xvfb", hidden, odd, twin1, twin2], out=out,
                                   env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=400)
        self.assertEqual(rc, 0, se)
        names = sorted(n for n in os.listdir(out) if os.path.isdir(os.path.join(out, n)))
        self.assertEqual(names, ["_.h", "a_b_", "t", "t-2"])
        for n in names:
            self.assertEvidence(os.path.join(out, n), "pass", "completed")
        # each folder holds its own file's run (the window title differs)
        for n, title in (("t", "KSR Many E"), ("t-2", "KSR Many F")):
            with open(os.path.join(out, n, "report.json")) as f:
                self.assertEqual(json.load(f)["app"]["window"]["title"], title)
        self.assertEqual(sorted(os.listdir(self.tmp)),
                         sorted(["..h.yaml", "a b*.yml", "x", "y", "out"] +
                                [f for f in os.listdir(self.tmp) if f.startswith("rt")]),
                         "nothing was written outside OUT")


class ValidateGithubTest(ksr.KsrTestCase):
    needs_testapp = False

    def test_annotations_name_file_line_col(self):
        bad = self.scenario(textwrap.dedent("""\
            name: x
            process: '^x$'
            window: '(unclosed'
            bogus: 1
            """), "bad.yaml")
        good = os.path.join(ksr.SOURCE_DIR, "scenarios", "demo-xterm.yaml")
        rc, so, se, _ = self.run_rt(["validate", "--format", "github", good, bad], timeout=30)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 2)
        lines = so.splitlines()
        self.assertEqual(len(lines), 2, so)
        got = [ANNOTATION_RE.match(line) for line in lines]
        self.assertTrue(all(got), "not GitHub annotations:\n%s" % so)
        self.assertEqual([(m.group("file"), int(m.group("line"))) for m in got],
                         [(bad, ksr.line_of(bad, "window:")), (bad, ksr.line_of(bad, "bogus"))])
        self.assertEqual(int(got[1].group("col")), 1)
        self.assertIn("unknown key", got[1].group("msg"))
        # stderr keeps the plain lines
        self.assertIn("%s:%d:" % (bad, ksr.line_of(bad, "bogus")), se)

    def test_valid_files_print_nothing_and_exit_0(self):
        good = os.path.join(ksr.SOURCE_DIR, "scenarios", "demo-xterm.yaml")
        rc, so, se, _ = self.run_rt(["validate", "--format=github", good], timeout=30)
        self.assertEqual((rc, so), (0, ""), se)

    def test_escaping_and_bad_format(self):
        """A message or file name with ',' ':' or '%' cannot break the command."""
        path = self.scenario("name: x\nprocess: '^x$'\nwindow: x\nsteps:\n"
                             "  - click: \"1.5 0.5\"\n", "we,ird%.yaml")
        rc, so, se, _ = self.run_rt(["validate", "--format", "github", path], timeout=30)
        self.assertEqual(rc, 2, se)
        line = so.splitlines()[0]
        self.assertTrue(line.startswith("::error file="), line)
        prop = line[len("::error file="):].split("::", 1)[0]
        self.assertNotIn("%,", prop)
        self.assertIn("we%2Cird%25.yaml", prop)
        rc, so, se, _ = self.run_rt(["validate", "--format", "xml", path], timeout=30)
        self.assertEqual((rc, so), (2, ""))
        self.assertIn("--format", se)


if __name__ == "__main__":
    unittest.main()
