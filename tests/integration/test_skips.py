"""Skips are visible (ksr.py): every skip reaches $KSR_SKIP_LOG with its reason,
a file whose every test skipped prints the mark ctest reports as skipped, and
under KSR_STRICT_SKIPS=1 (scripts/setup.sh test) a skip for want of what setup
provides fails instead. Checked on small test files run as their own process,
as ctest runs the real ones."""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import ksr

HERE = os.path.dirname(os.path.abspath(__file__))


class SkipsTest(unittest.TestCase):

    def run_file(self, body, **env):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "test_probe.py")
            log = os.path.join(tmp, "skips.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write("import unittest\nimport ksr\n\n" + textwrap.dedent(body) +
                        "\nunittest.main()\n")
            e = dict(os.environ, PYTHONPATH=HERE, KSR_SKIP_LOG=log)
            e.pop("KSR_STRICT_SKIPS", None)
            e.update(env)
            r = subprocess.run([sys.executable, path], capture_output=True, text=True,
                               env=e, timeout=60)
            lines = open(log, encoding="utf-8").read().splitlines() if os.path.exists(log) else []
            return r, lines

    def test_every_skip_is_logged_with_its_reason(self):
        r, lines = self.run_file("""
            class T(unittest.TestCase):
                def test_a(self):
                    pass
                @unittest.skip("no model here")
                def test_b(self):
                    pass
                def test_c(self):
                    self.skipTest("no network")
            """)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted(lines), ["__main__.T.test_b: no model here",
                                         "__main__.T.test_c: no network"])
        self.assertNotIn(ksr.ALL_SKIPPED_MARK, r.stdout, "one test ran: not all skipped")

    def test_a_file_that_skipped_everything_says_so(self):
        r, lines = self.run_file("""
            class T(unittest.TestCase):
                def test_a(self):
                    self.skipTest("nothing to test against")
            """)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(ksr.ALL_SKIPPED_MARK, r.stdout)
        self.assertEqual(lines, ["__main__.T.test_a: nothing to test against"])

    def test_strict_mode_fails_a_skip_setup_would_have_prevented(self):
        body = """
            class T(unittest.TestCase):
                def test_a(self):
                    ksr.skip_unless_installable(self, "zenity is not installed")
            """
        r, lines = self.run_file(body)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(lines, ["__main__.T.test_a: zenity is not installed"])
        r, lines = self.run_file(body, KSR_STRICT_SKIPS="1")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("not skipped where setup provides it", r.stderr)
        self.assertEqual(lines, [])


if __name__ == "__main__":
    unittest.main()
