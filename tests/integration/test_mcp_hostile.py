"""`mcp --http` against a hostile or broken client, with a raw-socket client (issue 31):
requests pipelined on one connection while another tool call runs, a client that
hangs up with its requests queued, a flood of `initialize` from another address, and
the server's own crash (its private Xvfb, window manager and D-Bus must go with it).

Each case crashed, cut off a working client or left processes behind before issue 31
(src/backend/http/server.c, src/mcp/http.c, src/backend/session/session.c)."""

import json
import os
import re
import signal
import socket
import subprocess
import time
import unittest

import ksr

PROTO = "2025-11-25"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTO, "capabilities": {},
                   "clientInfo": {"name": "test_mcp_hostile", "version": "1"}}}
FLOOD = 300  # initializes from one address (the server keeps 256 sessions in all)


def request(body, sid=None, rid=None):
    """One POST /mcp as bytes."""
    data = json.dumps(body).encode()
    lines = ["POST /mcp HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json",
             "Accept: application/json, text/event-stream", "Content-Length: %d" % len(data)]
    if sid:
        lines += ["Mcp-Session-Id: " + sid, "MCP-Protocol-Version: " + PROTO]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def ping(sid, rid):
    return request({"jsonrpc": "2.0", "id": rid, "method": "ping"}, sid)


def read_to_close(s):
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def parse(data):
    """(status, headers (lower-case), body) of the first response in data; status 0
    when there is none."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/"):
        return 0, {}, data
    hd = {k.strip().lower(): v.strip()
          for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
    n = int(hd.get("content-length", len(body)))
    return int(lines[0].split()[1]), hd, body[:n]


def parent_of(pid):
    try:
        with open("/proc/%d/status" % pid, encoding="utf-8") as f:
            return int(re.search(r"^PPid:\s*(\d+)", f.read(), re.M).group(1))
    except (OSError, AttributeError):
        return None


def alive(pid):
    return ksr.proc_state(pid) not in (None, "Z", "X")


class TestMcpHostile(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        self.rt = self.start_rt(["mcp", "--xvfb", "--http", "127.0.0.1:0"])
        deadline = time.monotonic() + 60
        self.port = None
        while self.port is None:
            m = re.search(r"listening on http://\S+:(\d+)/mcp", self.rt.stderr)
            if m:
                self.port = int(m.group(1))
            elif self.rt.poll() is not None or time.monotonic() > deadline:
                self.fail("mcp --http did not start:\n%s" % self.rt.stderr[-3000:])
            else:
                time.sleep(0.05)

    def connect(self, source="127.0.0.1", timeout=60):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.bind((source, 0))
        s.connect(("127.0.0.1", self.port))
        self.addCleanup(s.close)
        return s

    def exchange(self, data, source="127.0.0.1"):
        s = self.connect(source)
        s.sendall(data)
        out = read_to_close(s)
        s.close()
        return parse(out)

    def initialize(self, source="127.0.0.1"):
        st, hd, body = self.exchange(request(INIT), source)
        self.assertEqual(st, 200, body)
        return hd["mcp-session-id"]

    def assertPing(self, sid, rid, source="127.0.0.1"):
        st, _, body = self.exchange(ping(sid, rid), source)
        self.assertEqual(st, 200, "ping %d: %r; server rc %s; stderr:\n%s"
                         % (rid, body[:300], self.rt.poll(), self.rt.stderr[-2000:]))
        self.assertEqual(json.loads(body), {"jsonrpc": "2.0", "id": rid, "result": {}})

    def assertServing(self):
        """The server is alive and a second client's calls are answered."""
        self.assertIsNone(self.rt.poll(), "the server died:\n%s" % self.rt.stderr[-3000:])
        sid = self.initialize()
        self.assertPing(sid, 90)
        st, _, body = self.exchange(request({"jsonrpc": "2.0", "id": 91, "method": "tools/call",
                                             "params": {"name": "window.list"}}, sid))
        self.assertEqual(st, 200, body[:300])
        self.assertFalse(json.loads(body)["result"].get("isError"), body[:300])
        self.assertIsNone(self.rt.poll())

    def test_pipelining_and_disconnect_while_a_call_runs(self):
        sid = self.initialize()
        # A slow call on its own connection: the worker is busy with it while the rest
        # queue up behind it.
        slow = self.connect()
        slow.sendall(request({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                              "params": {"name": "screen.wait",
                                         "arguments": {"until": "appears",
                                                       "window": "^no such window$",
                                                       "timeout_s": 4}}}, sid))
        # Two requests in one send() on one connection, which then hangs up with its
        # answer still queued; twice, and once more with a tools/call.
        for i in range(3):
            c = self.connect()
            second = ping(sid, 21 + 2 * i) if i < 2 else request(
                {"jsonrpc": "2.0", "id": 25, "method": "tools/call",
                 "params": {"name": "window.list"}}, sid)
            c.sendall(ping(sid, 20 + 2 * i) + second)
            c.close()
        # Pipelined and waiting: pipelining is refused (docs/mcp.md): the connection
        # closes with at most the first request's answer, never the second's.
        kept = self.connect()
        kept.sendall(ping(sid, 30) + ping(sid, 31))
        st, hd, body = parse(read_to_close(slow))
        self.assertEqual(st, 200, "the slow call's answer: %r; stderr:\n%s"
                         % (body[:300], self.rt.stderr[-3000:]))
        self.assertEqual(json.loads(body)["id"], 2)
        data = read_to_close(kept)
        self.assertLessEqual(data.count(b"HTTP/1.1"), 1, data)
        if data:
            st, hd, body = parse(data)
            self.assertEqual((st, json.loads(body)["id"]), (200, 30), data[:500])
        self.assertServing()
        self.assertPing(sid, 40)

    def test_initialize_flood_keeps_a_working_session(self):
        worker = self.initialize("127.0.0.1")
        self.assertPing(worker, 2)
        neighbour = self.initialize("127.0.0.1")  # same address, also in use
        self.assertPing(neighbour, 3)
        for _ in range(FLOOD):
            last = self.initialize("127.0.0.2")
        self.assertPing(worker, 4)
        self.assertPing(neighbour, 5)
        self.assertPing(last, 6, "127.0.0.2")  # the flooder's newest session works
        # A flood from the working client's own address evicts idle sessions first.
        for _ in range(FLOOD):
            self.initialize("127.0.0.1")
        self.assertPing(worker, 7)
        self.assertServing()

    def test_crash_takes_the_private_session_down(self):
        sid = self.initialize()
        self.assertPing(sid, 2)
        kids = [(pid, name) for pid, name in ksr.tagged_pids(self.tag)
                if parent_of(pid) == self.rt.proc.pid]
        names = {name for _, name in kids}
        self.assertTrue(names & {"Xvfb", "Xvnc"}, kids)
        self.assertIn("dbus-daemon", names, kids)
        os.kill(self.rt.proc.pid, signal.SIGSEGV)
        self.rt.wait(60)
        deadline = time.monotonic() + 15
        left = kids
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [(pid, name) for pid, name in left if alive(pid)]
        self.assertEqual(left, [], "still running after the server's crash: %r" % left)


class TestMcpSecrets(ksr.KsrTestCase):
    """A secret (KASM_RUNTIME_SECRETS) in a tool's arguments never comes back in its
    result: every MCP reply is redacted (docs/scenario.md, "Secrets")."""
    needs_testapp = False

    def test_secret_not_echoed_in_results(self):
        value = "hunter2-%s" % self.tag[:12]
        env = self.env(KASM_RUNTIME_SECRETS="KSR_IT_SECRET", KSR_IT_SECRET=value)
        proc = subprocess.Popen([ksr.BIN, "mcp", "--xvfb"], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        self.procs.append(proc)
        msgs = [INIT, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "screen.wait",
                                  "arguments": {"until": "appears", "window": "^%s$" % value,
                                                "timeout_s": 0.2}}}]
        out, err = proc.communicate(b"".join(json.dumps(m).encode() + b"\n" for m in msgs),
                                    timeout=120)
        replies = [json.loads(line) for line in out.splitlines() if line.strip()]
        reply = [r for r in replies if r.get("id") == 2]
        self.assertEqual(len(reply), 1, out[-2000:])
        text = json.dumps(reply[0])
        self.assertIn("[secret KSR_IT_SECRET]", text)
        self.assertNotIn(value.encode(), out + err)


if __name__ == "__main__":
    unittest.main()
