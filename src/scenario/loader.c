/* The scenario loader (docs/scenario.md): file -> YAML tree -> struct ksr_scenario,
 * with every load-time rejection reported at its line:column. The top-level
 * keys are the table below; ksr_scenario_top_level_keys() serves the same one. */
#include <glib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/redact.h"
#include "scenario/scn_internal.h"

enum top_key {
	TK_NAME,
	TK_LAUNCH,
	TK_PROCESS,
	TK_PROCESS_CMDLINE,
	TK_WINDOW,
	TK_WINDOW_CLASS,
	TK_BOOT_TIMEOUT,
	TK_LAUNCH_TIMEOUT,
	TK_SETTLE,
	TK_PAINT_TIMEOUT,
	TK_KEEP_RUNNING,
	TK_ATSPI,
	TK_LOGS,
	TK_SECRETS,
	TK_BASELINE,
	TK_BASELINE_TOLERANCE,
	TK_BASELINE_MASK,
	TK_ERROR_DIALOGS,
	TK_FIRST_RUN_PROMPTS,
	TK_UPDATERS,
	TK_RECOVERY_PROMPTS,
	TK_TARGETS,
	TK_CDP,
	TK_CDP_TARGETS,
	TK_STEPS,
	TK_PLAN,
	TK_GOAL,
	TK_SUCCESS,
	TK_GOAL_BUDGET,
	TK_BLOCKERS,
	TK_REMEDIATION_TIMEOUT,
	TK_DESKTOP,
	TK_READY_QUIET,
	TK_VIDEO,
	TK_COUNT
};

static const char *const top_keys[TK_COUNT + 1] = {
        [TK_NAME] = "name",
        [TK_LAUNCH] = "launch",
        [TK_PROCESS] = "process",
        [TK_PROCESS_CMDLINE] = "process_cmdline",
        [TK_WINDOW] = "window",
        [TK_WINDOW_CLASS] = "window_class",
        [TK_BOOT_TIMEOUT] = "boot_timeout_s",
        [TK_LAUNCH_TIMEOUT] = "launch_timeout_s",
        [TK_SETTLE] = "settle_s",
        [TK_PAINT_TIMEOUT] = "paint_timeout_s",
        [TK_KEEP_RUNNING] = "keep_running",
        [TK_ATSPI] = "atspi",
        [TK_LOGS] = "logs",
        [TK_SECRETS] = "secrets",
        [TK_BASELINE] = "baseline",
        [TK_BASELINE_TOLERANCE] = "baseline_tolerance",
        [TK_BASELINE_MASK] = "baseline_mask",
        [TK_ERROR_DIALOGS] = "error_dialogs",
        [TK_FIRST_RUN_PROMPTS] = "first_run_prompts",
        [TK_UPDATERS] = "updaters",
        [TK_RECOVERY_PROMPTS] = "recovery_prompts",
        [TK_TARGETS] = "targets",
        [TK_CDP] = "cdp",
        [TK_CDP_TARGETS] = "cdp_targets",
        [TK_STEPS] = "steps",
        [TK_PLAN] = "plan",
        [TK_GOAL] = "goal",
        [TK_SUCCESS] = "success",
        [TK_GOAL_BUDGET] = "goal_budget",
        [TK_BLOCKERS] = "blockers",
        [TK_REMEDIATION_TIMEOUT] = "remediation_timeout_s",
        [TK_DESKTOP] = "desktop",
        [TK_READY_QUIET] = "ready_quiet_ms",
        [TK_VIDEO] = "video",
        [TK_COUNT] = NULL,
};

const char *const scn_keys_declared[] = {"at", "window", NULL};
const char *const scn_keys_cdp[] = {"port", "host", "browser", NULL};
const char *const scn_keys_goal_budget[] = {"turns", "seconds", "model_calls", NULL};
const char *const scn_keys_spawn[] = {"command", "window", "process", "as", "desktop_entry", NULL};
const char *const scn_keys_selector_text[] = {"selector", "text", NULL};
const char *const scn_keys_state[] = {"name", "role", "state", "label", "in", "nth", NULL};
const char *const scn_keys_page[] = {"selector", "text", "url", "title", NULL};
const char *const scn_keys_text[] = {"name",  "role", "equals", "contains", "matches",
                                     "label", "in",   "nth",    NULL};
const char *const scn_keys_locator[] = {"name", "role", "label", "in", "nth", NULL};
const char *const scn_keys_in[] = {"name", "role", NULL};
const char *const scn_keys_target[] = {"window", NULL};
const char *const scn_keys_hover[] = {"element", "role", "selector", NULL};
const char *const scn_keys_drag[] = {"from", "to", NULL};

#define DAY_S 86400.0

const char *const *ksr_scenario_top_level_keys(void)
{
	return top_keys;
}

const char *const *ksr_scenario_mapping_keys(const char *which)
{
	static const struct {
		const char *name;
		const char *const *keys;
	} maps[] = {
	        {"targets", scn_keys_declared},
	        {"cdp", scn_keys_cdp},
	        {"goal_budget", scn_keys_goal_budget},
	        {"spawn", scn_keys_spawn},
	        {"selector_text", scn_keys_selector_text},
	        {"state", scn_keys_state},
	        {"page", scn_keys_page},
	        {"text", scn_keys_text},
	        {"target", scn_keys_target},
	        {"hover", scn_keys_hover},
	        {"drag", scn_keys_drag},
	        {"locator", scn_keys_locator},
	        {"in", scn_keys_in},
	};
	for (size_t i = 0; which && i < sizeof maps / sizeof maps[0]; i++)
		if (!strcmp(maps[i].name, which))
			return maps[i].keys;
	return NULL;
}

/* ---- small helpers ---- */

static void set_pos(ksr_pos *p, const snode *n)
{
	p->line = n->line;
	p->col = n->col;
}

static char *resolve(const ksr_scenario *s, const char *p)
{
	if (p[0] == '/' || !strcmp(s->dir, "."))
		return ksr_xstrdup(p);
	return ksr_xasprintf("%s/%s", s->dir, p);
}

static bool string_list(scn_ctx *c, const snode *n, const char *what, char ***out, size_t *len)
{
	if (n->kind == SN_SCALAR) { /* one item may be written without brackets */
		*out = ksr_xcalloc(1, sizeof **out);
		*len = scn_str(c, n, what, true, &(*out)[0]) ? 1 : 0;
		return *len == 1;
	}
	if (!scn_is_seq(c, n, what))
		return false;
	bool ok = true;
	*out = ksr_xcalloc(n->n ? n->n : 1, sizeof **out);
	for (size_t i = 0; i < n->n; i++)
		if (scn_str(c, n->kids[i], what, true, &(*out)[*len]))
			(*len)++;
		else
			ok = false;
	return ok;
}

static bool pattern_list(scn_ctx *c, const snode *n, const char *what, ksr_pattern ***out,
                         size_t *len)
{
	const snode *one[1] = {n};
	const snode *const *items = n->kind == SN_SEQ ? (const snode *const *)n->kids : one;
	size_t count = n->kind == SN_SEQ ? n->n : 1;
	if (n->kind != SN_SEQ && n->kind != SN_SCALAR)
		return scn_is_seq(c, n, what);
	bool ok = true;
	*out = ksr_xcalloc(count ? count : 1, sizeof **out);
	for (size_t i = 0; i < count; i++)
		if (scn_pattern(c, items[i], what, &(*out)[*len]))
			(*len)++;
		else
			ok = false;
	return ok;
}

/* ---- sections of the top level ---- */

static void app_keys(scn_ctx *c, const snode *const *v)
{
	ksr_scenario *s = c->s;
	if (v[TK_LAUNCH] && scn_str(c, v[TK_LAUNCH], "launch", true, &s->launch))
		set_pos(&s->launch_pos, v[TK_LAUNCH]);
	if (v[TK_PROCESS] && scn_pattern(c, v[TK_PROCESS], "process", &s->process))
		set_pos(&s->process_pos, v[TK_PROCESS]);
	if (v[TK_PROCESS_CMDLINE])
		scn_pattern(c, v[TK_PROCESS_CMDLINE], "process_cmdline", &s->process_cmdline);
	if (v[TK_WINDOW] && scn_pattern(c, v[TK_WINDOW], "window", &s->window))
		set_pos(&s->window_pos, v[TK_WINDOW]);
	if (v[TK_WINDOW_CLASS])
		scn_pattern(c, v[TK_WINDOW_CLASS], "window_class", &s->window_class);
}

static void timing_keys(scn_ctx *c, const snode *const *v)
{
	ksr_scenario *s = c->s;
	if (v[TK_BOOT_TIMEOUT])
		scn_num(c, v[TK_BOOT_TIMEOUT], "boot_timeout_s", 0, DAY_S, &s->boot_timeout_s);
	if (v[TK_LAUNCH_TIMEOUT])
		scn_num(c, v[TK_LAUNCH_TIMEOUT], "launch_timeout_s", 0, DAY_S,
		        &s->launch_timeout_s);
	if (v[TK_SETTLE])
		scn_num(c, v[TK_SETTLE], "settle_s", 0, DAY_S, &s->settle_s);
	if (v[TK_PAINT_TIMEOUT])
		scn_num(c, v[TK_PAINT_TIMEOUT], "paint_timeout_s", 0, DAY_S, &s->paint_timeout_s);
	if (v[TK_KEEP_RUNNING])
		scn_bool(c, v[TK_KEEP_RUNNING], "keep_running", &s->keep_running);
	if (v[TK_ATSPI])
		scn_bool(c, v[TK_ATSPI], "atspi", &s->atspi);
	if (v[TK_VIDEO])
		scn_bool(c, v[TK_VIDEO], "video", &s->video);
	if (v[TK_REMEDIATION_TIMEOUT])
		scn_num(c, v[TK_REMEDIATION_TIMEOUT], "remediation_timeout_s", 0, DAY_S,
		        &s->remediation_timeout_s);
	if (v[TK_READY_QUIET])
		scn_num(c, v[TK_READY_QUIET], "ready_quiet_ms", 0, 60000, &s->ready_quiet_ms);
}

static bool mask_region(scn_ctx *c, const snode *n, double r[4])
{
	if (!scn_is_seq(c, n, "baseline_mask"))
		return false;
	if (n->n != 4) {
		scn_err(c, n, "baseline_mask: a region is [fx, fy, fw, fh], got %zu items", n->n);
		return false;
	}
	bool ok = true;
	for (int i = 0; i < 4; i++) {
		const snode *k = n->kids[i];
		if (!scn_num(c, k, "baseline_mask", -1e300, 1e300, &r[i]))
			ok = false;
		else if (r[i] < 0 || r[i] > 1)
			scn_err(c, k, "baseline_mask: fraction %g is outside 0..1", r[i]),
			        ok = false;
	}
	if (ok && (r[0] + r[2] > 1 + 1e-9 || r[1] + r[3] > 1 + 1e-9)) {
		scn_err(c, n, "baseline_mask: the region extends past the screen's edge");
		ok = false;
	}
	return ok;
}

/* secrets: [VAR, ...]: the variables' values are redacted from every output
 * (include/ksr/redact.h); a value too short to be told from ordinary text is
 * refused. */
static void secret_keys(scn_ctx *c, const snode *const *v)
{
	char **names = NULL;
	size_t n = 0;
	if (!v[TK_SECRETS] || !string_list(c, v[TK_SECRETS], "secrets", &names, &n))
		return;
	for (size_t i = 0; i < n; i++) {
		const char *value = getenv(names[i]);
		if (!ksr_redact_add(names[i], value))
			scn_err(c, v[TK_SECRETS],
			        "secrets: %s's value is shorter than %d characters: it would "
			        "redact "
			        "ordinary text",
			        names[i], KSR_SECRET_MIN_LEN);
		free(names[i]);
	}
	free(names);
}

static void evidence_keys(scn_ctx *c, const snode *const *v)
{
	ksr_scenario *s = c->s;
	char **logs = NULL;
	if (v[TK_LOGS] && string_list(c, v[TK_LOGS], "logs", &logs, &s->n_logs)) {
		for (size_t i = 0; i < s->n_logs; i++) {
			char *r = resolve(s, logs[i]);
			free(logs[i]);
			logs[i] = r;
		}
	}
	s->logs = logs;
	char *b;
	if (v[TK_BASELINE] && scn_str(c, v[TK_BASELINE], "baseline", true, &b)) {
		s->baseline = resolve(s, b);
		free(b);
	}
	if (v[TK_BASELINE_TOLERANCE])
		scn_num(c, v[TK_BASELINE_TOLERANCE], "baseline_tolerance", 0, 1,
		        &s->baseline_tolerance);
	const snode *m = v[TK_BASELINE_MASK];
	if (m && scn_is_seq(c, m, "baseline_mask")) {
		s->baseline_mask = ksr_xcalloc(m->n ? m->n : 1, sizeof *s->baseline_mask);
		for (size_t i = 0; i < m->n; i++)
			if (mask_region(c, m->kids[i], s->baseline_mask[s->n_baseline_mask]))
				s->n_baseline_mask++;
	}
}

static void dialog_keys(scn_ctx *c, const snode *const *v)
{
	ksr_scenario *s = c->s;
	if (v[TK_ERROR_DIALOGS]) {
		s->error_dialogs_set = true;
		pattern_list(c, v[TK_ERROR_DIALOGS], "error_dialogs", &s->error_dialogs,
		             &s->n_error_dialogs);
	}
	if (v[TK_FIRST_RUN_PROMPTS]) {
		s->first_run_prompts_set = true;
		pattern_list(c, v[TK_FIRST_RUN_PROMPTS], "first_run_prompts", &s->first_run_prompts,
		             &s->n_first_run_prompts);
	}
	if (v[TK_UPDATERS]) {
		s->updaters_set = true;
		pattern_list(c, v[TK_UPDATERS], "updaters", &s->updaters, &s->n_updaters);
	}
	if (v[TK_RECOVERY_PROMPTS]) {
		s->recovery_prompts_set = true;
		pattern_list(c, v[TK_RECOVERY_PROMPTS], "recovery_prompts", &s->recovery_prompts,
		             &s->n_recovery_prompts);
	}
}

static bool declared_target(scn_ctx *c, const snode *k, const snode *v, ksr_target *t)
{
	set_pos(&t->pos, k);
	if (!strcmp(k->str, "center")) {
		scn_err(c, k,
		        "targets: a target may not be named 'center' (click: center is the "
		        "window's centre)");
		return false;
	}
	if (v->kind != SN_MAP)
		return scn_fraction_pair(c, v, "targets", &t->fx, &t->fy);
	bool ok = scn_check_keys(c, v, scn_keys_declared, "a target") == 0;
	const snode *at = scn_get(v, "at"), *win = scn_get(v, "window");
	if (!at) {
		scn_err(c, v, "targets: '%s' needs at: [fx, fy]", k->str);
		return false;
	}
	ok = scn_fraction_pair(c, at, "targets", &t->fx, &t->fy) && ok;
	if (win)
		ok = scn_pattern(c, win, "target window", &t->window) && ok;
	return ok;
}

static void targets_key(scn_ctx *c, const snode *n)
{
	ksr_scenario *s = c->s;
	if (!scn_is_map(c, n, "targets"))
		return;
	/* Sized once: steps keep pointers into this array. */
	s->targets = ksr_xcalloc(n->n ? n->n : 1, sizeof *s->targets);
	for (size_t i = 0; i < n->n; i++) {
		const snode *k = sn_key(n, i);
		if (k->bad)
			continue;
		ksr_target *t = &s->targets[s->n_targets];
		if (declared_target(c, k, sn_val(n, i), t)) {
			t->name = ksr_xstrdup(k->str);
			s->n_targets++;
		} else {
			ksr_pattern_free(t->window);
			memset(t, 0, sizeof *t);
		}
	}
}

/* cdp: {browser: firefox|chromium}: which page protocol the attach speaks
 * (WebDriver BiDi, CDP); unset, the attach tells from the browser. */
static void browser_key(scn_ctx *c, const snode *n)
{
	if (!n)
		return;
	if (n->kind == SN_SCALAR && n->str && !strcmp(n->str, "firefox"))
		c->s->cdp_browser = KSR_PAGE_BROWSER_FIREFOX;
	else if (n->kind == SN_SCALAR && n->str && !strcmp(n->str, "chromium"))
		c->s->cdp_browser = KSR_PAGE_BROWSER_CHROMIUM;
	else
		scn_err(c, n, "cdp browser: firefox or chromium");
}

static void cdp_key(scn_ctx *c, const snode *n)
{
	ksr_scenario *s = c->s;
	if (n->kind == SN_SCALAR) {
		scn_bool(c, n, "cdp", &s->cdp);
		return;
	}
	if (!scn_is_map(c, n, "cdp"))
		return;
	s->cdp = true;
	scn_check_keys(c, n, scn_keys_cdp, "cdp");
	const snode *port = scn_get(n, "port"), *host = scn_get(n, "host");
	if (port)
		scn_int(c, port, "cdp port", 1, 65535, &s->cdp_port);
	if (host)
		scn_str(c, host, "cdp host", true, &s->cdp_host);
	browser_key(c, scn_get(n, "browser"));
}

static void cdp_targets_key(scn_ctx *c, const snode *n)
{
	ksr_scenario *s = c->s;
	if (!scn_is_map(c, n, "cdp_targets"))
		return;
	s->cdp_targets = ksr_xcalloc(n->n ? n->n : 1, sizeof *s->cdp_targets);
	for (size_t i = 0; i < n->n; i++) {
		const snode *k = sn_key(n, i);
		ksr_cdp_target *t = &s->cdp_targets[s->n_cdp_targets];
		if (k->bad || !scn_page_ref(c, sn_val(n, i), "cdp_targets", &t->selector))
			continue;
		t->name = ksr_xstrdup(k->str);
		set_pos(&t->pos, k);
		s->n_cdp_targets++;
	}
}

static void goal_keys(scn_ctx *c, const snode *const *v)
{
	ksr_scenario *s = c->s;
	if (v[TK_GOAL] && scn_str(c, v[TK_GOAL], "goal", true, &s->goal))
		set_pos(&s->goal_pos, v[TK_GOAL]);
	if (v[TK_SUCCESS])
		scn_check_list(c, v[TK_SUCCESS], "success", &s->success.items, &s->success.len);
	if (v[TK_BLOCKERS])
		scn_check_list(c, v[TK_BLOCKERS], "blockers", &s->blockers.items, &s->blockers.len);
	const snode *b = v[TK_GOAL_BUDGET];
	if (!b || !scn_is_map(c, b, "goal_budget"))
		return;
	scn_check_keys(c, b, scn_keys_goal_budget, "goal_budget");
	const snode *turns = scn_get(b, "turns"), *secs = scn_get(b, "seconds"),
	            *calls = scn_get(b, "model_calls");
	if (turns)
		scn_int(c, turns, "goal_budget turns", 1, 10000, &s->goal_turns);
	if (secs)
		scn_num(c, secs, "goal_budget seconds", 1, DAY_S, &s->goal_seconds);
	if (calls)
		scn_int(c, calls, "goal_budget model_calls", 1, 100000, &s->goal_model_calls);
}

/* Desktop mode has no app; any other scenario must say how to find its app. */
static void mode_rules(scn_ctx *c, const snode *root, const snode *const *v)
{
	static const int app[] = {TK_PROCESS, TK_PROCESS_CMDLINE, TK_WINDOW, TK_WINDOW_CLASS};
	if (c->s->desktop) {
		for (size_t i = 0; i < sizeof app / sizeof app[0]; i++)
			if (v[app[i]])
				scn_err(c, v[app[i]],
				        "%s: not allowed with desktop: true (desktop mode has no "
				        "app to wait for; use spawn steps)",
				        top_keys[app[i]]);
		return;
	}
	if (!v[TK_PROCESS] && !v[TK_PROCESS_CMDLINE] && !v[TK_WINDOW])
		scn_err(c, root,
		        "the scenario needs process: (or process_cmdline:) or window: to find its "
		        "app, or desktop: true");
}

/* ---- the whole ---- */

static void defaults(ksr_scenario *s)
{
	s->boot_timeout_s = 60;
	s->launch_timeout_s = 60;
	s->settle_s = 5;
	s->paint_timeout_s = 30;
	s->atspi = true;
	s->baseline_tolerance = 0.02;
	s->remediation_timeout_s = 300;
	s->ready_quiet_ms = 50;
	s->goal_turns = 20;
	s->goal_seconds = 180;
	s->goal_model_calls = 60;
}

static void top_level(scn_ctx *c, const snode *root)
{
	const snode *v[TK_COUNT] = {0};
	if (!scn_is_map(c, root, "the scenario"))
		return;
	scn_check_keys(c, root, top_keys, "the scenario");
	for (int i = 0; i < TK_COUNT; i++)
		v[i] = scn_get(root, top_keys[i]);
	ksr_scenario *s = c->s;
	if (v[TK_NAME]) {
		free(s->name);
		s->name = NULL;
		scn_str(c, v[TK_NAME], "name", true, &s->name);
	}
	if (v[TK_DESKTOP])
		scn_bool(c, v[TK_DESKTOP], "desktop", &s->desktop);
	app_keys(c, v);
	timing_keys(c, v);
	secret_keys(c, v);
	evidence_keys(c, v);
	dialog_keys(c, v);
	if (v[TK_TARGETS])
		targets_key(c, v[TK_TARGETS]);
	if (v[TK_CDP])
		cdp_key(c, v[TK_CDP]);
	if (v[TK_CDP_TARGETS])
		cdp_targets_key(c, v[TK_CDP_TARGETS]);
	if (v[TK_STEPS])
		scn_step_list(c, v[TK_STEPS], false, &s->steps);
	if (v[TK_PLAN])
		scn_step_list(c, v[TK_PLAN], true, &s->plan);
	goal_keys(c, v);
	mode_rules(c, root, v);
	if (s->cdp && !s->cdp_host)
		s->cdp_host = ksr_xstrdup("127.0.0.1");
}

static void file_facts(ksr_scenario *s, const char *text, size_t len, const char *path)
{
	s->path = ksr_xstrdup(path ? path : "<string>");
	char *dir = g_path_get_dirname(path ? path : ".");
	s->dir = ksr_xstrdup(dir);
	g_free(dir);
	char *sum = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, len);
	s->sha256 = ksr_xstrdup(sum);
	g_free(sum);
	char *base = path ? g_path_get_basename(path) : g_strdup("scenario");
	char *dot = strrchr(base, '.');
	if (dot && dot != base)
		*dot = 0;
	s->name = ksr_xstrdup(base);
	g_free(base);
}

/* Errors come from several passes (keys first, then values); a person reads
 * them best in file order. Insertion sort: stable, and lists are short. */
static void sort_errors(ksr_errlist *errs, size_t from)
{
	for (size_t i = from + 1; i < errs->len; i++) {
		ksr_err e = errs->items[i];
		size_t j = i;
		while (j > from &&
		       (errs->items[j - 1].line > e.line ||
		        (errs->items[j - 1].line == e.line && errs->items[j - 1].col > e.col))) {
			errs->items[j] = errs->items[j - 1];
			j--;
		}
		errs->items[j] = e;
	}
}

static ksr_scenario *load_text(const char *text, size_t len, const char *path, ksr_errlist *errs)
{
	size_t before = errs->len;
	if (len > SCN_MAX_BYTES) {
		ksr_errlist_add(errs, 0, 0, "the scenario is larger than %d bytes", SCN_MAX_BYTES);
		return NULL;
	}
	snode *root = scn_parse_yaml(text, len, errs);
	if (!root)
		return NULL;
	ksr_scenario *s = ksr_xcalloc(1, sizeof *s);
	defaults(s);
	file_facts(s, text, len, path);
	scn_ctx c = {.errs = errs, .s = s};
	top_level(&c, root);
	free(c.spawn_as);
	free(c.spawn_line);
	scn_tree_free(root);
	if (errs->len != before) {
		sort_errors(errs, before);
		ksr_scenario_free(s);
		return NULL;
	}
	return s;
}

ksr_scenario *ksr_scenario_load_string(const char *text, const char *path_for_messages,
                                       ksr_errlist *errs)
{
	return load_text(text ? text : "", text ? strlen(text) : 0, path_for_messages, errs);
}

static const char *file_kind(mode_t m)
{
	return S_ISDIR(m)    ? "a directory"
	       : S_ISFIFO(m) ? "a FIFO (named pipe)"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
	       : S_ISSOCK(m) ? "a socket"
	                     : "not a regular file";
}

/* The scenario must be a regular file: a FIFO would block the open (and the
 * read) until a writer comes, a device could stream for ever. O_NONBLOCK
 * makes the open of a FIFO return at once; fstat then tells what it is. */
static FILE *open_regular(const char *path, ksr_errlist *errs)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ksr_errlist_add(errs, 0, 0, "cannot open the scenario: %s", strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		ksr_errlist_add(errs, 0, 0, "cannot read the scenario: %s", strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		ksr_errlist_add(errs, 0, 0,
		                "the scenario is %s, not a regular file (a scenario is read "
		                "from a file, never from a pipe or a device)",
		                file_kind(st.st_mode));
		close(fd);
		return NULL;
	}
	int flags = fcntl(fd, F_GETFL);
	if (flags >= 0)
		(void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		ksr_errlist_add(errs, 0, 0, "cannot read the scenario: %s", strerror(errno));
		close(fd);
	}
	return f;
}

ksr_scenario *ksr_scenario_load(const char *path, ksr_errlist *errs)
{
	FILE *f = open_regular(path, errs);
	if (!f)
		return NULL;
	/* One byte more than the cap tells "too large" from "exactly the cap". */
	char *buf = ksr_xmalloc(SCN_MAX_BYTES + 2);
	size_t len = fread(buf, 1, SCN_MAX_BYTES + 1, f);
	int err = ferror(f) ? errno : 0;
	fclose(f);
	ksr_scenario *s = NULL;
	if (err)
		ksr_errlist_add(errs, 0, 0, "cannot read the scenario: %s", strerror(err));
	else
		s = load_text(buf, len, path, errs);
	free(buf);
	return s;
}

/* ---- lookups and freeing ---- */

const ksr_target *ksr_scenario_find_target(const ksr_scenario *s, const char *name)
{
	for (size_t i = 0; s && name && i < s->n_targets; i++)
		if (!strcmp(s->targets[i].name, name))
			return &s->targets[i];
	return NULL;
}

const char *ksr_scenario_cdp_selector(const ksr_scenario *s, const char *name_or_selector)
{
	for (size_t i = 0; s && name_or_selector && i < s->n_cdp_targets; i++)
		if (!strcmp(s->cdp_targets[i].name, name_or_selector))
			return s->cdp_targets[i].selector;
	return name_or_selector;
}

static void free_patterns(ksr_pattern **p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ksr_pattern_free(p[i]);
	free(p);
}

static void free_steps(ksr_step_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		scn_step_clear(&l->items[i]);
	free(l->items);
}

static void free_checks(ksr_check_list *l)
{
	for (size_t i = 0; i < l->len; i++)
		scn_check_clear(&l->items[i]);
	free(l->items);
}

void ksr_scenario_free(ksr_scenario *s)
{
	if (!s)
		return;
	free(s->path);
	free(s->dir);
	free(s->sha256);
	free(s->name);
	free(s->launch);
	ksr_pattern_free(s->process);
	ksr_pattern_free(s->process_cmdline);
	ksr_pattern_free(s->window);
	ksr_pattern_free(s->window_class);
	for (size_t i = 0; i < s->n_logs; i++)
		free(s->logs[i]);
	free(s->logs);
	free(s->baseline);
	free(s->baseline_mask);
	free_patterns(s->error_dialogs, s->n_error_dialogs);
	free_patterns(s->first_run_prompts, s->n_first_run_prompts);
	free_patterns(s->updaters, s->n_updaters);
	free_patterns(s->recovery_prompts, s->n_recovery_prompts);
	for (size_t i = 0; i < s->n_targets; i++) {
		free(s->targets[i].name);
		ksr_pattern_free(s->targets[i].window);
	}
	free(s->targets);
	free(s->cdp_host);
	for (size_t i = 0; i < s->n_cdp_targets; i++) {
		free(s->cdp_targets[i].name);
		free(s->cdp_targets[i].selector);
	}
	free(s->cdp_targets);
	free_steps(&s->steps);
	free_steps(&s->plan);
	free(s->goal);
	free_checks(&s->success);
	free_checks(&s->blockers);
	free(s);
}
