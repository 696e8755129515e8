"""Issue 33, item 5: the Vercel AI SDK's MCP client (@ai-sdk/mcp, pinned in
tests/integration/mcp_node22 with the Node 22 it needs) against
`kasm-session-runtime mcp` over stdio and Streamable HTTP.

The client negotiates by itself (nothing pins its version): it probes with
server/discover and stays on 2026-07-28 when the server answers, falling back to
initialize only for a legacy server. The test checks the wire, not the client's
word: over stdio a tap between the client and the server (stdio_tap.mjs) logs
every byte the client wrote; over HTTP the transport's fetch records every
request. Then tools are listed (client.tools(), the AI SDK tool set an agent
hands to generateText, and listTools) and run the way an agent runs them
(execute, toModelOutput): window_list, screen_capture's image and view handle,
input_click in that view with an optional argument given as null, a bad
argument as a readable tool error, and the server serving on."""

import json
import os
import subprocess
import unittest

import ksr
import mcplib

BRIDGE = os.path.join(mcplib.NODE22_DIR, "aisdk.mjs")
TAP = os.path.join(mcplib.NODE22_DIR, "stdio_tap.mjs")
V = "2026-07-28"
# Every tool the server lists (docs/mcp.md, "Tool names"), in its order.
TOOLS = ["screen_capture", "screen_wait", "screen_ground", "input_click", "input_move",
         "input_drag", "input_scroll", "input_type", "input_key", "window_list",
         "window_focus", "a11y_tree", "a11y_click", "a11y_state", "a11y_find", "a11y_text",
         "page_list_interactive", "page_click", "page_fill", "page_navigate", "scenario_run"]


class AiSdkClient(mcplib.SdkClient):
    """aisdk.mjs on the pinned Node 22: the JSON-lines bridge of client.mjs."""

    def __init__(self, tc, target, env):
        self.proc = subprocess.Popen(
            [mcplib.NODE22, BRIDGE] + target, env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        tc.procs.append(self.proc)
        self.err = open(os.path.join(tc.tmp, "aisdk-%d.stderr" % self.proc.pid), "wb")
        self.buf = b""
        first = self.read(60)
        tc.assertTrue(first.get("connected"), first)


def start_http(tc, env):
    return mcplib.start_http(tc, env=env)


class AiSdkSuite:
    """The client test; a subclass connects (connect() -> client) and reads what
    went on the wire (wire(client) -> [JSON-RPC message or request row])."""

    needs_testapp = False

    def setUp(self):
        super().setUp()
        mcplib.require_node22(self)
        self.denv = self.env(DISPLAY=self.start_xvfb())

    def ok(self, ans):
        self.assertTrue(ans.get("ok"), ans)
        self.assertFalse(ans["result"].get("isError"), ans)
        return ans["result"]

    def test_ai_sdk_client(self):
        c = self.connect()
        hello = c.op(op="hello")
        self.assertEqual(hello["protocolVersion"], V, hello)  # it stayed modern
        self.assertEqual(hello["server"]["name"], "kasm-session-runtime", hello)
        self.assertIn("io.modelcontextprotocol/tasks", hello["caps"]["extensions"])
        self.assertIn("screen_capture", hello["instructions"])

        # The tool set an agent gets, every tool with its JSON schema.
        tools = c.op(op="tools")
        self.assertEqual(tools["names"], TOOLS, tools["names"])
        self.assertIn("view", tools["schemas"]["input_click"]["properties"])
        listed = c.op(op="list")["result"]
        self.assertEqual([t["name"] for t in listed["tools"]], TOOLS)
        self.assertEqual(listed["resultType"], "complete")

        # Run as an agent runs them: execute, then what the model is shown.
        ran = c.op(op="tool", name="window_list", args={})
        self.assertTrue(ran["ok"], ran)
        self.assertEqual(ran["result"]["structuredContent"]["windows"], [])
        shot = c.op(op="tool", name="screen_capture", args={"max_edge": 640})
        self.assertTrue(shot["ok"], shot)
        self.assertIn("file:image/png", shot["modelOutputTypes"])
        sc = shot["result"]["structuredContent"]
        self.assertEqual(sc["scale"], 0.5)
        self.assertTrue(sc["view"].startswith("view-"), sc)
        # The click lands in the named view's space; null for an optional
        # argument means "not given" (a strict-mode model fills every one).
        at = self.ok(c.call("input_click", {"x": 100, "y": 50, "view": sc["view"],
                                            "button": None}))
        self.assertEqual((at["structuredContent"]["screen_x"],
                          at["structuredContent"]["screen_y"]), (200, 100))
        bad = c.call("input_click", {"x": 1})
        self.assertTrue(bad["ok"], bad)  # a tool error, not a protocol error
        self.assertTrue(bad["result"]["isError"], bad)
        self.assertIn("missing required argument y", bad["result"]["content"][0]["text"])
        self.ok(c.call("window_list"))  # the server serves on

        sent = self.wire(c)
        methods = [m["method"] for m in sent]
        self.assertEqual(methods[0], "server/discover", methods)
        self.assertNotIn("initialize", methods)
        self.assertNotIn("notifications/initialized", methods)
        self.assertEqual(methods.count("tools/call"), 5, methods)
        for m in sent:
            self.assertEqual(m["metaVersion"], V, m)
        self.check_wire(sent)
        err = c.close()
        self.assertNoSanitizerReport(err)


class AiSdkStdio(AiSdkSuite, ksr.KsrTestCase):
    def connect(self):
        self.tap_log = os.path.join(self.tmp, "stdin.jsonl")
        return AiSdkClient(self, ["--", mcplib.NODE22, TAP, self.tap_log, "--", ksr.BIN, "mcp"],
                           self.denv)

    def wire(self, c):
        rows = []
        with open(self.tap_log, encoding="utf-8") as f:
            for line in f:
                msg = json.loads(line)
                meta = (msg.get("params") or {}).get("_meta") or {}
                rows.append({"method": msg.get("method"),
                             "metaVersion": meta.get("io.modelcontextprotocol/protocolVersion")})
        return rows

    def check_wire(self, sent):
        pass  # stdio has no headers


class AiSdkHttp(AiSdkSuite, ksr.KsrTestCase):
    def connect(self):
        self.rt, port = start_http(self, self.denv)
        return AiSdkClient(self, ["--url", "http://127.0.0.1:%d/mcp" % port], self.denv)

    def wire(self, c):
        return c.op(op="traffic")["sent"]

    def check_wire(self, sent):
        # Stateless: POSTs only (no GET stream, no DELETE), no session header,
        # the mirrored headers on each request.
        for m in sent:
            self.assertEqual((m["http"], m["protocolVersion"], m["sessionId"]),
                             ("POST", V, None), m)
            self.assertEqual(m["mcpMethod"], m["method"], m)
        names = [m["mcpName"] for m in sent if m["method"] == "tools/call"]
        self.assertEqual(names, ["window_list", "screen_capture", "input_click", "input_click",
                                 "window_list"])
        self.assertIsNone(self.rt.poll(), "the server died")


if __name__ == "__main__":
    unittest.main()
