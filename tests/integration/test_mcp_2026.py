"""Issue 33: MCP 2026-07-28 beside 2025-11-25 on the same server.

A real 2026-07-28 client from npm (the MCP TypeScript SDK v2,
@modelcontextprotocol/client pinned to 2026-07-28, with the tasks extension's
client @modelcontextprotocol/ext-tasks; tests/integration/mcp_client/
client2026.mjs) over stdio and Streamable HTTP: no initialize on the wire, tools
listed and called, view handles instead of the session's last screenshot, one
scenario run as a task to its verdict and another cancelled (outcome
interrupted, DONE written). Then the transport's 2026 rules by hand over HTTP
(header checks, -32022, 405, session headers ignored). The 2025 SDK client and
the Inspector CLI keep their own tests (test_mcp_stdio.py, test_mcp_http.py)."""

import base64
import http.client
import json
import os
import subprocess
import time
import unittest

import ksr
import mcplib
import test_cdp

CLIENT = os.path.join(mcplib.CLIENT_DIR, "client2026.mjs")
V = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {}}


class Client2026(mcplib.SdkClient):
    """client2026.mjs: the same JSON-lines bridge as client.mjs."""

    def __init__(self, tc, server_args=None, env=None, url=None):
        target = ["--url", url] if url else ["--", ksr.BIN] + server_args
        self.proc = subprocess.Popen(
            ["node", CLIENT] + target, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        tc.procs.append(self.proc)
        self.err = open(os.path.join(tc.tmp, "client26-%d.stderr" % self.proc.pid), "wb")
        self.buf = b""
        first = self.read(60)
        tc.assertTrue(first.get("connected"), first)


def start_http(tc, env):
    return mcplib.start_http(tc, env=env)


class Mcp2026Suite:
    """The client tests; a subclass says how to connect (connect() -> client)."""

    def setUp(self):
        super().setUp()
        mcplib.require_client(self)
        self.display = self.start_xvfb()
        self.denv = self.env(DISPLAY=self.display)

    def scenario_yaml(self, steps):
        return ("name: mcp2026\nlaunch: %s\nprocess: ^ksr-testapp$\nwindow: ^KSR Test App$\n"
                "settle_s: 0.3\natspi: false\nsteps:\n%s" % (ksr.TESTAPP, steps))

    def ok(self, ans):
        self.assertTrue(ans.get("ok"), ans)
        self.assertFalse(ans["result"].get("isError"), ans)
        return ans["result"]

    def start_app(self, title):
        app = subprocess.Popen([ksr.TESTAPP, "--title", title], env=self.denv,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(app)
        return app

    def poll_task(self, c, task_id, timeout=60):
        """tasks/get until the task no longer works (or the bound passed)."""
        deadline = time.monotonic() + timeout
        while True:
            got = c.op(op="task_get", taskId=task_id)
            self.assertTrue(got["ok"], got)
            if got["result"]["status"] != "working" or time.monotonic() > deadline:
                return got["result"]
            time.sleep(0.2)

    def test_waits_as_tasks(self):
        """Item 3: a wait is a task for a client with the tasks extension. A
        screen_wait comes back as a task handle at once, works while its window
        is not there (the request loop serving on), and completes with the
        wait's own result once the window maps; another, with 300 s to wait, is
        cancelled by tasks/cancel and ends cancelled at once, while the first
        still works (a task's cancel is its own). a11y_find is a task when it
        waits, a plain result when it looks once. Before: every wait answered
        on its request (ext-tasks saw kind "immediate")."""
        c = self.connect()
        a = c.op(op="task_start", name="screen_wait", args={
            "until": "appears", "window": "^KSR Task App$", "timeout_s": 120})
        self.assertEqual(a["kind"], "task", a)
        b = c.op(op="task_start", name="screen_wait", args={
            "until": "appears", "window": "^Never Comes$", "timeout_s": 300})
        self.assertEqual(b["kind"], "task", b)
        got = c.op(op="task_get", taskId=a["taskId"])["result"]
        self.assertEqual(got["status"], "working", got)
        self.assertIn("screen.wait", got["statusMessage"])
        self.ok(c.call("window_list"))  # the loop is not held by the waits

        self.assertTrue(c.op(op="task_cancel", taskId=b["taskId"])["ok"])
        got = self.poll_task(c, b["taskId"])
        self.assertEqual(got["status"], "cancelled", got)
        self.assertNotIn("result", got)
        self.assertIn("cancelled", got["statusMessage"])
        self.assertEqual(c.op(op="task_get", taskId=a["taskId"])["result"]["status"],
                         "working")

        self.start_app("KSR Task App")
        done = c.op(op="task_settle", taskId=a["taskId"], timeout=150)
        self.assertEqual(done["outcome"], "completed", done)
        self.assertFalse(done["result"]["isError"], done)
        self.assertEqual(done["result"]["structuredContent"]["window"]["title"], "KSR Task App")

        once = c.op(op="task_start", name="a11y_find", args={"name": "x", "timeout_s": 0})
        self.assertEqual(once["kind"], "immediate", once)
        f = c.op(op="task_start", name="a11y_find", args={
            "window": "^KSR Task App$", "name": "Never There", "timeout_s": 300})
        self.assertEqual(f["kind"], "task", f)
        self.assertTrue(c.op(op="task_cancel", taskId=f["taskId"])["ok"])
        self.assertEqual(self.poll_task(c, f["taskId"])["status"], "cancelled")
        self.ok(c.call("window_list"))
        self.assertNoSanitizerReport(c.close())

    def test_modern_client(self):
        c = self.connect()
        hello = c.op(op="hello")
        self.assertEqual(hello["era"], "modern", hello)
        self.assertIn("io.modelcontextprotocol/tasks", hello["caps"]["extensions"])
        listed = c.op(op="list")["result"]
        self.assertEqual(listed["cacheScope"], "public")
        self.assertGreater(listed["ttlMs"], 0)
        names = [t["name"] for t in listed["tools"]]
        self.assertIn("scenario_run", names)
        self.assertIn("view", [t for t in listed["tools"] if t["name"] == "input_click"][0]
                      ["inputSchema"]["properties"])
        self.assertIn("windows", self.ok(c.call("window_list"))["structuredContent"])

        # Views are handles: the click's space is the one its view names.
        shot = self.ok(c.call("screen_capture", {"max_edge": 640}))["structuredContent"]
        self.assertEqual(shot["scale"], 0.5)
        self.assertTrue(shot["view"].startswith("view-"), shot)
        at = self.ok(c.call("input_click", {"x": 100, "y": 50, "view": shot["view"]}))
        self.assertEqual((at["structuredContent"]["screen_x"],
                          at["structuredContent"]["screen_y"]), (200, 100))
        # Stateless: no view named, screen pixels, whatever was captured before.
        at = self.ok(c.call("input_click", {"x": 100, "y": 50}))
        self.assertEqual((at["structuredContent"]["screen_x"],
                          at["structuredContent"]["screen_y"]), (100, 50))
        bad = c.call("input_click", {"x": 1, "y": 1, "view": "view-0000000000000000"})
        self.assertTrue(bad["result"]["isError"], bad)
        self.assertIn("unknown or expired view", bad["result"]["content"][0]["text"])

        # A scenario as a task: polled to its verdict, the stage as status.
        out = self.out("task-pass")
        run = c.op(op="task_run", name="scenario_run", timeout=180,
                   args={"yaml": self.scenario_yaml("  - sleep: 0.2\n"), "out": out})
        self.assertEqual((run["kind"], run["outcome"]), ("task", "completed"), run)
        sc = run["result"]["structuredContent"]
        self.assertEqual((sc["verdict"], sc["outcome"], sc["evidence"]),
                         ("pass", "completed", out))
        self.assertEvidence(out, "pass", "completed")
        self.assertTrue(sc["report"].startswith("file://"), sc)
        self.assertTrue(any((s["message"] or "").startswith("stage ") for s in run["statuses"]),
                        run["statuses"])

        # Another, cancelled during its steps: the run is interrupted, DONE written.
        out2 = self.out("task-cancel")
        run = c.op(op="task_run", name="scenario_run", timeout=180, cancel_on="stage steps",
                   args={"yaml": self.scenario_yaml("  - sleep: 300\n"), "out": out2})
        self.assertTrue(run["cancelled"], run)
        deadline = time.monotonic() + 60
        while True:
            got = c.op(op="task_get", taskId=run["taskId"])
            self.assertTrue(got["ok"], got)
            if got["result"]["status"] != "working" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(got["result"]["status"], "cancelled", got)
        self.assertIn(out2, got["result"]["statusMessage"])
        self.assertEvidence(out2, "test-error", "interrupted")
        # A cancelled task has no result (the extension's CancelledTask): what
        # the run left is in its _meta, and its report is a resource to read.
        self.assertNotIn("result", got["result"])
        left = got["result"]["_meta"]["kasm-session-runtime/run"]
        self.assertEqual((left["verdict"], left["outcome"], left["evidence"]),
                         ("test-error", "interrupted", out2), left)
        self.assertIn(left["report"], got["result"]["statusMessage"])
        blob = c.op(op="read", uri=left["report"])
        self.assertTrue(blob["ok"], blob)
        report = json.loads(base64.b64decode(blob["result"]["contents"][0]["blob"]))
        self.assertEqual((report["verdict"], report["outcome"]), ("test-error", "interrupted"))
        # The server serves on after the cancellation.
        self.ok(c.call("window_list"))

        sent = c.op(op="traffic")["sent"]
        methods = [s["method"] for s in sent]
        self.assertNotIn("initialize", methods)
        self.assertNotIn("notifications/initialized", methods)
        self.assertIn("tasks/get", methods)
        self.assertIn("tasks/cancel", methods)
        c.close()


class Mcp2026Stdio(Mcp2026Suite, ksr.KsrTestCase):
    def connect(self):
        return Client2026(self, ["mcp"], self.denv)


class Mcp2026Http(Mcp2026Suite, ksr.KsrTestCase):
    def connect(self):
        _, self.port = start_http(self, self.denv)
        return Client2026(self, url="http://127.0.0.1:%d/mcp" % self.port, env=self.denv)


class Mcp2026Pages(ksr.KsrTestCase):
    """Item 2 for the page tools, on a real Chromium: under 2026-07-28 the
    connection is a handle. The tool that connects returns it as "page"; a
    call that passes it back works on that connection (the element ids its
    list gave are good there); a call without it connects anew (a new
    handle: nothing is kept between requests); an unknown handle is a tool
    error. Before: "page" was an unknown argument (isError) and no result
    named a connection."""

    needs_testapp = False
    url = test_cdp.CdpTest.url

    def ok(self, ans):
        self.assertTrue(ans.get("ok"), ans)
        self.assertFalse(ans["result"].get("isError"), ans)
        return ans["result"]["structuredContent"]

    def test_page_handle(self):
        mcplib.require_client(self)
        if not os.access(test_cdp.CHROMIUM, os.X_OK):
            self.fail("chromium is not installed (scripts/setup.sh deps)")
        self.http_port = test_cdp.CdpTest.start_http(self)
        display = self.start_xvfb()
        _, port = test_cdp.CdpTest.start_chromium(self, display, "form.html")
        c = Client2026(self, ["mcp"], self.env(DISPLAY=display))
        listed = self.ok(c.call("page_list_interactive", {"port": port}))
        page = listed["page"]
        self.assertTrue(page.startswith("page-"), listed)
        name = [e["id"] for e in listed["elements"] if e["name"].startswith("Name")]
        self.assertEqual(len(name), 1, listed["elements"])
        filled = self.ok(c.call("page_fill", {"page": page, "ref": name[0], "text": "Ada"}))
        self.assertEqual(filled["page"], page)
        self.assertEqual(self.ok(c.call("page_click", {"page": page, "ref": "#send"}))["page"],
                         page)
        # A wait is a task for this client (it declares the extension).
        w = c.op(op="task_start", name="screen_wait", args={
            "until": "appears", "window": "^KSR Done", "timeout_s": 60})
        done = c.op(op="task_settle", taskId=w["taskId"], timeout=90)
        self.assertEqual((done["outcome"], done["result"]["isError"]), ("completed", False))
        # Stateless: without the handle, a connection of its own, on the page
        # the fill and the click sent the browser to.
        other = self.ok(c.call("page_list_interactive", {"port": port}))
        self.assertNotEqual(other["page"], page)
        self.assertIn("done.html?name=Ada", other["url"])
        self.assertEqual(self.ok(c.call("page_list_interactive", {"page": page}))["page"], page)
        bad = c.call("page_list_interactive", {"page": "page-0000000000000000"})
        self.assertTrue(bad["result"]["isError"], bad)
        self.assertIn("unknown or expired page handle", bad["result"]["content"][0]["text"])
        self.assertNoSanitizerReport(c.close())


class Mcp2026HttpRules(ksr.KsrTestCase):
    """The 2026 transport rules by hand (http.client), beside a 2025 session."""
    needs_testapp = False

    def post(self, body, headers, method="POST"):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        h.update(headers)
        c.request(method, "/mcp", body=json.dumps(body) if body is not None else None, headers=h)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, \
            json.loads(data) if data else None

    def req(self, id_, method, params=None, meta=META):
        p = dict(params or {})
        if meta is not None:
            p["_meta"] = meta
        return {"jsonrpc": "2.0", "id": id_, "method": method, "params": p}

    def test_transport_rules(self):
        display = self.start_xvfb()
        _, self.port = start_http(self, self.env(DISPLAY=display))
        h = {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call", "Mcp-Name": "window_list"}
        call = self.req(1, "tools/call", {"name": "window_list", "arguments": {}})
        st, hd, body = self.post(call, dict(h, **{"Mcp-Session-Id": "not-a-session"}))
        self.assertEqual(st, 200, body)  # no session needed, an inbound one ignored
        self.assertNotIn("mcp-session-id", hd)
        self.assertEqual(body["result"]["resultType"], "complete")
        self.assertEqual(body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
                         "kasm-session-runtime")
        # Mcp-Name as the base64 sentinel is decoded before the comparison.
        st, _, body = self.post(call, dict(h, **{"Mcp-Name": "=?base64?d2luZG93X2xpc3Q=?="}))
        self.assertEqual(st, 200, body)
        for name, hdrs in (("Mcp-Name differs", dict(h, **{"Mcp-Name": "input_click"})),
                           ("Mcp-Name missing", {k: v for k, v in h.items() if k != "Mcp-Name"}),
                           ("Mcp-Method differs", dict(h, **{"Mcp-Method": "tools/list"})),
                           ("no MCP-Protocol-Version", {"Mcp-Method": "tools/call",
                                                        "Mcp-Name": "window_list"}),
                           ("MCP-Protocol-Version differs",
                            dict(h, **{"MCP-Protocol-Version": "2025-11-25"}))):
            st, _, body = self.post(call, hdrs)
            self.assertEqual((st, body["error"]["code"]), (400, -32020), name)
            self.assertEqual(body["id"], 1, name)
        st, _, body = self.post(self.req(2, "tools/list", meta=dict(
            META, **{"io.modelcontextprotocol/protocolVersion": "1900-01-01"})),
            {"MCP-Protocol-Version": "1900-01-01", "Mcp-Method": "tools/list"})
        self.assertEqual((st, body["error"]["code"], body["id"]), (400, -32022, 2))
        self.assertIn(V, body["error"]["data"]["supported"])
        self.assertIn("2025-11-25", body["error"]["data"]["supported"])
        st, _, body = self.post(self.req(3, "tools/list", meta={
            "io.modelcontextprotocol/protocolVersion": V}),
            {"MCP-Protocol-Version": V, "Mcp-Method": "tools/list"})
        self.assertEqual((st, body["error"]["code"]), (400, -32602))  # no clientCapabilities
        # The 2026 header on a body with no _meta version: a required field
        # missing (-32602), as the conformance suite checks, not a mismatch.
        st, _, body = self.post(self.req(31, "tools/list", meta=None),
                                {"MCP-Protocol-Version": V, "Mcp-Method": "tools/list"})
        self.assertEqual((st, body["error"]["code"], body["id"]), (400, -32602, 31))
        # initialize is not a 2026 method, even on a request that says 2026.
        st, hd, body = self.post(self.req(32, "initialize"),
                                 {"MCP-Protocol-Version": V, "Mcp-Method": "initialize"})
        self.assertEqual((st, body["error"]["code"]), (404, -32601))
        self.assertNotIn("mcp-session-id", hd)
        # Header values are compared without their optional whitespace.
        st, _, body = self.post(call, dict(h, **{"Mcp-Name": "  window_list  "}))
        self.assertEqual(st, 200, body)
        # tasks/list is gone from the tasks extension: -32601, no Mcp-Name wanted.
        tasks_meta = dict(META, **{"io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}}})
        st, _, body = self.post(self.req(33, "tasks/list", meta=tasks_meta),
                                {"MCP-Protocol-Version": V, "Mcp-Method": "tasks/list"})
        self.assertEqual((st, body["error"]["code"]), (404, -32601))
        st, _, body = self.post(self.req(4, "ping"), {"MCP-Protocol-Version": V,
                                                      "Mcp-Method": "ping"})
        self.assertEqual((st, body["error"]["code"]), (404, -32601))  # 2025-only
        st, _, body = self.post(self.req(5, "tasks/get", {"taskId": "x"}),
                                {"MCP-Protocol-Version": V, "Mcp-Method": "tasks/get",
                                 "Mcp-Name": "x"})
        self.assertEqual((st, body["error"]["code"]), (400, -32021))  # no tasks extension
        st, _, body = self.post(self.req(6, "resources/read", {"uri": "file:///etc/passwd"}),
                                {"MCP-Protocol-Version": V, "Mcp-Method": "resources/read",
                                 "Mcp-Name": "file:///etc/passwd"})
        self.assertEqual(body["error"]["code"], -32602)  # not -32002 under 2026
        self.assertEqual(body["error"]["data"], {"uri": "file:///etc/passwd"})
        st, _, body = self.post(self.req(7, "server/discover"),
                                {"MCP-Protocol-Version": V, "Mcp-Method": "server/discover"})
        self.assertEqual(st, 200, body)
        self.assertEqual(body["result"]["supportedVersions"][0], V)
        self.assertEqual(body["result"]["cacheScope"], "public")
        for method in ("GET", "DELETE"):
            st, hd, _ = self.post(None, {"MCP-Protocol-Version": V, "Mcp-Session-Id": "x"},
                                  method)
            self.assertEqual((st, hd.get("allow")), (405, "POST"), method)
        # A 2025 session on the same endpoint, as before.
        init = {"jsonrpc": "2.0", "id": 8, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "t", "version": "1"}}}
        st, hd, body = self.post(init, {})
        self.assertEqual(body["result"]["protocolVersion"], "2025-11-25")
        sid = hd["mcp-session-id"]
        st, _, body = self.post({"jsonrpc": "2.0", "id": 9, "method": "ping"},
                                {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
        self.assertEqual((st, body["result"]), (200, {}))


if __name__ == "__main__":
    unittest.main()
