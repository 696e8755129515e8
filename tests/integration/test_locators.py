"""Issue #32, items 1, 2 and 7, against real apps on the runtime's own AT-SPI bus:
controls without a usable name are reached by label (AT-SPI label-for), by an
ancestor and by their place among the matches; FileZilla's unnamed message log
(wxWidgets on GTK 3) is read by its ancestor; a Qt label's text is read from
its name and the row says so; a bad locator is refused at load time with its
line and column; `no_element:` waits for FileZilla's welcome dialog to go, and
fails naming the control when it stays. Nothing is mocked."""

import json
import os
import shutil
import socket
import unittest

import ksr

QT_ENV = {"QT_LINUX_ACCESSIBILITY_ALWAYS_ON": "1", "QT_ACCESSIBILITY": "1"}


def checks_of(report):
    return [c for s in report["steps"] for c in s.get("checks", [])]


def closed_port():
    """A localhost TCP port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class TestLocators(ksr.KsrTestCase):
    def need(self, binary):
        if not shutil.which(binary):
            self.fail("%s is not installed (scripts/setup.sh test)" % binary)

    def filezilla_env(self):
        # A home of its own: FileZilla shows its welcome dialog on a first start.
        home = os.path.join(self.tmp, "home")
        os.makedirs(home, exist_ok=True)
        return self.env(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"))

    def filezilla_head(self):
        return """\
launch: filezilla ftp://127.0.0.1:%d
process: ^filezilla$
window: " - FileZilla$"
settle_s: 2
first_run_prompts: []
""" % closed_port()

    def test_filezilla_log_by_ancestor_and_welcome_by_label(self):
        """The welcome dialog's OK is the control its last label labels; the
        unnamed log is the text inside a scroll pane; the Host field is the
        text its label labels. Before: label:, in: and no_element: were
        unknown keys (invalid-scenario)."""
        self.need("filezilla")
        sc = self.scenario(self.filezilla_head() + """\
steps:
  - click_element: {label: "/You can always open this dialog again/"}
    checks:
      - no_element: "Welcome to FileZilla"
        timeout_s: 10
  - sleep: 0
    checks:
      - text: {in: {role: scroll pane}, role: text, contains: "ECONNREFUSED"}
        timeout_s: 30
      - element: {label: "Host:", role: text}
      - text: {label: "Host:", equals: ""}
      - state: {label: "Port:", state: showing}
      - text: {role: text, contains: "ECONNREFUSED"}
        timeout_s: 1
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(),
                                      env=self.filezilla_env(), timeout=240)
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        s1 = report["steps"][0]
        self.assertEqual(s1["status"], "ok", s1)
        self.assertEqual((s1["element"]["role"], s1["element"]["name"]), ("push button", "OK"))
        got = checks_of(report)
        self.assertEqual(got[0]["status"], "held", got[0])
        self.assertIn("no control fits name \"Welcome to FileZilla\"", got[0]["detail"])
        log = got[1]
        self.assertEqual(log["status"], "held", log)
        self.assertEqual(log["read"], "text")
        self.assertIn("ECONNREFUSED", log["detail"])
        self.assertEqual([c["status"] for c in got[2:5]], ["held"] * 3, got)
        # Without a locator the first showing text is still the Host field,
        # as the issue found: the message says what it read instead.
        self.assertEqual(got[5]["status"], "failed", got[5])
        self.assertIn('the text of text "" is ""', got[5]["detail"])

    def test_inspect_lists_the_unnamed_log_with_a_locator_that_reads_it(self):
        """inspect lists FileZilla's unnamed log, marks that it offers text and
        prints the shortest locator that finds it alone; that locator, replayed
        in a text: check, reads the log. Before: the log was not listed at all."""
        self.need("filezilla")
        port = closed_port()
        env = self.filezilla_env()
        rc, so, se, _t = self.run_rt(
            ["inspect", "--xvfb", "--json", "--timeout", "90", "--launch",
             "filezilla ftp://127.0.0.1:%d" % port, "--wait-window", " - FileZilla$"],
            env=env, timeout=240)
        self.assertEqual(rc, 0, se)
        doc = json.loads(so)
        apps = [a for a in doc["accessibility"]["apps"] if a.get("name") == "filezilla"]
        self.assertTrue(apps, doc["accessibility"])
        logs = [c for c in apps[0]["controls"]
                if c["role"] == "text" and c["name"] == "" and "multi line" in c["states"]]
        self.assertEqual(len(logs), 1, [c["path"] for c in logs])
        log = logs[0]
        self.assertEqual(log["reads"], "text")
        locator = log["reach"]["locator"]
        self.assertEqual(log["line"], "click_element: " + locator)
        hosts = [c for c in apps[0]["controls"] if c["role"] == "text" and
                 c.get("reach", {}) and c["reach"].get("locator") == '{label: "Host:"}']
        self.assertEqual(len(hosts), 1)
        # Replayed: the printed locator reads the log.
        loc = locator[1:-1]  # the flow mapping's entries
        sc = self.scenario("""launch: filezilla ftp://127.0.0.1:%d
process: ^filezilla$
window: " - FileZilla$"
settle_s: 2
first_run_prompts: []
steps:
  - sleep: 0
    checks:
      - text: {%s, contains: "ECONNREFUSED"}
        timeout_s: 30
""" % (port, loc))
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(), env=env,
                                      timeout=240)
        report = self.assertEvidence(self.out(), "pass-with-concerns", "completed", rc=rc,
                                     stderr=se)
        self.assertEqual(checks_of(report)[0]["status"], "held")

    def test_label_without_relations_labels_the_field_on_its_row(self):
        """zenity's form (GTK 3) sets no label relations, and its grid lists each
        row's field before its label: the label labels the field on its row, to
        its right, as a person reads the form. Before: label: was an unknown key."""
        self.need("zenity")
        sc = self.scenario("""\
launch: zenity --forms --title Trip --text "Where to" --add-entry=Name --add-entry=City
process: ^zenity$
window: ^Trip$
settle_s: 1
steps:
  - key: Tab
  - type: Lyon
    checks:
      - text: {label: City, equals: Lyon}
      - text: {label: Name, role: text, equals: ""}
      - no_element: {label: Country}
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        self.assertNoSanitizerReport(se)
        self.assertEqual([c["status"] for c in checks_of(report)], ["held"] * 3)

    def test_no_element_fails_when_the_dialog_stays(self):
        """no_element: polls for its timeout and names what is still there.
        Before: an unknown check kind (invalid-scenario)."""
        self.need("filezilla")
        sc = self.scenario(self.filezilla_head() + """\
steps:
  - sleep: 0
    checks:
      - no_element: {name: OK, in: "Welcome to FileZilla"}
        timeout_s: 1.5
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(),
                                      env=self.filezilla_env(), timeout=240)
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        c = checks_of(report)[0]
        self.assertEqual(c["status"], "failed", c)
        self.assertIn('the push button "OK"', c["detail"])
        self.assertIn("is still there", c["detail"])
        self.assertIn("(after 1.5 s)", c["detail"])

    def test_nth_among_matches(self):
        """nth: counts the controls that fit in reading order: ksr-testapp's
        push buttons. Before: nth: was an unknown key."""
        sc = self.scenario("""\
launch: %s
window: KSR Test App
settle_s: 0.2
steps:
  - sleep: 0
    checks:
      - element: {role: push button, nth: 1}
      - state: {role: push button, nth: 1, state: showing}
      - element: {role: push button, nth: 99}
        timeout_s: 0.5
""" % ksr.TESTAPP)
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out())
        report = self.assertEvidence(self.out(), "app-failed", "check-failed", rc=rc, stderr=se)
        got = checks_of(report)
        self.assertEqual([c["status"] for c in got], ["held", "held", "failed"], got)
        self.assertRegex(got[2]["detail"],
                         r'only \d+ controls? fit role "push button" in .*, not 99')

    def test_qt_label_text_is_its_name(self):
        """FeatherPad's status label (Qt 5: "Encoding: UTF-8   Lines: 3 ...")
        offers no Text interface: text: reads its name, live, and the row says
        read: name. Before: "the label offers
        neither text (AT-SPI Text) nor a value"."""
        self.need("featherpad")
        sc = self.scenario("""\
launch: featherpad
process: ^featherpad$
window: Untitled|FeatherPad
settle_s: 1
steps:
  - type: one
  - key: Return
  - type: two
  - key: Return
    checks:
      - text: {role: label, contains: "Lines: 3"}
        timeout_s: 10
""")
        rc, _so, se, _t = self.run_rt(["run", "--xvfb", sc], out=self.out(),
                                      env=self.env(**QT_ENV))
        report = self.assertEvidence(self.out(), "pass", "completed", rc=rc, stderr=se)
        c = checks_of(report)[0]
        self.assertEqual((c["status"], c["read"]), ("held", "name"), c)
        self.assertIn('the name of label "', c["detail"])

    def test_bad_locator_is_refused_at_load_time(self):
        """Each mistake at its line and column. Before: 'unknown key' for
        every one of them, and no_element was no check kind."""
        sc = self.scenario("""\
process: x
steps:
  - click_element: {label: "Host:", nth: 0}
  - click_element: {lable: "Host:"}
    checks:
      - no_element: {in: {role: pannel}}
      - text: {in: {}, contains: x}
""")
        rc, _so, se, _t = self.run_rt(["validate", sc])
        self.assertEqual(rc, 2, se)
        self.assertIn("scenario.yaml:3:42: click_element nth: 0 is outside 1..10000", se)
        self.assertIn("scenario.yaml:4:21: unknown key 'lable' in click_element "
                      "(did you mean 'label'?)", se)
        self.assertIn("scenario.yaml:6:33: no_element in: unknown accessibility role "
                      "'pannel'", se)
        self.assertIn("scenario.yaml:7:20: text in: needs name: or role:", se)


if __name__ == "__main__":
    unittest.main()
