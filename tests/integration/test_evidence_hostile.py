"""Evidence files in OUT are never written through a symbolic link (issue 31, item 6):
a link planted at launch.log's name, pointing outside OUT, is replaced (as report files
are), and the app's output lands in OUT's own launch.log."""

import os
import textwrap
import unittest

import ksr


class TestEvidenceLinks(ksr.KsrTestCase):

    def test_planted_launch_log_link_is_replaced_not_followed(self):
        out = self.out()
        os.makedirs(out)
        outside = os.path.join(self.tmp, "outside.txt")
        with open(outside, "w") as f:
            f.write("untouched\n")
        os.symlink(outside, os.path.join(out, "launch.log"))
        path = self.scenario(textwrap.dedent("""\
            name: planted-link
            launch: sh -c 'echo output-of-the-app; exec "$KSR_TESTAPP"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            """))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=120)
        self.assertNoSanitizerReport(se)
        with open(outside) as f:
            self.assertEqual(f.read(), "untouched\n", "launch.log was written through the link")
        log = os.path.join(out, "launch.log")
        self.assertFalse(os.path.islink(log), "launch.log is still a link")
        with open(log) as f:
            self.assertIn("output-of-the-app", f.read())
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)


if __name__ == "__main__":
    unittest.main()
