"""The scenario library (issue #11): every scenarios/*.yaml runs on the
runtime's own embedded display (--xvfb: Xvfb + openbox + D-Bus + AT-SPI) with
the real app from Debian and must end pass or pass-with-concerns, exit 0, with
complete evidence valid against the report schema, and leave none of its
processes behind.

One test method per library scenario, generated from the folder, so a new
scenario file is tested without touching this file. Each run is bounded twice:
KASM_RUNTIME_DEADLINE_S for the runtime, and a wall-clock timeout here after
which the process group is killed and the test fails.

A scenario is skipped only when its app is missing AND apt has no candidate
for its package (genuinely not installable on this machine), with a loud
message on stderr. A missing app that apt could install is a failure: run
`scripts/setup.sh deps`."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import unittest

import ksr

LIBRARY = os.path.join(ksr.SOURCE_DIR, "scenarios")

# What each scenario's app needs: the executables, and the Debian packages
# scripts/setup.sh installs for them. A library scenario missing here fails
# test_every_scenario_is_known, so the map cannot fall behind the folder.
APPS = {
    "demo-xterm": (["xterm"], ["xterm"]),
    "terminal-xterm": (["xterm"], ["xterm"]),
    "mousepad": (["mousepad"], ["mousepad"]),
    "chromium": (["chromium"], ["chromium"]),
    "firefox-esr": (["firefox-esr"], ["firefox-esr"]),
    "libreoffice-writer": (["soffice", "python3"], ["libreoffice-writer"]),
    "inkscape": (["inkscape"], ["inkscape"]),
    "desktop-tools": (["xterm", "mousepad", "zenity"], ["xterm", "mousepad", "zenity"]),
}

# What each scenario must end with, written down from what it does (never read
# from the run): every one passes with no concern; these stages are skipped and
# every other one is ok. Why skipped: no plan:/goal: anywhere; browser-attach
# only for a CDP scenario; the probe where atspi: false, in desktop mode, and
# for xterm (no accessibility bridge: the probe finds no app); desktop mode
# has no app to launch, wait for or check at the end.
NO_AGENT = {"plan", "goal-loop"}
EXPECTED = {
    "demo-xterm": ("pass", [], NO_AGENT | {"browser-attach", "accessibility-probe"}),
    "terminal-xterm": ("pass", [], NO_AGENT | {"browser-attach", "accessibility-probe"}),
    "mousepad": ("pass", [], NO_AGENT | {"browser-attach"}),
    "chromium": ("pass", [], NO_AGENT),
    "firefox-esr": ("pass", [], NO_AGENT | {"browser-attach"}),
    "libreoffice-writer": ("pass", [], NO_AGENT | {"browser-attach", "accessibility-probe"}),
    "inkscape": ("pass", [], NO_AGENT | {"browser-attach", "accessibility-probe"}),
    "desktop-tools": ("pass", [], NO_AGENT | {"browser-attach", "accessibility-probe", "launch",
                                              "app-wait", "final-checks"}),
}

# Run bounds: the runtime's own deadline, and this test's wall clock (the
# deadline plus room for the sanitizer build's start and the report).
DEADLINE_S = 150
WALL_S = DEADLINE_S + 60


def library():
    return sorted(glob.glob(os.path.join(LIBRARY, "*.yaml")))


def installable(package):
    """True when apt knows a candidate version for package."""
    try:
        res = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    m = re.search(r"Candidate:\s*(\S+)", res.stdout)
    return bool(m) and m.group(1) != "(none)"


class ScenarioLibraryTest(ksr.KsrTestCase):
    needs_testapp = False

    def test_every_scenario_is_known(self):
        names = [os.path.splitext(os.path.basename(p))[0] for p in library()]
        self.assertIn("demo-xterm", names, "the README demo scenario is gone")
        unknown = [n for n in names if n not in APPS]
        self.assertEqual(unknown, [], "library scenarios without an entry in APPS")
        stale = [n for n in APPS if n not in names]
        self.assertEqual(stale, [], "APPS names scenarios that no longer exist")
        self.assertEqual(sorted(EXPECTED), sorted(APPS), "every scenario's outcome is written down")

    def test_every_scenario_validates(self):
        rc, so, se, _ = self.run_rt(["validate"] + library(), timeout=60)
        self.assertEqual(rc, 0, "validate failed:\n%s%s" % (so, se))
        self.assertNoSanitizerReport(se)

    def test_every_scenario_says_why_its_rung(self):
        """Each library scenario opens with a comment that names its rungs."""
        for path in library():
            with open(path, encoding="utf-8") as f:
                head = "".join(line for line in f if line.startswith("#"))
            if os.path.basename(path) == "demo-xterm.yaml":
                continue  # the README demo uses only a shell step: it acts on nothing
            self.assertRegex(head, r"(?i)\brungs?\b", "%s: no comment on the rung" % path)

    def test_troubleshooting_covers_every_outcome(self):
        """docs/troubleshooting.md has a section for every outcome word and a
        row for every concern code (the lists the report schema allows)."""
        with open(os.path.join(ksr.SOURCE_DIR, "docs", "troubleshooting.md"),
                  encoding="utf-8") as f:
            text = f.read()
        headings = re.findall(r"^#+ `([a-z-]+)`", text, re.M)
        self.assertEqual(sorted(set(headings)), sorted(ksr.OUTCOMES))
        schema, _ = ksr.load_schema()
        dump = json.dumps(schema)
        for code in ("first-run-prompt", "updater", "baseline-drift", "unexpected-dialog",
                     "unverified-click", "unconfirmed-claim", "model-unreachable",
                     "crash-signature"):
            self.assertIn('"%s"' % code, dump, "concern %s not in the report schema" % code)
            self.assertRegex(text, r"(?m)^\| `%s` \|" % re.escape(code))

    def test_newcomer_docs_links_resolve(self):
        """Every relative link in the newcomer docs names a file that exists
        (and, with #anchor, a heading in it)."""
        docs = os.path.join(ksr.SOURCE_DIR, "docs")
        for page in ("index.md", "ladder.md", "troubleshooting.md", "kasm-image.md"):
            with open(os.path.join(docs, page), encoding="utf-8") as f:
                links = re.findall(r"\]\(([^)#\s]+)(#[^)\s]+)?\)", f.read())
            self.assertTrue(links, page)
            for target, anchor in links:
                if re.match(r"[a-z]+:", target):
                    continue
                path = os.path.normpath(os.path.join(docs, target))
                self.assertTrue(os.path.exists(path), "%s links to missing %s" % (page, target))
                if anchor:
                    with open(path, encoding="utf-8") as f:
                        slugs = {re.sub(r"[^a-z0-9 -]", "", h.strip().lower()).replace(" ", "-")
                                 for h in re.findall(r"^#+ (.+)$", f.read(), re.M)}
                    self.assertIn(anchor[1:], slugs, "%s: no heading %s in %s"
                                  % (page, anchor, target))

    def run_library_scenario(self, name):
        path = os.path.join(LIBRARY, name + ".yaml")
        exes, packages = APPS[name]
        missing = [e for e in exes if not shutil.which(e)]
        if missing:
            absent = [p for p in packages if not installable(p)]
            if absent:
                msg = ("SKIPPED scenario %s: %s not installed and apt has no candidate for %s"
                       % (name, ", ".join(missing), ", ".join(absent)))
                print("\n" + "!" * 72 + "\n" + msg + "\n" + "!" * 72, file=sys.stderr)
                ksr.skip_unless_installable(self, msg)
            self.fail("scenario %s needs %s: install %s (scripts/setup.sh deps)"
                      % (name, ", ".join(missing), " ".join(packages)))
        baseline = None
        with open(path, encoding="utf-8") as f:
            m = re.search(r"^baseline:\s*(\S+)", f.read(), re.M)
        if m:
            baseline = os.path.join(LIBRARY, m.group(1))
            self.assertTrue(os.path.isfile(baseline), "committed baseline missing: " + baseline)
            with open(baseline, "rb") as f:
                before = f.read()
        out = self.out()
        # TMPDIR: the scenarios keep their files and profiles under it, so
        # this run's are its own and go with the test's folder.
        env = self.env(TMPDIR=self.tmp, KSR_SCENARIOS=LIBRARY,
                       KASM_RUNTIME_DEADLINE_S=DEADLINE_S)
        rc, _so, se, elapsed = self.run_rt(["run", "--xvfb", path], env=env, out=out,
                                           timeout=WALL_S)
        print("\nscenario %s: %.1f s" % (name, elapsed), file=sys.stderr)
        self.assertNoSanitizerReport(se)
        verdict, concerns, skipped = EXPECTED[name]
        report = self.assertEvidence(out, verdict, "completed", rc=rc, stderr=se)
        self.assertEqual([c.get("code") for c in report.get("concerns", [])], concerns,
                         report.get("concerns"))
        ksr.assert_full_stages(report)
        self.assertEqual({st["name"]: st["status"] for st in report["stages"]
                          if st["name"] != "diagnosis"},
                         {n: "skipped" if n in skipped else "ok" for n in ksr.STAGES})
        self.assertGreater(len(report["steps"]), 0, "the scenario ran no step")
        self.assertTrue(all(s["status"] == "ok" for s in report["steps"]), report["steps"])
        if baseline:
            # compared, not rewritten: the committed file is unchanged, no
            # candidate was written, and the comparison found no drift
            with open(baseline, "rb") as f:
                self.assertEqual(f.read(), before, "the run rewrote the committed baseline")
            self.assertFalse(os.path.exists(os.path.join(out, "baseline-candidate.png")))
            codes = [c.get("code") for c in report.get("concerns", [])]
            self.assertNotIn("baseline-drift", codes, report.get("concerns"))
        left = ksr.wait_tagged_gone(self.tag, timeout=15)
        self.assertEqual(left, [], "processes left after scenario %s: %r" % (name, left))
        return report


def _make(name):
    def test(self):
        self.run_library_scenario(name)
    test.__doc__ = "scenarios/%s.yaml passes on the embedded display" % name
    return test


for _path in library():
    _name = os.path.splitext(os.path.basename(_path))[0]
    setattr(ScenarioLibraryTest, "test_scenario_" + re.sub(r"\W", "_", _name), _make(_name))


if __name__ == "__main__":
    unittest.main()
