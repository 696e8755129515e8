"""Evidence files in OUT are never written through a symbolic link (issue 31, item 6):
a link planted at launch.log's name, pointing outside OUT, is replaced (as report files
are), and the app's output lands in OUT's own launch.log. The runtime's own credentials
(model API keys, the MCP token) are not in the environment of the app or of shell steps
(issue 31, item 8, part)."""

import os
import textwrap
import unittest

import ksr


class TestEvidenceLinks(ksr.KsrTestCase):

    def test_planted_launch_log_link_is_replaced_not_followed(self):
        out = self.out()
        os.makedirs(out)
        outside = os.path.join(self.tmp, "outside.txt")
        with open(outside, "w") as f:
            f.write("untouched\n")
        os.symlink(outside, os.path.join(out, "launch.log"))
        rc, se = self.run_chatty_app(out, "planted-link")
        with open(outside) as f:
            self.assertEqual(f.read(), "untouched\n", "launch.log was written through the link")
        log = os.path.join(out, "launch.log")
        self.assertFalse(os.path.islink(log), "launch.log is still a link")
        with open(log) as f:
            self.assertIn("output-of-the-app", f.read())
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)


    def run_chatty_app(self, out, name):
        """`run` of the test app launched by a shell that prints a line first
        (into launch.log): (rc, stderr)."""
        path = self.scenario(textwrap.dedent("""\
            name: %s
            launch: sh -c 'echo output-of-the-app; exec "$KSR_TESTAPP"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            """ % name))
        rc, _so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                     env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=120)
        self.assertNoSanitizerReport(se)
        return rc, se

    def plant(self, out, name, kind):
        """A file outside OUT and, at OUT/name, a symbolic or hard link to it."""
        os.makedirs(out, exist_ok=True)
        outside = os.path.join(self.tmp, "outside-%s.txt" % name)
        with open(outside, "w") as f:
            f.write("untouched\n")
        (os.symlink if kind == "symlink" else os.link)(outside, os.path.join(out, name))
        return outside

    def assert_not_followed(self, out, name, outside):
        with open(outside) as f:
            self.assertEqual(f.read(), "untouched\n", "%s was written through the link" % name)
        path = os.path.join(out, name)
        self.assertFalse(os.path.islink(path), "%s is still a link" % name)
        self.assertEqual(os.stat(path).st_nlink, 1, "%s is still a hard link" % name)

    def test_planted_hard_link_at_launch_log_is_replaced(self):
        """A hard link is a regular file: appending to it would write the app's
        output into the file outside."""
        out = self.out()
        outside = self.plant(out, "launch.log", "hard")
        rc, se = self.run_chatty_app(out, "planted-hard-link")
        self.assert_not_followed(out, "launch.log", outside)
        with open(os.path.join(out, "launch.log")) as f:
            self.assertIn("output-of-the-app", f.read())
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)

    def run_spawn(self, out):
        path = self.scenario(textwrap.dedent("""\
            name: planted-spawn-log
            desktop: true
            settle_s: 0
            atspi: false
            steps:
              - spawn: {command: 'sh -c "echo output-of-the-tool; exec $KSR_TESTAPP --title \\"KSR Tool\\""', window: ^KSR Tool$}
            """))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=120)
        self.assertNoSanitizerReport(se)
        return rc, se

    def test_planted_links_at_spawn_log_are_replaced(self):
        for kind in ("symlink", "hard"):
            with self.subTest(kind=kind):
                out = self.out("out-" + kind)
                outside = self.plant(out, "spawn-01.log", kind)
                rc, se = self.run_spawn(out)
                self.assert_not_followed(out, "spawn-01.log", outside)
                with open(os.path.join(out, "spawn-01.log")) as f:
                    self.assertIn("output-of-the-tool", f.read())
                self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)

    def test_planted_link_at_a_shared_displays_session_log_is_replaced(self):
        """`run a.yaml b.yaml --xvfb` keeps the shared display's log in OUT; a link
        there to a file that does not exist would create it outside."""
        out = self.out()
        os.makedirs(out)
        outside = os.path.join(self.tmp, "created-outside.txt")
        os.symlink(outside, os.path.join(out, "session.log"))
        body = "name: {0}\ndesktop: true\nsettle_s: 0\natspi: false\nsteps:\n  - shell: 'true'\n"
        a = self.scenario(body.format("a"), "a.yaml")
        b = self.scenario(body.format("b"), "b.yaml")
        rc, so, se, _ = self.run_rt(["run", "--xvfb", a, b], out=out, timeout=180)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se)
        self.assertFalse(os.path.lexists(outside), "session.log was opened through the link")
        log = os.path.join(out, "session.log")
        self.assertFalse(os.path.islink(log), "session.log is still a link")
        self.assertTrue(os.path.isfile(log))

    def test_planted_link_at_inspects_out_file_is_replaced(self):
        out = self.out()
        outside = self.plant(out, "inspect.json", "symlink")
        rc, so, se, _ = self.run_rt(["inspect", "--xvfb", "--timeout", "60", "--out", out],
                                    timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, se)
        self.assert_not_followed(out, "inspect.json", outside)
        with open(os.path.join(out, "inspect.json")) as f:
            self.assertIn("windows", f.read())


class TestLaunchLogCap(ksr.KsrTestCase):

    def test_app_output_is_capped(self):
        """An app that writes 20 MiB: launch.log keeps the first
        KASM_RUNTIME_APP_LOG_MAX_BYTES (1 MiB here), says where it cut, and the report
        says so too; the app is not blocked by it (its window comes, the run passes)."""
        cap = 1024 * 1024
        out = self.out()
        path = self.scenario(textwrap.dedent("""\
            name: chatty-app
            launch: sh -c 'head -c 20971520 /dev/zero | tr "\\0" x; echo last-words; exec "$KSR_TESTAPP"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            """))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP,
                                                 KASM_RUNTIME_APP_LOG_MAX_BYTES=cap),
                                    timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        log = os.path.join(out, "launch.log")
        size = os.path.getsize(log)
        self.assertLess(size, cap + 4096, "launch.log is %d bytes" % size)
        with open(log, "rb") as f:
            data = f.read()
        self.assertEqual(data[:cap], b"x" * cap)
        self.assertIn(b"[kasm-session-runtime: output cut at %d bytes" % cap, data[cap:])
        self.assertNotIn(b"last-words", data)
        self.assertEqual(report["launch"].get("log_cut_at_bytes"), cap, report["launch"])

    def test_spawned_tools_output_cut_is_reported(self):
        """Desktop mode's spawn-NN.log is capped as launch.log is, and its cut is
        in the tool's report.json row and in report.md."""
        cap = 1024 * 1024
        out = self.out()
        path = self.scenario(textwrap.dedent("""\
            name: chatty-tool
            desktop: true
            settle_s: 0
            atspi: false
            steps:
              - spawn: {command: 'sh -c "head -c 3145728 /dev/zero; exec $KSR_TESTAPP --title \\"KSR Tool\\""', window: ^KSR Tool$, as: chatty}
            """))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP,
                                                 KASM_RUNTIME_APP_LOG_MAX_BYTES=cap),
                                    timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        with open(os.path.join(out, "spawn-01.log"), "rb") as f:
            data = f.read()
        self.assertEqual(data[:cap], b"\0" * cap)
        self.assertIn(b"output cut at %d bytes" % cap, data[cap:])
        self.assertEqual(len(report["tools"]), 1, report["tools"])
        row = report["tools"][0]
        self.assertEqual(row.get("log"), "spawn-01.log", row)
        self.assertEqual(row.get("log_cut_at_bytes"), cap, row)
        with open(os.path.join(out, "report.md")) as f:
            md = f.read()
        self.assertIn("spawn-01.log (tool chatty): cut at %d bytes" % cap, md)

    def test_output_under_the_cap_is_whole(self):
        out = self.out()
        path = self.scenario(textwrap.dedent("""\
            name: quiet-app
            launch: sh -c 'echo first; echo last-words >&2; exec "$KSR_TESTAPP"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            """))
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out,
                                    env=self.env(KSR_TESTAPP=ksr.TESTAPP), timeout=120)
        report = self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        with open(os.path.join(out, "launch.log")) as f:
            text = f.read()
        self.assertIn("first\nlast-words\n", text)
        self.assertNotIn("cut at", text)
        self.assertNotIn("log_cut_at_bytes", report["launch"])


class TestCredentialsNotInherited(ksr.KsrTestCase):

    def test_model_key_not_in_the_apps_or_shell_steps_environment(self):
        key = "sk-ksr-it-%s" % self.tag
        out = self.out()
        path = self.scenario(textwrap.dedent("""\
            name: no-inherited-key
            launch: sh -c 'tr "\\0" "\\n" < /proc/$$/environ; exec "$KSR_TESTAPP"'
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            steps:
              - shell: env
            """))
        env = self.env(KSR_TESTAPP=ksr.TESTAPP, KASM_RUNTIME_MODEL_API_KEY=key,
                       KASM_RUNTIME_JUDGE_API_KEY=key + "-judge",
                       KASM_RUNTIME_MCP_TOKEN=key + "-mcp")
        rc, so, se, _ = self.run_rt(["run", "--xvfb", path], out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
        with open(os.path.join(out, "launch.log")) as f:
            log = f.read()
        self.assertIn("KSR_TESTAPP=", log, "the app's environment was dumped")
        self.assertNotIn(key, log, "a credential in the app's environment")
        found = []
        for rel in ksr.list_files(out):
            with open(os.path.join(out, rel), "rb") as f:
                if key.encode() in f.read():
                    found.append(rel)
        self.assertEqual(found, [], "a credential in OUT")
        self.assertNotIn(key, so + se)


    def test_model_key_not_in_the_private_sessions_environment(self):
        """Xvfb, the window manager, dbus-daemon and what D-Bus starts (the
        accessibility bus and registry) are the runtime's children too: none has
        the key in /proc/PID/environ."""
        key = "sk-ksr-it-%s" % self.tag
        out = self.out()
        path = self.scenario(textwrap.dedent("""\
            name: session-env
            launch: ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            steps:
              - sleep: 60
            """))
        env = self.env(KSR_TESTAPP=ksr.TESTAPP, KASM_RUNTIME_MODEL_API_KEY=key)
        rt = self.start_rt(["run", "--xvfb", path], out=out, env=env)
        try:
            ksr.wait_for_trace_event(out, ksr.in_stage("steps"), timeout=90, proc=rt)
            servers = {"Xvfb", "Xtigervnc", "Xvnc"}
            wms = {"openbox", "xfwm4"}
            seen, leaking = set(), []
            for pid, name in ksr.tagged_pids(self.tag):
                if name == "ksr-testapp" or pid == rt.pid:
                    continue  # the app: its own test; the runtime has the key
                seen.add(name)
                try:
                    with open("/proc/%d/environ" % pid, "rb") as f:
                        if key.encode() in f.read():
                            leaking.append(name)
                except OSError:
                    pass
            self.assertTrue(seen & servers and seen & wms and "dbus-daemon" in seen, seen)
            self.assertEqual(leaking, [], "the key is in these processes' environment")
        finally:
            rt.kill()


class TestSecrets(ksr.KsrTestCase):

    def run_secret(self, extra_env, yaml_secrets):
        value = "hunter2-%s" % self.tag[:12]
        out = self.out()
        junit = os.path.join(self.tmp, "junit.xml")
        path = self.scenario(textwrap.dedent("""\
            name: secret-run
            %s
            launch: env KSR_IT_S=${KSR_IT_SECRET} ${KSR_TESTAPP}
            process: ^ksr-testapp$
            window: ^KSR Test App$
            settle_s: 0
            atspi: false
            steps:
              - shell: echo the value is ${KSR_IT_SECRET}
              - shell: echo ${KSR_IT_SECRET} again; exit 3
            """ % yaml_secrets))
        env = self.env(KSR_TESTAPP=ksr.TESTAPP, KSR_IT_SECRET=value, **extra_env)
        rc, so, se, _ = self.run_rt(["run", "--xvfb", "--json", "--junit", junit, path],
                                    out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        self.assertNotEqual(rc, 0, "the failing shell step fails the run")
        texts = {"stdout": so, "stderr": se}
        for rel in ksr.list_files(out):
            with open(os.path.join(out, rel), "rb") as f:
                texts[rel] = f.read().decode("utf-8", "replace")
        with open(junit, encoding="utf-8") as f:
            texts["junit.xml"] = f.read()
        leaks = sorted(name for name, text in texts.items() if value in text)
        self.assertEqual(leaks, [], "the secret's value is in these outputs")
        for name in ("trace.jsonl", "report.json", "stdout"):
            self.assertIn("[secret KSR_IT_SECRET]", texts[name], name)

    def test_scenario_secrets_key(self):
        self.run_secret({}, "secrets: [KSR_IT_SECRET]")

    def test_secrets_from_the_environment(self):
        self.run_secret({"KASM_RUNTIME_SECRETS": "OTHER,KSR_IT_SECRET"}, "")

    def test_secret_expected_by_a_failing_text_check(self):
        """The issue's own example: a `text:` check whose expected text is ${VAR}
        fails, and its reason (stderr, report.*, JUnit, the trace) names it. The
        window title holds the value too (so the accessibility tree, atspi.json,
        does), and a `logs:` file that holds it is copied as log-1.txt."""
        value = "hunter2-%s" % self.tag[:12]
        out = self.out()
        junit = os.path.join(self.tmp, "junit.xml")
        applog = os.path.join(self.tmp, "app.log")
        with open(applog, "w") as f:
            f.write("the password is %s\n" % value)
        path = self.scenario(textwrap.dedent("""\
            name: secret-check
            secrets: [KSR_IT_SECRET]
            launch: ${KSR_TESTAPP} --title "KSR ${KSR_IT_SECRET}"
            process: ^ksr-testapp$
            window: ^KSR
            settle_s: 0
            logs: [%s]
            steps:
              - sleep: 0
                checks:
                  - text: {name: /^Pressed/, role: label, equals: "${KSR_IT_SECRET}"}
                    timeout_s: 1
            """ % applog))
        env = self.env(KSR_TESTAPP=ksr.TESTAPP, KSR_IT_SECRET=value)
        rc, so, se, _ = self.run_rt(["run", "--xvfb", "--json", "--junit", junit, path],
                                    out=out, env=env, timeout=120)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertIn("[secret KSR_IT_SECRET]", report["reason"])
        texts = {"stdout": so, "stderr": se}
        for rel in ksr.list_files(out):
            with open(os.path.join(out, rel), "rb") as f:
                texts[rel] = f.read().decode("utf-8", "replace")
        with open(junit, encoding="utf-8") as f:
            texts["junit.xml"] = f.read()
        for name in ("atspi.json", "log-1.txt"):
            self.assertIn(name, texts, sorted(texts))
            self.assertIn("[secret KSR_IT_SECRET]", texts[name], name)
        leaks = sorted(name for name, text in texts.items() if value in text)
        self.assertEqual(leaks, [], "the secret's value is in these outputs")

    def test_a_short_secret_is_refused(self):
        path = self.scenario("name: short\nsecrets: [KSR_IT_SHORT]\nlaunch: true\n"
                             "process: ^x$\n")
        rc, so, se, _ = self.run_rt(["validate", path], env=self.env(KSR_IT_SHORT="abc"))
        self.assertEqual(rc, 2, so + se)
        self.assertIn("KSR_IT_SHORT", so + se)
        self.assertIn("shorter than 4", so + se)


if __name__ == "__main__":
    unittest.main()
