"""The runtime as an unprivileged user, as Kasm images run it (kasm-user): the
test-app scenario with --xvfb under `ksr-user`, evidence owned by that user.
(ASan builds work as non-root too; nothing here needs privileges.)"""

import os
import pwd
import shutil
import subprocess
import unittest

import ksr

USER = "ksr-user"
APP = "ksr-testapp"


def ensure_user():
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        pass
    res = subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", USER],
                         capture_output=True, timeout=30)
    # 9: created meanwhile by a parallel test
    if res.returncode not in (0, 9):
        raise AssertionError("useradd failed: %s" % res.stderr.decode("utf-8", "replace"))
    return pwd.getpwnam(USER)


class RunUnprivilegedTest(ksr.KsrTestCase):

    def setUp(self):
        if os.geteuid() != 0:  # the project's CI runs as root: there this fails
            ksr.skip_unless_installable(
                self, "needs root to create %s and switch to it (run the suite as root)" % USER)
        super().setUp()

    def as_user(self, *cmd, env=None):
        return ["setpriv", "--reuid=%s" % USER, "--regid=%s" % USER, "--init-groups"] + list(cmd)

    def user_can_run(self, path, env):
        res = subprocess.run(self.as_user("test", "-x", path), env=env, timeout=30)
        return res.returncode == 0

    def test_testapp_passes_as_unprivileged_user(self):
        pw = ensure_user()
        self.assertNotEqual(pw.pw_uid, 0)
        os.chmod(self.tmp, 0o755)
        home = os.path.join(self.tmp, "home")
        out = os.path.join(self.tmp, "out")
        for d in (home, out):
            os.mkdir(d, 0o755)
            os.chown(d, pw.pw_uid, pw.pw_gid)
        # X servers expect /tmp/.X11-unix to exist (the system makes it at boot)
        if not os.path.isdir("/tmp/.X11-unix"):
            try:
                os.mkdir("/tmp/.X11-unix")
                os.chmod("/tmp/.X11-unix", 0o1777)
            except FileExistsError:
                pass

        env = self.env(HOME=home, USER=USER, LOGNAME=USER, XDG_RUNTIME_DIR=None,
                       XDG_CONFIG_HOME=None, XDG_DATA_HOME=None, XDG_CACHE_HOME=None,
                       DBUS_SESSION_BUS_ADDRESS=None)
        # the build tree may not be reachable by the user: copy what it needs
        binary, app = ksr.BIN, ksr.TESTAPP
        if not (self.user_can_run(binary, env) and self.user_can_run(app, env)):
            bindir = os.path.join(self.tmp, "bin")
            os.mkdir(bindir, 0o755)
            binary = shutil.copy2(ksr.BIN, os.path.join(bindir, "kasm-session-runtime"))
            app = shutil.copy2(ksr.TESTAPP, os.path.join(bindir, APP))
            for p in (binary, app):
                os.chmod(p, 0o755)
        scenario = shutil.copy2(ksr.scenario_path("testapp-pass.yaml"),
                                os.path.join(self.tmp, "testapp-pass.yaml"))
        os.chmod(scenario, 0o644)
        env["KSR_TESTAPP"] = app

        cmd = self.as_user(binary, "run", "--xvfb", "--out", out, scenario)
        rc, so, se = ksr.run_as_user(self, cmd, env, home, "the unprivileged run")
        self.assertNoSanitizerReport(se)
        self.assertEqual(so, "")
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        ksr.assert_full_stages(report)
        self.assertTrue(os.path.exists(os.path.join(out, "00-first-look.png")))
        for rel in ksr.list_files(out):
            st = os.stat(os.path.join(out, rel))
            self.assertEqual(st.st_uid, pw.pw_uid, "%s is owned by %s" % (rel, USER))
        self.assertAppGone(None)


if __name__ == "__main__":
    unittest.main()
