"""`validate`: every load-time rejection in docs/scenario.md is reported as
`file:line:col: message` naming the right line, exit 2; good scenarios exit 0.
`run` of a bad scenario still writes evidence (invalid-scenario)."""

import os
import re
import textwrap
import unittest

import ksr


class ValidateTest(ksr.KsrTestCase):
    needs_testapp = False

    def validate(self, *paths, env=None, timeout=30):
        rc, so, se, el = self.run_rt(["validate"] + list(paths), env=env, timeout=timeout)
        self.assertNoSanitizerReport(se)
        return rc, so, se, el

    def errors(self, stderr):
        """The `file:line:col: message` lines of stderr, parsed."""
        out = []
        for line in stderr.splitlines():
            m = ksr.ERROR_LINE_RE.match(line)
            if m:
                out.append((m.group("file"), int(m.group("line")), int(m.group("col")),
                            m.group("msg")))
        return out

    def reject(self, text, needle, *, also=(), msg_re=None, env=None, name="bad.yaml"):
        """Validate `text` (dedented); expect exit 2 and an error at the line
        holding `needle` (or at one of the lines holding the `also` needles,
        for rejections that may reasonably point at either). Returns errors."""
        path = self.scenario(textwrap.dedent(text), name)
        lines = {ksr.line_of(path, needle)} | {ksr.line_of(path, a) for a in also}
        rc, so, se, _ = self.validate(path, env=env)
        self.assertEqual(rc, 2, "validate should reject; stderr:\n%s" % se)
        self.assertEqual(so, "", "validate's stdout should stay clean")
        errs = self.errors(se)
        self.assertTrue(errs, "no `file:line:col: message` line on stderr:\n%s" % se)
        for f, _l, col, _m in errs:
            self.assertEqual(f, path, "errors must name the file as given")
            self.assertGreaterEqual(col, 1)
        hits = [e for e in errs if e[1] in lines]
        self.assertTrue(hits, "no error at line(s) %s; got:\n%s" % (sorted(lines), se))
        if msg_re:
            self.assertTrue(any(re.search(msg_re, e[3]) for e in hits),
                            "no error at line(s) %s matches %r; got:\n%s"
                            % (sorted(lines), msg_re, se))
        return errs

    # ---- good scenarios -------------------------------------------------

    def test_shipped_scenarios_are_valid(self):
        """Every scenario the integration tests use loads cleanly."""
        paths = sorted(os.path.join(ksr.SCENARIOS, n) for n in os.listdir(ksr.SCENARIOS)
                       if n.endswith(".yaml"))
        self.assertTrue(paths)
        env = self.env(KSR_TESTAPP=ksr.TESTAPP or "/usr/bin/true",
                       KSR_IT_FILE=os.path.join(self.tmp, "f.txt"))
        rc, so, se, _ = self.validate(*paths, env=env)
        self.assertEqual(rc, 0, se)
        self.assertEqual(self.errors(se), [])
        self.assertEqual(so, "")

    def test_full_grammar_is_valid(self):
        """A scenario using most of the grammar in docs/scenario.md loads."""
        path = self.scenario(textwrap.dedent("""\
            name: grammar-tour
            launch: ${KSR_IT_APP:-mousepad} --disable-server
            process: ^mousepad$
            process_cmdline: --disable-server
            window: Mousepad$
            window_class: ^mousepad$
            boot_timeout_s: 60
            launch_timeout_s: 60
            settle_s: 5
            keep_running: false
            atspi: true
            logs: [/tmp/mousepad.log]
            baseline_tolerance: 0.02
            baseline_mask: [[0.0, 0.95, 1.0, 0.05]]
            error_dialogs: ["(?i)error|crash|problem"]
            first_run_prompts: ["(?i)welcome|get started"]
            updaters: ["(?i)update available|updating"]
            targets:
              file_menu: [0.03, 0.04]
              ok: {at: [0.82, 0.91], window: "^Save As$"}
            steps:
              - key: ctrl+s
              - key: alt+F4 Return
              - type: "héllo wörld"
              - click: center
              - click: file_menu
              - click: "0.5 0.25"
              - click: [0.1, 0.2]
                target: window "^Save As$"
              - double_click: center
              - right_click: ok
              - scroll: down 3
              - click_element: /Save.*/
                role: push button
              - click_grounded: the blue Save button
                expect: a save dialog is showing
              - observe: the editor shows hello
              - wait_window: ^Save As$
                timeout_s: 10
              - shell: test -e /tmp
                timeout_s: 5
                checks:
                  - window: Mousepad
                  - no_window: ^Error$
                  - process: ^mousepad$
                  - file: /tmp/hello.txt
                  - shell: "true"
                  - state: "Bold checked"
                  - state: {name: Bold, role: toggle button, state: checked}
                  - element: /Open.*/
                  - screen: the text is bold
                    timeout_s: 2
              - sleep: 0.5
              - key: ctrl+q
                expect_state: "Bold checked"
            """))
        rc, so, se, _ = self.validate(path, env=self.env(KSR_IT_APP=None))
        self.assertEqual(rc, 0, se)
        self.assertEqual(self.errors(se), [])

    def test_cdp_grammar_is_valid(self):
        path = self.scenario(textwrap.dedent("""\
            name: cdp-tour
            launch: chromium --remote-debugging-port=9222
            process: ^chromium$
            window: Chromium$
            cdp: {port: 9222, host: 127.0.0.1}
            cdp_targets:
              search: "#q"
            steps:
              - cdp_navigate: https://example.org/
              - cdp_wait: search
                state: visible
              - cdp_click: search
              - cdp_type: {selector: search, text: hello}
              - cdp_fill: {selector: "input[name=q]", text: world}
              - cdp_press: Enter
              - cdp_eval: document.title.length > 0
                checks:
                  - page: {selector: "#q", text: world, url: example, title: Example}
            """))
        rc, so, se, _ = self.validate(path)
        self.assertEqual(rc, 0, se)

    def test_several_files_one_bad(self):
        good = ksr.scenario_path("xterm-pass.yaml")
        bad = self.scenario("name: x\nwindow: a\nbogus_key: 1\n", "bad.yaml")
        rc, so, se, _ = self.validate(good, bad)
        self.assertEqual(rc, 2, se)
        errs = self.errors(se)
        self.assertTrue(errs, se)
        self.assertEqual({e[0] for e in errs}, {bad}, "only the bad file has errors:\n" + se)
        self.assertEqual({e[1] for e in errs}, {3})

    def test_missing_file(self):
        rc, so, se, _ = self.validate(os.path.join(self.tmp, "nope.yaml"))
        self.assertEqual(rc, 2)
        self.assertIn("nope.yaml", se)

    # ---- each load-time rejection -----------------------------------------

    def test_unknown_key_did_you_mean(self):
        errs = self.reject("""\
            name: x
            lauch: xterm
            window: xterm
            """, "lauch:", msg_re=r"(?i)did you mean.*launch")

    def test_fixed_vocabularies_are_checked_at_load_time(self):
        """Key names and chords, state names and role names (issue #17): each
        typo is reported at its own line:col with the suggestion, exit 2."""
        path = self.scenario(textwrap.dedent("""\
            name: vocab
            launch: galculator
            window: Calc
            steps:
              - key: Retrun
              - key: ctrl+shft+s
              - cdp_press: "ctrl+a Entr"
              - cdp_press: ctl+Enter
              - click_element: "Paper Mode"
                role: pushbutton
                expect_state: "Paper Mode showng"
              - click_element: "1"
                checks:
                  - state: {name: "1", role: Check_Box, state: armd}
                  - text: {name: Display, role: txet, equals: "1"}
                  - text: {name: Display}
            """), "vocab.yaml")
        rc, so, se, _ = self.validate(path)
        self.assertEqual(rc, 2, se)
        errs = self.errors(se)
        want = [
            ("Retrun", 10, r"unknown key 'Retrun' in 'Retrun' \(did you mean 'Return'\?\)"),
            ("ctrl+shft+s", 10, r"unknown key 'shft' in 'ctrl\+shft\+s' \(did you mean 'shift'\?\)"),
            ("Entr", 16, r"cdp_press: unknown page key 'Entr' in 'Entr' \(did you mean 'Enter'\?\)"),
            ("ctl+Enter", 16, r"cdp_press: not a modifier: 'ctl' in 'ctl\+Enter' \(did you mean 'ctrl'\?\)"),
            ("role: pushbutton", 11, r"unknown accessibility role 'pushbutton' \(did you mean 'push button'\?\)"),
            ("showng", 19, r"unknown accessibility state 'showng' \(did you mean 'showing'\?\)"),
            ("armd", None, r"unknown accessibility state 'armd' \(did you mean 'armed'\?\)"),
            ("txet", None, r"unknown accessibility role 'txet' \(did you mean 'text'\?\)"),
            ("text: {name: Display}", None, r"text: needs equals:, contains: or matches:"),
        ]
        for needle, col, msg_re in want:
            line = ksr.line_of(path, needle)
            hits = [e for e in errs if e[1] == line and re.search(msg_re, e[3])]
            self.assertTrue(hits, "no error %r at line %d; got:\n%s" % (msg_re, line, se))
            if col is not None:
                self.assertEqual(hits[0][2], col, hits)
        self.assertEqual(len(errs), len(want), se)
        # run refuses it the same way, before anything is launched
        out = self.out()
        rc, _so, se, _ = self.run_rt(["run", path], out=out, env=self.env(DISPLAY=":99"))
        report = self.assertEvidence(out, "test-error", "invalid-scenario", rc=rc, stderr=se)
        self.assertIn("did you mean 'Return'", report["reason"])
        launch = ksr.stage(report, "launch")  # never reached: no stage ran
        self.assertTrue(launch is None or launch.get("status") != "ok", launch)

    def test_role_aliases_and_canonical_names_load(self):
        """The standard AT-SPI names and a toolkit's own (GTK 4's button) load."""
        path = self.scenario(textwrap.dedent("""\
            name: roles
            launch: x
            window: x
            steps:
              - click_element: "1"
                role: push button
              - click_element: "1"
                role: button
              - click_element: "1"
                role: Toggle_Button
              - click_element: "1"
                role: text box
                checks:
                  - text: {role: spin button, equals: "3"}
                  - text: {name: /Res/, matches: "^3"}
                  - state: {name: Bold, state: is default}
                  - state: "Bold is_default"
              - cdp_press: "ctrl+a shift+Tab Escape F5 x meta+ArrowLeft"
            """), "roles.yaml")
        rc, _so, se, _ = self.validate(path)
        self.assertEqual(rc, 0, se)

    def test_unknown_step_modifier_key(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - shell: "true"
                timeout: 3
            """, "timeout: 3")

    def test_duplicate_key(self):
        self.reject("""\
            name: x
            window: a
            settle_s: 1
            window: b
            """, "window: b", msg_re=r"(?i)duplicate")

    def test_duplicate_target_name(self):
        self.reject("""\
            name: x
            window: a
            targets:
              ok: [0.1, 0.1]
              ok: [0.2, 0.2]
            """, "ok: [0.2", msg_re=r"(?i)duplicate")

    def test_fraction_outside_range_in_target(self):
        self.reject("""\
            name: x
            window: a
            targets:
              file_menu: [1.5, 0.2]
            steps:
              - click: file_menu
            """, "file_menu: [1.5")

    def test_fraction_outside_range_in_click(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - sleep: 1
              - click: "0.5 -0.2"
            """, "click: \"0.5 -0.2\"")

    def test_fraction_outside_range_in_mask(self):
        self.reject("""\
            name: x
            window: a
            baseline_mask: [[0.0, 0.9, 1.0, 2.0]]
            """, "baseline_mask")

    def test_click_grounded_without_expect(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - sleep: 1
              - click_grounded: the blue Save button
            """, "click_grounded", msg_re=r"(?i)expect")

    def test_undeclared_target(self):
        self.reject("""\
            name: x
            window: a
            targets:
              file_menu: [0.1, 0.1]
            steps:
              - click: fiel_menu
            """, "fiel_menu")

    def test_target_named_center(self):
        self.reject("""\
            name: x
            window: a
            targets:
              center: [0.1, 0.1]
            """, "center: [0.1")

    def test_invalid_pattern_top_level(self):
        self.reject("""\
            name: x
            process: ^xterm$
            window: "([unclosed"
            """, "window:")

    def test_invalid_pattern_in_check(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - shell: "true"
                checks:
                  - window: "(?<bad"
            """, "(?<bad")

    def test_step_without_action(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - sleep: 1
              - timeout_s: 3
            """, "timeout_s: 3")

    def test_step_with_two_actions(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - sleep: 1
              - key: ctrl+s
                type: hello
            """, "key: ctrl+s", also=("type: hello",))

    def test_modifier_that_does_not_fit(self):
        self.reject("""\
            name: x
            window: a
            steps:
              - sleep: 1
                role: push button
            """, "role: push button", also=("sleep: 1",))

    def test_desktop_with_process(self):
        self.reject("""\
            name: x
            desktop: true
            process: ^xterm$
            """, "process:", also=("desktop:",))

    def test_desktop_with_window(self):
        self.reject("""\
            name: x
            desktop: true
            window: xterm
            """, "window:", also=("desktop:",))

    def test_unset_variable(self):
        env = self.env(KSR_IT_SURELY_UNSET=None)
        errs = self.reject("""\
            name: x
            window: a
            launch: ${KSR_IT_SURELY_UNSET} --flag
            """, "launch:", env=env, msg_re=r"KSR_IT_SURELY_UNSET")

    def test_variable_with_default_is_fine(self):
        path = self.scenario("name: x\nwindow: a\nlaunch: ${KSR_IT_SURELY_UNSET:-xterm}\n")
        rc, so, se, _ = self.validate(path, env=self.env(KSR_IT_SURELY_UNSET=None))
        self.assertEqual(rc, 0, se)

    def test_yaml_syntax_unclosed_flow(self):
        # the error points where the broken construct starts (the `[`), not at EOF
        self.reject("""\
            name: x
            window: a
            logs: [/tmp/a.log, /tmp/b.log
            settle_s: 1
            atspi: false
            """, "logs:")

    def test_yaml_syntax_unclosed_quote(self):
        self.reject("""\
            name: x
            window: "abc
            settle_s: 1

            atspi: false
            """, "window:")

    def test_yaml_syntax_bad_indentation(self):
        self.reject("""\
            name: x
            steps:
              - sleep: 1
             - sleep: 2
            """, "- sleep: 2", also=("name: x",))  # problem mark, or the mapping's start

    def test_wrong_type(self):
        self.reject("""\
            name: x
            window: a
            settle_s: soon
            """, "settle_s:")

    def test_alias_bomb(self):
        # a billion laughs: must be rejected quickly, with bounded output
        path = self.scenario(textwrap.dedent("""\
            name: bomb
            window: a
            logs: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
            updaters: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
            first_run_prompts: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
            error_dialogs: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
            baseline_mask: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
            targets: &f {a: *e, b: *e, c: *e, d: *e, e: *e, f: *e, g: *e, h: *e, i: *e}
            steps: &g [{shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}, {shell: *f}]
            plan: [*g, *g, *g, *g, *g, *g, *g, *g, *g]
            success: [*g, *g, *g, *g, *g, *g, *g, *g, *g]
            """))
        rc, so, se, el = self.validate(path, timeout=60)
        self.assertEqual(rc, 2, se[-2000:])
        self.assertLess(el, 30, "an alias bomb must not take long to reject")
        self.assertLess(len(se), 200000, "an alias bomb must not flood stderr")
        self.assertTrue(self.errors(se), se[-2000:])

    # ---- run of a bad scenario ------------------------------------------------

    def test_run_invalid_scenario_writes_evidence(self):
        path = self.scenario(textwrap.dedent("""\
            name: broken
            window: a
            settle_s: 1
            stepz:
              - sleep: 1
            """))
        line = ksr.line_of(path, "stepz:")
        out = self.out()
        rc, so, se, el = self.run_rt(["run", "--xvfb", path], out=out, timeout=60)
        self.assertNoSanitizerReport(se)
        report = self.assertEvidence(out, "test-error", "invalid-scenario", rc=rc, stderr=se)
        self.assertEqual(so, "")
        self.assertRegex(report["reason"], r"%s:%d:\d+" % (re.escape(os.path.basename(path)), line),
                         "the reason names file:line:col of the error")
        self.assertIn("%s:%d:" % (path, line), se, "stderr names the error too")


if __name__ == "__main__":
    unittest.main()
