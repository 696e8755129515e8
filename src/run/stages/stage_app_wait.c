/* App wait: the app's process and window (docs/scenario.md#the-app-wait).
 * It follows what is on screen: the windows of the processes matching
 * process: and every window that appears. A splash is never the app's
 * window; a matching process that shows only dialogs for settle_s is a
 * prompt that blocks the app; a wait that ends with nothing says which half
 * was missing and what the process showed instead. */
#include "run/stages/stage.h"
#include "run/stages/app.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/atspi.h"
#include "ksr/proc.h"
#include "ksr/strbuf.h"
#include "run/actions/runner.h"
#include "run/diagnosis/diagnose.h"
#include "run/diagnosis/dialogs.h"
#include "run/stages/app_windows.h"

#define LISTED_MAX     5    /* windows a reason names */
#define TITLE_MAX      60   /* bytes of a title in a reason */
#define BUTTONS_MAX    6    /* a dialog's buttons in a reason */
#define PROMPT_READ_MS 3000 /* reading a prompt's buttons from AT-SPI */

/* ---- app wait ----------------------------------------------------------- */

static const char *app_skip(const ksr_run *run)
{
	return run->sc->desktop ? "desktop mode: there is no app to wait for" : NULL;
}

static double app_limit(const ksr_run *run)
{
	return run->sc->launch_timeout_s;
}

typedef struct app_wait {
	bool process_seen, window_seen;
	int pid;
	ksr_window window; /* the pick, its strings owned */
	ksr_proc_list procs;
	int64_t scanned_ms; /* when procs was read (0: never) */
	ksr_window_list wins;
	/* A window without WM_CLASS (LibreOffice's splash has none) is given
	 * settle_s to stay: a splash the app then replaces. */
	unsigned long held;
	int64_t held_since_ms;
	int64_t dialogs_since_ms; /* the process shows only dialogs since (0: not) */
	char *splash_title;       /* the last splash passed over */
	unsigned long splash_id;
	int64_t started_ms;     /* the wait's start: the launch, within a few ms */
	int64_t launch_gone_ms; /* when the launch command was seen ended (0: not) */
	/* An instance that matched but is not the one this run launched (an
	 * older one on a shared display), named in the reason (origin.c). */
	ksr_run_stale stale;
} app_wait;

static void app_wait_clear(app_wait *aw)
{
	ksr_proc_list_clear(&aw->procs);
	ksr_window_list_clear(&aw->wins);
	ksr_run_window_release(&aw->window);
	free(aw->splash_title);
}

static bool pid_in(const ksr_proc_list *procs, int pid)
{
	for (size_t i = 0; pid > 0 && i < procs->len; i++)
		if (procs->items[i].pid == pid)
			return true;
	return false;
}

static const ksr_proc *proc_of(const ksr_proc_list *procs, int pid)
{
	for (size_t i = 0; pid > 0 && i < procs->len; i++)
		if (procs->items[i].pid == pid)
			return &procs->items[i];
	return NULL;
}

static bool by_title(const ksr_scenario *sc)
{
	return sc->window || sc->window_class;
}

static bool want_proc(const ksr_scenario *sc)
{
	return sc->process || sc->process_cmdline;
}

static bool window_matches(const ksr_scenario *sc, const ksr_window *w)
{
	return ksr_run_window_matches(sc->window, sc->window_class, w);
}

static bool dialog_like(const ksr_window *w)
{
	return w->is_dialog || w->is_modal;
}

static bool anonymous(const ksr_window *w)
{
	return (!w->res_class || !*w->res_class) && (!w->res_name || !*w->res_name);
}

static void keep_window(app_wait *aw, const ksr_window *w, int pid)
{
	ksr_run_window_release(&aw->window);
	ksr_run_window_copy(&aw->window, w);
	aw->window_seen = true;
	aw->pid = pid;
}

static void note_splash(app_wait *aw, const ksr_window *w)
{
	if (aw->splash_id == w->id)
		return;
	free(aw->splash_title);
	aw->splash_title = ksr_xstrdup(w->title);
	aw->splash_id = w->id;
}

/* docs/architecture.md: the window is tied to the process by _NET_WM_PID
 * when it matches; otherwise (a launcher that forks) any matching process and
 * any matching window satisfy the wait. With no window: pattern, a window of a
 * matching process is required. Among candidates a window of the process
 * comes first, then one that is not a dialog, then one with a WM_CLASS (not
 * a splash held back); a splash is never one. With launch:, the processes are
 * the launch's only (look), and so are the windows: one whose _NET_WM_PID is
 * not the launch's, or that has none and was there before it, is passed over. */
static const ksr_window *best_candidate(const ksr_run *run, app_wait *aw)
{
	const ksr_scenario *sc = run->sc;
	const ksr_window *best = NULL;
	int best_rank = 0;
	aw->window_seen = false;
	for (size_t i = 0; i < aw->wins.len; i++) {
		const ksr_window *w = &aw->wins.items[i];
		bool of_proc = pid_in(&aw->procs, w->pid);
		if (by_title(sc) ? !window_matches(sc, w) : !of_proc)
			continue;
		/* An older instance's window (or another party's) is not the app's. */
		if (!of_proc && !ksr_run_window_may_be_launchs(run, w, &aw->stale))
			continue;
		if (w->is_splash) {
			note_splash(aw, w);
			continue;
		}
		aw->window_seen = true;
		int rank =
		        1 + (of_proc ? 4 : 0) + (dialog_like(w) ? 0 : 2) + (anonymous(w) ? 0 : 1);
		if (rank > best_rank) {
			best = w;
			best_rank = rank;
		}
	}
	if (best && !pid_in(&aw->procs, best->pid) && want_proc(sc) && !aw->procs.len)
		return NULL;
	return best;
}

/* An anonymous candidate is taken once it stayed settle_s (or at the limit). */
static bool held_back(const ksr_run *run, app_wait *aw, const ksr_window *w, bool full)
{
	if (full || !anonymous(w))
		return false;
	if (aw->held != w->id) {
		aw->held = w->id;
		aw->held_since_ms = ksr_now_ms();
	}
	return ksr_now_ms() - aw->held_since_ms < (int64_t)(run->sc->settle_s * 1000);
}

static bool some_window_matches(const ksr_scenario *sc, const ksr_window_list *wins)
{
	for (size_t i = 0; i < wins->len; i++)
		if (window_matches(sc, &wins->items[i]))
			return true;
	return false;
}

/* Windows on every look; /proc (the slow part, a few ms) when a window
 * matches, every PROC_RESCAN_MS otherwise, and always when full (the final
 * word on what is missing): a window is seen within ~1 ms of its map. */
static void look(ksr_run *run, app_wait *aw, bool full)
{
	const ksr_scenario *sc = run->sc;
	ksr_err err = {0};
	ksr_window_list_clear(&aw->wins);
	ksr_x11_list_windows(run->x, &aw->wins, &err);
	int64_t now = ksr_now_ms();
	bool due = full || !aw->scanned_ms || now - aw->scanned_ms >= PROC_RESCAN_MS ||
	           !by_title(sc) || some_window_matches(sc, &aw->wins);
	if (want_proc(sc) && due) {
		ksr_proc_list_clear(&aw->procs);
		ksr_proc_find(sc->process, sc->process_cmdline, &aw->procs, &err);
		/* Another session's instance (another display) is not this app. */
		ksr_proc_list_drop_other_displays(&aw->procs, ksr_x11_display_name(run->x));
		/* With launch:, an instance this run did not start is not the app. */
		ksr_run_keep_launched(run, &aw->procs, &aw->stale);
		aw->scanned_ms = now;
	}
	aw->process_seen = !want_proc(sc) || aw->procs.len > 0;
}

static bool app_present(ksr_run *run, app_wait *aw, bool full)
{
	look(run, aw, full);
	const ksr_window *pick = best_candidate(run, aw);
	if (!pick || !aw->process_seen || held_back(run, aw, pick, full))
		return false;
	bool tied = pid_in(&aw->procs, pick->pid);
	keep_window(aw, pick, tied || !want_proc(run->sc) ? pick->pid : aw->procs.items[0].pid);
	return true;
}

static void record_app(ksr_run *run, app_wait *aw)
{
	ksr_run_window_release(&run->window);
	run->window = aw->window;
	aw->window = (ksr_window){0}; /* the run owns its strings now */
	run->have_window = true;
	run->app_pid = aw->pid;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", aw->pid);
	ksr_proc_list procs = {0};
	ksr_err err = {0};
	if (aw->pid > 0 && ksr_proc_find(NULL, NULL, &procs, &err) == 0) {
		const ksr_proc *p = proc_of(&procs, aw->pid);
		if (p) {
			cJSON_AddStringToObject(f, "name", p->name);
			cJSON_AddStringToObject(f, "cmdline", p->cmdline);
		}
	}
	ksr_proc_list_clear(&procs);
	cJSON_AddBoolToObject(f, "launched", run->launched_pid > 0);
	/* How it is tied to the launch: descendant, tagged, started-after; attached. */
	cJSON_AddStringToObject(f, "origin",
	                        aw->pid > 0
	                                ? ksr_proc_origin_name(ksr_run_proc_origin(run, aw->pid))
	                        : run->launched_pid > 0 ? "unknown"
	                                                : "attached");
	cJSON_AddItemToObject(f, "window", ksr_run_window_fields(&run->window));
	char id[32];
	if (aw->splash_title) { /* passed over: the app's window came after it */
		cJSON *s = cJSON_AddObjectToObject(f, "splash");
		snprintf(id, sizeof id, "0x%lx", aw->splash_id);
		cJSON_AddStringToObject(s, "id", id);
		cJSON_AddStringToObject(s, "title", aw->splash_title);
	}
	ksr_run_emit(run, "app", f);
	ksr_run_app_seen_alive(run); /* its launcher, should it restart it */
}

/* The launch command died by a signal before any window: a crash, not a slow
 * start (a launcher that forks and exits 0 is normal, and the wait goes on). */
static bool launch_crashed(ksr_run *run)
{
	if (run->launched_pid <= 0 || !ksr_app_reap_launch(run, 0))
		return false;
	int st = run->launch_status;
	return WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) > 128);
}

/* ---- a prompt that blocks the app ---------------------------------------- */

/* The matching process's windows (splashes aside) when every one is a
 * dialog: into out (up to max), how many there are; 0 when it shows none or
 * any other window. */
static size_t only_dialogs(const app_wait *aw, const ksr_window **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < aw->wins.len; i++) {
		const ksr_window *w = &aw->wins.items[i];
		if (!pid_in(&aw->procs, w->pid) || w->is_splash)
			continue;
		if (!dialog_like(w))
			return 0;
		if (n < max)
			out[n] = w;
		n++;
	}
	return n < max ? n : max;
}

/* A top-level accessible of the app named like the dialog's title. */
static bool names_window(const ksr_atspi_tree *t, size_t i, const char *title)
{
	char *a = ksr_atspi_name_display(t->nodes[i].name), *b = ksr_atspi_name_display(title);
	bool same = a && b && *a && strcmp(a, b) == 0;
	free(a);
	free(b);
	return same;
}

static int top_level_of(const ksr_atspi_tree *t, size_t i)
{
	int k = (int)i;
	while (k > 0 && t->nodes[k].parent > 0)
		k = t->nodes[k].parent;
	return k;
}

static void add_buttons(ksr_strbuf *b, const ksr_atspi_tree *t, const char *title)
{
	int top = -1;
	for (size_t i = 1; i < t->len && top < 0; i++)
		if (t->nodes[i].parent == 0 && names_window(t, i, title))
			top = (int)i;
	size_t n = 0;
	for (size_t i = 1; i < t->len && n < BUTTONS_MAX; i++) {
		const ksr_atspi_node *nd = &t->nodes[i];
		if (!ksr_atspi_role_equal("push button", nd->role) ||
		    (top >= 0 && top_level_of(t, i) != top) || !ksr_atspi_tree_showing(t, i))
			continue;
		char *name = ksr_atspi_name_display(nd->name);
		if (name && *name) {
			ksr_strbuf_add(b, n++ ? ", " : " (");
			ksr_quote_title(b, name, 40);
		}
		free(name);
	}
	if (n)
		ksr_strbuf_add(b, ")");
}

/* The dialogs' titles, each with its buttons where the app is on the
 * accessibility bus (bounded by PROMPT_READ_MS and the stage; without the bus
 * or the app on it, the titles alone). */
static void describe_dialogs(ksr_run *run, int pid, const ksr_window **dlg, size_t n, ksr_strbuf *b)
{
	ksr_atspi_tree t = {0};
	ksr_atspi *a = NULL;
	ksr_atspi_app app = {0};
	ksr_err err = {0};
	bool walked = false;
	ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROMPT_READ_MS));
	ksr_atspi_opts o = {.x = run->x, .app_pid = pid};
	const char *by = NULL;
	if (run->sc->atspi && ksr_atspi_open(&o, d, &a, &err) == 0 &&
	    ksr_atspi_find_app(a, pid, NULL, d, &app, &by, &err) == 0) {
		ksr_atspi_walk_opts wo = {.max_nodes = 400, .max_depth = 16};
		walked = ksr_atspi_walk(a, &app, &wo, d, &t, &err) == 0;
	}
	for (size_t i = 0; i < n; i++) {
		ksr_strbuf_add(b, i ? ", " : "");
		ksr_quote_title(b, dlg[i]->title, TITLE_MAX);
		if (walked)
			add_buttons(b, &t, dlg[i]->title);
	}
	if (walked)
		ksr_atspi_tree_clear(&t);
	ksr_atspi_app_clear(&app);
	ksr_atspi_close(a);
}

/* A process name as is when it is plain, else quoted as data. */
static void add_name(ksr_strbuf *b, const char *name)
{
	size_t n = strlen(name);
	if (n && n <= 40 &&
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	                 "0123456789._+-") == n)
		ksr_strbuf_add(b, name);
	else
		ksr_quote_title(b, name, 40);
}

static void add_wanted(ksr_strbuf *b, const ksr_scenario *sc)
{
	if (sc->window)
		ksr_strbuf_addf(b, "'%s'", ksr_pattern_source(sc->window));
	if (sc->window_class)
		ksr_strbuf_addf(b, "%sclass '%s'", sc->window ? " of " : "",
		                ksr_pattern_source(sc->window_class));
}

static void fail_blocked_by_prompt(ksr_run *run, app_wait *aw, const ksr_window **dlg, size_t n)
{
	int pid = dlg[0]->pid;
	const ksr_proc *p = proc_of(&aw->procs, pid);
	ksr_strbuf b = {0};
	add_name(&b, p ? p->name : "?");
	ksr_strbuf_addf(&b, " (pid %d) shows only its dialog%s ", pid, n > 1 ? "s" : "");
	describe_dialogs(run, pid, dlg, n, &b);
	ksr_strbuf_add(&b, "; no window matching ");
	add_wanted(&b, run->sc);
	ksr_strbuf_addf(&b, " appeared in the %g s (settle_s) after it showed", run->sc->settle_s);
	run->app_pid = pid; /* diagnosis and the end of the run know the process */
	ksr_run_fail(run, KSR_OUTCOME_BLOCKED_BY_PROMPT,
	             run->sc->window ? run->sc->window_pos.line : 0, "%s", b.p);
	ksr_strbuf_free(&b);
}

/* A prompt the scenario declared under blockers: is its business (live
 * remediation or `blocked`): does one of them hold now? */
static bool declared_blocker_holds(ksr_run *run)
{
	const ksr_check_list *bl = &run->sc->blockers;
	for (size_t i = 0; i < bl->len; i++) {
		char why[256] = "";
		if (ksr_check_once(run, &bl->items[i], why, sizeof why) > 0)
			return true;
	}
	return false;
}

typedef enum prompt_state { PROMPT_NONE, PROMPT_CLEARED, PROMPT_ENDED } prompt_state;

/* The process shows only dialogs and nothing matched: once that lasted
 * settle_s, the run ends blocked-by-prompt (or on a declared blocker). */
static prompt_state check_prompt(ksr_run *run, app_wait *aw)
{
	const ksr_window *dlg[3];
	size_t n = by_title(run->sc) && want_proc(run->sc) ? only_dialogs(aw, dlg, 3) : 0;
	if (!n) {
		aw->dialogs_since_ms = 0;
		return PROMPT_NONE;
	}
	int64_t now = ksr_now_ms();
	if (!aw->dialogs_since_ms)
		aw->dialogs_since_ms = now;
	if (now - aw->dialogs_since_ms < (int64_t)(run->sc->settle_s * 1000))
		return PROMPT_NONE;
	aw->dialogs_since_ms = 0;
	if (declared_blocker_holds(run))
		return ksr_blockers_check(run, "app-wait") ? PROMPT_CLEARED : PROMPT_ENDED;
	fail_blocked_by_prompt(run, aw, dlg, n);
	return PROMPT_ENDED;
}

/* ---- never appeared ------------------------------------------------------ */

static void add_window(ksr_strbuf *b, const ksr_scenario *sc, const ksr_window *w, bool with_pid)
{
	ksr_quote_title(b, w->title, TITLE_MAX);
	ksr_strbuf_addf(b, " (%s", w->type && *w->type ? w->type : "unknown type");
	if (w->is_modal)
		ksr_strbuf_add(b, ", modal");
	else if (w->transient_for && (!w->type || strcmp(w->type, "dialog") != 0))
		ksr_strbuf_add(b, ", transient");
	if (with_pid)
		ksr_strbuf_addf(b, ", pid %d", w->pid);
	if (w->is_splash)
		ksr_strbuf_add(b, ", never the app's window");
	ksr_near_miss k = ksr_title_near_miss(sc->window, w->title);
	if (k != KSR_NEAR_NONE)
		ksr_strbuf_addf(b, "; near miss: %s", ksr_near_miss_mark(k));
	ksr_strbuf_add(b, ")");
}

/* The matching processes' windows, then near misses of other processes. */
static void add_windows_seen(ksr_strbuf *b, const ksr_scenario *sc, const app_wait *aw)
{
	size_t listed = 0, more = 0;
	for (size_t i = 0; i < aw->wins.len; i++) {
		const ksr_window *w = &aw->wins.items[i];
		if (!pid_in(&aw->procs, w->pid))
			continue;
		if (listed == LISTED_MAX) {
			more++;
			continue;
		}
		ksr_strbuf_add(b, listed++ ? ", " : "; its windows: ");
		add_window(b, sc, w, false);
	}
	if (want_proc(sc) && aw->procs.len && !listed)
		ksr_strbuf_add(b, "; it shows no window");
	size_t near = 0;
	for (size_t i = 0; i < aw->wins.len && listed + near < LISTED_MAX; i++) {
		const ksr_window *w = &aw->wins.items[i];
		if (pid_in(&aw->procs, w->pid) ||
		    ksr_title_near_miss(sc->window, w->title) == KSR_NEAR_NONE)
			continue;
		ksr_strbuf_add(b, near++ ? ", " : "; on screen: ");
		add_window(b, sc, w, true);
	}
	if (more)
		ksr_strbuf_addf(b, " and %zu more", more);
}

static void add_process(ksr_strbuf *b, const ksr_scenario *sc)
{
	if (sc->process)
		ksr_strbuf_addf(b, "process matching '%s'", ksr_pattern_source(sc->process));
	else
		ksr_strbuf_addf(b, "process whose command line matches '%s'",
		                ksr_pattern_source(sc->process_cmdline));
}

static void add_running(ksr_strbuf *b, const app_wait *aw)
{
	const ksr_proc *p = &aw->procs.items[0];
	add_name(b, p->name);
	ksr_strbuf_addf(b, " (pid %d", p->pid);
	if (aw->procs.len > 1)
		ksr_strbuf_addf(b, " and %zu more", aw->procs.len - 1);
	ksr_strbuf_add(b, ")");
}

/* Which half was missing, and what was there instead. */
static void fail_never_appeared(ksr_run *run, const app_wait *aw)
{
	const ksr_scenario *sc = run->sc;
	ksr_strbuf b = {0};
	ksr_strbuf_addf(&b, "the app never appeared within %g s: ", sc->launch_timeout_s);
	if (!aw->process_seen && !aw->window_seen && by_title(sc)) {
		ksr_strbuf_add(&b, "neither a ");
		add_process(&b, sc);
		ksr_strbuf_add(&b, " nor a window matching ");
		add_wanted(&b, sc);
	} else if (!aw->process_seen) {
		ksr_strbuf_add(&b, "no ");
		add_process(&b, sc);
		ksr_strbuf_add(&b, by_title(sc) ? " runs (a window matching " : " runs");
		if (by_title(sc)) {
			add_wanted(&b, sc);
			ksr_strbuf_add(&b, " is there)");
		}
	} else if (want_proc(sc)) {
		ksr_strbuf_add(&b, "the ");
		add_process(&b, sc);
		ksr_strbuf_add(&b, " runs, ");
		add_running(&b, aw);
		ksr_strbuf_add(&b, ", but no window ");
		if (by_title(sc)) {
			ksr_strbuf_add(&b, "matching ");
			add_wanted(&b, sc);
		} else {
			ksr_strbuf_add(&b, "of its own");
		}
		ksr_strbuf_add(&b, " appeared");
	} else {
		ksr_strbuf_add(&b, "no window matching ");
		add_wanted(&b, sc);
		ksr_strbuf_add(&b, " appeared");
	}
	add_windows_seen(&b, sc, aw);
	ksr_run_stale_describe(&aw->stale, &b);
	if (aw->splash_title && !aw->window_seen) {
		ksr_strbuf_add(&b, "; only a splash matched: ");
		ksr_quote_title(&b, aw->splash_title, TITLE_MAX);
	}
	ksr_run_fail(run, KSR_OUTCOME_NEVER_APPEARED,
	             sc->process ? sc->process_pos.line : sc->window_pos.line, "%s", b.p);
	ksr_strbuf_free(&b);
}

/* ---- an app that exited before its window ------------------------------- */

/* The launch command ended (not by a signal: that is launch_crashed) and
 * nothing of the app is left (docs/scenario.md#the-app-wait): no process
 * matching process:/process_cmdline: that may be on the run's display, by a
 * fresh /proc read. A launcher that exits 0 may have handed over to a child
 * that is still to exec, so that case is called only settle_s after the exit;
 * a non-zero exit at once. Without a process pattern nothing tells a handed
 * over app, so only a non-zero exit counts. */
static bool launch_exited(ksr_run *run, app_wait *aw)
{
	if (run->launched_pid <= 0 || !ksr_app_reap_launch(run, 0))
		return false;
	int64_t now = ksr_now_ms();
	if (!aw->launch_gone_ms)
		aw->launch_gone_ms = now;
	int st = run->launch_status;
	bool clean = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!want_proc(run->sc))
		return !clean;
	if (clean && now - aw->launch_gone_ms < (int64_t)(run->sc->settle_s * 1000))
		return false;
	if (aw->procs.len && now - aw->scanned_ms < PROC_RESCAN_MS)
		return false; /* a hand-over seen just now: no /proc read on every event */
	look(run, aw, true);
	return aw->procs.len == 0;
}

/* "vlc exited with status 1 after 0.2 s: "VLC is not supposed to ..."" and
 * what was looked for; the app's output is data, quoted. */
static void fail_exited(ksr_run *run, const app_wait *aw)
{
	const ksr_scenario *sc = run->sc;
	char how[128];
	ksr_app_describe_exit(run->launch_status, how, sizeof how);
	ksr_strbuf b = {0};
	char *log = ksr_evidence_path(run->out, "launch.log");
	ksr_launch_watch lw = {.pid = run->launched_pid,
	                       .start_ms = aw->started_ms,
	                       .ended_ms = aw->launch_gone_ms,
	                       .status = run->launch_status};
	ksr_launch_watch_describe(&lw, sc->launch, log, &b);
	if (want_proc(sc)) {
		ksr_strbuf_add(&b, "; no ");
		add_process(&b, sc);
		ksr_strbuf_add(&b, " is left");
	}
	if (by_title(sc)) {
		ksr_strbuf_add(&b, ", and no window matching ");
		add_wanted(&b, sc);
		ksr_strbuf_add(&b, " appeared");
	}
	ksr_strbuf_add(&b, " (launch.log has its output)");
	ksr_run_stale_describe(&aw->stale, &b);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", run->launched_pid);
	cJSON_AddStringToObject(f, "how", how);
	ksr_run_emit(run, "app.exit", f);
	ksr_run_fail(run, KSR_OUTCOME_EXITED, sc->launch_pos.line, "%s", b.p);
	free(log);
	ksr_strbuf_free(&b);
}

/* ---- the stage ----------------------------------------------------------- */

static void app_note(ksr_run *run, const app_wait *aw, const char *tail, char *note, size_t len)
{
	snprintf(note, len, "pid %d, window \"%s\"%s%s%s%s", run->app_pid,
	         run->window.title ? run->window.title : "",
	         aw->splash_title ? " after splash \"" : "",
	         aw->splash_title ? aw->splash_title : "", aw->splash_title ? "\"" : "", tail);
}

typedef enum step_result { WAIT_ON, WAIT_FOUND, WAIT_FAILED, WAIT_LIMIT } step_result;

static step_result wait_once(ksr_run *run, app_wait *aw)
{
	if (app_present(run, aw, false))
		return WAIT_FOUND;
	if (launch_crashed(run)) {
		run->app_pid = run->launched_pid;
		ksr_app_record_crash(run, "before its window appeared");
		return WAIT_FAILED;
	}
	if (launch_exited(run, aw)) {
		if (app_present(run, aw, true)) /* its window came with the last look */
			return WAIT_FOUND;
		fail_exited(run, aw);
		return WAIT_FAILED;
	}
	prompt_state ps = check_prompt(run, aw);
	if (ps == PROMPT_ENDED)
		return WAIT_FAILED;
	if (ps == PROMPT_CLEARED)
		return WAIT_ON;
	ksr_deadline tick = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
	ksr_wait w = ksr_x11_wait_change(run->x, tick);
	if (w == KSR_WAIT_ERROR) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
		             "the X display connection was lost during the app wait");
		return WAIT_FAILED;
	}
	if (w == KSR_WAIT_READY || (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage)))
		return WAIT_ON;
	if (ksr_run_wait_ended_run(run, w, 0, "the app wait"))
		return WAIT_FAILED;
	return WAIT_LIMIT;
}

static ksr_stage_status stage_app_wait(ksr_run *run, char *note, size_t len)
{
	app_wait aw = {.started_ms = ksr_now_ms()};
	step_result r;
	while ((r = wait_once(run, &aw)) == WAIT_ON)
		;
	ksr_stage_status st = KSR_STAGE_FAILED;
	if (r == WAIT_FOUND) {
		record_app(run, &aw);
		app_note(run, &aw, "", note, len);
		st = KSR_STAGE_OK;
	} else if (r == WAIT_LIMIT && ksr_x11_alive(run->x) &&
	           app_present(run, &aw, true)) { /* a last look, /proc too */
		record_app(run, &aw);
		app_note(run, &aw, " (at the limit)", note, len);
		st = KSR_STAGE_OK;
	} else if (r == WAIT_LIMIT) {
		fail_never_appeared(run, &aw);
	}
	app_wait_clear(&aw);
	return st;
}

const ksr_stage_def ksr_stage_app_wait = {
        .name = "app-wait", .limit_s = app_limit, .skip = app_skip, .run = stage_app_wait};
