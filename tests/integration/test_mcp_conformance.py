"""Issue 33, item 5: the newest MCP conformance suite on npm
(@modelcontextprotocol/conformance 0.2.0-alpha.12, the one that covers
2026-07-28; pinned in tests/integration/mcp_node22 with the Node 22 it needs)
against `kasm-session-runtime mcp --http`, once per revision it covers:
`--requirements 2025-11-25` and `--requirements 2026-07-28` (exactly the
scenarios that revision requires, plus the extension and pending ones it runs
beside them). Each run has its own baseline (mcp_node22/conformance-REV.yml,
one check an entry, read by the suite's --expected-failures): a failure outside
it fails the test, and so does a listed check that starts passing. The older
0.1.13 run (the stable line, Node 20) stays in test_mcp_http.py."""

import json
import os
import re
import signal
import subprocess
import unittest

import ksr
import mcplib

SUITE = os.path.join(mcplib.NODE22_DIR, "node_modules", "@modelcontextprotocol", "conformance",
                     "dist", "index.js")


class ConformanceNewest(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        mcplib.require_node22(self)
        self.rt, self.port = self.start_server()

    def start_server(self):
        return mcplib.start_http(self, ("mcp", "--xvfb", "--http", "127.0.0.1:0"))

    def run_suite(self, revision):
        """The suite on one revision; returns {scenario: [check dicts]}."""
        results = os.path.join(self.tmp, "conformance-" + revision)
        baseline = os.path.join(mcplib.NODE22_DIR, "conformance-%s.yml" % revision)
        res = subprocess.run(
            [mcplib.NODE22, SUITE, "server", "--url", "http://127.0.0.1:%d/mcp" % self.port,
             "--requirements", revision, "--expected-failures", baseline, "-o", results],
            cwd=mcplib.NODE22_DIR, capture_output=True, text=True, timeout=300, env=self.env())
        out = res.stdout + res.stderr
        self.assertEqual(res.returncode, 0, "conformance %s failed outside its baseline (or a "
                         "baseline entry is stale):\n%s" % (revision, out[-6000:]))
        self.assertIn("Baseline check passed", out)
        checks = {}
        for d in sorted(os.listdir(results)):
            name = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", d)
            with open(os.path.join(results, d, "checks.json"), encoding="utf-8") as f:
                checks[name] = json.load(f)
        self.assertIsNone(self.rt.poll(), "the server died during the suite")
        return checks

    def passed(self, checks, scenario):
        return {c["id"] for c in checks[scenario] if c["status"] == "SUCCESS"}

    def test_both_revisions(self):
        old = self.run_suite("2025-11-25")
        for name in ("server-initialize", "tools-list", "ping", "logging-set-level",
                     "resources-list", "dns-rebinding-protection", "server-session-lifecycle"):
            self.assertTrue(self.passed(old, name), name)
            self.assertFalse([c for c in old[name] if c["status"] in ("FAILURE", "WARNING")],
                             name)

        new = self.run_suite("2026-07-28")
        for name in ("tools-list", "resources-list", "sep-2164-resource-not-found",
                     "http-header-validation", "dns-rebinding-protection"):
            self.assertTrue(self.passed(new, name), name)
            self.assertFalse([c for c in new[name] if c["status"] in ("FAILURE", "WARNING")],
                             name)
        # What the stateless revision is about, check by check (the scenario's
        # other checks need the suite's own fixture tools: in the baseline).
        stateless = self.passed(new, "server-stateless")
        for check in ("sep-2575-server-implements-discover",
                      "sep-2575-request-meta-invalid-missing-meta",
                      "sep-2575-request-meta-invalid-missing-protocol-version",
                      "sep-2575-request-meta-invalid-missing-client-capabilities",
                      "sep-2575-server-unsupported-version-error",
                      "sep-2575-http-server-header-mismatch-400",
                      "sep-2575-http-server-method-not-found-404-initialize",
                      "sep-2575-http-server-method-not-found-404-ping",
                      "sep-2575-http-server-error-jsonrpc-id"):
            self.assertIn(check, stateless)
        self.assertIn("sep-2549-tools-list-caching-hints", self.passed(new, "caching"))
        self.assertIn("tasks-removed-tasks-list",
                      self.passed(new, "tasks-dispatch-and-envelope"))

        self.rt.signal(signal.SIGTERM)
        self.assertEqual(self.rt.wait(60), 0, self.rt.stderr[-3000:])
        self.assertNoSanitizerReport(self.rt.stderr)


if __name__ == "__main__":
    unittest.main()
