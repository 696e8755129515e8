"""Shared helpers for the kasm-session-runtime integration tests.

Every test drives the real runtime binary (KSR_BIN) against a real X server:
the runtime's own --xvfb session, or an Xvfb + openbox the test starts itself.
Nothing here mocks X11.

Cleanup: every process a test starts gets KSR_IT_TAG=<unique> in its
environment; children (the runtime's Xvfb, openbox, D-Bus, the launched app)
inherit it, so tearDown can find and kill exactly the processes this test
caused, by PID, and tests can assert that the runtime stopped what it started.
"""

import atexit
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import uuid

BIN = os.environ.get("KSR_BIN", "")
TESTAPP = os.environ.get("KSR_TESTAPP", "")
TESTAPP4 = os.environ.get("KSR_TESTAPP4", "")  # the GTK 4 twin (tests/app/ksr-testapp4.c)
SOURCE_DIR = os.environ.get("KSR_SOURCE_DIR",
                            os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
SCENARIOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")
SCHEMA_PATH = os.path.join(SOURCE_DIR, "docs", "report.schema.json")
# The tests' own fontconfig (docs/design.md#tests-are-hermetic): only the fonts
# scripts/setup.sh installs, whatever else the machine has; clean_env gives it
# to every process a test starts.
FONTCONFIG_FILE = os.path.join(SOURCE_DIR, "tests", "data", "fontconfig", "fonts.conf")

VERDICTS = ("pass", "pass-with-concerns", "app-failed", "test-error")
VERDICT_EXIT = {"pass": 0, "pass-with-concerns": 0, "app-failed": 1, "test-error": 2}
OUTCOMES = ("completed", "never-appeared", "exited", "crashed", "crash-loop", "error-dialog",
            "not-rendered", "window-lost", "step-failed", "check-failed", "deadline",
            "interrupted", "blocked", "blocked-by-prompt", "invalid-scenario", "no-display",
            "backend-unavailable", "output-unwritable")
STAGES = ("boot-wait", "launch", "app-wait", "settle", "accessibility-probe", "first-look",
          "browser-attach", "steps", "plan", "goal-loop", "final-checks")
# Diagnosis (docs/scenario.md#logs-and-diagnosis) runs instead of the rest after a failure; the runtime
# records it as a stage after the others.
STAGE_ORDER = STAGES + ("diagnosis",)
STAGE_STATUSES = ("ok", "failed", "skipped", "interrupted", "timeout")

# `file:line:col: message`, one per error, on validate's stderr.
ERROR_LINE_RE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$")

TAG_VAR = "KSR_IT_TAG"

# The kind of session the tests use (docs/kasm-image.md): "xvfb" (Xvfb + openbox,
# the default) or "xvnc" (Xtigervnc + xfwm4, the parts of a Kasm session):
# KSR_IT_SESSION=xvnc switches both the sessions a test starts itself
# (start_xvfb) and the runtime's own (--xvfb, through KASM_RUNTIME_DISPLAY_SERVER
# and KASM_RUNTIME_WM in clean_env). test_session_xvnc.py runs a slice so.
SESSION_VAR = "KSR_IT_SESSION"


def session_kind():
    kind = os.environ.get(SESSION_VAR, "xvfb") or "xvfb"
    if kind not in ("xvfb", "xvnc"):
        raise AssertionError("%s=%r: xvfb or xvnc" % (SESSION_VAR, kind))
    return kind


# --------------------------------------------------------------------------
# skips: visible, and never where the project's own CI has what is missing

SKIP_LOG = os.environ.get("KSR_SKIP_LOG")  # scripts/setup.sh test prints it at the end
# Set by scripts/setup.sh test: the machine has everything setup installs
# and runs as root, so a skip for want of those is a failure there.
STRICT_SKIPS = os.environ.get("KSR_STRICT_SKIPS") == "1"
ALL_SKIPPED_MARK = "KSR-ALL-SKIPPED"  # tests/CMakeLists.txt: SKIP_REGULAR_EXPRESSION
_counts = {"run": 0, "skipped": 0}


def record_skip(test_id, reason):
    """Every skip, by any means (skipTest, the skip decorators), goes to the
    skip log with its reason, and is printed where ctest shows it."""
    print("SKIP %s: %s" % (test_id, reason), file=sys.stderr, flush=True)
    if SKIP_LOG:
        with open(SKIP_LOG, "a", encoding="utf-8") as f:
            f.write("%s: %s\n" % (test_id, reason))


def skip_unless_installable(tc, reason):
    """A skip for want of something scripts/setup.sh installs (a package, root,
    a tmpfs mount): a failure on the project's own CI (KSR_STRICT_SKIPS), a
    visible skip elsewhere."""
    if STRICT_SKIPS:
        tc.fail("not skipped where setup provides it (KSR_STRICT_SKIPS): " + reason)
    tc.skipTest(reason)


_add_skip = unittest.TestResult.addSkip
_start_test = unittest.TestResult.startTest


def _on_skip(self, test, reason):
    _counts["skipped"] += 1
    record_skip(test.id(), reason)
    _add_skip(self, test, reason)


def _on_start(self, test):
    _counts["run"] += 1
    _start_test(self, test)


def _all_skipped_mark():
    # A file whose every test skipped shows as skipped in ctest, not passed.
    if _counts["run"] and _counts["run"] == _counts["skipped"]:
        print(ALL_SKIPPED_MARK, flush=True)


unittest.TestResult.addSkip = _on_skip
unittest.TestResult.startTest = _on_start
atexit.register(_all_skipped_mark)


# --------------------------------------------------------------------------
# environment

def clean_env(tag=None, **extra):
    """The test's environment without anything that would steer the runtime
    (DISPLAY, KASM_RUNTIME_*) or the fonts its apps draw with (FONTCONFIG_*:
    the tests' own fontconfig instead), plus the cleanup tag and `extra`.
    A value of None in `extra` removes the variable."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KASM_RUNTIME_", "FONTCONFIG_"))
           and k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["FONTCONFIG_FILE"] = FONTCONFIG_FILE
    if tag:
        env[TAG_VAR] = tag
    if session_kind() == "xvnc":
        env["KASM_RUNTIME_DISPLAY_SERVER"] = "xvnc"
        env["KASM_RUNTIME_WM"] = "xfwm4"
        # An Xvnc session gives its apps the user's HOME by default (as Kasm
        # does); the tests' runs keep private folders, so none sees another's.
        env["KASM_RUNTIME_PRIVATE_HOME"] = "1"
    for k, v in extra.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def require_binaries(tc, testapp=True):
    if not BIN or not os.access(BIN, os.X_OK):
        tc.fail("KSR_BIN is not an executable runtime binary: %r" % BIN)
    if testapp and (not TESTAPP or not os.access(TESTAPP, os.X_OK)):
        tc.fail("KSR_TESTAPP is not an executable test app: %r" % TESTAPP)


def project_version():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(\s*kasm-session-runtime\s+VERSION\s+([0-9.]+)", f.read())
    return m.group(1) if m else None


# --------------------------------------------------------------------------
# running the runtime

def _with_out(args, out):
    args = list(args)
    if out is not None and args and args[0] == "run":
        args = ["run", "--out", out] + args[1:]
    return args


def kill_group(proc, sig=signal.SIGKILL):
    """Kill the process group led by proc (started with start_new_session)."""
    if proc is None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_runtime(args, env=None, out=None, timeout=120, prefix=None, stdin=subprocess.DEVNULL):
    """Run the runtime to completion. `out` adds `--out OUT` to a `run`.
    `prefix` (e.g. setpriv ...) goes in front of the binary.
    Returns (rc, stdout, stderr, elapsed_seconds). On timeout the process group
    is killed and AssertionError is raised (a hang is a failure)."""
    cmd = list(prefix or []) + [BIN] + _with_out(args, out)
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, env=env if env is not None else clean_env(),
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        so, se = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        so, se = proc.communicate(timeout=10)
        raise AssertionError("runtime did not exit within %ss: %s\nstderr:\n%s"
                             % (timeout, " ".join(cmd), se.decode("utf-8", "replace")[-4000:]))
    elapsed = time.monotonic() - t0
    return (proc.returncode, so.decode("utf-8", "replace"), se.decode("utf-8", "replace"),
            elapsed)


class Runtime:
    """A runtime started in the background (own process group), stdout and
    stderr going to files so a chatty run can never block on a pipe."""

    def __init__(self, proc, stdout_path, stderr_path, cmd):
        self.proc = proc
        self.pid = proc.pid
        self.stdout_path = stdout_path
        self.stderr_path = stderr_path
        self.cmd = cmd
        self.started = time.monotonic()

    def _read(self, path):
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", "replace")
        except OSError:
            return ""

    @property
    def stdout(self):
        return self._read(self.stdout_path)

    @property
    def stderr(self):
        return self._read(self.stderr_path)

    def poll(self):
        return self.proc.poll()

    def signal(self, sig):
        """Send sig to the runtime itself (like `kill PID`)."""
        os.kill(self.proc.pid, sig)

    def wait(self, timeout):
        """Wait for exit; on timeout kill the group and fail."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(self.proc)
            self.proc.wait(timeout=10)
            raise AssertionError("runtime (pid %d) did not exit within %ss\nstderr:\n%s"
                                 % (self.pid, timeout, self.stderr[-4000:]))

    def kill(self):
        if self.proc.poll() is None:
            kill_group(self.proc)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def start_runtime(args, env=None, out=None, logdir=None, prefix=None):
    """Start the runtime in a new process group; returns a Runtime."""
    logdir = logdir or tempfile.mkdtemp(prefix="ksr-it-log-")
    n = 0
    while os.path.exists(os.path.join(logdir, "rt%d.stdout" % n)):
        n += 1
    so_path = os.path.join(logdir, "rt%d.stdout" % n)
    se_path = os.path.join(logdir, "rt%d.stderr" % n)
    cmd = list(prefix or []) + [BIN] + _with_out(args, out)
    with open(so_path, "wb") as so, open(se_path, "wb") as se:
        proc = subprocess.Popen(cmd, env=env if env is not None else clean_env(),
                                stdin=subprocess.DEVNULL, stdout=so, stderr=se,
                                start_new_session=True)
    return Runtime(proc, so_path, se_path, cmd)


# --------------------------------------------------------------------------
# evidence

def read_trace(out):
    """The complete lines of trace.jsonl, parsed ([] if absent). A partial
    last line (being written) is ignored; a complete line that is not JSON
    is an error."""
    path = os.path.join(out, "trace.jsonl")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return []
    events = []
    lines = data.split(b"\n")
    for i, line in enumerate(lines[:-1]):  # the last element is "" or a partial line
        if not line.strip():
            continue
        try:
            events.append(json.loads(line))
        except ValueError as e:
            raise AssertionError("trace.jsonl line %d is not JSON (%s): %r" % (i + 1, e, line[:200]))
    return events


def wait_for_trace_event(out, predicate, timeout, proc=None):
    """Poll trace.jsonl every 50 ms until an event satisfies predicate; return it.
    Fails on timeout, or at once if `proc` (a Runtime) exits first."""
    deadline = time.monotonic() + timeout
    while True:
        for ev in read_trace(out):
            if predicate(ev):
                return ev
        if proc is not None and proc.poll() is not None:
            # one last look: the event may have been written just before exit
            for ev in read_trace(out):
                if predicate(ev):
                    return ev
            raise AssertionError("runtime exited (rc %s) before the awaited trace event;\n"
                                 "stderr:\n%s" % (proc.poll(), proc.stderr[-4000:]))
        if time.monotonic() >= deadline:
            raise AssertionError("no matching trace event within %ss; trace events: %s"
                                 % (timeout, [e.get("event") for e in read_trace(out)][-30:]))
        time.sleep(0.05)


def in_stage(name):
    """Predicate: any event recorded in stage `name`."""
    return lambda ev: ev.get("stage") == name


_schema_cache = {}


def load_schema():
    if "schema" not in _schema_cache:
        if not os.path.exists(SCHEMA_PATH):
            raise AssertionError("report schema missing: %s" % SCHEMA_PATH)
        with open(SCHEMA_PATH, encoding="utf-8") as f:
            schema = json.load(f)
        import jsonschema
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        _schema_cache["schema"] = schema
        _schema_cache["validator"] = cls(schema)
    return _schema_cache["schema"], _schema_cache["validator"]


def validate_report(report):
    """Fail with every schema error when report is not valid."""
    _, validator = load_schema()
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.absolute_path))
    if errors:
        raise AssertionError("report.json is not valid against %s:\n%s" % (
            SCHEMA_PATH, "\n".join("  at /%s: %s" % ("/".join(map(str, e.absolute_path)),
                                                      e.message[:300]) for e in errors[:20])))


def load_report(out):
    """report.json from OUT, validated against docs/report.schema.json."""
    path = os.path.join(out, "report.json")
    if not os.path.exists(path):
        raise AssertionError("report.json missing in %s (files: %s)" % (out, list_files(out)))
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    validate_report(report)
    return report


def list_files(out):
    """Every regular file under OUT, as paths relative to OUT."""
    found = []
    for root, _dirs, files in os.walk(out):
        for name in files:
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                found.append(os.path.relpath(p, out))
    return sorted(found)


def report_run_id(report):
    """The run id a report carries, wherever the schema puts it (None if absent)."""
    if isinstance(report.get("run_id"), str):
        return report["run_id"]
    for key in ("run", "runtime"):
        sub = report.get(key)
        if isinstance(sub, dict):
            for k in ("run_id", "id"):
                if isinstance(sub.get(k), str):
                    return sub[k]
    return None


def stage(report, name):
    """The stage row named `name`, or None."""
    for st in report.get("stages", []):
        if st.get("name") == name:
            return st
    return None


def names_line(text, line):
    """True when text names scenario line `line` ("line 12", "file:12:3", ":12")."""
    return re.search(r"(\bline\s+%d\b|:%d(:\d+)?\b)" % (line, line), text) is not None


def png_size(path):
    """(width, height) of a PNG; fails if the file is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError("%s is not a PNG" % path)
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def read_png_rgb(path):
    """(width, height, pixel(x, y) -> (r, g, b)) of an 8-bit RGB or RGBA,
    non-interlaced PNG (what the runtime writes), decoded with zlib only."""
    import struct
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError("%s is not a PNG" % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype, _c, _f, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise AssertionError("%s: unsupported PNG (depth %d, type %d)" % (path, depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), w * bpp
    rows = []

    def unfilter(y):  # rows are decoded on demand: a pixel near the top is cheap
        prev = rows[y - 1] if y else bytearray(stride)
        start = y * (stride + 1)
        ft, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 0xff
            elif ft == 2:
                line[i] = (line[i] + b) & 0xff
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xff
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append(line)

    def pixel(x, y):
        while len(rows) <= y:
            unfilter(len(rows))
        return tuple(rows[y][x * bpp:x * bpp + 3])
    return w, h, pixel


def assert_evidence(out, verdict, outcome, exit_code=None, pid=None):
    """The evidence contract for any finished run. Returns the report.

    - DONE exists, holds "<verdict>\\n", and is the newest file in OUT;
    - report.json is valid against the schema and says verdict/outcome/exit_code;
    - report.md starts with `# <verdict>: <name>`;
    - trace.jsonl: every line an object with t_ms, event, stage, step; the
      first is run.start with pid (== `pid` when given) and run_id;
    - stages use known names and statuses, in the documented order."""
    if exit_code is None:
        exit_code = VERDICT_EXIT[verdict]
    files = list_files(out)
    done = os.path.join(out, "DONE")
    if not os.path.exists(done):
        raise AssertionError("DONE missing in %s (files: %s)" % (out, files))
    with open(done, "rb") as f:
        done_text = f.read().decode("utf-8", "replace")
    report = load_report(out)
    if done_text != report.get("verdict", "") + "\n":
        raise AssertionError("DONE holds %r but report.json's verdict is %r"
                             % (done_text, report.get("verdict")))
    done_mtime = os.stat(done).st_mtime_ns
    for rel in files:
        if rel == "DONE":
            continue
        m = os.stat(os.path.join(out, rel)).st_mtime_ns
        if m > done_mtime:
            raise AssertionError("%s (mtime %d) is newer than DONE (mtime %d): DONE was not last"
                                 % (rel, m, done_mtime))
    got = (report.get("verdict"), report.get("outcome"), report.get("exit_code"))
    if got != (verdict, outcome, exit_code):
        raise AssertionError("expected verdict/outcome/exit_code %r, got %r; reason: %r"
                             % ((verdict, outcome, exit_code), got, report.get("reason")))
    if not isinstance(report.get("reason"), str) or not report["reason"].strip():
        raise AssertionError("report.reason is empty: %r" % report.get("reason"))
    # report.md
    md_path = os.path.join(out, "report.md")
    if not os.path.exists(md_path):
        raise AssertionError("report.md missing in %s" % out)
    with open(md_path, encoding="utf-8") as f:
        # Markdown may escape punctuation in the name (`\_`): compare unescaped
        first = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", f.readline().rstrip("\n"))
    name = (report.get("scenario") or {}).get("name") if isinstance(report.get("scenario"), dict) else None
    expected_md = "# %s: %s" % (verdict, name) if name else "# %s: " % verdict
    if not (first == expected_md if name else first.startswith(expected_md)):
        raise AssertionError("report.md first line %r, expected %r" % (first, expected_md))
    # trace.jsonl
    events = read_trace(out)
    if not events:
        raise AssertionError("trace.jsonl missing or empty in %s" % out)
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise AssertionError("trace line %d is not an object" % (i + 1))
        missing = [k for k in ("t_ms", "event", "stage", "step") if k not in ev]
        if missing:
            raise AssertionError("trace line %d lacks %s: %r" % (i + 1, missing, ev))
    start = events[0]
    if start.get("event") != "run.start":
        raise AssertionError("trace's first event is %r, not run.start" % start.get("event"))
    if not isinstance(start.get("pid"), int) or not start.get("run_id"):
        raise AssertionError("run.start lacks pid/run_id: %r" % start)
    if pid is not None and start["pid"] != pid:
        raise AssertionError("run.start pid %r is not the runtime's pid %r" % (start["pid"], pid))
    if sum(1 for e in events if e.get("event") == "run.start") != 1:
        raise AssertionError("trace.jsonl holds more than one run.start")
    rpid = (report.get("runtime") or {}).get("pid")
    if rpid is not None and rpid != start["pid"]:
        raise AssertionError("report runtime.pid %r differs from run.start pid %r"
                             % (rpid, start["pid"]))
    # every artifact the report lists is in OUT
    for art in report.get("artifacts", []):
        name = art.get("name") if isinstance(art, dict) else art
        if not name or not os.path.isfile(os.path.join(out, name)):
            raise AssertionError("artifact %r listed in report.json is not in OUT (files: %s)"
                                 % (name, files))
    rid = report_run_id(report)
    if rid is not None and rid != start["run_id"]:
        raise AssertionError("report run id %r differs from trace's run.start %r"
                             % (rid, start["run_id"]))
    # stages
    seen = []
    for st in report.get("stages", []):
        if st.get("name") not in STAGE_ORDER:
            raise AssertionError("unknown stage name %r" % st.get("name"))
        if st.get("status") not in STAGE_STATUSES:
            raise AssertionError("stage %s has unknown status %r" % (st.get("name"), st.get("status")))
        seen.append(st["name"])
    if len(set(seen)) != len(seen):
        raise AssertionError("a stage appears twice: %r" % seen)
    if seen != [s for s in STAGE_ORDER if s in seen]:
        raise AssertionError("stages out of order: %r" % seen)
    return report


def assert_full_stages(report):
    """A run that completed records every stage; the ones not run are
    skipped with a reason."""
    names = [st.get("name") for st in report.get("stages", []) if st.get("name") != "diagnosis"]
    if names != list(STAGES):
        raise AssertionError("a completed run should record all stages in order, got %r" % names)
    for st in report["stages"]:
        if st["status"] == "skipped":
            extra = {k: v for k, v in st.items() if k not in ("name", "status")}
            if not any(isinstance(v, str) and v.strip() for v in extra.values()):
                raise AssertionError("skipped stage %s carries no reason: %r" % (st["name"], st))


# --------------------------------------------------------------------------
# processes

def _proc_environ_has(pid, needle):
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            return needle in f.read()
    except OSError:
        return False


def proc_name(pid):
    """The program's base name (argv[0], else comm)."""
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv0 = f.read().split(b"\0")[0].decode("utf-8", "replace")
        if argv0:
            return os.path.basename(argv0)
    except OSError:
        pass
    try:
        with open("/proc/%d/comm" % pid, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def tagged_pids(tag):
    """[(pid, name)] of live (non-zombie) processes carrying KSR_IT_TAG=tag."""
    needle = ("%s=%s\0" % (TAG_VAR, tag)).encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if pid == me:
            continue
        if _proc_environ_has(pid, needle) and proc_state(pid) not in (None, "Z", "X"):
            found.append((pid, proc_name(pid)))
    return found


def wait_tagged_gone(tag, names=None, timeout=5.0):
    """Wait until no tagged process (whose name is in `names`, if given) is
    left; return what is left after timeout ([] = all gone)."""
    deadline = time.monotonic() + timeout
    while True:
        left = [(p, n) for p, n in tagged_pids(tag) if names is None or n in names]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def kill_tagged(tag):
    for _ in range(3):
        left = tagged_pids(tag)
        if not left:
            return
        for pid, _name in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.2)


def unused_display():
    """A display number with no X server (no socket, no lock file)."""
    import random
    for _ in range(200):
        n = random.randint(3000, 5999)
        if not (os.path.exists("/tmp/.X11-unix/X%d" % n) or os.path.exists("/tmp/.X%d-lock" % n)):
            return ":%d" % n
    raise AssertionError("no unused display number found")


def start_xvfb(env, size="1280x720", wm=True, timeout=60, kind=None):
    """start_xvfb_once, again on a fresh Xvfb when its display could not be opened:
    seen once in a loaded parallel run, right after other tests SIGKILLed X servers
    (openbox: "Failed to open the display"). kind: "xvfb" (Xvfb + openbox) or
    "xvnc" (Xtigervnc + xfwm4); None: session_kind()."""
    for attempt in (1, 2, 3):
        try:
            return start_xvfb_once(env, size, wm, timeout, kind or session_kind())
        except AssertionError as e:
            if attempt == 3 or "Failed to open the display" not in str(e):
                raise


def x_server_argv(kind, fd, size):
    """The X server a test starts: Xvfb, or Xtigervnc as a Kasm session runs it
    (VNC viewers on loopback only, no password then)."""
    if kind == "xvnc":
        return ["Xtigervnc", "-displayfd", str(fd), "-geometry", size, "-depth", "24",
                "-SecurityTypes", "None", "-localhost", "-nolisten", "tcp"]
    return ["Xvfb", "-displayfd", str(fd), "-screen", "0", size + "x24", "-nolisten", "tcp"]


def wm_argv(kind):
    if kind == "xvnc":
        return ["xfwm4", "--replace", "--compositor=off"]
    return ["openbox", "--sm-disable"]


def start_xvfb_once(env, size="1280x720", wm=True, timeout=60, kind="xvfb"):
    """A real X server (-displayfd) and window manager started by the test:
    Xvfb + openbox, or Xtigervnc + xfwm4 (kind "xvnc").
    Returns (display, [Popen...]); the caller kills them (kill_group)."""
    r, w = os.pipe()
    procs = []
    xvfb = subprocess.Popen(x_server_argv(kind, w, size), env=env, pass_fds=(w,),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(w)
    procs.append(xvfb)
    buf = b""
    deadline = time.monotonic() + timeout
    try:
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or xvfb.poll() is not None:
                raise AssertionError("Xvfb did not report its display")
            ready, _, _ = select.select([r], [], [], left)
            if ready:
                chunk = os.read(r, 64)
                if not chunk:
                    raise AssertionError("Xvfb closed -displayfd without a display")
                buf += chunk
    except BaseException:
        for p in procs:
            kill_group(p)
        raise
    finally:
        os.close(r)
    display = ":" + buf.decode().strip()
    if wm:
        wenv = dict(env, DISPLAY=display)
        # openbox has been seen to exit 1 at once under a loaded parallel run;
        # its stderr says why, and a second start is tried before giving up.
        for attempt in (1, 2):
            log = tempfile.NamedTemporaryFile(prefix="ksr-openbox-", suffix=".log", delete=False)
            ob = subprocess.Popen(wm_argv(kind), env=wenv, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            procs.append(ob)
            status = None
            while True:
                res = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"], env=wenv,
                                     capture_output=True, timeout=10)
                if b"window id" in res.stdout:
                    break
                status = ob.poll()
                if status is not None or time.monotonic() >= deadline:
                    break
                time.sleep(0.1)
            if b"window id" in res.stdout:
                break
            with open(log.name, errors="replace") as f:
                why = f.read()[-500:]
            if attempt == 2 or status is None:
                for p in procs:
                    kill_group(p)
                raise AssertionError("%s did not come up on %s (%s): %s" % (
                    wm_argv(kind)[0], display, "exited with %s" % status if status is not None
                    else "no WM check after %d s" % timeout, why))
    return display, procs


def run_as_user(tc, cmd, env, cwd, what, timeout=180):
    """Run cmd (a setpriv'd runtime) to its end in its own process group;
    (returncode, stdout, stderr) decoded. tc fails, naming `what`, when it
    does not end within timeout (its group is killed). The tests' fontconfig
    is copied into cwd (the user's home), since the source tree may be out of
    the user's reach."""
    if env.get("FONTCONFIG_FILE"):
        env = dict(env, FONTCONFIG_FILE=shutil.copy(env["FONTCONFIG_FILE"],
                                                    os.path.join(cwd, ".ksr-fonts.conf")))
        os.chmod(env["FONTCONFIG_FILE"], 0o644)
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        so, se = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate(timeout=10)
        tc.fail("%s did not finish within %d s" % (what, timeout))
    return proc.returncode, so.decode("utf-8", "replace"), se.decode("utf-8", "replace")


def start_session_bus(tc, env):
    """A D-Bus session bus (dbus-daemon --session) the test owns; its address.
    tc: the KsrTestCase that kills it at the end. The bus gets a runtime
    folder of its own: the AT-SPI bus launcher it starts on demand puts its
    socket there, and with none (and no DISPLAY, as in a Kasm session) every
    test's launcher took ~/.cache/at-spi/bus, one test's bus replaced another's
    under it and its end closed the other's connection (a CI run's a11y_find
    failed with "The connection is closed")."""
    runtime = tempfile.mkdtemp(prefix="xdg-runtime-", dir=tc.tmp)
    os.chmod(runtime, 0o700)
    env = dict(env, XDG_RUNTIME_DIR=runtime)
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address"],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    tc.procs.append(bus)
    tc.addCleanup(bus.stdout.close)
    r, _, _ = select.select([bus.stdout], [], [], 30)
    tc.assertTrue(r, "dbus-daemon printed no address")
    addr = bus.stdout.readline().decode().strip()
    tc.assertTrue(addr, "dbus-daemon printed no address")
    return addr


# --------------------------------------------------------------------------
# scenarios and test base

def write_scenario(tmpdir, text, name="scenario.yaml"):
    """Write scenario text (dedented by the caller) to tmpdir/name; return the path."""
    path = os.path.join(tmpdir, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def scenario_path(name):
    return os.path.join(SCENARIOS, name)


def wait_window_title(tc, display, title, proc=None, timeout=60):
    """Until a window titled `title` (a substring) is mapped on display: xdotool
    search --sync waits on X events. A fault injected after this is injected
    while what set the title (a page's script, an app's call) is in flight."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            tc.fail("no window titled %r within %d s" % (title, timeout))
        try:
            r = subprocess.run(["xdotool", "search", "--sync", "--name", re.escape(title)],
                               env=clean_env(DISPLAY=display), capture_output=True,
                               text=True, timeout=left)
        except subprocess.TimeoutExpired:
            tc.fail("no window titled %r within %d s" % (title, timeout))
        if proc is not None and proc.poll() is not None:
            tc.fail("the runtime exited (rc %s) before %r showed" % (proc.poll(), title))
        if r.returncode == 0:
            return
        # xdotool dies on an X error (a window it was reading went away
        # meanwhile, as short-lived ones do): search again.
        tc.assertIn("BadWindow", r.stderr, r.stderr)


def line_of(path, needle):
    """1-based line number of the first line of `path` containing needle."""
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if needle in line:
                return i
    raise AssertionError("%r not in %s" % (needle, path))


class KsrTestCase(unittest.TestCase):
    """Fresh temp folder and cleanup tag per test; tearDown kills every process
    the test caused (by PID) and removes the folder (kept when KSR_IT_KEEP=1)."""

    maxDiff = None

    def setUp(self):
        require_binaries(self, testapp=getattr(self, "needs_testapp", True))
        self.tmp = tempfile.mkdtemp(prefix="ksr-it-%s-" % self._testMethodName[:24])
        self.tag = uuid.uuid4().hex
        self.runtimes = []
        self.procs = []

    def tearDown(self):
        for rt in self.runtimes:
            rt.kill()
        for p in self.procs:
            kill_group(p)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        kill_tagged(self.tag)
        if os.environ.get("KSR_IT_KEEP") == "1":
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # conveniences
    def env(self, **extra):
        return clean_env(self.tag, **extra)

    def out(self, name="out"):
        return os.path.join(self.tmp, name)

    def scenario(self, text, name="scenario.yaml"):
        return write_scenario(self.tmp, text, name)

    def run_rt(self, args, env=None, out=None, timeout=120, prefix=None):
        return run_runtime(args, env=env if env is not None else self.env(), out=out,
                           timeout=timeout, prefix=prefix)

    def start_rt(self, args, env=None, out=None, prefix=None):
        rt = start_runtime(args, env=env if env is not None else self.env(), out=out,
                           logdir=self.tmp, prefix=prefix)
        self.runtimes.append(rt)
        return rt

    def start_xvfb(self, size="1280x720", kind=None):
        display, procs = start_xvfb(self.env(), size=size, kind=kind)
        self.procs.extend(procs)
        return display

    def assertEvidence(self, out, verdict, outcome, exit_code=None, pid=None, rc=None,
                       stderr=""):
        """assert_evidence plus rc, with stderr in the message on failure."""
        try:
            report = assert_evidence(out, verdict, outcome, exit_code, pid)
        except AssertionError as e:
            self.fail("%s\n--- runtime stderr (tail) ---\n%s" % (e, stderr[-3000:]))
        if rc is not None:
            self.assertEqual(rc, VERDICT_EXIT[verdict] if exit_code is None else exit_code,
                             "exit code; stderr tail:\n%s" % stderr[-3000:])
        return report

    def assertNoSanitizerReport(self, stderr):
        for marker in ("AddressSanitizer", "LeakSanitizer", "runtime error:",
                       "UndefinedBehaviorSanitizer"):
            self.assertNotIn(marker, stderr, "sanitizer report on stderr:\n%s" % stderr[-4000:])

    def assertAppGone(self, names, timeout=5.0):
        left = wait_tagged_gone(self.tag, names=names, timeout=timeout)
        self.assertEqual(left, [], "processes still running after the run: %r" % left)
