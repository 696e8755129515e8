"""The accessibility bus in a session built the way Kasm builds one
(docs/kasm-image.md#the-accessibility-bus): the session bus first, its
at-spi-bus-launcher without DISPLAY (so the X root has no AT_SPI_BUS, and
Qt 5 apps started there do not join the bus), then the X server.

1. The runtime publishes the bus on the X root at boot wait, so a Qt 5 app the
   session starts after that (the scenario has no launch:; the test starts
   kcalc itself, with nothing set, once the trace shows boot wait done) joins
   the bus: the probe finds it. The runtime runs as `docker exec` runs it in a
   Kasm container: without DBUS_SESSION_BUS_ADDRESS (it finds the session bus
   in the environment of the session's processes on its display).
2. A root that names a bus already is never overwritten.
3. A GTK 2 app (gpicview) that loads no bridge: the probe's reason opens with
   that cause (start it with GTK_MODULES=gail:atk-bridge), not with guesses;
   started that way it is on the bus.
4. The session change docs/kasm-image.md gives for apps started before the
   runtime (xprop -root -set AT_SPI_BUS ... from org.a11y.Bus.GetAddress) makes
   a Qt 5 app started after it join, with no runtime involved.
"""

import os
import re
import shutil
import subprocess
import time

import ksr

KCALC = """\
process: ^kcalc$
window: KCalc
settle_s: 0.5
launch_timeout_s: 60
"""


class KasmBuiltSession(ksr.KsrTestCase):
    needs_testapp = False
    RUNS = 4

    def setUp(self):
        super().setUp()
        for tool in ("kcalc", "gpicview", "xprop", "dbus-send"):
            if not shutil.which(tool):
                self.fail("%s is not installed (scripts/setup.sh deps)" % tool)
        # In the order vnc_startup.sh brings the session up: the session bus
        # and its accessibility bus (no DISPLAY yet), then the X server and a
        # window manager on that session bus.
        self.bus = ksr.start_session_bus(self, self.env())
        self.a11y_bus_without_display()
        self.display, procs = ksr.start_xvfb(self.env(DBUS_SESSION_BUS_ADDRESS=self.bus),
                                             kind="xvfb")
        self.procs.extend(procs)
        self.assertEqual(self.root_prop(), None, "the session lacks AT_SPI_BUS")

    def a11y_bus_without_display(self):
        # A runtime folder of its own: the launcher's socket is not shared with
        # another test's launcher (without one it is ~/.cache/at-spi/bus).
        runtime = os.path.join(self.tmp, "runtime")
        os.mkdir(runtime, 0o700)
        env = self.env(DBUS_SESSION_BUS_ADDRESS=self.bus, DISPLAY=None, XDG_RUNTIME_DIR=runtime)
        launcher = subprocess.Popen(["/usr/libexec/at-spi-bus-launcher", "--launch-immediately"],
                                    env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
        self.procs.append(launcher)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            res = subprocess.run(["dbus-send", "--session", "--print-reply",
                                  "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.NameHasOwner", "string:org.a11y.Bus"],
                                 env=env, capture_output=True, text=True, timeout=10)
            if "true" in res.stdout:
                return
            self.assertIsNone(launcher.poll(), "at-spi-bus-launcher exited")
            time.sleep(0.1)  # the launcher claims its name once; no signal to wait on here
        self.fail("org.a11y.Bus got no owner within 30 s")

    def root_prop(self):
        """AT_SPI_BUS on the root, or None."""
        res = subprocess.run(["xprop", "-root", "AT_SPI_BUS"], env=self.env(DISPLAY=self.display),
                             capture_output=True, text=True, timeout=10)
        m = re.search(r'AT_SPI_BUS\(STRING\) = "(.*)"', res.stdout)
        return m.group(1) if m else None

    def a11y_address(self):
        res = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus",
                              "/org/a11y/bus", "org.a11y.Bus.GetAddress"],
                             env=self.env(DBUS_SESSION_BUS_ADDRESS=self.bus),
                             capture_output=True, text=True, timeout=10)
        m = re.search(r'string "(.*)"', res.stdout)
        self.assertTrue(m, res)
        return m.group(1)

    def runtime_env(self):
        # As `docker exec` runs it in a Kasm container: DISPLAY only.
        return self.env(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=None,
                        AT_SPI_BUS_ADDRESS=None)

    def session_app(self, argv, **extra):
        """An app the session starts (not the runtime): its own environment, no
        accessibility variables but those given; its Popen."""
        env = self.env(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.bus,
                       QT_LINUX_ACCESSIBILITY_ALWAYS_ON=None, QT_ACCESSIBILITY=None,
                       GTK_MODULES=None, NO_AT_BRIDGE=None, **extra)
        app = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
        self.procs.append(app)
        return app

    def run_with_session_app(self, out, argv):
        """The runtime on a scenario without launch:, the app started by the
        session once boot wait is over; the runtime's report and the app."""
        sc = self.scenario(KCALC)
        rt = self.start_rt(["run", sc], out=out, env=self.runtime_env())
        ksr.wait_for_trace_event(out, lambda e: e.get("event") == "stage.end"
                                 and e.get("name") == "boot-wait", 60, proc=rt)
        app = self.session_app(argv)
        self.assertEqual(rt.wait(180), 0, rt.stderr[-3000:])
        return self.assertEvidence(out, "pass", "completed", rc=0, stderr=rt.stderr), app

    def test_qt5_app_the_session_starts_after_boot_joins(self):
        """Published at boot wait (the trace's a11y_bus event and the stage's
        note say so), kcalc started by the session afterwards is on the bus.
        Several fresh kcalc starts: without the property kcalc joins now and
        then (3 of 6 here on the code before), so one lucky start cannot pass."""
        address = self.a11y_address()
        for i in range(self.RUNS):
            out = self.out("run%d" % i)
            report, kcalc = self.run_with_session_app(out, ["kcalc"])
            acc = report["accessibility"]
            self.assertEqual(acc.get("status"), "ok", "run %d: %s" % (i, acc))
            self.assertEqual(acc["app"]["toolkit"], "Qt")
            self.assertEqual(acc["app"]["pid"], kcalc.pid)
            self.assertEqual(self.root_prop(), address)
            events = [e for e in ksr.read_trace(out) if e.get("event") == "a11y_bus"]
            if i == 0:
                self.assertEqual([e.get("published") for e in events], [address], events)
                self.assertEqual(events[0].get("stage"), "boot-wait")
                boot = ksr.stage(report, "boot-wait")
                self.assertIn("published the accessibility bus on the X root",
                              boot.get("reason"), boot)
            else:  # the property stays while the X server runs
                self.assertEqual(events, [])
            ksr.kill_group(kcalc)
            kcalc.wait(timeout=10)

    def test_a_root_that_names_a_bus_is_left_alone(self):
        """The root names the bus already (in another spelling, without the
        guid): the run leaves it as it was and records nothing."""
        own = self.a11y_address().split(",guid=")[0]
        subprocess.run(["xprop", "-root", "-f", "AT_SPI_BUS", "8s", "-set", "AT_SPI_BUS", own],
                       env=self.env(DISPLAY=self.display), check=True, timeout=10)
        out = self.out()
        report, _kcalc = self.run_with_session_app(out, ["kcalc"])
        self.assertEqual(report["accessibility"].get("status"), "ok", report["accessibility"])
        self.assertEqual(self.root_prop(), own)
        self.assertEqual([e for e in ksr.read_trace(out) if e.get("event") == "a11y_bus"], [])

    def test_qt5_app_started_before_the_run_is_named(self):
        """kcalc started by the session before the runtime (as an image's
        custom_startup.sh starts its app beside it), on a root with no
        AT_SPI_BUS: where it stayed off the bus (it may win the session-bus
        race now and then), the probe's reason opens with that cause."""
        sc = self.scenario(KCALC)
        for i in range(self.RUNS):
            kcalc = self.session_app(["kcalc"])
            ksr.wait_window_title(self, self.display, "KCalc", proc=kcalc)
            # a fresh root each time: the run before published the property
            subprocess.run(["xprop", "-root", "-remove", "AT_SPI_BUS"],
                           env=self.env(DISPLAY=self.display), check=True, timeout=10)
            out = self.out("run%d" % i)
            rc, _so, se, _t = self.run_rt(["run", sc], out=out, env=self.runtime_env(),
                                          timeout=180)
            acc = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)["accessibility"]
            if acc["status"] != "ok":
                self.assertEqual(acc["status"], "app-not-found", acc)
                self.assertRegex(acc["reason"], r"^the app \(pid %d\) is a Qt 5 app that "
                                 r"started [0-9.]+ s before this run published the "
                                 r"accessibility bus on the X root" % kcalc.pid)
            ksr.kill_group(kcalc)
            kcalc.wait(timeout=10)

    def gpicview_run(self, out, launch):
        sc = self.scenario("""\
launch: %s
process: ^gpicview$
window: Image Viewer
settle_s: 0.5
""" % launch)
        env = self.env(DISPLAY=self.display, DBUS_SESSION_BUS_ADDRESS=self.bus, GTK_MODULES=None,
                       NO_AT_BRIDGE=None)
        rc, _so, se, _t = self.run_rt(["run", sc], out=out, env=env, timeout=180)
        return self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)

    def test_gtk2_app_without_bridge_is_named_first(self):
        """gpicview (GTK 2) loads no bridge unless GTK_MODULES asks: the probe's
        reason opens with that and says what to set; set, it joins."""
        report = self.gpicview_run(self.out("plain"), "gpicview")
        acc = report["accessibility"]
        self.assertEqual(acc.get("status"), "app-not-found", acc)
        pid = report["app"]["pid"]
        self.assertTrue(acc["reason"].startswith(
            "the app (pid %d) is a GTK 2 app (libgtk-x11-2.0.so is mapped) with no "
            "accessibility bridge loaded" % pid), acc["reason"])
        self.assertIn("GTK_MODULES=gail:atk-bridge", acc["reason"])
        self.assertNotIn("Qt", acc["reason"])
        self.assertAppGone(["gpicview"])

        report = self.gpicview_run(self.out("modules"), "GTK_MODULES=gail:atk-bridge gpicview")
        acc = report["accessibility"]
        self.assertEqual(acc.get("status"), "ok", acc)
        self.assertEqual(acc["app"]["toolkit"], "GAIL")  # GTK 2's bridge names itself so
        self.assertAppGone(["gpicview"])

    def test_the_session_change_in_kasm_image_md(self):
        """The one line docs/kasm-image.md gives a session (after its X server
        and session bus are up) publishes the bus with no runtime: kcalc
        started after it is on the bus."""
        line = ('xprop -root -f AT_SPI_BUS 8s -set AT_SPI_BUS "$(dbus-send --session '
                '--print-reply --dest=org.a11y.Bus /org/a11y/bus org.a11y.Bus.GetAddress '
                '| sed -n \'s/.*string "\\(.*\\)"/\\1/p\')"')
        with open(ksr.SOURCE_DIR + "/docs/kasm-image.md") as f:
            self.assertIn(line, f.read(), "the doc gives this line")
        subprocess.run(["sh", "-c", line], env=self.env(DISPLAY=self.display,
                                                       DBUS_SESSION_BUS_ADDRESS=self.bus),
                       check=True, timeout=20)
        self.assertEqual(self.root_prop(), self.a11y_address())
        kcalc = self.session_app(["kcalc"])
        address = self.a11y_address()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the registry has no signal a shell can wait on
            if self.registered_name(address, kcalc.pid):
                return
            self.assertIsNone(kcalc.poll(), "kcalc exited")
            time.sleep(0.2)
        self.fail("kcalc did not register on the accessibility bus within 60 s")

    def registered_name(self, address, pid):
        """The bus name of the registered app whose PID is pid, or ""."""
        res = subprocess.run(["dbus-send", "--bus=" + address, "--print-reply",
                              "--dest=org.a11y.atspi.Registry", "/org/a11y/atspi/accessible/root",
                              "org.a11y.atspi.Accessible.GetChildren"],
                             capture_output=True, text=True, timeout=10)
        for name in re.findall(r'string "(:[0-9.]+)"', res.stdout):
            who = subprocess.run(["dbus-send", "--bus=" + address, "--print-reply",
                                  "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                                  "org.freedesktop.DBus.GetConnectionUnixProcessID",
                                  "string:" + name], capture_output=True, text=True, timeout=10)
            if ("uint32 %d" % pid) in who.stdout:
                return name
        return ""


if __name__ == "__main__":
    import unittest
    unittest.main()
