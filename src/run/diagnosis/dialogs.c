/* Dialogs at first look and after settle (docs/scenario.md). The classification is a
 * pure function over a window's title and type and the pattern lists, so the
 * unit test can hold a table of real-world titles against it. */
#include "run/diagnosis/dialogs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/context/context.h"

/* Built-in defaults, for a scenario that does not set the lists. They are
 * checked in this order: recovery prompts say "crash" ("Automatic Crash
 * Recovery"), first-run and updater windows often say "error" or "problem" in
 * passing ("Problem reporting" consent), and they are concerns, not
 * failures. Words are whole (\b) so "Terrorist" or "Errorless" never match;
 * "Crash Reporter" (the window after a crash) is not the consent prompt
 * "crash reports". */
const char *const ksr_dialog_default_recovery =
        "(?i)\\b(crash recovery|document recovery|auto-?recover(y|ed)?|"
        "recover(y|ed)? (of )?(the |your )?(unsaved |previous |last )?"
        "(files?|documents?|sessions?|projects?|work|data|tabs|windows)|"
        "restore (the |your )?(previous |last )?(sessions?|tabs|windows|pages)|session restore|"
        "(did ?n[o']t|did not|was ?n[o']t|was not) (shut ?down|close|exit|quit) "
        "(correctly|properly|cleanly|normally))\\b";
const char *const ksr_dialog_default_first_run =
        "(?i)\\b(welcome|get(ting)? started|first[- ]?run|set ?up|setup wizard|what'?s new|"
        "tour|sign[- ]?in|log ?in|import (bookmarks|settings|data)|"
        "default (browser|application|app)|keyring|privacy|terms of (service|use)|"
        "terms (and|&) conditions|licen[cs]es?|legal notice|tips? of the day|did you know|"
        "(create|add|new|set ?up|connect|link) (an? |your |new |existing |e-?mail |mail )*"
        "accounts?|accounts? (setup|set ?up|wizard|creation)|"
        "telemetry|crash report(ing|s)?)\\b";
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
	         ksr_dialog_default_updater, &r->owned[2], err) < 0 ||
	    pick(&r->recovery, &r->n_recovery, sc->recovery_prompts, sc->n_recovery_prompts,
	         sc->recovery_prompts_set, ksr_dialog_default_recovery, &r->owned[3], err) < 0) {
		ksr_dialog_rules_clear(r);
		return -1;
	}
	return 0;
}

void ksr_dialog_rules_clear(ksr_dialog_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < sizeof r->owned / sizeof r->owned[0]; i++)
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

/* A token that names a file: a path ("/home/u/welcome"), or a name with an
 * extension ("Welcome.odt", "*setup.py"): the document's name. */
static bool names_file(const char *tok, size_t n)
{
	while (n > 0 && strchr(")]},;:!?\"'", tok[n - 1]))
		n--; /* "(welcome.txt)" */
	if (memchr(tok, '/', n))
		return true;
	size_t ext = 0;
	while (ext < n && isalnum((unsigned char)tok[n - 1 - ext]))
		ext++;
	return ext >= 1 && ext <= 5 && ext + 1 < n && tok[n - 1 - ext] == '.' &&
	       isalnum((unsigned char)tok[n - 2 - ext]) && !isdigit((unsigned char)tok[n - ext]);
}

/* title with its file names blanked out, into buf (a main window's title
 * names its document: "welcome.txt - Mousepad" is not a welcome screen). */
static const char *without_file_names(const char *title, char *buf, size_t len)
{
	size_t n = strlen(title);
	if (n >= len)
		return title; /* longer than any real title: judged as it is */
	memcpy(buf, title, n + 1);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && !isspace((unsigned char)buf[j]))
			j++;
		if (j > i && names_file(buf + i, j - i))
			memset(buf + i, ' ', j - i);
		while (j < n && isspace((unsigned char)buf[j]))
			j++;
		i = j;
	}
	return buf;
}

/* The concern lists, in their order: none of them fails a run. */
static ksr_dialog_class concern_class(const ksr_dialog_rules *r, const char *text, bool updater)
{
	if (any_match(r->recovery, r->n_recovery, text))
		return KSR_DIALOG_RECOVERY;
	if (any_match(r->first_run, r->n_first_run, text))
		return KSR_DIALOG_FIRST_RUN;
	if (updater && any_match(r->updater, r->n_updater, text))
		return KSR_DIALOG_UPDATER;
	return KSR_DIALOG_WINDOW;
}

ksr_dialog_class ksr_dialog_classify(const ksr_dialog_rules *r, const char *title, bool is_dialog,
                                     bool is_main)
{
	ksr_dialog_class plain = is_main     ? KSR_DIALOG_MAIN
	                         : is_dialog ? KSR_DIALOG_UNEXPECTED
	                                     : KSR_DIALOG_WINDOW;
	if (!r || !title || !*title)
		return plain;
	char buf[1024];
	const char *text = is_main ? without_file_names(title, buf, sizeof buf) : title;
	ksr_dialog_class c = concern_class(r, text, true);
	if (c != KSR_DIALOG_WINDOW)
		return c;
	/* The main window's title is an error only when it is a dialog: an
	 * editor's names the document, whatever it is called. */
	if ((!is_main || is_dialog) && any_match(r->error, r->n_error, text))
		return KSR_DIALOG_ERROR;
	return plain;
}

ksr_dialog_class ksr_dialog_classify_node(const ksr_dialog_rules *r, const char *name)
{
	if (!r || !name || !*name)
		return KSR_DIALOG_WINDOW;
	return concern_class(r, name, false);
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
	case KSR_DIALOG_RECOVERY:
		return "recovery";
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
	return ksr_run_window_matches(sc->window, sc->window_class, w);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static void emit_dialog(ksr_run *run, const ksr_window *w, ksr_dialog_class c, const char *when,
                        const char *tool)
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
	if (tool) /* desktop mode: the spawned tool whose window it is */
		cJSON_AddStringToObject(f, "tool", tool);
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
		emit_dialog(run, w, c, "after settle", NULL);
		ksr_run_concern(run, KSR_CONCERN_UPDATER, 0,
		                "an updater window \"%s\" is still on screen after settle (%g s)",
		                or_empty(w->title), run->sc->settle_s);
		run->updater_reported = w->id;
	}
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
}

typedef struct tally {
	int errors, concerns, windows, nodes;
	bool failed;
	const char *when; /* "first look", "final checks" */
	const char *at;   /* how the reasons say it: "at first look" */
	/* At the end, a dialog the steps opened and left (a Save As a scenario
	 * stops at) is the scenario's business: only the first look calls an
	 * unexpected dialog a concern. */
	bool unexpected_is_concern;
	/* At the end, the app's own window shows where the steps led it (a page
	 * titled "Welcome" the scenario navigated to): judged at first look only. */
	bool main_judged_before;
	const char *main_is;  /* how a concern names the main window; NULL: the app's */
	const ksr_tool *tool; /* desktop mode: only this tool's windows are looked at */
} tally;

/* A window of a spawned tool: the one its spawn waited for, one transient
 * for it, or one whose _NET_WM_PID is in the tool's process group. */
static bool tool_owns(const ksr_tool *tool, const ksr_window *w)
{
	if (w->id == tool->window || (tool->window && w->transient_for == tool->window))
		return true;
	return w->pid > 0 && (w->pid == tool->window_pid || getpgid(w->pid) == tool->pid);
}

/* How the concern names the window: the app's own (or a tool's) says so. */
static const char *whose(bool is_main, const tally *t)
{
	return !is_main ? "" : t->main_is ? t->main_is : " (the app's window)";
}

/* The windows a look already raised a dialog concern for: a later look does
 * not raise it again for the same window (tracked by id, the title may
 * change). */
static bool reported_before(const ksr_run *run, unsigned long id)
{
	for (size_t i = 0; i < run->n_dialogs_reported; i++)
		if (run->dialogs_reported[i] == id)
			return true;
	return id != 0 && run->updater_reported == id;
}

static void remember_reported(ksr_run *run, unsigned long id)
{
	size_t cap = sizeof run->dialogs_reported / sizeof run->dialogs_reported[0];
	if (run->n_dialogs_reported < cap && !reported_before(run, id))
		run->dialogs_reported[run->n_dialogs_reported++] = id;
}

static void raise_concern(ksr_run *run, const ksr_window *w, ksr_dialog_class c, bool is_main,
                          tally *t)
{
	const char *title = or_empty(w->title);
	const char *cls = w->res_class ? w->res_class : "no class";
	if (reported_before(run, w->id))
		return; /* settle or the first look reported this one */
	t->concerns++;
	remember_reported(run, w->id);
	switch (c) {
	case KSR_DIALOG_RECOVERY:
		ksr_run_concern(run, KSR_CONCERN_RECOVERY_PROMPT, 0,
		                "a crash-recovery prompt \"%s\"%s is on screen %s "
		                "(the app's previous session did not end cleanly)",
		                title, whose(is_main, t), t->at);
		break;
	case KSR_DIALOG_FIRST_RUN:
		ksr_run_concern(run, KSR_CONCERN_FIRST_RUN_PROMPT, 0,
		                "a first-run prompt \"%s\"%s is on screen %s", title,
		                whose(is_main, t), t->at);
		break;
	case KSR_DIALOG_UPDATER:
		ksr_run_concern(run, KSR_CONCERN_UPDATER, 0,
		                "an updater window \"%s\"%s is on screen %s", title,
		                whose(is_main, t), t->at);
		break;
	default: /* KSR_DIALOG_UNEXPECTED */
		ksr_run_concern(run, KSR_CONCERN_UNEXPECTED_DIALOG, 0,
		                "an unexpected dialog \"%s\" (%s) is on screen %s", title, cls,
		                t->at);
		break;
	}
}

static void act_on(ksr_run *run, const ksr_window *w, ksr_dialog_class c, bool is_main, tally *t)
{
	t->windows++;
	switch (c) {
	case KSR_DIALOG_ERROR:
		t->errors++;
		if (!t->failed)
			ksr_run_fail(run, KSR_OUTCOME_ERROR_DIALOG, 0,
			             "an error dialog \"%s\" (%s) is on screen %s",
			             or_empty(w->title), w->res_class ? w->res_class : "no class",
			             t->at);
		t->failed = true;
		break;
	case KSR_DIALOG_UNEXPECTED:
		if (t->unexpected_is_concern)
			raise_concern(run, w, c, is_main, t);
		break;
	case KSR_DIALOG_RECOVERY:
	case KSR_DIALOG_FIRST_RUN:
	case KSR_DIALOG_UPDATER:
		raise_concern(run, w, c, is_main, t);
		break;
	case KSR_DIALOG_MAIN:
	case KSR_DIALOG_WINDOW:
		break;
	}
}

/* Every top-level window classified, a `dialog` event each, acted on; cls
 * (wins->len entries, or NULL) receives the classes. */
static void classify_all(ksr_run *run, const ksr_window_list *wins, const ksr_dialog_rules *rules,
                         ksr_dialog_class *cls, tally *t)
{
	for (size_t i = 0; i < wins->len; i++) {
		const ksr_window *w = &wins->items[i];
		bool is_main = t->tool ? w->id == t->tool->window : is_main_window(run, w);
		if (t->tool && !tool_owns(t->tool, w)) {
			if (cls)
				cls[i] = KSR_DIALOG_WINDOW; /* another tool's, or the desktop's */
			continue;
		}
		ksr_dialog_class c =
		        is_main && t->main_judged_before
		                ? KSR_DIALOG_MAIN
		                : ksr_dialog_classify(rules, w->title, w->is_dialog, is_main);
		if (cls)
			cls[i] = c;
		emit_dialog(run, w, c, t->when, t->tool ? t->tool->as : NULL);
		act_on(run, w, c, is_main, t);
	}
}

static void tally_note(const tally *t, char *note, size_t len)
{
	snprintf(note, len, "%d window%s, %d error dialog%s, %d dialog concern%s", t->windows,
	         t->windows == 1 ? "" : "s", t->errors, t->errors == 1 ? "" : "s", t->concerns,
	         t->concerns == 1 ? "" : "s");
}

/* ---- what the app's windows say on the accessibility bus ------------------ */

/* The windows' titles and how each was classified: a landmark that repeats a
 * title (a frame's name is its window's title) was judged with it, and a
 * window already reported is not reported again for what is inside it. */
typedef struct seen {
	const ksr_window_list *wins;
	const ksr_dialog_class *cls;
} seen;

/* A window's title read as a landmark's name is (ksr_atspi_name_display). */
static bool title_is(const ksr_window *w, const char *name)
{
	char *t = ksr_atspi_name_display(w->title);
	bool same = t && name && strcmp(t, name) == 0;
	free(t);
	return same;
}

static bool is_a_title(const seen *s, const char *name)
{
	for (size_t i = 0; i < s->wins->len; i++)
		if (title_is(&s->wins->items[i], name))
			return true;
	return false;
}

static bool window_reported(const seen *s, const char *window, ksr_dialog_class c)
{
	for (size_t i = 0; window && i < s->wins->len; i++)
		if (s->cls[i] == c && title_is(&s->wins->items[i], window))
			return true;
	return false;
}

static void emit_node(ksr_run *run, const ksr_atspi_landmark *l, ksr_dialog_class c, const tally *t)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "role", l->role);
	cJSON_AddStringToObject(f, "name", l->name);
	cJSON_AddStringToObject(f, "path", l->path);
	cJSON_AddStringToObject(f, "window", or_empty(l->window));
	cJSON_AddStringToObject(f, "classification", ksr_dialog_class_name(c));
	cJSON_AddStringToObject(f, "when", t->when);
	if (t->tool && t->tool->as)
		cJSON_AddStringToObject(f, "tool", t->tool->as);
	ksr_run_emit(run, "dialog.node", f);
}

#define NAME_SHOWN 120 /* bytes of a landmark's name in a concern (a web dialog's is its text) */

/* s cut to NAME_SHOWN bytes at a character's start, with an ellipsis, into buf. */
static const char *shortened(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);
	if (n <= NAME_SHOWN || len < NAME_SHOWN + 4)
		return s;
	n = NAME_SHOWN;
	while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--; /* not inside a UTF-8 sequence */
	snprintf(buf, len, "%.*s\xe2\x80\xa6", (int)n, s);
	return buf;
}

/* One landmark's concern, naming it, its role and its window. */
static void node_concern(ksr_run *run, const ksr_atspi_landmark *l, ksr_dialog_class c,
                         const tally *t)
{
	bool rec = c == KSR_DIALOG_RECOVERY;
	char where[NAME_SHOWN + 32] = "", nbuf[NAME_SHOWN + 4], wbuf[NAME_SHOWN + 4];
	if (l->window && strcmp(l->window, l->name) != 0)
		snprintf(where, sizeof where, " in the window \"%s\"",
		         shortened(l->window, wbuf, sizeof wbuf));
	ksr_run_concern(run, rec ? KSR_CONCERN_RECOVERY_PROMPT : KSR_CONCERN_FIRST_RUN_PROMPT, 0,
	                "a %s \"%s\" (accessibility role %s%s) is on screen %s",
	                rec ? "crash-recovery prompt" : "first-run prompt",
	                shortened(l->name, nbuf, sizeof nbuf), l->role, where, t->at);
}

/* Whether an earlier landmark of the same window already raised class c. */
static bool raised_before(const ksr_atspi_landmarks *lm, const ksr_dialog_class *ncls, size_t k)
{
	const char *w = lm->items[k].window;
	for (size_t i = 0; i < k; i++)
		if (ncls[i] == ncls[k] &&
		    ((!w && !lm->items[i].window) ||
		     (w && lm->items[i].window && !strcmp(w, lm->items[i].window))))
			return true;
	return false;
}

static void act_on_nodes(ksr_run *run, const ksr_atspi_landmarks *lm, const ksr_dialog_rules *rules,
                         const seen *s, tally *t)
{
	ksr_dialog_class *ncls = ksr_xcalloc(lm->len ? lm->len : 1, sizeof *ncls);
	for (size_t k = 0; k < lm->len; k++) {
		const ksr_atspi_landmark *l = &lm->items[k];
		ncls[k] = is_a_title(s, l->name) ? KSR_DIALOG_WINDOW
		                                 : ksr_dialog_classify_node(rules, l->name);
		if (ncls[k] == KSR_DIALOG_WINDOW)
			continue;
		emit_node(run, l, ncls[k], t);
		if (window_reported(s, l->window, ncls[k]) || raised_before(lm, ncls, k))
			continue;
		t->concerns++;
		t->nodes++;
		node_concern(run, l, ncls[k], t);
	}
	free(ncls);
}

bool ksr_dialogs_first_look(ksr_run *run, const ksr_atspi_landmarks *nodes, char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules)) {
		snprintf(note, len, "windows could not be listed");
		return true;
	}
	tally t = {.when = "first look", .at = "at first look", .unexpected_is_concern = true};
	ksr_dialog_class *cls = ksr_xcalloc(wins.len ? wins.len : 1, sizeof *cls);
	classify_all(run, &wins, &rules, cls, &t);
	if (nodes) {
		seen s = {.wins = &wins, .cls = cls};
		act_on_nodes(run, nodes, &rules, &s, &t);
	}
	tally_note(&t, note, len);
	if (t.nodes)
		snprintf(note + strlen(note), len - strlen(note), " (%d inside a window)", t.nodes);
	free(cls);
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
	return !t.failed;
}

bool ksr_dialogs_tool_look(ksr_run *run, const ksr_tool *tool, const ksr_atspi_landmarks *nodes,
                           char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules)) {
		snprintf(note, len, "windows could not be listed");
		return true;
	}
	char at[160], main_is[120];
	snprintf(at, sizeof at, "after the tool '%s' (spawned at line %d) settled",
	         tool->as ? tool->as : "?", tool->line);
	snprintf(main_is, sizeof main_is, " (the tool '%s''s window)", tool->as ? tool->as : "?");
	tally t = {.when = "tool look",
	           .at = at,
	           .unexpected_is_concern = true,
	           .main_is = main_is,
	           .tool = tool};
	ksr_dialog_class *cls = ksr_xcalloc(wins.len ? wins.len : 1, sizeof *cls);
	classify_all(run, &wins, &rules, cls, &t);
	if (nodes) {
		seen s = {.wins = &wins, .cls = cls};
		act_on_nodes(run, nodes, &rules, &s, &t);
	}
	tally_note(&t, note, len);
	free(cls);
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
	return !t.failed;
}

bool ksr_dialogs_at_end(ksr_run *run, char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules)) {
		snprintf(note, len, "windows could not be listed");
		return true;
	}
	tally t = {
	        .when = "final checks", .at = "at the end of the run", .main_judged_before = true};
	classify_all(run, &wins, &rules, NULL, &t);
	tally_note(&t, note, len);
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
	return !t.failed;
}

/* One running tool's windows at the end, judged as the final checks judge
 * the app's; the tally is added to *sum. */
static void tool_at_end(ksr_run *run, const ksr_window_list *wins, const ksr_dialog_rules *rules,
                        const ksr_tool *tool, tally *sum)
{
	char at[160], main_is[120];
	snprintf(at, sizeof at, "at the end of the run (the tool '%s', spawned at line %d)",
	         tool->as ? tool->as : "?", tool->line);
	snprintf(main_is, sizeof main_is, " (the tool '%s''s window)", tool->as ? tool->as : "?");
	tally t = {.when = "final checks",
	           .at = at,
	           .main_judged_before = true,
	           .main_is = main_is,
	           .tool = tool,
	           .failed = sum->failed}; /* one failure recorded, the first */
	classify_all(run, wins, rules, NULL, &t);
	sum->windows += t.windows, sum->errors += t.errors, sum->concerns += t.concerns;
	sum->failed = t.failed;
}

bool ksr_dialogs_tools_at_end(ksr_run *run, char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	if (!load(run, &wins, &rules)) {
		snprintf(note, len, "windows could not be listed");
		return true;
	}
	tally sum = {0};
	for (size_t i = 0; i < run->n_tools; i++)
		if (!run->tools[i].stopped && run->tools[i].window)
			tool_at_end(run, &wins, &rules, &run->tools[i], &sum);
	tally_note(&sum, note, len);
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
	return !sum.failed;
}

void ksr_dialogs_on_failure(ksr_run *run, char *note, size_t len)
{
	ksr_window_list wins = {0};
	ksr_dialog_rules rules;
	snprintf(note, len, "%s", "");
	if (!load(run, &wins, &rules))
		return;
	int errors = 0;
	for (size_t i = 0; i < wins.len; i++) {
		const ksr_window *w = &wins.items[i];
		ksr_dialog_class c =
		        ksr_dialog_classify(&rules, w->title, w->is_dialog, is_main_window(run, w));
		if (c != KSR_DIALOG_ERROR)
			continue;
		emit_dialog(run, w, c, "diagnosis", NULL);
		if (errors++ == 0)
			snprintf(note, len, "an error dialog \"%s\" (%s) is on screen",
			         or_empty(w->title), w->res_class ? w->res_class : "no class");
	}
	if (errors > 1)
		snprintf(note + strlen(note), len - strlen(note), " (and %d more)", errors - 1);
	ksr_dialog_rules_clear(&rules);
	ksr_window_list_clear(&wins);
}
