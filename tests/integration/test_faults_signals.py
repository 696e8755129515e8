"""SIGTERM and SIGINT in every stage that can be held open (issue #12): for
each stage and each signal, the run is signalled while it waits inside that
stage; it must exit within a liveness bound with DONE, a valid report, the
verdict and outcome the stage calls for, and that stage marked interrupted.

How each stage is held open (real parts only):
  boot-wait   a display nobody serves (boot_timeout_s: 120)
  app-wait    the test app with --no-window (launch_timeout_s: 120)
  settle      settle_s: 120
  accessibility-probe
              AT_SPI_BUS_ADDRESS names a socket that accepts and never
              answers (the D-Bus handshake waits; the app has no bridge)
  first-look  the local model server holding the first-look request 120 s
  browser-attach
              cdp: {port: P} on a TCP port that accepts and never answers
  steps       a sleep: 120 step
  plan        a plan: step click_grounded, the model holding the grounding
  goal-loop   goal:, the model holding the first turn
  diagnosis   a failing step, then the model server holding the
              failure-screen description 120 s
final-checks cannot be held: it reads the process table and one window's
geometry, which takes milliseconds; nor can launch: it starts the command and
returns once /bin/sh has been exec'd (a command that blocks blocks in its own
process, while the run is already in app-wait, tested there)
(docs/reliability.md)."""

import json
import os
import signal
import socket
import threading
import time
import unittest

import ksr
from model_server import ModelServer

EXIT_BOUND_S = 20  # liveness bound after the signal; the held wait is 120 s
HANG = {"hang": 120}
APP = ("launch: ${KSR_TESTAPP}\nprocess: ^ksr-testapp$\nwindow: ^KSR Test App$\n"
       "atspi: false\n")

QUIET = {"answer": {"rendered": True, "error_showing": False, "reason": "up"}}
APP_ATSPI = APP.replace("atspi: false\n", "")
PRESS_PLAN = ("plan:\n  - click_grounded: the Press me button\n"
              "    expect: the button was pressed\n"
              "    post:\n      - shell: 'true'\n")
GOAL = "goal: Press the Press me button once\nsuccess:\n  - shell: 'false'\n"


class Mute:
    """A socket that accepts connections and never says a word: what a hung
    D-Bus daemon or browser looks like from the runtime's side."""

    def __init__(self, family, address):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(address)
        self.sock.listen(8)
        self.held = []
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)  # open, unread, unanswered

    def close(self):
        for c in self.held:
            c.close()
        self.sock.close()


# stage -> (scenario body, model responses or None, display: "none" | "own",
#           (verdict, outcome) expected); {MUTE} in a body: the mute socket.
CASES = {
    "boot-wait": (APP + "boot_timeout_s: 120\n", None, "none",
                  ("test-error", "interrupted")),
    "app-wait": (APP.replace("${KSR_TESTAPP}", "${KSR_TESTAPP} --no-window")
                 + "launch_timeout_s: 120\n", None, "own", ("test-error", "interrupted")),
    "settle": (APP + "settle_s: 120\n", None, "own", ("test-error", "interrupted")),
    "first-look": (APP + "settle_s: 0.2\n", {"first-look": [HANG]}, "own",
                   ("test-error", "interrupted")),
    "accessibility-probe": (APP_ATSPI + "settle_s: 0.2\n", None, "own",
                            ("test-error", "interrupted")),
    "browser-attach": (APP + "settle_s: 0.2\ncdp: {port: {MUTE}}\n", None, "own",
                       ("test-error", "interrupted")),
    "steps": (APP + "settle_s: 0.2\nsteps:\n  - sleep: 120\n", None, "own",
              ("test-error", "interrupted")),
    "plan": (APP + "settle_s: 0.2\n" + PRESS_PLAN, {"first-look": [QUIET], "ground": [HANG]},
             "own", ("test-error", "interrupted")),
    "goal-loop": (APP + "settle_s: 0.2\n" + GOAL, {"first-look": [QUIET], "plan": [HANG]},
                  "own", ("test-error", "interrupted")),
    # The failure was found before the signal: it stands; only its
    # description is cut short.
    "diagnosis": (APP + "settle_s: 0.2\nsteps:\n  - shell: exit 1\n",
                  {"first-look": [{"answer": {"rendered": True, "error_showing": False,
                                              "reason": "up"}}],
                   "describe": [HANG]}, "own", ("app-failed", "step-failed")),
}


class FaultSignalsTest(ksr.KsrTestCase):

    def setUp(self):
        super().setUp()
        self.servers = []
        self.mutes = []

    def tearDown(self):
        for s in self.servers:
            s.stop()
        for m in self.mutes:
            m.close()
        super().tearDown()

    def one(self, stage_name, sig, n):
        body, responses, display_kind, (verdict, outcome) = CASES[stage_name]
        extra = {"KSR_TESTAPP": ksr.TESTAPP, "NO_AT_BRIDGE": "1"}
        if display_kind == "none":
            extra["DISPLAY"] = ksr.unused_display()
        else:
            extra["DISPLAY"] = self.start_xvfb()
        if responses:
            script = os.path.join(self.tmp, "script%d.json" % n)
            with open(script, "w", encoding="utf-8") as f:
                json.dump({"expect_size": None, "api_key": None, "responses": responses}, f)
            server = ModelServer(script, os.path.join(self.tmp, "log%d.jsonl" % n),
                                 extra["DISPLAY"]).start()
            self.servers.append(server)
            extra.update(KASM_RUNTIME_MODEL="m", KASM_RUNTIME_MODEL_API="openai",
                         KASM_RUNTIME_MODEL_URL=server.base + "/v1")
        if stage_name == "accessibility-probe":
            sock = os.path.join(self.tmp, "mute%d.sock" % n)
            self.mutes.append(Mute(socket.AF_UNIX, sock))
            extra["AT_SPI_BUS_ADDRESS"] = "unix:path=" + sock
        if "{MUTE}" in body:
            mute = Mute(socket.AF_INET, ("127.0.0.1", 0))
            self.mutes.append(mute)
            body = body.replace("{MUTE}", str(mute.sock.getsockname()[1]))
        path = self.scenario("name: sig-%s\n" % stage_name + body, "s%d.yaml" % n)
        out = self.out("out%d" % n)
        rt = self.start_rt(["run", path], out=out, env=self.env(**extra))
        ksr.wait_for_trace_event(out, ksr.in_stage(stage_name), timeout=60, proc=rt)
        time.sleep(1.0)  # inside the stage's wait, not at its first line
        self.assertIsNone(rt.poll(), "still held in %s" % stage_name)
        t0 = time.monotonic()
        rt.signal(sig)
        rc = rt.wait(timeout=EXIT_BOUND_S + 40)
        took = time.monotonic() - t0
        self.assertNoSanitizerReport(rt.stderr)
        self.assertLess(took, EXIT_BOUND_S, "exit promptly (took %.1fs)" % took)
        report = self.assertEvidence(out, verdict, outcome, rc=rc, pid=rt.pid,
                                     stderr=rt.stderr)
        st = ksr.stage(report, stage_name)
        self.assertIsNotNone(st, "%s is recorded" % stage_name)
        self.assertEqual(st["status"], "interrupted", "%s: %r" % (stage_name, st))
        for s in self.servers:
            s.stop()
        self.servers = []
        for m in self.mutes:
            m.close()
        self.mutes = []
        for p in self.procs:
            ksr.kill_group(p)
            p.wait(timeout=10)  # the next case's Xvfb may take the same number
        self.procs = []
        ksr.kill_tagged(self.tag)

    def test_every_stage_sigterm_and_sigint(self):
        n = 0
        for stage_name in CASES:
            for sig in (signal.SIGTERM, signal.SIGINT):
                with self.subTest(stage=stage_name, signal=sig.name):
                    n += 1
                    self.one(stage_name, sig, n)


if __name__ == "__main__":
    unittest.main()
