/* Dialogs at first look and after settle (docs/scenario.md). The classification is a
 * pure function over a window's title and type and the pattern lists, so the
 * unit test can hold a table of real-world titles against it. */
#include "run/diagnosis/dialogs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/context/context.h"

/* Built-in defaults, for a scenario that does not set the lists. They are
 * checked in this order: first-run and updater windows often say "error" or
 * "problem" in passing ("Problem reporting" consent), and they are concerns,
 * not failures. Words are whole (\b) so "Terrorist" or "Errorless" never
 * match; "Crash Reporter" (the window after a crash) is not the consent
 * prompt "crash reports". */
const char *const ksr_dialog_default_first_run =
        "(?i)\\b(welcome|get(ting)? started|first[- ]?run|set ?up|setup wizard|what'?s new|"
        "tour|sign[- ]?in|log ?in|import (bookmarks|settings|data)|"
        "default (browser|application|app)|keyring|privacy|terms of (service|use)|"
        "licen[cs]e agreement|telemetry|crash report(ing|s)?)\\b";
const char *const ksr_dialog_default_updater =
        "(?i)\\b(updates? (is |are )?(available|ready|required)|software update|update manager|"
        "updating|updater|new version|upgrade|restart to update|check(ing)? for updates)\\b";
const char *const ksr_dialog_default_error =
        "(?i)\\b(errors?|crash(ed|es)?|fatal|problem|fail(ed|ure)|exception|"
        "segmentation fault|not responding|stopped working|quit unexpectedly|"
        "unexpected(ly)? (quit|closed?|error)|aborted|"
        "(could ?n[o']t|cannot|can't|unable to) (open|start|load|read|write|find|connect|"
        "create|launch|save|initiali[sz]e))\\b";

static int pick(ksr_pattern *const **list, size_t *n, ksr_pattern *const *sc_list, size_t sc_n,
                bool set, const char *fallback, ksr_pattern **owned, ksr_err *err)
{
	if (set) {
		*list = sc_list;
		*n = sc_n;
		return 0;
	}
	*owned = ksr_pattern_compile(fallback, err);
	if (!*owned)
		return -1;
	*list = owned;
	*n = 1;
	return 0;
}

int ksr_dialog_rules_init(ksr_dialog_rules *r, const ksr_scenario *sc, ksr_err *err)
{
	memset(r, 0, sizeof *r);
	if (pick(&r->error, &r->n_error, sc->error_dialogs, sc->n_error_dialogs,
	         sc->error_dialogs_set, ksr_dialog_default_error, &r->owned[0], err) < 0 ||
	    pick(&r->first_run, &r->n_first_run, sc->first_run_prompts, sc->n_first_run_prompts,
	         sc->first_run_prompts_set, ksr_dialog_default_first_run, &r->owned[1], err) < 0 ||
	    pick(&r->updater, &r->n_updater, sc->updaters, sc->n_updaters, sc->updaters_set,
	         ksr_dialog_default_updater, &r->owned[2], err) < 0) {
		ksr_dialog_rules_clear(r);
		return -1;
	}
	return 0;
}

void ksr_dialog_rules_clear(ksr_dialog_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < 3; i++)
		ksr_pattern_free(r->owned[i]);
	memset(r, 0, sizeof *r);
}

static bool any_match(ksr_pattern *const *list, size_t n, const char *title)
{
	for (size_t i = 0; i < n; i++)
		if (ksr_pattern_match(list[i], title))
			return true;
	return false;
}

ksr_dialog_class ksr_dialog_classify(const ksr_dialog_rules *r, const char *title, bool is_dialog,
                                     bool is_main)
{
	if (is_main)
		return KSR_DIALOG_MAIN;
	if (r && title && *title) {
		if (any_match(r->first_run, r->n_first_run, title))
			return KSR_DIALOG_FIRST_RUN;
		if (any_match(r->updater, r->n_updater, title))
			return KSR_DIALOG_UPDATER;
		if (any_match(r->error, r->n_error, title))
			return KSR_DIALOG_ERROR;
	}
	return is_dialog ? KSR_DIALOG_UNEXPECTED : KSR_DIALOG_WINDOW;
}

const char *ksr_dialog_class_name(ksr_dialog_class c)
{
	switch (c) {
	case KSR_DIALOG_MAIN:
		return "main";
	case KSR_DIALOG_WINDOW:
		return "window";
	case KSR_DIALOG_ERROR:
		return "error";
	case KSR_DIALOG_FIRST_RUN:
		return "first-run";
	case KSR_DIALOG_UPDATER:
		return "updater";
	case KSR_DIALOG_UNEXPECTED:
		return "unexpected";
	}
	return "unknown";
}

/* ---- the run side ---------------------------------------------------------- */

/* The app's own window: the one the app wait found, or (the app may have
 * replaced it) a non-dialog window matching the scenario's window patterns.
 * Desktop mode has no app window. */
static bool is_main_window(const ksr_run *run, const ksr_window *w)
{
	const ksr_scenario *sc = run->sc;
	if (run->have_window && w->id == run->window.id)
		return true;
	if (sc->desktop || w->is_dialog || (!sc->window && !sc->window_class))
		return false;
	if (sc->window && !ksr_pattern_match(sc->window, w->title))
		return false;
	return !sc->window_class || ksr_pattern_match(sc->window_class, w->res_name) ||
	       ksr_pattern_match(sc->window_class, w->res_class);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void emit_dialog(ksr_run *run, const ksr_window *w, ksr_dialog_class c, const char *when)
{
	char id[32];
	snprintf(id, sizeof id, "0x%lx", w->id);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "id", id);
	cJSON_AddStringToObject(f, "title", or_empty(w->title));
	cJSON_AddStringToObject(f, "class", or_empty(w->res_class));
	cJSON_AddBoolToObject(f, "is_dialog", w->is_dialog);
	cJSON_AddNumberToObject(f, "pid", w->pid);
	cJSON_AddStringToObject(f, "classification", ksr_dialog_class_name(c));
	cJSON_AddStringToObject(f, "when", when);
	ksr_run_emit(run, "dialog", f);
}

/* The windows and the rules, or false (nothing to look at, or a default
 * pattern that does not compile: a runtime bug the unit test catches). */
static bool load(ksr_run *run, ksr_window_list *wins, ksr_dialog_rules *rules)
{
	ksr_err err = {0};
	if (!run->x || ksr_x11_list_windows(run->x, wins, &err) < 0)
		return false;
	if (ksr_dialog_rules_init(rules, run->sc, &err) < 0) {
		ksr_window_list_clear(wins);
		return false;
	}
	return true;
}

void ksr_dialogs_after_settle(ksr_run *run)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules))
		return;
	for (size_t i = 0; i < wins.len && !run->updater_reported; i++) {
		const ksr_window *w = &wins.items[i];
		ksr_dialog_class c =
		        ksr_dialog_classify(&rules, w->title, w->is_dialog, is_main_window(run, w));
		if (c != KSR_DIALOG_UPDATER)
			continue;
		emit_dialog(run, w, c, "after settle");
		ksr_run_concern(run, KSR_CONCERN_UPDATER, 0,
		                "an updater window \"%s\" is still on screen after settle (%g s)",
		                or_empty(w->title), run->sc->settle_s);
		run->updater_reported = w->id;
	}
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
}

typedef struct tally {
	int errors, concerns, windows;
	bool failed;
} tally;

static void act_on(ksr_run *run, const ksr_window *w, ksr_dialog_class c, tally *t)
{
	const char *title = or_empty(w->title);
	t->windows++;
	switch (c) {
	case KSR_DIALOG_ERROR:
		t->errors++;
		if (!t->failed)
			ksr_run_fail(run, KSR_OUTCOME_ERROR_DIALOG, 0,
			             "an error dialog \"%s\" (%s) is on screen at first look",
			             title, w->res_class ? w->res_class : "no class");
		t->failed = true;
		break;
	case KSR_DIALOG_FIRST_RUN:
		t->concerns++;
		ksr_run_concern(run, KSR_CONCERN_FIRST_RUN_PROMPT, 0,
		                "a first-run prompt \"%s\" is on screen at first look", title);
		break;
	case KSR_DIALOG_UPDATER:
		if (run->updater_reported == w->id)
			break; /* settle reported this one */
		t->concerns++;
		ksr_run_concern(run, KSR_CONCERN_UPDATER, 0,
		                "an updater window \"%s\" is on screen at first look", title);
		break;
	case KSR_DIALOG_UNEXPECTED:
		t->concerns++;
		ksr_run_concern(run, KSR_CONCERN_UNEXPECTED_DIALOG, 0,
		                "an unexpected dialog \"%s\" (%s) is on screen at first look",
		                title, w->res_class ? w->res_class : "no class");
		break;
	case KSR_DIALOG_MAIN:
	case KSR_DIALOG_WINDOW:
		break;
	}
}

bool ksr_dialogs_first_look(ksr_run *run, char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules)) {
		snprintf(note, len, "windows could not be listed");
		return true;
	}
	tally t = {0};
	for (size_t i = 0; i < wins.len; i++) {
		const ksr_window *w = &wins.items[i];
		ksr_dialog_class c =
		        ksr_dialog_classify(&rules, w->title, w->is_dialog, is_main_window(run, w));
		emit_dialog(run, w, c, "first look");
		act_on(run, w, c, &t);
	}
	snprintf(note, len, "%d window%s, %d error dialog%s, %d dialog concern%s", t.windows,
	         t.windows == 1 ? "" : "s", t.errors, t.errors == 1 ? "" : "s", t.concerns,
	         t.concerns == 1 ? "" : "s");
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
	return !t.failed;
}
