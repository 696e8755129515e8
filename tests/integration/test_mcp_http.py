"""`mcp --http`: the Streamable HTTP transport over real sockets (http.client), the
official conformance suite (@modelcontextprotocol/conformance 0.1.13, pinned in
tests/integration/mcp_conformance) and the MCP inspector CLI over stdio.

The node clients are installed by scripts/setup.sh (npm ci in mcp_conformance/);
when node_modules is missing the test installs them from the lock file itself."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import time
import unittest

import ksr
import mcplib

CONF_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_conformance")
CLIENT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_client")
BODY_TIMEOUT_S = 30  # src/mcp/http.c: a stalled request body ends its connection
BASELINE = os.path.join(CONF_DIR, "expected-failures.yml")
PROTO = "2025-11-25"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTO, "capabilities": {},
                   "clientInfo": {"name": "test_mcp_http", "version": "1"}}}


def ensure_node_modules():
    """npm ci from the pinned lock (idempotent: skipped when installed)."""
    marker = os.path.join(CONF_DIR, "node_modules", "@modelcontextprotocol", "conformance",
                          "package.json")
    if not os.path.exists(marker):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                       cwd=CONF_DIR, check=True, timeout=600)


def baseline_entries():
    """The scenario names listed in expected-failures.yml (entries are `  - name`)."""
    with open(BASELINE, encoding="utf-8") as f:
        return [m.group(1) for m in (re.match(r"^\s+-\s+([\w-]+)", line) for line in f) if m]


class McpHttpTestCase(ksr.KsrTestCase):
    needs_testapp = False

    def start_server(self, *extra, env=None):
        """`mcp --http 127.0.0.1:0` (or as given); returns (runtime, port)."""
        args = ["mcp"] + list(extra)
        if "--http" not in args:
            args += ["--http", "127.0.0.1:0"]
        rt = self.start_rt(args, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = re.search(r"listening on http://\S+:(\d+)/mcp", rt.stderr)
            if m:
                return rt, int(m.group(1))
            if rt.poll() is not None:
                self.fail("mcp --http exited (rc %s) before listening:\n%s"
                          % (rt.poll(), rt.stderr[-3000:]))
            time.sleep(0.05)
        self.fail("mcp --http did not report its port:\n%s" % rt.stderr[-3000:])

    def stop_server(self, rt):
        """SIGTERM ends the server cleanly: exit 0, no sanitizer report."""
        rt.signal(signal.SIGTERM)
        rc = rt.wait(60)
        self.assertEqual(rc, 0, "exit after SIGTERM; stderr:\n%s" % rt.stderr[-3000:])
        self.assertNoSanitizerReport(rt.stderr)

    @staticmethod
    def post(conn, body, sid=None, headers=None):
        """POST /mcp; returns (status, headers dict (lower-case), body bytes)."""
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if sid:
            h["Mcp-Session-Id"] = sid
            h["MCP-Protocol-Version"] = PROTO
        h.update(headers or {})
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        conn.request("POST", "/mcp", body=data, headers=h)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()

    def initialize(self, conn, headers=None):
        st, hd, body = self.post(conn, INIT, headers=headers)
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body)["result"]["protocolVersion"], PROTO)
        sid = hd.get("mcp-session-id", "")
        self.assertRegex(sid, r"^[0-9a-f]{32}$")
        return sid

    def assertRpcError(self, body, code):
        msg = json.loads(body)
        self.assertEqual(msg.get("error", {}).get("code"), code, msg)


class TestHttpSessionsApart(McpHttpTestCase):
    """Issue 33, item 2: what a 2025 session keeps is its own."""

    def test_two_sessions_keep_their_own_screenshot_scale(self):
        """Session A captures at half size, then session B at full size; A's
        click at (100, 50) is still in A's half-size space (screen 200, 100),
        B's in B's (100, 50). Before: one state for every session, so A's
        click landed in B's space (100, 50)."""
        display = self.start_xvfb(size="1280x720")
        rt, port = self.start_server(env=self.env(DISPLAY=display))

        def conn():
            return http.client.HTTPConnection("127.0.0.1", port, timeout=60)

        def call(sid, name, args):
            st, _, body = self.post(conn(), {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                             "params": {"name": name, "arguments": args}},
                                    sid=sid, headers={"Accept": "application/json"})
            self.assertEqual(st, 200, body)
            res = json.loads(body)["result"]
            self.assertFalse(res["isError"], res)
            return res["structuredContent"]

        a, b = self.initialize(conn()), self.initialize(conn())
        self.assertNotEqual(a, b)
        self.assertEqual(call(a, "screen_capture", {"max_edge": 640})["scale"], 0.5)
        self.assertEqual(call(b, "screen_capture", {"zoom": True})["scale"], 1)
        at = call(a, "input_click", {"x": 100, "y": 50})
        self.assertEqual((at["screen_x"], at["screen_y"]), (200, 100))
        at = call(b, "input_click", {"x": 100, "y": 50})
        self.assertEqual((at["screen_x"], at["screen_y"]), (100, 50))
        # A third session has no screenshot yet: screen pixels.
        at = call(self.initialize(conn()), "input_click", {"x": 100, "y": 50})
        self.assertEqual((at["screen_x"], at["screen_y"]), (100, 50))
        self.stop_server(rt)


class TestHttpRules(McpHttpTestCase):
    """The transport's rules, each on one keep-alive connection that must survive it."""

    def setUp(self):
        super().setUp()
        self.rt, self.port = self.start_server()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.sid = self.initialize(self.conn)

    def tearDown(self):
        self.conn.close()
        super().tearDown()

    def ping_ok(self):
        st, hd, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 99, "method": "ping"},
                                 sid=self.sid)
        self.assertEqual((st, json.loads(body).get("result")), (200, {}), body)
        self.assertEqual(hd.get("connection"), "close")

    def test_rejections_then_serving_on(self):
        """A rejected request is read to its end, answered with `Connection: close`,
        and the connection closed (keep-alive cannot break: the client knows to
        reconnect; every response closes, see src/backend/http/server.c); the server serves
        the next request."""
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        cases = [  # (why, body, extra headers, status, JSON-RPC code or None)
            ("foreign Origin", ping, {"Origin": "http://evil.example.com"}, 403, -32000),
            ("Origin null", ping, {"Origin": "null"}, 403, -32000),
            ("DNS rebinding Host", ping, {"Host": "evil.example.com"}, 403, -32000),
            ("malformed JSON", b'{"jsonrpc": "2.0", "id": 3, "meth', {}, 400, -32700),
            ("a batch", [ping, ping], {}, 400, -32600),
            ("unknown protocol revision", ping, {"MCP-Protocol-Version": "1999-01-01"}, 400,
             -32022),
            ("not JSON media type", ping, {"Content-Type": "text/plain"}, 415, -32000),
            ("unknown session", ping, {"Mcp-Session-Id": "0" * 32}, 404, -32001),
        ]
        for why, body, extra, status, code in cases:
            with self.subTest(why):
                st, hd, got = self.post(self.conn, body, sid=self.sid, headers=extra)
                self.assertEqual(st, status, got)
                self.assertRpcError(got, code)
                self.assertEqual(hd.get("connection"), "close")
                self.ping_ok()
                self.ping_ok()
        # A loopback Origin is fine.
        st, _, got = self.post(self.conn, ping, sid=self.sid,
                               headers={"Origin": "http://localhost:%d" % self.port})
        self.assertEqual(st, 200, got)

    def test_body_over_the_cap_is_413_and_read(self):
        big = b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"' + \
            b"x" * (20 * 1024 * 1024) + b'"}}'
        st, hd, body = self.post(self.conn, big, sid=self.sid)
        self.assertEqual(st, 413, body[:300])
        self.assertRpcError(body, -32600)
        self.assertEqual(hd.get("connection"), "close")
        self.ping_ok()

    def test_session_required_and_deleted(self):
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        self.assertEqual(st, 400, body)
        # A second initialize gets a session of its own; both work.
        other = self.initialize(self.conn)
        self.assertNotEqual(other, self.sid)
        self.conn.request("DELETE", "/mcp", headers={"Mcp-Session-Id": self.sid})
        r = self.conn.getresponse()
        r.read()
        self.assertEqual(r.status, 200)
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                                sid=self.sid)
        self.assertEqual(st, 404, body)
        self.sid = other
        self.ping_ok()

    def test_get_is_405_and_other_paths_404(self):
        self.conn.request("GET", "/mcp", headers={"Accept": "text/event-stream",
                                                  "Mcp-Session-Id": self.sid})
        r = self.conn.getresponse()
        r.read()
        self.assertEqual(r.status, 405)
        self.assertIn("POST", r.getheader("Allow", ""))
        self.conn.request("POST", "/elsewhere", body=b"{}",
                          headers={"Content-Type": "application/json"})
        r = self.conn.getresponse()
        r.read()
        self.assertEqual(r.status, 404)
        self.ping_ok()

    def test_notification_202_and_json_rpc_errors(self):
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0",
                                            "method": "notifications/initialized"}, sid=self.sid)
        self.assertEqual((st, body), (202, b""))
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 4, "method": "no/such"},
                                sid=self.sid)
        self.assertEqual(st, 200)
        self.assertRpcError(body, -32601)
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                            "params": {"name": "no.such.tool"}}, sid=self.sid)
        msg = json.loads(body)
        self.assertTrue("error" in msg or msg.get("result", {}).get("isError"), msg)
        st, _, body = self.post(self.conn, {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                                            "params": {"name": "input.click",
                                                       "arguments": {"x": "left", "y": []}}},
                                sid=self.sid)
        msg = json.loads(body)
        self.assertTrue("error" in msg or msg.get("result", {}).get("isError"), msg)
        self.ping_ok()
        self.assertIsNone(self.rt.poll())
        self.stop_server(self.rt)


def raw_headers(sid=None, length=None, extra=()):
    """A POST /mcp head as bytes (Content-Length when length is not None)."""
    lines = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream"]
    if sid:
        lines += ["Mcp-Session-Id: " + sid, "MCP-Protocol-Version: " + PROTO]
    if length is not None:
        lines.append("Content-Length: %d" % length)
    lines += list(extra)
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def parse_response(data):
    """(status, headers dict (lower-case), body) of one HTTP/1.1 response."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    hd = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
    return status, hd, body


class TestHttpFraming(McpHttpTestCase):
    """Requests as a raw socket writes them: head and body in separate packets with
    pauses between them, a chunked body, no Content-Length, bodies that stop coming.
    Every request is answered (or refused) and its connection ends; none hangs the
    server, and a stalled one is dropped after BODY_TIMEOUT_S."""

    def setUp(self):
        super().setUp()
        self.rt, self.port = self.start_server()
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.sid = self.initialize(conn)
        conn.close()

    def connect(self, timeout=20):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.addCleanup(s.close)
        return s

    @staticmethod
    def read_to_close(s):
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk

    def exchange(self, pieces, delay=0.3, timeout=20):
        """Write the pieces with a pause between each, read until the server closes."""
        s = self.connect(timeout)
        t0 = time.monotonic()
        for i, piece in enumerate(pieces):
            if i:
                time.sleep(delay)
            try:
                s.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # answered and closed early (a 411 on the head): read the answer
        try:
            data = self.read_to_close(s)
        except socket.timeout:
            self.fail("no answer (or no close) within %ss to %r" % (timeout, pieces))
        return parse_response(data) + (time.monotonic() - t0,)

    def ping_body(self, i):
        return json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}).encode()

    def test_body_in_later_packets(self):
        body = self.ping_body(1)
        head = raw_headers(self.sid, len(body))
        cases = {
            "head, then body": [head, body],
            "head, then body in three pieces": [head, body[:5], body[5:20], body[20:]],
            "head split mid-line, then body": [head[:30], head[30:], body],
            "head and a first byte, then the rest": [head + body[:1], body[1:]],
            "one write": [head + body],
        }
        for why, pieces in cases.items():
            with self.subTest(why):
                st, hd, got, _ = self.exchange(pieces)
                self.assertEqual(st, 200, got)
                self.assertEqual(json.loads(got), {"jsonrpc": "2.0", "id": 1, "result": {}})
                self.assertEqual(hd.get("connection"), "close")
        # A tools/list (a reply of some kilobytes) the same way.
        body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
        st, _, got, _ = self.exchange([raw_headers(self.sid, len(body)), body[:7], body[7:]])
        self.assertEqual(st, 200, got[:300])
        self.assertIn("screen_capture", [t["name"] for t in json.loads(got)["result"]["tools"]])

    def test_chunked_and_unframed_posts_are_411(self):
        body = self.ping_body(3)
        chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        cases = {
            "chunked, one write": [raw_headers(self.sid, extra=["Transfer-Encoding: chunked"])
                                   + chunked],
            "chunked, head then chunks": [raw_headers(self.sid,
                                                      extra=["Transfer-Encoding: chunked"]),
                                          chunked[:10], chunked[10:]],
            "chunked with a Content-Length too": [raw_headers(
                self.sid, len(chunked), extra=["Transfer-Encoding: chunked"]) + chunked],
            "no Content-Length": [raw_headers(self.sid), body],
        }
        for why, pieces in cases.items():
            with self.subTest(why):
                st, hd, got, secs = self.exchange(pieces)
                self.assertEqual(st, 411, got)
                self.assertRpcError(got, -32000)
                self.assertIn("Content-Length", json.loads(got)["error"]["message"])
                self.assertEqual(hd.get("connection"), "close")
                self.assertLess(secs, 10)
        st, _, got, _ = self.exchange([raw_headers(self.sid, len(body)), body])
        self.assertEqual(st, 200, got)

    def test_stalled_requests_are_dropped_and_others_served(self):
        body = self.ping_body(4)
        stalled = {
            "half a body": raw_headers(self.sid, len(body)) + body[:10],
            "head only": raw_headers(self.sid, len(body)),
            "half a head": raw_headers(self.sid, len(body))[:40],
        }
        socks = {}
        t0 = time.monotonic()
        for why, data in stalled.items():
            socks[why] = self.connect(timeout=BODY_TIMEOUT_S + 30)
            socks[why].sendall(data)
        # Meanwhile the server answers everyone else at once.
        for i in range(5):
            st, _, got, secs = self.exchange([raw_headers(self.sid, len(body)), body])
            self.assertEqual(st, 200, got)
            self.assertLess(secs, 5)
        for why, s in socks.items():
            with self.subTest(why):
                try:
                    data = self.read_to_close(s)
                except socket.timeout:
                    self.fail("%s: still open %.0fs later" % (why, time.monotonic() - t0))
                except ConnectionResetError:
                    data = b""
                self.assertNotIn(b"200 OK", data)
                self.assertLess(time.monotonic() - t0, BODY_TIMEOUT_S + 15)
        st, _, got, _ = self.exchange([raw_headers(self.sid, len(body)), body])
        self.assertEqual(st, 200, got)
        self.stop_server(self.rt)


class TestHttpToken(McpHttpTestCase):

    def test_bearer_token(self):
        rt, port = self.start_server(env=self.env(KASM_RUNTIME_MCP_TOKEN="s3cret-token"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for auth in (None, "Bearer wrong", "Bearer s3cret-toke", "Basic czNjcmV0LXRva2Vu"):
            with self.subTest(auth):
                st, hd, body = self.post(conn, INIT, headers={"Authorization": auth} if auth else {})
                self.assertEqual(st, 401, body)
                self.assertEqual(hd.get("www-authenticate"), "Bearer")
        sid = self.initialize(conn, headers={"Authorization": "Bearer s3cret-token"})
        st, _, body = self.post(conn, {"jsonrpc": "2.0", "id": 2, "method": "ping"}, sid=sid,
                                headers={"Authorization": "Bearer s3cret-token"})
        self.assertEqual(st, 200, body)
        conn.close()
        self.stop_server(rt)

    def test_non_loopback_bind_needs_a_token(self):
        rc, _, err, _ = self.run_rt(["mcp", "--http", "0.0.0.0:0"], timeout=60)
        self.assertEqual(rc, 2, err)
        self.assertIn("KASM_RUNTIME_MCP_TOKEN", err)
        rt, port = self.start_server("--http", "0.0.0.0:0", "--token", "tok")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        st, _, _ = self.post(conn, INIT)
        self.assertEqual(st, 401)
        conn.close()
        self.stop_server(rt)


class McpHttpTools(mcplib.ToolsSuite, McpHttpTestCase):
    """Issue 19's tool tests through the SDK's StreamableHTTPClientTransport."""

    needs_testapp = True

    def setUp(self):
        super().setUp()
        mcplib.require_client(self)

    def connect(self, extra):
        rt, port = self.start_server(*extra, env=self.denv)
        client = mcplib.SdkClient(self, env=self.denv, url="http://127.0.0.1:%d/mcp" % port)

        def stop():
            rt.signal(signal.SIGTERM)
            self.assertEqual(rt.wait(60), 0, rt.stderr[-3000:])
            return rt.stderr
        return client, stop


class TestHttpClients(McpHttpTestCase):
    """Real clients: the conformance suite over HTTP, an SSE stream of progress, and the
    inspector CLI over stdio."""

    def node(self, args, timeout=300, **kw):
        return subprocess.run(["node"] + args, cwd=CONF_DIR, capture_output=True, text=True,
                              timeout=timeout, env=self.env(), **kw)

    def test_conformance_suite(self):
        # The suite (0.1.13, pinned) needs node >= 20 (its undici uses the global File);
        # on a machine whose only node is Debian 12's 18 it cannot start at all.
        major = int(subprocess.run(["node", "-p", "process.versions.node.split('.')[0]"],
                                   capture_output=True, text=True, timeout=60).stdout or 0)
        if major < 20:
            # The project's machines have node 20 (docs/mcp.md#conformance): there
            # this is a failure, never a quiet skip.
            ksr.skip_unless_installable(
                self, "@modelcontextprotocol/conformance 0.1.13 needs node >= 20; "
                "this machine has node %d (the server side is unchanged)" % major)
        ensure_node_modules()
        rt, port = self.start_server("--xvfb")
        results = os.path.join(self.tmp, "conformance")
        res = self.node([os.path.join("node_modules", "@modelcontextprotocol", "conformance",
                                      "dist", "index.js"), "server",
                         "--url", "http://127.0.0.1:%d/mcp" % port,
                         "--expected-failures", BASELINE, "-o", results])
        out = res.stdout + res.stderr
        self.assertEqual(res.returncode, 0, "conformance failed outside the baseline (or a "
                         "baseline entry is stale):\n%s" % out[-6000:])
        # Every scenario outside the baseline ran and passed, with at least one check.
        summary = dict(re.findall(r"^[✓✗] ([\w-]+): (\d+ passed, \d+ failed)", out, re.M))
        expected = set(baseline_entries())
        applies = sorted(set(summary) - expected)
        self.assertGreaterEqual(len(applies), 6, summary)
        for name in applies:
            passed, failed = map(int, re.findall(r"\d+", summary[name]))
            self.assertEqual((failed, passed > 0), (0, True), "%s: %s" % (name, summary[name]))
        for name in ("server-initialize", "tools-list", "ping", "dns-rebinding-protection"):
            self.assertIn(name, applies)
        self.assertIsNone(rt.poll(), "the server died during the suite")
        self.stop_server(rt)

    def test_progress_streams_as_sse(self):
        rt, port = self.start_server("--xvfb")
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        sid = self.initialize(conn)
        yaml = ("name: sse-progress\nlaunch: %s\nprocess: ^ksr-testapp$\n"
                "window: ^KSR Test App$\nlaunch_timeout_s: 30\nsettle_s: 0\natspi: false\n"
                % ksr.TESTAPP)
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "scenario.run", "_meta": {"progressToken": "p7"},
                           "arguments": {"yaml": yaml, "out": os.path.join(self.tmp, "run")}}}
        st, hd, body = self.post(conn, call, sid=sid)
        self.assertEqual(st, 200, body[:500])
        self.assertTrue(hd.get("content-type", "").startswith("text/event-stream"), hd)
        events = [json.loads(line[len("data: "):]) for line in body.decode().split("\n")
                  if line.startswith("data: ")]
        self.assertGreaterEqual(len(events), 2, body[:2000])
        progress = [e for e in events if e.get("method") == "notifications/progress"]
        self.assertTrue(progress, events)
        self.assertTrue(all(e["params"]["progressToken"] == "p7" for e in progress))
        self.assertEqual(events[-1].get("id"), 7, "the result comes last on the stream")
        self.assertIn("result", events[-1])
        conn.close()
        # The stream ended the connection; a new one still works.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        st, _, _ = self.post(conn, {"jsonrpc": "2.0", "id": 8, "method": "ping"}, sid=sid)
        self.assertEqual(st, 200)
        conn.close()
        self.stop_server(rt)

    def test_sdk_client_500_sequential_requests(self):
        """The official SDK client's StreamableHTTPClientTransport (what bench/mcp.sh
        drives), 500 requests in a row: tools/call window.list, tools/call
        screen.capture and ping in turn. Every one is answered, each within 10 s. (A
        tools/call used to be answered 202 now and then in an optimised build, the
        message classified after its parse tree was freed; the SDK then waited for a
        reply that never came.)"""
        if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "@modelcontextprotocol")):
            self.fail("the SDK client is not installed: run scripts/setup.sh test "
                      "(npm ci in tests/integration/mcp_client)")
        rt, port = self.start_server("--xvfb")
        n = 500
        res = subprocess.run(["node", os.path.join(CLIENT_DIR, "http_loop.mjs"),
                              "http://127.0.0.1:%d/mcp" % port, str(n), "10000"],
                             cwd=CLIENT_DIR, capture_output=True, text=True, timeout=n * 10 + 60,
                             env=self.env())
        self.assertEqual(res.returncode, 0, res.stdout[-3000:] + res.stderr[-3000:])
        out = json.loads(res.stdout.strip().splitlines()[-1])
        self.assertEqual(out["failures"], [], out)
        self.assertEqual(out["n"], n)
        self.assertLess(out["max_ms"], 10000, out)
        self.assertIsNone(rt.poll(), "the server died")
        self.stop_server(rt)

    def test_inspector_cli_over_stdio(self):
        ensure_node_modules()
        cli = os.path.join("node_modules", "@modelcontextprotocol", "inspector", "cli", "build",
                           "cli.js")
        res = self.node([cli, "--cli", ksr.BIN, "mcp", "--xvfb", "--method", "tools/list"])
        self.assertEqual(res.returncode, 0, res.stdout[-3000:] + res.stderr[-3000:])
        names = [t["name"] for t in json.loads(res.stdout)["tools"]]
        for name in ("screen_capture", "input_click", "window_list"):
            self.assertIn(name, names)
        self.assertNoSanitizerReport(res.stderr)
        res = self.node([cli, "--cli", ksr.BIN, "mcp", "--xvfb", "--method", "tools/call",
                         "--tool-name", "window.list"])
        self.assertEqual(res.returncode, 0, res.stdout[-3000:] + res.stderr[-3000:])
        result = json.loads(res.stdout)
        self.assertFalse(result.get("isError"), result)
        self.assertIsInstance(result.get("structuredContent", {}).get("windows"), list, result)
        self.assertNoSanitizerReport(res.stderr)


if __name__ == "__main__":
    unittest.main()
