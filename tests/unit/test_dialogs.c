/* Dialog classification at first look (docs/scenario.md): a table of real-world window
 * titles against the built-in defaults, then the scenario's own lists, the
 * order (first-run and updater before error), an empty list switching a kind
 * off, and the app's main window never counting as a dialog. */
/* A private header of the library (src/ is not on the tests' include path). */
#include "../../src/run/dialogs.h"

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
        {"", true, KSR_DIALOG_UNEXPECTED},
        {NULL, false, KSR_DIALOG_WINDOW},
};

static void test_defaults(void)
{
	ksr_scenario sc;
	memset(&sc, 0, sizeof sc);
	ksr_dialog_rules r;
	ksr_err err = {0};
	is_int(ksr_dialog_rules_init(&r, &sc, &err), 0, "the default patterns compile");
	ok(r.n_error == 1 && r.n_first_run == 1 && r.n_updater == 1, "one default pattern each");
	for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
		const row *t = &defaults[i];
		ksr_dialog_class got = ksr_dialog_classify(&r, t->title, t->is_dialog, false);
		ok(got == t->want, "\"%s\" (%s) -> %s (got %s)", t->title ? t->title : "(null)",
		   t->is_dialog ? "dialog" : "window", ksr_dialog_class_name(t->want),
		   ksr_dialog_class_name(got));
	}
	is_int(ksr_dialog_classify(&r, "Error", true, true), KSR_DIALOG_MAIN,
	       "the app's own window is never a dialog, whatever its title");
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
	ksr_dialog_rules_clear(&r);
	ksr_pattern_free(errs[0]);
	ksr_pattern_free(upd[0]);
}

static void test_names(void)
{
	is_str(ksr_dialog_class_name(KSR_DIALOG_ERROR), "error", "name: error");
	is_str(ksr_dialog_class_name(KSR_DIALOG_FIRST_RUN), "first-run", "name: first-run");
	is_str(ksr_dialog_class_name(KSR_DIALOG_UPDATER), "updater", "name: updater");
	is_str(ksr_dialog_class_name(KSR_DIALOG_UNEXPECTED), "unexpected", "name: unexpected");
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
	                      ksr_dialog_default_updater};
	for (size_t i = 0; i < 3; i++) {
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
