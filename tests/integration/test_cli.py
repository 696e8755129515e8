"""The command line: version, --help everywhere, unknown commands and options,
and the stdout contract (empty unless --json; with --json exactly one JSON
document, the report)."""

import json
import os
import unittest

import ksr


def one_json_document(text):
    """Parse text as exactly one JSON document (whitespace around allowed)."""
    dec = json.JSONDecoder()
    stripped = text.strip()
    if not stripped:
        raise AssertionError("stdout is empty, expected one JSON document")
    obj, end = dec.raw_decode(stripped)
    if stripped[end:].strip():
        raise AssertionError("stdout holds more than one JSON document: %r" % stripped[end:][:200])
    return obj


class CliTest(ksr.KsrTestCase):
    needs_testapp = False

    def rt(self, *args, **kw):
        rc, so, se, el = self.run_rt(list(args), timeout=kw.pop("timeout", 30), **kw)
        self.assertNoSanitizerReport(se)
        return rc, so, se

    def test_version(self):
        rc, so, se = self.rt("version")
        self.assertEqual(rc, 0, se)
        version = ksr.project_version()
        self.assertTrue(version)
        self.assertIn(version, so, "`version` prints the project version on stdout")
        self.assertEqual(len(so.strip().splitlines()), 1, "one line: %r" % so)

    def test_top_level_help(self):
        rc, so, se = self.rt("--help")
        self.assertEqual(rc, 0, se)
        self.assertRegex(so, r"(?i)usage")
        for cmd in ("run", "validate", "version"):
            self.assertRegex(so, r"\b%s\b" % cmd, "--help lists the %s command" % cmd)

    def test_command_help(self):
        for cmd in ("run", "validate", "version"):
            with self.subTest(cmd=cmd):
                rc, so, se = self.rt(cmd, "--help")
                self.assertEqual(rc, 0, se)
                self.assertRegex(so, r"(?i)usage")
                self.assertIn(cmd, so)

    def test_run_help_names_options_and_env(self):
        rc, so, se = self.rt("run", "--help")
        self.assertEqual(rc, 0, se)
        for opt in ("--xvfb", "--out", "--deadline", "--json"):
            self.assertIn(opt, so, "run --help documents %s" % opt)

    def test_unknown_command(self):
        rc, so, se = self.rt("frobnicate")
        self.assertEqual(rc, 2)
        self.assertEqual(so, "", "errors go to stderr")
        self.assertIn("frobnicate", se, "the message names the unknown command")

    def test_no_command(self):
        rc, so, se = self.rt()
        self.assertEqual(rc, 2, "no command is a usage error")
        self.assertTrue(se.strip(), "a message on stderr")

    def test_unknown_option(self):
        for args in (["--bogus-option"], ["run", "--bogus-option", "x.yaml"],
                     ["validate", "--bogus-option", "x.yaml"]):
            with self.subTest(args=args):
                rc, so, se = self.rt(*args)
                self.assertEqual(rc, 2)
                self.assertEqual(so, "")
                self.assertIn("--bogus-option", se)

    def test_run_options_after_the_scenario(self):
        """`run SCENARIO -o DIR` (and --out DIR) writes into DIR: an option after
        the file is an option, not a second scenario named "-o"."""
        for flag in ("-o", "--out"):
            with self.subTest(flag=flag):
                out = os.path.join(self.tmp, "after" + flag.strip("-"))
                rc, so, se = self.rt("run", ksr.scenario_path("xterm-pass.yaml"), flag, out)
                self.assertEqual(rc, 2, se)  # no display: a quick test-error run
                self.assertNotIn("cannot open the scenario", se)
                self.assertEvidence(out, "test-error", "no-display", stderr=se)
                self.assertFalse(os.path.exists(os.path.join(out, "xterm-pass")),
                                 "one scenario: its evidence is OUT itself")

    def test_run_without_scenario(self):
        rc, so, se = self.rt("run")
        self.assertEqual(rc, 2)
        self.assertEqual(so, "")
        self.assertTrue(se.strip())

    def test_bad_deadline_value(self):
        path = ksr.scenario_path("xterm-pass.yaml")
        rc, so, se = self.rt("run", "--deadline", "soon", path, out=self.out())
        self.assertEqual(rc, 2, se)
        self.assertEqual(so, "")

    def test_bad_deadline_env(self):
        path = ksr.scenario_path("xterm-pass.yaml")
        rc, so, se = self.rt("run", path, out=self.out(),
                             env=self.env(KASM_RUNTIME_DEADLINE_S="abc"))
        self.assertEqual(rc, 2, se)
        self.assertEqual(so, "")
        self.assertIn("KASM_RUNTIME_DEADLINE_S", se, "the message names the variable")

    # ---- stdout contract on real runs ----------------------------------------

    def test_stdout_clean_without_json(self):
        # no display at all: a quick test-error run that still writes evidence
        out = self.out()
        rc, so, se = self.rt("run", ksr.scenario_path("xterm-pass.yaml"), out=out)
        self.assertEqual(rc, 2, se)
        self.assertEqual(so, "", "stdout stays empty without --json")
        self.assertTrue(se.strip(), "progress lines go to stderr")
        self.assertEvidence(out, "test-error", "no-display", stderr=se)

    def test_json_prints_the_report(self):
        out = self.out()
        rc, so, se = self.rt("run", "--json", ksr.scenario_path("xterm-pass.yaml"), out=out)
        self.assertEqual(rc, 2, se)
        doc = one_json_document(so)
        report = self.assertEvidence(out, "test-error", "no-display", stderr=se)
        self.assertEqual(doc, report, "--json prints the same report as report.json")

    def test_json_on_a_passing_run(self):
        out = self.out()
        env = self.env(KSR_TESTAPP=ksr.TESTAPP)
        if not os.access(ksr.TESTAPP or "", os.X_OK):
            self.fail("KSR_TESTAPP missing: %r" % ksr.TESTAPP)
        rc, so, se = self.rt("run", "--xvfb", "--json", ksr.scenario_path("testapp-pass.yaml"),
                             out=out, env=env, timeout=120)
        doc = one_json_document(so)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        self.assertEqual(doc, report)
        self.assertEqual(doc["exit_code"], rc)


if __name__ == "__main__":
    unittest.main()
