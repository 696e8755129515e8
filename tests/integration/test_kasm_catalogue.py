"""Kasm's catalogue, run the way a Kasm image runs it, judged as a person would.

A session built the way Kasm's vnc_startup.sh builds one (dbus-launch,
Xtigervnc 1920x1080, `startxfce4 --replace`), as uid 1000 on a fresh home.
Each app is started as its image's custom_startup.sh starts it
(`START_COMMAND DEFAULT_ARGS` in a session of its own) and the runtime waits
for it with a scenario holding only the image's own values (`process:` from
PGREP, `window:` from MAXIMIZE_NAME, `settle_s: 5`; docs/kasm-image.md), on
its first start (fresh home and TMPDIR, as a new container has) and again on
its second (same home, the app ended with SIGTERM as a closed Kasm session
ends it, then started again).

EXPECTED below is what a person looking at each first-look screenshot says:
the verdict, outcome and concern the run must give, and what its reason
must name. The values of APPS are those of kasmtech/workspaces-images
(src/ubuntu/install/<image>/custom_startup.sh); where Debian's build of the
app differs (its binary name), APPS says so.

Run a few apps only: KSR_CATALOGUE_APPS=qbittorrent,retroarch. Keep each
run's evidence: KSR_CATALOGUE_EVIDENCE=DIR (DIR/<app>-<start>/). Every case
prints one line `catalogue: app start verdict outcome concerns duration_ms`.
"""

import json
import os
import pwd
import re
import select
import shutil
import signal
import subprocess
import tempfile
import textwrap
import time
import unittest
import uuid

import ksr

UID = 1000
SIZE = "1920x1080"
SETTLE_S = 5
# The runtime's own deadlines bound a run (launch_timeout_s 60, paint wait 30,
# settle 5 and the stages after); this only catches a hung runtime.
RUN_TIMEOUT_S = 300
STOP_TIMEOUT_S = 15
# A painted window has more colours than this in its region of the first look
# (text alone brings dozens through anti-aliasing); a blank one has one.
PAINTED_COLOURS = 16

# image: start command and arguments, PGREP, MAXIMIZE_NAME, the binary whose
# absence skips the app (the Debian package in scripts/setup.sh).
APPS = {
    # Kasm's `terminal` image; its PGREP "xfce4-terminal " loses its space in
    # `pgrep -x $PGREP`. The control: a plain app that must pass.
    "terminal": dict(command=["xfce4-terminal", "--hide-borders", "--hide-menubar",
                              "--zoom=-1", "--hide-scrollbar"],
                     pgrep="xfce4-terminal", window="Terminal", package="xfce4-terminal"),
    "qbittorrent": dict(command=["qbittorrent", "--no-splash"], pgrep="qbittorrent",
                        window="qBittorrent", package="qbittorrent"),
    "retroarch": dict(command=["retroarch", "-f"], pgrep="retroarch", window="retroarch",
                      package="retroarch"),
    "inkscape": dict(command=["inkscape"], pgrep="inkscape", window="Inkscape",
                     package="inkscape"),
    # Kasm's image runs Mozilla's build, whose process is `firefox`; Debian's
    # /usr/bin/firefox starts firefox-esr, so PGREP is Debian's name.
    "firefox": dict(command=["firefox"], pgrep="firefox-esr", window="Mozilla Firefox",
                    package="firefox-esr"),
    "libre_office": dict(command=["libreoffice"], pgrep="soffice.bin", window="LibreOffice",
                         package="libreoffice-writer"),
    "thunderbird": dict(command=["thunderbird"], pgrep="thunderbird", window="Mozilla",
                        package="thunderbird"),
    "audacity": dict(command=["audacity"], pgrep="audacity", window="Audacity",
                     package="audacity"),
    "blender": dict(command=["blender"], pgrep="blender", window="Blender", package="blender"),
}

# (image, start, verdict, outcome, concern codes, what the reason names (a
# pattern) or None, what a person sees on the first-look screenshot). A run
# that completes must also have judged the app's own process and the window
# that is on screen at its end.
# Written from the screenshots of the runs, not from the runtime's output.
EXPECTED = [
    ("terminal", 1, "pass", "completed", (), None,
     "a borderless terminal with its prompt on the XFCE desktop"),
    ("terminal", 2, "pass", "completed", (), None,
     "the same terminal again"),
    ("qbittorrent", 1, "app-failed", "blocked-by-prompt", (), r"Legal notice",
     "only qBittorrent's modal 'Legal notice' (I Agree / Cancel) on the desktop; "
     "no main window"),
    ("qbittorrent", 2, "app-failed", "blocked-by-prompt", (), r"Legal notice",
     "the same 'Legal notice' again: nobody agreed"),
    ("retroarch", 1, "app-failed", "never-appeared", (), r"RetroArch  ",
     "RetroArch's main menu full screen, titled 'RetroArch  ': the app is up, the "
     "image's window name 'retroarch' is not its title (a near miss)"),
    ("retroarch", 2, "app-failed", "never-appeared", (), r"RetroArch  ",
     "the same RetroArch menu"),
    ("inkscape", 1, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "only Inkscape's 'Welcome! Let's set up a few things' Quick Setup window"),
    ("inkscape", 2, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "the Quick Setup window again (it shows on every start until unticked)"),
    ("firefox", 1, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "Firefox titled 'Welcome to Firefox', its onboarding page ('Give your browsing "
     "a boost', Sign in)"),
    ("firefox", 2, "pass", "completed", (), None,
     "Firefox on a New Tab page"),
    ("libre_office", 1, "pass", "completed", (), None,
     "LibreOffice's Start Center (its launcher restarted soffice.bin once for the "
     "new profile)"),
    ("libre_office", 2, "pass", "completed", (), None,
     "LibreOffice's Start Center"),
    ("thunderbird", 1, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "Thunderbird's 'Welcome to Thunderbird' account setup (Sign in, Add your email "
     "address) drawn inside its main window"),
    ("thunderbird", 2, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "the same account setup: no account was set up"),
    ("audacity", 1, "pass-with-concerns", "completed", ("first-run-prompt",), None,
     "Audacity's main window under its 'Welcome to Audacity!' dialog"),
    ("audacity", 2, "pass-with-concerns", "completed", ("first-run-prompt", "recovery-prompt"),
     None, "Audacity's 'Automatic Crash Recovery' (Recover Selected, Skip...) and the "
     "welcome dialog over its main window: the first start was ended with SIGTERM"),
    # Blender paints 1 to 20 s after its window maps (software rendering, load):
    # a first look taken before that is one flat grey. Painted, it shows its
    # "Quick Setup" splash, drawn inside its own GL window: no X window, and
    # Blender is not on the accessibility bus, so nothing but a vision model
    # can call it a first-run prompt; without one the run's pass on the
    # painted window is what this case asserts.
    ("blender", 1, "pass", "completed", (), None,
     "Blender's interface once painted, its in-window 'Quick Setup' splash over it"),
    ("blender", 2, "pass", "completed", (), None,
     "the same: the Quick Setup again (no preferences were saved)"),
]


def selected_apps():
    names = os.environ.get("KSR_CATALOGUE_APPS", "").strip()
    if not names:
        return list(APPS)
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in APPS]
    if unknown:
        raise AssertionError("KSR_CATALOGUE_APPS names unknown apps %r (known: %s)"
                             % (unknown, ", ".join(APPS)))
    return chosen


# --------------------------------------------------------------------------
# processes, by session id

def _stat_fields(pid):
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def session_pids(sid):
    """Live processes whose session is `sid`, and their descendants (a
    process that made a session of its own is still a child)."""
    parents, found = {}, set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if not fields or fields[0] in ("Z", "X"):
            continue
        parents[int(entry)] = int(fields[1])
        if int(fields[3]) == sid:
            found.add(int(entry))
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in found and pid not in found:
                found.add(pid)
                grew = True
    return sorted(found)


def signal_pids(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end_session(sid, timeout=STOP_TIMEOUT_S):
    """SIGTERM every process of session `sid` (as a closed Kasm session ends
    its app), SIGKILL what is left after `timeout`; returns what was killed."""
    signal_pids(session_pids(sid), signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while session_pids(sid) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = session_pids(sid)
    while left:
        signal_pids(left, signal.SIGKILL)
        time.sleep(0.1)
        left = session_pids(sid)
    return left


# What is up now, for a SIGTERM (ctest's timeout, a person's ^C on the
# suite) to tear down before the interpreter goes: app sessions, the desktop.
_LIVE = {"session": None, "sids": set()}


def _end_everything(signum, _frame):
    for sid in list(_LIVE["sids"]):
        signal_pids(session_pids(sid), signal.SIGKILL)
    if _LIVE["session"] is not None:
        _LIVE["session"].stop()
    os._exit(128 + signum)


# --------------------------------------------------------------------------
# the session

def ensure_uid_1000():
    try:
        return pwd.getpwuid(UID)
    except KeyError:
        pass
    res = subprocess.run(["useradd", "--uid", str(UID), "--create-home", "--shell",
                          "/bin/bash", "kasm-user"], capture_output=True, timeout=30)
    if res.returncode not in (0, 9):  # 9: made meanwhile by a parallel test
        raise AssertionError("useradd failed: %s" % res.stderr.decode("utf-8", "replace"))
    return pwd.getpwuid(UID)


def as_user(cmd):
    return ["setpriv", "--reuid=%d" % UID, "--regid=%d" % UID, "--init-groups"] + list(cmd)


class KasmSession:
    """dbus-launch, Xtigervnc, startxfce4 as uid 1000 on a fresh home, torn
    down by PID and session id (and by the cleanup tag, for what D-Bus
    activated)."""

    def __init__(self, home, tmpdir, user, tag):
        self.home, self.user, self.tag = home, user, tag
        self.procs = []
        self.pids = []  # dbus-daemon: not our child
        self.env = {
            "HOME": home, "USER": user, "LOGNAME": user, "SHELL": "/bin/bash",
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/games", "LANG": "C.UTF-8",
            # A fresh container's /tmp: Audacity keeps its crash-recovery
            # projects in $TMPDIR/audacity-USER, not in the home.
            "TMPDIR": tmpdir,
            ksr.TAG_VAR: tag,
        }

    def start(self):
        self._dbus()
        self._xserver()
        self._xfce()

    def _dbus(self):
        res = subprocess.run(as_user(["dbus-launch", "--sh-syntax"]), env=self.env,
                             capture_output=True, text=True, timeout=30)
        if res.returncode != 0:
            raise AssertionError("dbus-launch failed: %s" % res.stderr)
        found = dict(re.findall(r"^(DBUS_SESSION_BUS_\w+)='?([^';]*)'?;", res.stdout, re.M))
        self.env["DBUS_SESSION_BUS_ADDRESS"] = found["DBUS_SESSION_BUS_ADDRESS"]
        self.pids.append(int(found["DBUS_SESSION_BUS_PID"]))

    def _xserver(self):
        if not os.path.isdir("/tmp/.X11-unix"):
            try:
                os.mkdir("/tmp/.X11-unix")
                os.chmod("/tmp/.X11-unix", 0o1777)
            except FileExistsError:
                pass
        r, w = os.pipe()
        x = subprocess.Popen(as_user(ksr.x_server_argv("xvnc", w, SIZE)), env=self.env,
                             pass_fds=(w,), stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        os.close(w)
        self.procs.append(x)
        buf, deadline = b"", time.monotonic() + 60
        try:
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or x.poll() is not None:
                    raise AssertionError("Xtigervnc did not report its display")
                if select.select([r], [], [], left)[0]:
                    chunk = os.read(r, 64)
                    if not chunk:
                        raise AssertionError("Xtigervnc closed -displayfd without a display")
                    buf += chunk
        finally:
            os.close(r)
        self.env["DISPLAY"] = ":" + buf.decode().strip()

    def _xfce(self):
        log = open(os.path.join(self.home, ".xfce-session.log"), "wb")
        self.procs.append(subprocess.Popen(as_user(["startxfce4", "--replace"]), env=self.env,
                                           stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True))
        log.close()
        self.wait_for(lambda: b"window id" in self.x(["xprop", "-root",
                                                      "_NET_SUPPORTING_WM_CHECK"]).stdout,
                      "xfwm4's _NET_SUPPORTING_WM_CHECK")
        # The desktop is up when the panel and the desktop have their windows.
        for cls in ("xfce4-panel", "xfdesktop"):
            self.wait_for(lambda c=cls: self.x(["xdotool", "search", "--onlyvisible",
                                                "--class", c]).returncode == 0,
                          "a visible %s window" % cls)

    def x(self, cmd):
        return subprocess.run(as_user(cmd), env=self.env, capture_output=True, timeout=30)

    def wait_for(self, predicate, what, timeout=60):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() >= deadline:
                raise AssertionError("Kasm session on %s: no %s within %d s"
                                     % (self.env.get("DISPLAY"), what, timeout))
            time.sleep(0.1)

    def restore_screen(self):
        """A fullscreen game can leave the screen at another size."""
        self.x(["xrandr", "-s", SIZE])
        self.wait_for(lambda: ("dimensions:    %s pixels" % SIZE).encode()
                      in self.x(["xdpyinfo"]).stdout, "screen back at %s" % SIZE, timeout=20)

    def stop(self):
        for p in reversed(self.procs):
            end_session(p.pid, timeout=5)
            ksr.kill_group(p)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        signal_pids(self.pids, signal.SIGKILL)
        ksr.kill_tagged(self.tag)


# --------------------------------------------------------------------------
# the test

class KasmCatalogue(ksr.KsrTestCase):
    needs_testapp = False
    session = None

    @classmethod
    def setUpClass(cls):
        cls.tools_missing = [t for t in ("Xtigervnc", "startxfce4", "dbus-launch", "xrandr",
                                         "xdotool", "xprop", "xdpyinfo", "xwininfo",
                                         "setpriv", "convert")
                             if not shutil.which(t)]
        if os.geteuid() != 0 or cls.tools_missing:
            return  # each test says why it cannot run
        user = ensure_uid_1000()
        cls.root = tempfile.mkdtemp(prefix="ksr-catalogue-")
        os.chmod(cls.root, 0o755)
        cls.home = os.path.join(cls.root, "home")  # the fresh home of this session
        cls.tmpdir = os.path.join(cls.root, "tmp")
        cls.bindir = os.path.join(cls.root, "bin")
        for d in (cls.home, cls.tmpdir, cls.bindir):
            os.mkdir(d, 0o755)
        for d in (cls.home, cls.tmpdir):
            os.chown(d, UID, user.pw_gid)
        # The build tree may not be reachable by uid 1000.
        cls.binary = shutil.copy2(ksr.BIN, os.path.join(cls.bindir, "kasm-session-runtime"))
        os.chmod(cls.binary, 0o755)
        cls.session = KasmSession(cls.home, cls.tmpdir, user.pw_name, uuid.uuid4().hex)
        cls.addClassCleanup(cls._teardown_session)
        _LIVE["session"] = cls.session
        signal.signal(signal.SIGTERM, _end_everything)
        cls.session.start()

    @classmethod
    def _teardown_session(cls):
        cls.session.stop()
        _LIVE["session"] = None
        if os.environ.get("KSR_IT_KEEP") == "1":
            print("kept", cls.root)
        else:
            shutil.rmtree(cls.root, ignore_errors=True)

    def setUp(self):
        super().setUp()
        if os.geteuid() != 0:
            ksr.skip_unless_installable(self, "needs root to run as uid %d (the suite runs as "
                                        "root)" % UID)
        if self.tools_missing:
            ksr.skip_unless_installable(self, "not installed: %s (scripts/setup.sh deps)"
                                        % ", ".join(self.tools_missing))

    def start_app(self, spec, log):
        with open(log, "ab") as f:
            return subprocess.Popen(as_user(spec["command"]), env=self.session.env,
                                    cwd=self.home, stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def scenario_for(self, app, start, spec):
        path = os.path.join(self.root, "%s-%d.yaml" % (app, start))
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent("""\
                name: kasm-%s-%d
                process: ^%s$
                window: %s
                settle_s: %d
                """ % (app, start, re.escape(spec["pgrep"]), spec["window"], SETTLE_S)))
        os.chmod(path, 0o644)
        return path

    def run_case(self, app, start):
        spec = APPS[app]
        out = os.path.join(self.root, "out-%s-%d" % (app, start))
        log = os.path.join(self.root, "%s.log" % app)
        sc = self.scenario_for(app, start, spec)
        os.mkdir(out, 0o755)
        os.chown(out, UID, -1)
        proc = self.start_app(spec, log)
        _LIVE["sids"].add(proc.pid)
        try:
            # The runtime starts beside the app, as from custom_startup.sh.
            cmd = as_user([self.binary, "run", "--out", out, sc])
            rc, _so, se = ksr.run_as_user(self, cmd, dict(self.session.env), self.home,
                                          "the run of %s (start %d)" % (app, start),
                                          timeout=RUN_TIMEOUT_S)
            on_screen = self.what_is_up(proc.pid, out)
        finally:
            end_session(proc.pid)
            proc.wait(timeout=10)
            _LIVE["sids"].discard(proc.pid)
            self.session.restore_screen()
        self.assertNoSanitizerReport(se)
        if not os.path.exists(os.path.join(out, "report.json")):
            self.fail("%s, start %d: no report (rc %d); stderr:\n%s" % (app, start, rc, se[-3000:]))
        report = ksr.load_report(out)
        report["_out"] = out
        self.assertEqual(rc, report["exit_code"], se[-2000:])
        keep = os.environ.get("KSR_CATALOGUE_EVIDENCE")
        if keep:
            dest = os.path.join(keep, "%s-%d" % (app, start))
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(out, dest)
        codes = sorted({c["code"] for c in report["concerns"]})
        print("catalogue: %s %d %s %s %s %d ms: %s [windows at the end: %r]" % (
            app, start, report["verdict"], report["outcome"], ",".join(codes) or "-",
            report["timings"]["duration_ms"], report["reason"], on_screen["titles"]), flush=True)
        return report, codes, on_screen

    def what_is_up(self, sid, out):
        """At the run's end, before teardown: the app's live processes, and
        whether the window the report names as the app's is still viewable."""
        pids = session_pids(sid)
        viewable = None
        try:
            with open(os.path.join(out, "report.json"), encoding="utf-8") as f:
                window = ((json.load(f).get("app") or {}).get("window") or {})
        except (OSError, ValueError):
            window = {}
        if window.get("id"):
            res = self.session.x(["xwininfo", "-id", window["id"]])
            viewable = b"IsViewable" in res.stdout
        return {"pids": pids, "window_viewable": viewable, "titles": self.titles_of(pids)}

    def titles_of(self, pids):
        """The titles of the visible windows of `pids` (printed per case)."""
        titles = []
        for pid in pids:
            res = self.session.x(["xdotool", "search", "--onlyvisible", "--pid", str(pid)])
            for wid in res.stdout.split():
                name = self.session.x(["xdotool", "getwindowname", wid.decode()])
                titles.append(name.stdout.decode("utf-8", "replace").rstrip("\n"))
        return titles

    def assert_first_look_painted(self, report, why):
        """A completed run's first look shows the app's window painted: more
        than a handful of colours in its region (a window still one flat
        colour is a not-rendered concern, which no case here expects)."""
        window = report["app"]["window"]
        shot = os.path.join(report["_out"], "00-first-look.png")
        res = subprocess.run(["convert", shot, "-crop", "%(w)dx%(h)d+%(x)d+%(y)d" % window,
                              "+repage", "-format", "%k", "info:"],
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        if int(res.stdout.strip()) > PAINTED_COLOURS:
            return
        # What it was instead, for the reader of a CI log: its colours and
        # the paint event (the evidence folder is gone with the test's tmp).
        hist = subprocess.run(["convert", shot, "-crop", "%(w)dx%(h)d+%(x)d+%(y)d" % window,
                               "+repage", "-format", "%c", "histogram:info:"],
                              capture_output=True, text=True, timeout=60).stdout
        paints = [e for e in ksr.read_trace(report["_out"]) if e.get("event") == "paint"]
        self.fail("%s: the app's window %r is one flat colour in 00-first-look.png: "
                  "colours %s; paint events %s" % (why, window, hist.strip()[:800], paints))

    def assert_app_is_what_is_on_screen(self, report, on_screen, why):
        """The process and window the run judged are the app's, and the window
        is the one on screen at the end (not a splash that went, not another
        user's process of the same name)."""
        app = report["app"]
        self.assertIsNotNone(app, why)
        self.assertIn(app["pid"], on_screen["pids"],
                      "%s: the run's app pid %s is not a live process of the app's session %s"
                      % (why, app["pid"], on_screen["pids"]))
        self.assertTrue(on_screen["window_viewable"],
                        "%s: the run's app window %r is not on screen at the end"
                        % (why, app["window"]))

    def check_app(self, app):
        if app not in selected_apps():
            self.skipTest("not in KSR_CATALOGUE_APPS")
        if not shutil.which(APPS[app]["command"][0]):
            ksr.skip_unless_installable(self, "%s is not installed (scripts/setup.sh test)"
                                        % APPS[app]["package"])
        for (name, start, verdict, outcome, concerns, reason_has, sees) in EXPECTED:
            if name != app:
                continue
            report, codes, on_screen = self.run_case(app, start)
            with self.subTest(app=app, start=start):
                why = "%s, start %d (a person sees: %s): the run said %s / %s, concerns %s: %s" % (
                    app, start, sees, report["verdict"], report["outcome"], codes,
                    report["reason"])
                self.assertEqual((report["verdict"], report["outcome"]), (verdict, outcome), why)
                self.assertEqual(codes, sorted(concerns), why)
                if reason_has:
                    self.assertRegex(report["reason"], reason_has, why)
                if outcome == "completed":
                    self.assert_app_is_what_is_on_screen(report, on_screen, why)
                    self.assert_first_look_painted(report, why)


def _make_test(app):
    def test(self):
        self.check_app(app)
    test.__doc__ = "Kasm's %s image, first and second start." % app
    return test


for _app in APPS:
    setattr(KasmCatalogue, "test_%s" % _app, _make_test(_app))


if __name__ == "__main__":
    unittest.main()
