"""The man page (man/kasm-session-runtime.1) and the bash completion against the
binary and docs/cli.md: every command the top-level --help lists has a section,
every option each command's --help prints is in the man page (and offered by
the completion), every environment variable docs/cli.md names is in the man
page, and every exit code is there. A command or option added without its man
page entry makes this test fail."""

import os
import re
import shutil
import subprocess
import unittest

import ksr

MAN = os.path.join(ksr.SOURCE_DIR, "man", "kasm-session-runtime.1")
COMPLETION = os.path.join(ksr.SOURCE_DIR, "completion", "kasm-session-runtime.bash")
CLI_MD = os.path.join(ksr.SOURCE_DIR, "docs", "cli.md")

OPTION_RE = re.compile(r"(?<![\w-])(--?[a-zA-Z][a-zA-Z0-9-]*)")


def troff_to_text(src):
    """The man page's words without troff markup: font escapes, \\- and the
    request lines' names, so `\\fB\\-\\-xvfb\\fR` and `.B \\-\\-xvfb` read --xvfb."""
    text = re.sub(r"\\f[BIRP]|\\f\(..|\\f\[[^]]*\]", "", src)
    text = text.replace("\\-", "-").replace("\\(em", "-").replace("\\&", "")
    text = re.sub(r"^\.\\\".*$", "", text, flags=re.M)  # comments
    text = re.sub(r"^\.[A-Z]{1,2}\b ?", "", text, flags=re.M)  # .B .BR .TP ...
    return text


def help_options(usage):
    """Options a usage text offers: the words starting with - in its option
    lines (indented, starting with -), so prose dashes are not taken."""
    opts = set()
    for line in usage.splitlines():
        stripped = line.strip()
        if not stripped.startswith("-"):
            continue
        head = re.split(r"\s{2,}", stripped)[0]  # the option column
        opts.update(m.group(1) for m in OPTION_RE.finditer(head))
    return opts


def cli_md_env_vars(text):
    """Environment variable names in docs/cli.md's Environment table, with the
    brace and suffix shorthands expanded: `KASM_RUNTIME_{JUDGE,GROUNDER}_*`
    and `_API` (a suffix of KASM_RUNTIME_MODEL in the same row)."""
    names = set()
    section = text.split("## Environment", 1)[1].split("\n## ", 1)[0]
    for row in section.splitlines():
        if not row.startswith("|"):
            continue
        first = row.split("|")[1]
        for tok in re.findall(r"`([^`]+)`", first):
            m = re.fullmatch(r"(KASM_RUNTIME_)\{([A-Z,]+)\}_\*", tok)
            if m:
                for role in m.group(2).split(","):
                    for f in ("MODEL", "URL", "API", "API_KEY", "COORDS"):
                        names.add("%s%s_%s" % (m.group(1), role, f))
            elif re.fullmatch(r"_[A-Z_]+", tok):
                names.add("KASM_RUNTIME_MODEL" + tok)
            elif re.fullmatch(r"[A-Z][A-Z0-9_]+", tok):
                names.add(tok)
    return names


class ManPageTest(ksr.KsrTestCase):
    needs_testapp = False

    @classmethod
    def setUpClass(cls):
        with open(MAN, encoding="utf-8") as f:
            cls.man_src = f.read()
        cls.man = troff_to_text(cls.man_src)
        with open(COMPLETION, encoding="utf-8") as f:
            cls.completion = f.read()

    def rt_help(self, *args):
        rc, so, se, _ = self.run_rt(list(args) + ["--help"], timeout=30)
        self.assertNoSanitizerReport(se)
        self.assertEqual(rc, 0, "%s --help: rc %d\n%s" % (" ".join(args), rc, se))
        return so

    def commands(self):
        """The commands the top-level --help lists."""
        text = self.rt_help()
        cmds = re.findall(r"^  ([a-z][a-z-]*)\s{2,}\S", text.split("Commands:", 1)[1], re.M)
        self.assertIn("run", cmds, "top-level --help lists no commands:\n%s" % text)
        return cmds

    def man_section(self, name):
        """The text of `.SS name` up to the next .SS/.SH (markup removed)."""
        m = re.search(r"^\.SS %s\n(.*?)(?=^\.S[SH] )" % re.escape(name), self.man_src,
                      re.M | re.S)
        return troff_to_text(m.group(1)) if m else None

    def test_troff_is_well_formed(self):
        """man(1) renders the page without warnings (when man is installed)."""
        self.assertTrue(self.man_src.startswith(".\\\"") or self.man_src.startswith(".TH"))
        self.assertRegex(self.man_src, r"(?m)^\.TH KASM-SESSION-RUNTIME 1 ")
        for sec in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT",
                    "EXIT STATUS", "FILES"):
            self.assertRegex(self.man_src, r"(?m)^\.SH \"?%s\"?$" % sec)
        if not shutil.which("man"):
            ksr.skip_unless_installable(self, "man is not installed (scripts/setup.sh installs man-db); "
                                        "the markup checks above still ran")
        r = subprocess.run(["man", "--warnings", "-l", MAN], env=self.env(MANWIDTH="100"),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stderr.decode().strip(), "", "troff warnings")
        self.assertIn("kasm-session-runtime", r.stdout.decode())

    def test_every_command_has_a_section(self):
        for cmd in self.commands():
            with self.subTest(command=cmd):
                self.assertRegex(self.man_src, r"(?m)^\.B %s$" % re.escape(cmd),
                                 "no entry for `%s` under COMMANDS" % cmd)
                self.assertRegex(self.man_src, r"(?m)^\.B kasm-session-runtime %s\b"
                                 % re.escape(cmd), "`%s` missing from SYNOPSIS" % cmd)

    def test_every_help_option_is_in_the_man_page(self):
        """Each option of `CMD --help` appears in the man page's section for
        CMD (.SS CMD); -h/--help is documented once for every command."""
        self.assertIn("--help", self.man)
        checked = 0
        for cmd in self.commands():
            opts = help_options(self.rt_help(cmd)) - {"-h", "--help"}
            section = self.man_section(cmd)
            if not opts:
                continue
            self.assertIsNotNone(section, "no `.SS %s` options section" % cmd)
            for opt in sorted(opts):
                checked += 1
                with self.subTest(command=cmd, option=opt):
                    self.assertRegex(section, r"(?<![\w-])%s(?![\w-])" % re.escape(opt),
                                     "`%s %s` (from --help) is not in the man page's %s "
                                     "section" % (cmd, opt, cmd))
                    self.assertRegex(self.completion, r"(?<![\w-])%s(?![\w-])"
                                     % re.escape(opt),
                                     "`%s %s` is not offered by the bash completion"
                                     % (cmd, opt))
        self.assertGreater(checked, 10, "too few options found in --help texts")

    def test_help_parser_is_not_vacuous(self):
        """The option extraction finds what run --help really offers."""
        opts = help_options(self.rt_help("run"))
        self.assertTrue({"--xvfb", "--out", "--deadline", "--json", "--junit"} <= opts, opts)

    def test_every_cli_md_environment_variable_is_in_the_man_page(self):
        with open(CLI_MD, encoding="utf-8") as f:
            names = cli_md_env_vars(f.read())
        self.assertIn("KASM_RUNTIME_OUT", names, "docs/cli.md's table was not parsed")
        self.assertIn("KASM_RUNTIME_GROUNDER_COORDS", names)
        env = self.man.split("ENVIRONMENT", 2)[-1].split("EXIT STATUS", 1)[0]
        for name in sorted(names):
            with self.subTest(variable=name):
                self.assertRegex(env, r"(?<![\w])%s(?![\w])" % re.escape(name),
                                 "%s (docs/cli.md) is not in the man page's ENVIRONMENT"
                                 % name)

    def test_exit_codes(self):
        status = self.man.split("EXIT STATUS", 1)[1].split("SIGNALS", 1)[0]
        for code, word in (("0", "pass"), ("1", "app-failed"), ("2", "test-error")):
            self.assertRegex(status, r"(?m)^%s\n%s" % (code, word))

    def test_completion_lists_every_command(self):
        m = re.search(r'local commands="([^"]+)"', self.completion)
        self.assertIsNotNone(m)
        offered = set(m.group(1).split())
        for cmd in self.commands():
            self.assertIn(cmd, offered, "bash completion does not offer `%s`" % cmd)
        r = subprocess.run(["bash", "-n", COMPLETION], stderr=subprocess.PIPE, timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr.decode())


if __name__ == "__main__":
    unittest.main()
