"""Security checks (issue #12; docs/reliability.md#security).

- The model API key never appears in any file in OUT, on stdout or on stderr:
  representative runs (a pass, an app failure with diagnosis, a model that is
  unreachable, a model that echoes the key back, an invalid scenario, validate)
  all carry KASM_RUNTIME_MODEL_API_KEY set to a unique marker, and every byte
  they produced is searched for it (raw, and the hex/base64 forms a careless
  encoder could leave).
- File names in OUT never come from a window title or a scenario name
  unsanitised: the test app titled `../../etc/passwd` (its main window and its
  error dialog), a scenario named `../../x/y`: nothing is written outside OUT
  (a sentinel tree beside OUT is compared before and after) and every name in
  OUT is a plain, safe name.
- `mcp --http` (docs/mcp.md): requests from other Origins are refused (403)
  and the refused tool call has no effect; a bind off loopback without a
  token is refused at start (exit 2, nothing listens); a body over the cap is
  413 while one under it is served. test_mcp_http.py has the transport's other
  rules.
"""

import base64
import json
import os
import re
import http.client
import socket
import textwrap
import unittest

import ksr
import test_mcp_http as mh
from model_server import ModelServer

SAFE_NAME = re.compile(r"^[A-Za-z0-9._+-]+$")


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def tree(root):
    """{relative path: (size, mtime_ns)} of everything under root."""
    found = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st = os.lstat(p)
            found[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return found


class SecurityTest(ksr.KsrTestCase):

    def setUp(self):
        super().setUp()
        self.key = "sk-ksrsec-%s" % self.tag
        self.server = None

    def tearDown(self):
        if self.server:
            self.server.stop()
        super().tearDown()

    def forms(self):
        k = self.key.encode()
        return [k, k.hex().encode(), base64.b64encode(k)[:-4], k.upper()]

    def assertNoKey(self, out, *texts):
        for text in texts:
            for form in self.forms():
                self.assertNotIn(form, text.encode(), "the key is on stdout/stderr")
        for name in ksr.list_files(out) if out and os.path.isdir(out) else []:
            with open(os.path.join(out, name), "rb") as f:
                data = f.read()
            for form in self.forms():
                self.assertNotIn(form, data, "the key (as %r) is in %s" % (form[:12], name))

    def run_keyed(self, args, out, **extra):
        env = self.env(KASM_RUNTIME_MODEL_API_KEY=self.key, KSR_TESTAPP=ksr.TESTAPP, **extra)
        rc, so, se, _ = self.run_rt(args, env=env, out=out, timeout=150)
        self.assertNoSanitizerReport(se)
        self.assertNoKey(out, so, se)
        return rc, so, se

    def test_api_key_never_appears_anywhere(self):
        url = "http://127.0.0.1:%d/v1" % closed_port()
        model = dict(KASM_RUNTIME_MODEL="m", KASM_RUNTIME_MODEL_URL=url)
        # a pass, with the key set and a model configured but unreachable
        out = self.out("pass")
        rc, so, se = self.run_keyed(["run", "--xvfb", ksr.scenario_path("testapp-pass.yaml")],
                                    out, **model)
        self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        # an app failure: diagnosis, logs, failure screenshot; key only, no model
        fail = self.scenario(textwrap.dedent("""\
            name: secret-fail
            launch: ${KSR_TESTAPP} --crash-after 1500
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0.5
            atspi: false
            steps:
              - sleep: 3
            """), "fail.yaml")
        out = self.out("fail")
        rc, so, se = self.run_keyed(["run", "--xvfb", fail], out)
        self.assertEqual(rc, 1, se)
        # a model that echoes the key in every answer (its 400 body, its reason)
        display = self.start_xvfb()
        script = os.path.join(self.tmp, "script.json")
        echo = '{"error": {"message": "bad key %s"}}' % self.key
        with open(script, "w") as f:
            json.dump({"expect_size": None, "api_key": self.key, "responses": {
                "first-look": [{"status": 400, "body": echo}],
                "judge": [{"answer": {"answer": "yes", "reason": "key=%s" % self.key}}]}}, f)
        self.server = ModelServer(script, os.path.join(self.tmp, "log.jsonl"), display).start()
        observe = self.scenario(textwrap.dedent("""\
            name: secret-echo
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0.5
            atspi: false
            steps:
              - observe: the window shows a button
            """), "echo.yaml")
        out = self.out("echo")
        rc, so, se = self.run_keyed(["run", observe], out, DISPLAY=display, NO_AT_BRIDGE="1",
                                    KASM_RUNTIME_MODEL="m",
                                    KASM_RUNTIME_MODEL_URL=self.server.base + "/v1")
        self.assertIn(rc, (0, 1, 2))
        self.assertTrue(ksr.list_files(out), "the echo run wrote evidence")
        # an invalid scenario, and validate, with the key in the environment
        bad = self.scenario("name: bad\nlaunch: [\n", "bad.yaml")
        out = self.out("bad")
        rc, so, se = self.run_keyed(["run", "--xvfb", bad], out)
        self.assertEqual(rc, 2)
        rc, so, se = self.run_keyed(["validate", bad], None)
        self.assertNotEqual(rc, 0)

    def test_titles_and_names_never_make_paths(self):
        # A sentinel tree around OUT: the run may write into OUT only.
        base = os.path.join(self.tmp, "a", "b")
        os.makedirs(base)
        for d in ("etc", "x"):
            os.makedirs(os.path.join(self.tmp, "a", d), exist_ok=True)
        out = os.path.join(base, "out")
        path = self.scenario(textwrap.dedent("""\
            name: ../../x/y
            launch: ${KSR_TESTAPP} --title ../../etc/passwd --error-dialog ../../etc/shadow
            process: ^ksr-testapp$
            window: passwd
            settle_s: 1
            atspi: false
            steps:
              - click: center
            """), "names.yaml")
        before = {k: v for k, v in tree(self.tmp).items() if not k.startswith("a/b/out")}
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=120)
        self.assertNoSanitizerReport(se)
        # the dialog's title matches no error pattern: a concern
        self.assertEvidence(out, "pass-with-concerns", "completed", rc=rc, stderr=se)
        after = {k: v for k, v in tree(self.tmp).items()
                 if not k.startswith("a/b/out") and not k.startswith("rt")}
        before = {k: v for k, v in before.items() if not k.startswith("rt")}
        self.assertEqual(sorted(set(after) - set(before)), [], "written outside OUT")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "a", "etc", "passwd")))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "a", "x", "y")))
        for rel in ksr.list_files(out):
            for part in rel.split(os.sep):
                self.assertRegex(part, SAFE_NAME, "unsafe name in OUT: %r" % rel)
                self.assertNotIn("..", part.replace("...", ""), "dot-dot in %r" % rel)
        for root, dirs, files in os.walk(out):
            for n in dirs + files:
                self.assertFalse(os.path.islink(os.path.join(root, n)), "a symlink in OUT")
        report = ksr.load_report(out)
        self.assertEqual(report["scenario"]["name"], "../../x/y", "the name is kept as text")


class McpHttpSecurityTest(mh.McpHttpTestCase):

    def conn(self, port):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.addCleanup(c.close)
        return c

    def test_other_origins_are_refused(self):
        rt, port = self.start_server()
        c = self.conn(port)
        sid = self.initialize(c)
        # A page elsewhere, and names that only look like loopback.
        origins = ["http://evil.example", "https://evil.example:443", "null",
                   "http://localhost.evil.example", "http://127.0.0.1.evil.example",
                   "http://user@127.0.0.1", "http://127.0.0.1/../", "file://", "chrome-extension://x"]
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "input.move", "arguments": {"x": 1, "y": 1}}}
        for origin in origins:
            with self.subTest(origin=origin):
                st, _, body = self.post(c, call, sid=sid, headers={"Origin": origin})
                self.assertEqual(st, 403, body[:300])
                self.assertNotIn(b'"result"', body, "a refused call must not run")
        st, _, body = self.post(c, {"jsonrpc": "2.0", "id": 8, "method": "ping"}, sid=sid,
                                headers={"Origin": "http://127.0.0.1:%d" % port})
        self.assertEqual(st, 200, body[:300])
        self.stop_server(rt)

    def test_non_loopback_binds_need_a_token(self):
        for addr in ("0.0.0.0:0", "[::]:0"):
            for env in (self.env(), self.env(KASM_RUNTIME_MCP_TOKEN="")):
                with self.subTest(addr=addr, token_var=env.get("KASM_RUNTIME_MCP_TOKEN")):
                    rc, _, err, _ = self.run_rt(["mcp", "--http", addr], env=env, timeout=60)
                    self.assertEqual(rc, 2, err[-2000:])
                    self.assertNotIn("listening on", err)
        # Loopback needs none.
        rt, port = self.start_server("--http", "127.0.0.1:0")
        self.initialize(self.conn(port))
        self.stop_server(rt)

    def test_request_size_is_capped(self):
        rt, port = self.start_server()
        sid = self.initialize(self.conn(port))
        def ping(pad):
            return (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + b"x" * pad
                    + b'"}}')
        st, _, body = self.post(self.conn(port), ping(1 << 20), sid=sid)
        self.assertEqual(st, 200, body[:300])
        st, _, body = self.post(self.conn(port), ping(17 << 20), sid=sid)
        self.assertEqual(st, 413, body[:300])
        st, _, body = self.post(self.conn(port), ping(10), sid=sid)
        self.assertEqual(st, 200, "served on after a 413: %r" % body[:300])
        self.stop_server(rt)


if __name__ == "__main__":
    unittest.main()
