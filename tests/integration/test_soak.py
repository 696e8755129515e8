"""Soak (ctest label `soak`, on demand: not in scripts/setup.sh test).

- watch over 50 runs for 10 minutes (KSR_SOAK_SECONDS to change): one
  `watch --recursive` follows a folder into which 50 runs are made one after
  another, paced to fill the time; its RSS is sampled every second and the
  curve printed. Flat means the last quarter's median is within 25% + 2 MiB of
  the first quarter's. The watch is the plain binary (as below); one terminal
  line a run and DONE runs=50 are asserted.
- valgrind memcheck on full runs of scenarios that use no browser (the test
  app scenario and scenarios/demo-xterm.yaml): no error, no definite leak.
  Needs a binary built without ASan (KSR_PLAIN_BIN; else one is built in
  build-valgrind). tests/data/valgrind.supp holds the suppressions.
- `mcp` (stdio) serving 10,000 mixed calls (window.list, a 64x64
  screen.capture, input.move, ping, an unknown tool) on an Xvfb with the test
  app: every reply is checked; RSS is sampled every 1,000 calls and the curve
  printed; flat means the last sample is under 1.2x the one after the first
  1,000 calls (warm-up: X connection, XShm, libpng). A bound on a leak, not a
  speed. The plain binary (as for valgrind): ASan's quarantine keeps freed
  memory and would read as growth.
"""

import json
import os
import statistics
import subprocess
import time
import unittest

import ksr
import watchlib

SUPP = os.path.join(ksr.SOURCE_DIR, "tests", "data", "valgrind.supp")


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def plain_binary():
    if os.environ.get("KSR_PLAIN_BIN"):
        return os.environ["KSR_PLAIN_BIN"]
    build = os.path.join(ksr.SOURCE_DIR, "build-valgrind")
    subprocess.run(["cmake", "-S", ksr.SOURCE_DIR, "-B", build, "-DKSR_SANITIZE=OFF",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DBUILD_TESTING=OFF"], check=True,
                   capture_output=True)
    subprocess.run(["cmake", "--build", build, "-j2", "--target", "kasm-session-runtime"],
                   check=True, capture_output=True)
    return os.path.join(build, "kasm-session-runtime")

VALGRIND_STEPS = """\
name: testapp-valgrind
launch: ${KSR_TESTAPP} --record %s
process: ^ksr-testapp$
window: ^KSR Test App$
launch_timeout_s: 60
settle_s: 1
steps:
  - click_element: "Press me"
    checks:
      - file: %s
  - click_element: "Enable feature"
    role: check box
    expect_state: "Enable feature checked"
  - key: ctrl+a
  - type: "hi there"
  - wait_window: ^KSR Test App$
    timeout_s: 10
  - shell: test -s %s
    checks:
      - window: KSR Test App
      - process: ^ksr-testapp$
"""

MCP_CALLS = 10000


def mcp_mix(i):
    """The i-th request of the soak and what its reply must be."""
    kinds = [("window.list", {}, "ok"),
             ("screen.capture", {"region": {"x": 0, "y": 0, "width": 64, "height": 64}}, "ok"),
             ("input.move", {"x": 5 + i % 50, "y": 5 + i % 40}, "ok"),
             (None, None, "ping"),
             ("no.such_tool", {}, "error")]
    name, args, want = kinds[i % len(kinds)]
    if name is None:
        msg = {"jsonrpc": "2.0", "id": i, "method": "ping"}
    else:
        msg = {"jsonrpc": "2.0", "id": i, "method": "tools/call",
               "params": {"name": name, "arguments": args}}
    return (json.dumps(msg) + "\n").encode(), want


class SoakTest(ksr.KsrTestCase):

    def test_watch_50_runs_flat_rss(self):
        total_s = float(os.environ.get("KSR_SOAK_SECONDS", "600"))
        root = self.out("runs")
        # Every run folder exists before the watch starts (docs/watch.md: a
        # recursive watch ends when the folders it has seen are all finished).
        names = ["run-%02d" % i for i in range(50)]
        for name in names:
            os.makedirs(os.path.join(root, name))
        # The plain binary: ASan's quarantine holds freed memory (every trace
        # read frees a 64 KiB buffer) and reads as growth.
        wout = os.path.join(self.tmp, "watch.out")
        with open(wout, "wb") as so:
            watch = subprocess.Popen([plain_binary(), "watch", "--recursive", "--timeout",
                                      str(int(total_s) + 300), root], env=self.env(),
                                     stdin=subprocess.DEVNULL, stdout=so,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(watch)
        samples, t0 = [], time.monotonic()
        scen = ksr.scenario_path("testapp-pass.yaml")
        for i in range(50):
            name = names[i]
            run = self.start_rt(["run", "--xvfb", "--out", os.path.join(root, name), scen])
            while run.poll() is None or time.monotonic() - t0 < total_s * (i + 1) / 50:
                r = rss_kib(watch.pid)
                if r:
                    samples.append((time.monotonic() - t0, r))
                time.sleep(1)
            self.assertEqual(run.poll(), 0, run.stderr[-2000:])
        rc = watch.wait(timeout=60)
        with open(wout, encoding="utf-8", errors="replace") as f:
            text = f.read()
        self.assertEqual(rc, 0, text[-2000:])
        # A run's end is its `EVENT terminal_*` line; "DONE" is only the summary.
        lines = [watchlib.parse_text_line(l) for l in text.splitlines()]
        terminals = [l for l in lines if l.get("event", "").startswith("terminal_pass")]
        self.assertEqual(len(terminals), 50, "one terminal_pass line a run")
        self.assertEqual((lines[-1]["type"], lines[-1]["runs"]), ("DONE", 50))
        print("\nwatch RSS (KiB) over %d runs, %.0f s:" % (50, samples[-1][0]))
        for t, r in samples[::max(1, len(samples) // 20)]:
            print("  t=%5.0fs rss=%d" % (t, r))
        q = max(1, len(samples) // 4)
        first = statistics.median(r for _, r in samples[:q])
        last = statistics.median(r for _, r in samples[-q:])
        print("  first-quarter median %d KiB, last-quarter median %d KiB" % (first, last))
        self.assertLessEqual(last, first * 1.25 + 2048, "watch's RSS grows")

    def check_mcp_reply(self, line, i, want):
        r = json.loads(line)
        self.assertEqual(r.get("id"), i, line[:500])
        if want == "error":
            self.assertEqual(r["error"]["code"], -32602, line[:500])
        elif want == "ping":
            self.assertEqual(r["result"], {}, line[:500])
        else:
            self.assertFalse(r["result"].get("isError"), line[:500])

    def test_mcp_10000_calls_flat_rss(self):
        binary = plain_binary()
        display = self.start_xvfb()
        app = subprocess.Popen([ksr.TESTAPP], env=self.env(DISPLAY=display),
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(app)
        err = open(os.path.join(self.tmp, "mcp.stderr"), "wb")
        proc = subprocess.Popen([binary, "mcp"], env=self.env(DISPLAY=display),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                start_new_session=True)
        self.procs.append(proc)
        proc.stdin.write(b'{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{'
                         b'"protocolVersion":"2025-11-25","capabilities":{},'
                         b'"clientInfo":{"name":"soak","version":"0"}}}\n')
        proc.stdin.flush()
        self.assertEqual(json.loads(proc.stdout.readline())["id"], -1)
        samples = []
        for i in range(MCP_CALLS):
            msg, want = mcp_mix(i)
            proc.stdin.write(msg)
            proc.stdin.flush()
            line = proc.stdout.readline()
            self.assertTrue(line, "the server closed its output at call %d" % i)
            self.check_mcp_reply(line, i, want)
            if (i + 1) % 1000 == 0:
                samples.append((i + 1, rss_kib(proc.pid)))
        proc.stdin.close()
        self.assertEqual(proc.wait(timeout=60), 0, "exit 0 at EOF")
        proc.stdout.close()
        err.close()
        print("\nmcp RSS (KiB) every 1,000 of %d calls:" % MCP_CALLS)
        for n, r in samples:
            print("  calls=%5d rss=%d" % (n, r))
        base, last = samples[0][1], samples[-1][1]
        print("  after warm-up %d KiB, at the end %d KiB (%+.1f%%)"
              % (base, last, 100.0 * (last - base) / base))
        self.assertLess(last, base * 1.2, "mcp's RSS grows with the calls")

    def test_valgrind_memcheck_full_runs(self):
        binary = plain_binary()
        rec = os.path.join(self.tmp, "rec")
        # The test app through every backend a run without a browser or a
        # model uses: the AT-SPI probe and clicks, XTest keys and typing, a
        # shell step (valgrind has no pidfd_open: the tick path), X checks.
        steps = self.scenario(VALGRIND_STEPS % (rec, rec, rec), "testapp-valgrind.yaml")
        for scen in (ksr.scenario_path("testapp-pass.yaml"), steps,
                     os.path.join(ksr.SOURCE_DIR, "scenarios", "demo-xterm.yaml")):
            with self.subTest(scenario=os.path.basename(scen)):
                out = self.out(os.path.basename(scen) + ".out")
                log = os.path.join(self.tmp, os.path.basename(scen) + ".vg")
                cmd = ["valgrind", "--tool=memcheck", "--error-exitcode=99",
                       "--leak-check=full", "--errors-for-leak-kinds=definite",
                       "--show-leak-kinds=definite", "--suppressions=" + SUPP,
                       "--log-file=" + log, binary, "run", "--xvfb", "--out", out, scen]
                p = subprocess.run(cmd, env=self.env(KSR_TESTAPP=ksr.TESTAPP),
                                   capture_output=True, timeout=600)
                with open(log, errors="replace") as f:
                    vg = f.read()
                self.assertNotEqual(p.returncode, 99, "memcheck errors:\n" + vg[-6000:])
                self.assertIn("ERROR SUMMARY: 0 errors", vg, vg[-6000:])
                self.assertIn("definitely lost: 0 bytes", vg, vg[-6000:])
                with open(os.path.join(out, "DONE")) as f:
                    self.assertEqual(f.read().strip(), "pass", p.stderr.decode()[-3000:])


if __name__ == "__main__":
    unittest.main()
