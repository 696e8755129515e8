/* Dialog classification at first look (docs/scenario.md#dialogs): a table of
 * real-world window titles against the built-in defaults, then the scenario's
 * own lists, the order (recovery, first-run and updater before error), an
 * empty list switching a kind off; the app's own window classified too (a
 * welcome screen is one, a document's name in its title is not, nor an
 * error word unless it is dialog-type); names read inside windows. */
/* A private header of the library (src/ is not on the tests' include path). */
#include "../../src/run/diagnosis/dialogs.h"

#include <stdio.h>
#include <string.h>

#include "tap.h"

typedef struct row {
	const char *title;
	bool is_dialog;
	ksr_dialog_class want;
} row;

static const row defaults[] = {
        /* errors */
        {"Error", true, KSR_DIALOG_ERROR},
        {"Error: could not open profile", true, KSR_DIALOG_ERROR},
        {"Firefox - Error", false, KSR_DIALOG_ERROR},
        {"Application Crashed", true, KSR_DIALOG_ERROR},
        {"Mozilla Crash Reporter", false, KSR_DIALOG_ERROR},
        {"Fatal Error", true, KSR_DIALOG_ERROR},
        {"A problem occurred", true, KSR_DIALOG_ERROR},
        {"Operation failed", true, KSR_DIALOG_ERROR},
        {"Unhandled exception", true, KSR_DIALOG_ERROR},
        {"Segmentation fault", true, KSR_DIALOG_ERROR},
        {"\"Mousepad\" is not responding", true, KSR_DIALOG_ERROR},
        {"LibreOffice has stopped working", true, KSR_DIALOG_ERROR},
        {"Could not connect to server", true, KSR_DIALOG_ERROR},
        {"Unable to open file", true, KSR_DIALOG_ERROR},
        {"Update failed", true, KSR_DIALOG_ERROR},
        {"ERROR", true, KSR_DIALOG_ERROR},
        /* first-run prompts */
        {"Welcome to Firefox", false, KSR_DIALOG_FIRST_RUN},
        {"Get Started", true, KSR_DIALOG_FIRST_RUN},
        {"First Run Wizard", true, KSR_DIALOG_FIRST_RUN},
        {"GIMP Setup", true, KSR_DIALOG_FIRST_RUN},
        {"What's New in VS Code", true, KSR_DIALOG_FIRST_RUN},
        {"Sign in to Chrome", true, KSR_DIALOG_FIRST_RUN},
        {"Import Bookmarks and Settings", true, KSR_DIALOG_FIRST_RUN},
        {"Set as default browser?", true, KSR_DIALOG_FIRST_RUN},
        {"Choose password for new keyring", true, KSR_DIALOG_FIRST_RUN},
        {"Send crash reports?", true, KSR_DIALOG_FIRST_RUN},
        {"Privacy Notice", true, KSR_DIALOG_FIRST_RUN},
        {"License Agreement", true, KSR_DIALOG_FIRST_RUN},
        {"Legal notice", true, KSR_DIALOG_FIRST_RUN}, /* qBittorrent's first start */
        {"Tip of the Day", true, KSR_DIALOG_FIRST_RUN},
        {"End-User License Agreement", true, KSR_DIALOG_FIRST_RUN},
        {"Terms and Conditions", true, KSR_DIALOG_FIRST_RUN},
        {"Account Setup", false, KSR_DIALOG_FIRST_RUN}, /* Thunderbird's tab */
        {"Set Up Your Existing Email Address", false, KSR_DIALOG_FIRST_RUN},
        {"Create a new account", true, KSR_DIALOG_FIRST_RUN},
        /* recovery prompts: before error words ("crash") */
        {"Automatic Crash Recovery", true, KSR_DIALOG_RECOVERY}, /* Audacity */
        {"LibreOffice 7.4 Document Recovery", true, KSR_DIALOG_RECOVERY},
        {"Document Recovery", true, KSR_DIALOG_RECOVERY},
        {"Restore Session", true, KSR_DIALOG_RECOVERY}, /* Kate */
        {"Restore pages?", true, KSR_DIALOG_RECOVERY},  /* Chromium */
        {"Chromium didn't shut down correctly", true, KSR_DIALOG_RECOVERY},
        {"Recover unsaved files", true, KSR_DIALOG_RECOVERY},
        {"Recovered Files", true, KSR_DIALOG_RECOVERY},
        {"AutoRecovery", true, KSR_DIALOG_RECOVERY},
        /* updaters */
        {"Update available", true, KSR_DIALOG_UPDATER},
        {"Updates are ready to install", true, KSR_DIALOG_UPDATER},
        {"Software Updater", false, KSR_DIALOG_UPDATER},
        {"Updating Thunderbird", true, KSR_DIALOG_UPDATER},
        {"A new version of Zoom is available", true, KSR_DIALOG_UPDATER},
        {"Upgrade", true, KSR_DIALOG_UPDATER},
        {"Restart to update", true, KSR_DIALOG_UPDATER},
        /* the order: first-run and updater words win over error words */
        {"Welcome - a problem with your profile", true, KSR_DIALOG_FIRST_RUN},
        {"Updating failed", true, KSR_DIALOG_UPDATER},
        /* neither: dialogs are unexpected, ordinary windows are not */
        {"Save As", true, KSR_DIALOG_UNEXPECTED},
        {"Preferences", true, KSR_DIALOG_UNEXPECTED},
        {"Save As", false, KSR_DIALOG_WINDOW},
        {"Terminal", false, KSR_DIALOG_WINDOW},
        {"Terrorist attack - Wikipedia", false, KSR_DIALOG_WINDOW},
        {"Errorless learning", false, KSR_DIALOG_WINDOW},
        {"Tourmaline", false, KSR_DIALOG_WINDOW},
        {"Setuptools docs", false, KSR_DIALOG_WINDOW},
        {"Licensed to Kasm Technologies", false, KSR_DIALOG_WINDOW},
        {"Online Accounts", false, KSR_DIALOG_WINDOW},
        {"Restore Defaults", true, KSR_DIALOG_UNEXPECTED},
        {"Recovery Key", true, KSR_DIALOG_UNEXPECTED},
        {"Data Recovery Tool", false, KSR_DIALOG_WINDOW},
        {"", true, KSR_DIALOG_UNEXPECTED},
        {NULL, false, KSR_DIALOG_WINDOW},
};

/* The app's own window (the one the scenario waits for). */
static const row mains[] = {
        /* first-run screens that are the window waited for (issue 30) */
        {"Welcome! Let's set up a few things", true, KSR_DIALOG_FIRST_RUN}, /* Inkscape */
        {"Welcome to Firefox \xe2\x80\x94 Mozilla Firefox", false, KSR_DIALOG_FIRST_RUN},
        {"Welcome - Visual Studio Code", false, KSR_DIALOG_FIRST_RUN},
        {"Privacy Notice \xe2\x80\x94 Mozilla Firefox", false, KSR_DIALOG_FIRST_RUN},
        {"Automatic Crash Recovery", true, KSR_DIALOG_RECOVERY},
        {"Software Updater", false, KSR_DIALOG_UPDATER},
        /* an error word makes only a dialog-type main window an error */
        {"Error", true, KSR_DIALOG_ERROR},
        {"Inkscape - Error", true, KSR_DIALOG_ERROR},
        {"Error", false, KSR_DIALOG_MAIN},
        {"Errors in build.log - Mousepad", false, KSR_DIALOG_MAIN},
        {"Crash Course in Python \xe2\x80\x94 Document Viewer", false, KSR_DIALOG_MAIN},
        /* a document's file name is the document's, not a screen's */
        {"welcome.txt - Mousepad", false, KSR_DIALOG_MAIN},
        {"*setup.py - Mousepad", false, KSR_DIALOG_MAIN},
        {"/home/kasm-user/welcome - Mousepad", false, KSR_DIALOG_MAIN},
        {"Welcome.odt - LibreOffice Writer", false, KSR_DIALOG_MAIN},
        /* a known limit: a file name with spaces is not told from words */
        {"Crash recovery notes.odt - LibreOffice Writer", false, KSR_DIALOG_RECOVERY},
        {"error.log (~/logs) - gedit", false, KSR_DIALOG_MAIN},
        /* ordinary main windows */
        {"Mozilla Firefox", false, KSR_DIALOG_MAIN},
        {"Firefox 115.0 \xe2\x80\x94 Release Notes \xe2\x80\x94 Mozilla Firefox", false,
         KSR_DIALOG_MAIN},
        {"New document 1 - Inkscape", false, KSR_DIALOG_MAIN},
        {"Untitled 1 - LibreOffice Writer", false, KSR_DIALOG_MAIN},
        {"Audacity", false, KSR_DIALOG_MAIN},
        {"Inbox - Mozilla Thunderbird", false, KSR_DIALOG_MAIN},
        {"Calculator", true, KSR_DIALOG_MAIN}, /* a dialog-type app window */
        {"qBittorrent v4.5.2", false, KSR_DIALOG_MAIN},
        {"", false, KSR_DIALOG_MAIN},
        {NULL, true, KSR_DIALOG_MAIN},
};

/* Names read inside the app's windows (headings, landmarks, in-window dialogs). */
static const struct {
	const char *name;
	ksr_dialog_class want;
} nodes[] = {
        {"Welcome! Let's get started", KSR_DIALOG_FIRST_RUN},
        {"Set Up Your Existing Email Address", KSR_DIALOG_FIRST_RUN}, /* Thunderbird */
        {"Sign in to your account", KSR_DIALOG_FIRST_RUN},
        {"Legal notice", KSR_DIALOG_FIRST_RUN},
        {"What's New", KSR_DIALOG_FIRST_RUN},
        {"Restore Session", KSR_DIALOG_RECOVERY},
        {"Automatic Crash Recovery", KSR_DIALOG_RECOVERY},
        /* content: error and updater words are the document's */
        {"Error log", KSR_DIALOG_WINDOW},
        {"Update available", KSR_DIALOG_WINDOW},
        {"Recent Files", KSR_DIALOG_WINDOW},
        {"Documents", KSR_DIALOG_WINDOW},
        {"", KSR_DIALOG_WINDOW},
        {NULL, KSR_DIALOG_WINDOW},
};

static void check_rows(const ksr_dialog_rules *r, const row *rows, size_t n, bool is_main)
{
	for (size_t i = 0; i < n; i++) {
		const row *t = &rows[i];
		ksr_dialog_class got = ksr_dialog_classify(r, t->title, t->is_dialog, is_main);
		ok(got == t->want, "%s\"%s\" (%s) -> %s (got %s)", is_main ? "main: " : "",
		   t->title ? t->title : "(null)", t->is_dialog ? "dialog" : "window",
		   ksr_dialog_class_name(t->want), ksr_dialog_class_name(got));
	}
}

static void test_defaults(void)
{
	ksr_scenario sc;
	memset(&sc, 0, sizeof sc);
	ksr_dialog_rules r;
	ksr_err err = {0};
	is_int(ksr_dialog_rules_init(&r, &sc, &err), 0, "the default patterns compile");
	ok(r.n_error == 1 && r.n_first_run == 1 && r.n_updater == 1 && r.n_recovery == 1,
	   "one default pattern each");
	check_rows(&r, defaults, sizeof defaults / sizeof defaults[0], false);
	check_rows(&r, mains, sizeof mains / sizeof mains[0], true);
	for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
		ksr_dialog_class got = ksr_dialog_classify_node(&r, nodes[i].name);
		ok(got == nodes[i].want, "node \"%s\" -> %s (got %s)",
		   nodes[i].name ? nodes[i].name : "(null)", ksr_dialog_class_name(nodes[i].want),
		   ksr_dialog_class_name(got));
	}
	ksr_dialog_rules_clear(&r);
	ksr_dialog_rules_clear(NULL);
	ok(1, "clear is NULL-safe");
}

static void test_scenario_lists(void)
{
	ksr_err err = {0};
	ksr_scenario sc;
	memset(&sc, 0, sizeof sc);
	ksr_pattern *errs[] = {ksr_pattern_compile("(?i)kaputt", &err)};
	ksr_pattern *upd[] = {ksr_pattern_compile("^Neue Version", &err)};
	sc.error_dialogs = errs;
	sc.n_error_dialogs = 1;
	sc.error_dialogs_set = true;
	sc.updaters = upd;
	sc.n_updaters = 1;
	sc.updaters_set = true;
	sc.first_run_prompts_set = true; /* first_run_prompts: [] switches them off */
	sc.recovery_prompts_set = true;  /* recovery_prompts: [] too */
	ksr_dialog_rules r;
	is_int(ksr_dialog_rules_init(&r, &sc, &err), 0, "rules from the scenario");
	is_int(ksr_dialog_classify(&r, "Alles KAPUTT", true, false), KSR_DIALOG_ERROR,
	       "the scenario's error pattern");
	is_int(ksr_dialog_classify(&r, "Error", true, false), KSR_DIALOG_UNEXPECTED,
	       "a scenario list replaces the default: \"Error\" is only an unexpected dialog");
	is_int(ksr_dialog_classify(&r, "Neue Version verfügbar", true, false), KSR_DIALOG_UPDATER,
	       "the scenario's updater pattern (UTF-8 title)");
	is_int(ksr_dialog_classify(&r, "Update available", true, false), KSR_DIALOG_UNEXPECTED,
	       "the default updater pattern is not used when updaters: is set");
	is_int(ksr_dialog_classify(&r, "Welcome", true, false), KSR_DIALOG_UNEXPECTED,
	       "an empty first_run_prompts list matches nothing");
	is_int(ksr_dialog_classify(&r, "Welcome", false, false), KSR_DIALOG_WINDOW,
	       "an ordinary window matching nothing is not a concern");
	is_int(ksr_dialog_classify(&r, "Welcome", false, true), KSR_DIALOG_MAIN,
	       "nor is the app's window, with first_run_prompts: []");
	is_int(ksr_dialog_classify_node(&r, "Welcome"), KSR_DIALOG_WINDOW,
	       "first_run_prompts: [] applies inside windows too");
	is_int(ksr_dialog_classify(&r, "Automatic Crash Recovery", true, false),
	       KSR_DIALOG_UNEXPECTED, "recovery_prompts: [] switches the recovery default off");
	ksr_dialog_rules_clear(&r);

	/* recovery_prompts: a scenario's own list replaces the default */
	ksr_scenario sc2;
	memset(&sc2, 0, sizeof sc2);
	ksr_pattern *rec[] = {ksr_pattern_compile("(?i)wiederherstell", &err)};
	sc2.recovery_prompts = rec;
	sc2.n_recovery_prompts = 1;
	sc2.recovery_prompts_set = true;
	is_int(ksr_dialog_rules_init(&r, &sc2, &err), 0, "rules with recovery_prompts");
	is_int(ksr_dialog_classify(&r, "Sitzung wiederherstellen", true, false),
	       KSR_DIALOG_RECOVERY, "the scenario's recovery pattern");
	is_int(ksr_dialog_classify_node(&r, "Sitzung wiederherstellen"), KSR_DIALOG_RECOVERY,
	       "the scenario's recovery pattern inside a window");
	is_int(ksr_dialog_classify(&r, "Automatic Crash Recovery", true, false), KSR_DIALOG_ERROR,
	       "without the default, a crash-recovery title is an error dialog (\"crash\")");
	ksr_dialog_rules_clear(&r);
	ksr_pattern_free(rec[0]);
	ksr_pattern_free(errs[0]);
	ksr_pattern_free(upd[0]);
}

static void test_names(void)
{
	is_str(ksr_dialog_class_name(KSR_DIALOG_ERROR), "error", "name: error");
	is_str(ksr_dialog_class_name(KSR_DIALOG_FIRST_RUN), "first-run", "name: first-run");
	is_str(ksr_dialog_class_name(KSR_DIALOG_UPDATER), "updater", "name: updater");
	is_str(ksr_dialog_class_name(KSR_DIALOG_UNEXPECTED), "unexpected", "name: unexpected");
	is_str(ksr_dialog_class_name(KSR_DIALOG_RECOVERY), "recovery", "name: recovery");
	is_str(ksr_dialog_class_name((ksr_dialog_class)99), "unknown", "name: out of range");
}

/* docs/scenario.md quotes the built-in patterns; keep them in step. */
static void test_docs_quote_defaults(void)
{
	FILE *f = fopen("docs/scenario.md", "r");
	ok(f != NULL, "docs/scenario.md readable from the source folder");
	if (!f)
		return;
	static char doc[1 << 17];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	doc[n] = '\0';
	fclose(f);
	const char *pats[] = {ksr_dialog_default_error, ksr_dialog_default_first_run,
	                      ksr_dialog_default_updater, ksr_dialog_default_recovery};
	for (size_t i = 0; i < sizeof pats / sizeof pats[0]; i++) {
		char esc[1024];
		size_t o = 0;
		for (const char *p = pats[i]; *p && o + 3 < sizeof esc; p++) {
			if (*p == '|')
				esc[o++] = '\\'; /* escaped in a markdown table */
			esc[o++] = *p;
		}
		esc[o] = '\0';
		ok(strstr(doc, esc) != NULL, "docs/scenario.md quotes %.40s...", pats[i]);
	}
}

int main(void)
{
	test_defaults();
	test_scenario_lists();
	test_names();
	test_docs_quote_defaults();
	return tap_done();
}
