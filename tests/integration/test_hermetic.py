"""The tests' fonts hold whatever the machine has (docs/design.md#tests-are-hermetic).

Every process a test starts gets FONTCONFIG_FILE=tests/data/fontconfig/fonts.conf
(ksr.clean_env): only the fonts scripts/setup.sh installs. A machine with more
fonts (fonts-noto-core and -mono, as a Kasm XFCE desktop has) resolves
Monospace to Noto Sans Mono under its own configuration, which grows an xterm
and drifts committed baselines.

Each test plants an extra font the way a package or a user would (a font file
in a folder the system configuration scans, and a rule that prefers it for
monospace, as fontconfig's 60-latin.conf prefers Noto), shows that the
machine's own configuration picks it, and that the tests' does not: so the
test fails if the tests' configuration ever lets an extra font in. The last
test does it through the runtime: the app it launches gets the tests' fonts.
"""

import os
import re
import struct
import subprocess
import textwrap
import unittest
from unittest import mock
import xml.etree.ElementTree as ET

import ksr

DEJAVU = "/usr/share/fonts/truetype/dejavu"
PLANTED = "KSR Planted Mono"
GENERICS = {"Monospace": "DejaVu Sans Mono", "Sans": "DejaVu Sans", "Serif": "DejaVu Serif",
            "monospace": "DejaVu Sans Mono", "sans-serif": "DejaVu Sans",
            "system-ui": "DejaVu Sans"}

PREFER_PLANTED = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <alias><family>monospace</family><prefer><family>%s</family></prefer></alias>
</fontconfig>
""" % PLANTED


def _checksum(data):
    data = bytes(data) + b"\0" * (-len(data) % 4)
    return sum(struct.unpack(">%dI" % (len(data) // 4), data)) & 0xffffffff


def renamed_font(src, dst, family):
    """A copy of the TrueType font src whose name table says `family`: the
    same glyphs under a family no machine has (written with the standard
    library: the name table replaced, appended at the end of the file)."""
    with open(src, "rb") as f:
        font = bytearray(f.read())
    num_tables = struct.unpack(">H", font[4:6])[0]
    names = {1: family, 2: "Regular", 4: family, 6: family.replace(" ", "")}
    records, strings = [], b""
    for platform, encoding, language, codec in ((1, 0, 0, "latin-1"),
                                                (3, 1, 0x409, "utf-16-be")):
        for name_id, text in sorted(names.items()):
            raw = text.encode(codec)
            records.append(struct.pack(">6H", platform, encoding, language, name_id,
                                       len(raw), len(strings)))
            strings += raw
    table = struct.pack(">3H", 0, len(records), 6 + 12 * len(records)) + b"".join(records) + strings
    font += b"\0" * (-len(font) % 4)
    offset = len(font)
    font += table
    for i in range(num_tables):
        entry = 12 + 16 * i
        if font[entry:entry + 4] == b"name":
            font[entry + 4:entry + 16] = struct.pack(">3I", _checksum(table), offset, len(table))
            break
    else:
        raise AssertionError("%s has no name table" % src)
    with open(dst, "wb") as f:
        f.write(font)


class HermeticFonts(ksr.KsrTestCase):
    needs_testapp = False

    def setUp(self):
        super().setUp()
        if not os.path.isdir(DEJAVU):
            self.fail("%s is missing (scripts/setup.sh installs fonts-dejavu-core)" % DEJAVU)
        self.home = os.path.join(self.tmp, "home")
        self.xdg = {k: os.path.join(self.tmp, k.lower()) for k in
                    ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")}
        for d in [self.home] + list(self.xdg.values()):
            os.makedirs(d)

    def plant(self, fonts_dir, rule_path):
        """An extra font in fonts_dir and a rule at rule_path preferring it
        for monospace."""
        os.makedirs(fonts_dir, exist_ok=True)
        os.makedirs(os.path.dirname(rule_path), exist_ok=True)
        renamed_font(os.path.join(DEJAVU, "DejaVuSansMono-Bold.ttf"),
                     os.path.join(fonts_dir, "KsrPlantedMono.ttf"), PLANTED)
        with open(rule_path, "w", encoding="utf-8") as f:
            f.write(PREFER_PLANTED)

    def fc(self, env, *args):
        res = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(res.returncode, 0, res.stderr)
        return res.stdout

    def family(self, env, pattern):
        return self.fc(env, "fc-match", "-f", "%{family[0]}", pattern)

    def envs(self):
        """(the machine's configuration, the tests'), with the plant's folders."""
        extra = dict(self.xdg, HOME=self.home)
        return self.env(FONTCONFIG_FILE=None, **extra), self.env(**extra)

    def test_the_tests_env_names_the_tests_fontconfig(self):
        with mock.patch.dict(os.environ, FONTCONFIG_FILE="/etc/fonts/fonts.conf",
                             FONTCONFIG_PATH="/etc/fonts"):
            env = ksr.clean_env()
        self.assertEqual(env["FONTCONFIG_FILE"], ksr.FONTCONFIG_FILE)
        self.assertNotIn("FONTCONFIG_PATH", env, "the caller's fontconfig steers nothing")
        self.assertTrue(os.path.isfile(ksr.FONTCONFIG_FILE), ksr.FONTCONFIG_FILE)

    def test_generic_families_are_dejavu_even_with_an_extra_font(self):
        system, tests = self.envs()
        self.plant(os.path.join(self.xdg["XDG_DATA_HOME"], "fonts"),
                   os.path.join(self.xdg["XDG_CONFIG_HOME"], "fontconfig", "fonts.conf"))
        # the plant takes on the machine's own configuration: what the tests' must undo
        self.assertEqual(self.family(system, "Monospace"), PLANTED)
        for pattern, family in sorted(GENERICS.items()):
            self.assertEqual(self.family(tests, pattern), family, pattern)

    def test_only_the_configured_folders_are_listed(self):
        """Every font the tests see is in a <dir> of the tests' fonts.conf, each
        of those folders exists and gives fonts, and no font the machine has
        beyond them (the plant, and e.g. Noto where installed) is listed."""
        system, tests = self.envs()
        self.plant(os.path.join(self.xdg["XDG_DATA_HOME"], "fonts"),
                   os.path.join(self.xdg["XDG_CONFIG_HOME"], "fontconfig", "fonts.conf"))
        dirs = [d.text for d in ET.parse(ksr.FONTCONFIG_FILE).getroot().iter("dir")]
        self.assertIn(DEJAVU, dirs)
        seen = set(self.fc(tests, "fc-list", "-f", "%{file}\n").split())
        self.assertTrue(seen)
        for path in seen:
            self.assertTrue(any(path.startswith(d.rstrip("/") + "/") for d in dirs),
                            "%s is outside the tests' font folders" % path)
        for d in dirs:
            self.assertTrue(any(p.startswith(d.rstrip("/") + "/") for p in seen),
                            "%s gives no font: does scripts/setup.sh still install it?" % d)
        machine = set(self.fc(system, "fc-list", "-f", "%{file}\n").split())
        extra = machine - seen
        self.assertIn(os.path.join(self.xdg["XDG_DATA_HOME"], "fonts", "KsrPlantedMono.ttf"),
                      extra)
        families = self.fc(tests, "fc-list", "-f", "%{family[0]}\n").splitlines()
        self.assertNotIn(PLANTED, families)
        self.assertFalse([f for f in families if re.match(r"Noto|Roboto|Droid|Cantarell", f)],
                         families)

    def test_the_app_the_runtime_launches_gets_the_tests_fonts(self):
        """Through `run --xvfb`: the runtime's own session sets its own XDG
        folders, so the plant goes where the system configuration still looks
        in HOME (~/.fonts, ~/.fonts.conf). The launch line asks fontconfig in
        the app's environment, then starts the app."""
        self.plant(os.path.join(self.home, ".fonts"), os.path.join(self.home, ".fonts.conf"))
        sc = self.scenario(textwrap.dedent("""\
            name: hermetic-fonts
            launch: >-
              fc-match -f '%{family[0]}' Monospace > "$KSR_IT_FC";
              exec xterm -T ksr-fonts -fa Monospace
            process: ^xterm$
            window: ^ksr-fonts$
            settle_s: 0.5
            atspi: false
            """))
        results = {}
        for name, env in (("system", self.env(FONTCONFIG_FILE=None, HOME=self.home)),
                          ("tests", self.env(HOME=self.home))):
            answer = os.path.join(self.tmp, name + ".txt")
            out = self.out(name)
            rc, _so, se, _el = self.run_rt(["run", "--xvfb", sc], out=out,
                                           env=dict(env, KSR_IT_FC=answer), timeout=120)
            self.assertNoSanitizerReport(se)
            self.assertEvidence(out, "pass", "completed", rc=rc, stderr=se)
            with open(answer, encoding="utf-8") as f:
                results[name] = f.read()
        self.assertEqual(results, {"system": PLANTED, "tests": "DejaVu Sans Mono"})


if __name__ == "__main__":
    unittest.main()
