/* Every step kind and every check kind, in every form its shape takes, loaded,
 * written back by the writer (ksr/scenario_yaml.h), loaded again: the same
 * step, the same check. The scenarios are generated from the vocabulary's
 * rows (ksr_step_kinds, ksr_check_kinds) and a table of sample values per
 * shape, so a new row is covered without a line here, and a new shape does
 * not build until samples() has a case for it (no default). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario.h"
#include "ksr/scenario_yaml.h"
#include "ksr/strbuf.h"
#include "tap.h"

#define MAX_SAMPLES 8

/* The values each shape takes, as YAML flow nodes: every form the loader
 * reads, and strings that need escapes (quotes, a colon, '#', a line break,
 * non-ASCII, a literal ${ and $$). NULL-terminated. */
static const char *const *samples(ksr_shape shape)
{
	static const char *const chords[] = {"\"ctrl+a Delete shift+Tab\"", "Enter", NULL};
	static const char *const text[] = {"\"h\\u00e9llo: #w\\u00f6rld \\\"q\\\"\\nline 2\\t\"",
	                                   "\"a ${KSR_RT_UNSET:-$}{b} $$ c $${d}\"", "plain", NULL};
	static const char *const point[] = {
	        "center", "file_menu", "ok", "[0.25, 0.75]", "\"0.1 0.9\"", "[0.1234567890123, 1]",
	        NULL};
	static const char *const scroll[] = {"\"up 3\"", "\"down 1000\"", NULL};
	static const char *const name[] = {
	        "Save", "\"/S.ve/\"", "\"Name: ${KSR_RT_UNSET:-$}{x}\"", "\"Trailing \"",
	        /* locators (docs/scenario.md#locators); role: is the
	         * step's modifier here, so none inside */
	        "{label: \"Host:\"}", "{name: Save, in: \"Message log\", nth: 2}",
	        "{in: {role: panel, name: \"/L.g/\"}, label: \"/H.st/\"}",
	        "{in: {role: scroll pane}, nth: 1}", NULL};
	static const char *const description[] = {"\"the blue Save button\"", NULL};
	static const char *const pattern[] = {"\"^Save As$\"", "\"(?i)a\\\\s+b\"", NULL};
	static const char *const url[] = {"\"https://example.com/?q=a#b\"", NULL};
	static const char *const selector[] = {"search", "\"#q > a[href='x']\"", NULL};
	static const char *const selector_text[] = {"{selector: \"#q\", text: \"x y\"}",
	                                            "{selector: search, text: \"\"}", NULL};
	static const char *const js[] = {"\"document.title + ':'\"", NULL};
	static const char *const command[] = {"\"echo 'a: b' | grep -c a\"", NULL};
	static const char *const seconds[] = {"0", "0.5", "2", NULL};
	static const char *const spawn[] = {
	        "{command: xterm, window: \"^xterm$\", process: \"^xterm$\", as: tool@}",
	        "{command: \"xclock -d\", window: xclock}", NULL};
	static const char *const ident[] = {"tool1", NULL};
	static const char *const state[] = {
	        "\"Bold checked\"",
	        "\"/B.ld/ pressed\"",
	        "{name: \"/B.ld/\", role: toggle button, state: pressed}",
	        "{name: \"Trailing \", state: checked}",
	        "{name: Bold, role: toggle button, state: checked}",
	        "{name: \"/x/\", state: checked}",
	        "{label: \"Host:\", role: text, state: focused}",
	        "{role: check box, in: Options, nth: 3, state: checked}",
	        NULL};
	static const char *const page[] = {
	        "{selector: \"#q\"}",
	        "{selector: search, text: \"hi\", url: example, title: \"^T$\"}", NULL};
	static const char *const hover[] = {"center",
	                                    "file_menu",
	                                    "[0.5, 0.1]",
	                                    "{element: Save, role: push button}",
	                                    "{element: \"/S.ve/\"}",
	                                    "{selector: \"#q\"}",
	                                    NULL};
	static const char *const text_check[] = {"{equals: \"x\"}",
	                                         "{name: Field, role: text, contains: \"\"}",
	                                         "{name: \"/F.*/\", matches: \"^a+$\"}",
	                                         "{label: \"Host:\", equals: \"127.0.0.1\"}",
	                                         "{role: text, in: {role: scroll pane}, nth: 2, "
	                                         "contains: refused}",
	                                         NULL};
	static const char *const drag[] = {"{from: [0.1, 0.2], to: [0.3, 0.4]}",
	                                   "{from: file_menu, to: center}", NULL};
	switch (shape) {
	case KSR_SHAPE_CHORDS:
		return chords;
	case KSR_SHAPE_TEXT:
		return text;
	case KSR_SHAPE_POINT:
		return point;
	case KSR_SHAPE_SCROLL:
		return scroll;
	case KSR_SHAPE_NAME:
		return name;
	case KSR_SHAPE_DESCRIPTION:
		return description;
	case KSR_SHAPE_PATTERN:
		return pattern;
	case KSR_SHAPE_URL:
		return url;
	case KSR_SHAPE_SELECTOR:
		return selector;
	case KSR_SHAPE_SELECTOR_TEXT:
		return selector_text;
	case KSR_SHAPE_JS:
		return js;
	case KSR_SHAPE_COMMAND:
		return command;
	case KSR_SHAPE_SECONDS:
		return seconds;
	case KSR_SHAPE_SPAWN:
		return spawn;
	case KSR_SHAPE_IDENT:
		return ident;
	case KSR_SHAPE_STATE:
		return state;
	case KSR_SHAPE_PAGE:
		return page;
	case KSR_SHAPE_HOVER:
		return hover;
	case KSR_SHAPE_TEXT_CHECK:
		return text_check;
	case KSR_SHAPE_DRAG:
		return drag;
	}
	return NULL;
}

/* ---- the generated scenarios -------------------------------------------------------- */

static const char *const head_app = "name: roundtrip\n"
                                    "window: \"^Main$\"\n"
                                    "targets:\n"
                                    "  file_menu: [0.03, 0.04]\n"
                                    "  ok: {at: [0.82, 0.91], window: \"^Save As$\"}\n"
                                    "cdp_targets:\n"
                                    "  search: \"#q\"\n"
                                    "goal: \"save the file\"\n";
static const char *const head_desktop = "name: roundtrip-desktop\n"
                                        "desktop: true\n"
                                        "targets:\n"
                                        "  file_menu: [0.03, 0.04]\n"
                                        "  ok: {at: [0.82, 0.91], window: \"^Save As$\"}\n"
                                        "cdp_targets:\n"
                                        "  search: \"#q\"\n";

/* Every check kind in every form, as a flow list; with timeouts on some. */
/* every: each sample of each kind (success:); else the first two of each,
 * which keeps a step's checks: small (the loader's cap on YAML nodes) while
 * success: still holds every form. */
static void all_checks(ksr_strbuf *b, bool every)
{
	size_t n;
	const ksr_check_info *rows = ksr_check_kinds(&n);
	bool first = true;
	ksr_strbuf_add(b, "[");
	for (size_t i = 0; i < n; i++) {
		const char *const *v = samples(rows[i].shape);
		for (size_t j = 0; v && v[j] && (every || j < 2); j++) {
			ksr_strbuf_addf(b, "%s{%s: %s%s}", first ? "" : ", ", rows[i].name, v[j],
			                j == 1 ? ", timeout_s: 12.5" : "");
			first = false;
		}
	}
	ksr_strbuf_add(b, "]");
}

/* The targets a step's target: takes: the window forms, and for scroll
 * (which has no point of its own) the point forms too. */
static const char *const *target_samples(const ksr_step_info *row)
{
	static const char *const window[] = {"{window: Dialog}", "\"window \\\"^Other$\\\"\"",
	                                     NULL};
	static const char *const scroll[] = {"{window: Dialog}", "file_menu", "ok", "[0.2, 0.3]",
	                                     NULL};
	return row->shape == KSR_SHAPE_SCROLL ? scroll : window;
}

/* v with its '@' (a spawn's as: name, unique in a scenario) numbered: the
 * first is tool1, the name kill's sample gives. */
static void put_value(ksr_strbuf *b, const char *v)
{
	static unsigned spawned;
	for (const char *p = v; *p; p++) {
		if (*p == '@')
			ksr_strbuf_addf(b, "%u", ++spawned);
		else
			ksr_strbuf_addn(b, p, 1);
	}
}

/* One step of row with value v and the modifiers asked for (mods, limited
 * to those the row takes); target is NULL or one of target_samples. */
static void put_step(ksr_strbuf *b, const ksr_step_info *row, const char *v, uint32_t mods,
                     const char *target, bool plan)
{
	mods &= row->modifiers;
	ksr_strbuf_addf(b, "  - {%s: ", row->name);
	put_value(b, v);
	if (target && (mods & KSR_MOD_TARGET))
		ksr_strbuf_addf(b, ", target: %s", target);
	if (mods & KSR_MOD_ROLE)
		ksr_strbuf_add(b, ", role: push button");
	if ((mods & KSR_MOD_EXPECT) || row->rung == KSR_RUNG_GROUNDED)
		ksr_strbuf_add(b, ", expect: \"the dialog: closes\"");
	if (mods & KSR_MOD_EXPECT_STATE)
		ksr_strbuf_add(b,
		               ", expect_state: {name: Bold, role: toggle button, state: checked}");
	if (mods & KSR_MOD_CHECKS) {
		ksr_strbuf_add(b, ", checks: ");
		all_checks(b, false);
	}
	if (mods & KSR_MOD_TIMEOUT)
		ksr_strbuf_add(b, ", timeout_s: 2.5");
	if (mods & KSR_MOD_STATE)
		ksr_strbuf_add(b, ", state: hidden");
	if (mods & KSR_MOD_HIDDEN_OK)
		ksr_strbuf_add(b, ", hidden_ok: true");
	if (mods & KSR_MOD_READY)
		ksr_strbuf_add(b, ", ready_quiet_ms: 0");
	if (plan)
		ksr_strbuf_add(b, ", post: [{window: \"^Saved$\"}, {no_window: x, timeout_s: 1}]");
	ksr_strbuf_add(b, "}\n");
}

/* Each row: each sample alone, then with every modifier it takes (once per
 * target form). A declared point that names its own window ("ok") cannot be
 * given another: its step goes without target:. */
static void put_steps(ksr_strbuf *b, bool desktop, bool plan)
{
	size_t n;
	const ksr_step_info *rows = ksr_step_kinds(&n);
	for (size_t i = 0; i < n; i++) {
		const ksr_step_info *row = &rows[i];
		if (row->desktop_only && !desktop)
			continue;
		const char *const *v = samples(row->shape);
		for (size_t j = 0; v && v[j]; j++) {
			bool own_window = !strcmp(v[j], "ok");
			put_step(b, row, v[j], 0, NULL, plan);
			const char *const *t = target_samples(row);
			for (size_t k = 0; t[k]; k++)
				put_step(b, row, v[j], ~0u, own_window ? NULL : t[k], plan);
		}
	}
}

static char *generated(bool desktop)
{
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, desktop ? head_desktop : head_app);
	ksr_strbuf_add(&b, "steps:\n");
	put_steps(&b, desktop, false);
	if (!desktop) {
		ksr_strbuf_add(&b, "plan:\n");
		put_steps(&b, desktop, true);
		ksr_strbuf_add(&b, "success: ");
		all_checks(&b, true);
		ksr_strbuf_add(&b, "\n");
	}
	return ksr_strbuf_take(&b);
}

/* ---- written back -------------------------------------------------------------------- */

static void put_written_steps(ksr_strbuf *b, const char *key, const ksr_step_list *l)
{
	if (!l->len)
		return;
	ksr_strbuf_addf(b, "%s:\n", key);
	for (size_t i = 0; i < l->len; i++) {
		size_t n;
		char **lines = ksr_step_yaml(&l->items[i], &n);
		for (size_t j = 0; j < n; j++)
			ksr_strbuf_addf(b, "  %s %s\n", j ? " " : "-", lines[j]);
		ksr_yaml_lines_free(lines, n);
	}
}

static char *written(const ksr_scenario *s, bool desktop)
{
	ksr_strbuf b = {0};
	ksr_strbuf_add(&b, desktop ? head_desktop : head_app);
	put_written_steps(&b, "steps", &s->steps);
	put_written_steps(&b, "plan", &s->plan);
	if (s->success.len) {
		ksr_strbuf_add(&b, "success:\n");
		for (size_t i = 0; i < s->success.len; i++) {
			char *c = ksr_check_yaml(&s->success.items[i]);
			ksr_strbuf_addf(&b, "  - %s\n", c ? c : "null");
			free(c);
		}
	}
	return ksr_strbuf_take(&b);
}

/* ---- equality over the parsed structs ------------------------------------------------ */

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool re_eq(const ksr_pattern *a, const ksr_pattern *b)
{
	return (!a && !b) || (a && b && !strcmp(ksr_pattern_source(a), ksr_pattern_source(b)));
}

static bool name_eq(const ksr_name_match *a, const ksr_name_match *b)
{
	return str_eq(a->text, b->text) && !a->re == !b->re && (!a->re || re_eq(a->re, b->re));
}

static bool locator_eq(const ksr_locator *a, const ksr_locator *b)
{
	return name_eq(&a->label, &b->label) && a->in == b->in &&
	       name_eq(&a->in_name, &b->in_name) && str_eq(a->in_role, b->in_role) &&
	       a->nth == b->nth;
}

static bool point_eq(const ksr_point *a, const ksr_point *b)
{
	return a->kind == b->kind && a->fx == b->fx && a->fy == b->fy &&
	       !a->declared == !b->declared &&
	       (!a->declared || str_eq(a->declared->name, b->declared->name));
}

/* NULL when equal, else the first field that differs. */
static const char *check_diff(const ksr_check *a, const ksr_check *b)
{
	if (a->info != b->info)
		return "kind";
	if (a->timeout_s != b->timeout_s)
		return "timeout_s";
	if (!re_eq(a->re, b->re))
		return "re";
	if (!str_eq(a->text, b->text))
		return "text";
	if (!name_eq(&a->name, &b->name))
		return "name";
	if (!str_eq(a->role, b->role))
		return "role";
	if (!locator_eq(&a->loc, &b->loc))
		return "locator";
	if (!str_eq(a->state, b->state))
		return "state";
	if (!str_eq(a->selector, b->selector) || !str_eq(a->page_text, b->page_text))
		return "selector/page text";
	if (!re_eq(a->url, b->url) || !re_eq(a->title, b->title))
		return "url/title";
	if (a->hidden_ok != b->hidden_ok)
		return "hidden_ok";
	if (a->text_op != b->text_op)
		return "text_op";
	return NULL;
}

static const char *checks_diff(const ksr_check *a, size_t na, const ksr_check *b, size_t nb)
{
	if (na != nb)
		return "number of checks";
	for (size_t i = 0; i < na; i++) {
		const char *d = check_diff(&a[i], &b[i]);
		if (d)
			return d;
	}
	return NULL;
}

static bool chords_eq(const ksr_step *a, const ksr_step *b)
{
	if (a->n_chords != b->n_chords)
		return false;
	for (size_t i = 0; i < a->n_chords; i++) {
		if (a->chords[i].n != b->chords[i].n)
			return false;
		for (int k = 0; k < a->chords[i].n; k++)
			if (a->chords[i].keysyms[k] != b->chords[i].keysyms[k])
				return false;
	}
	return true;
}

static const char *value_diff(const ksr_step *a, const ksr_step *b)
{
	if (a->info != b->info)
		return "kind";
	if (!str_eq(a->text, b->text))
		return "text";
	if (!chords_eq(a, b))
		return "chords";
	if (!point_eq(&a->point, &b->point) || !point_eq(&a->drag_to, &b->drag_to))
		return "point";
	if (a->scroll_dy != b->scroll_dy)
		return "scroll";
	if (!name_eq(&a->name, &b->name))
		return "name";
	if (!locator_eq(&a->loc, &b->loc))
		return "locator";
	if (a->hover.via != b->hover.via)
		return "hover form";
	if (!re_eq(a->re, b->re))
		return "re";
	if (a->seconds != b->seconds)
		return "seconds";
	if (!str_eq(a->fill_text, b->fill_text))
		return "fill text";
	if (!str_eq(a->spawn.command, b->spawn.command) || !str_eq(a->spawn.as, b->spawn.as) ||
	    !re_eq(a->spawn.window, b->spawn.window) || !re_eq(a->spawn.process, b->spawn.process))
		return "spawn";
	return NULL;
}

static const char *step_diff(const ksr_step *a, const ksr_step *b)
{
	const char *d = value_diff(a, b);
	if (d)
		return d;
	if (!re_eq(a->target_window, b->target_window))
		return "target window";
	if (!str_eq(a->role, b->role))
		return "role";
	if (!str_eq(a->wait_state, b->wait_state))
		return "state:";
	if (!str_eq(a->expect, b->expect))
		return "expect";
	if ((d = checks_diff(a->checks, a->n_checks, b->checks, b->n_checks)))
		return d;
	if ((d = checks_diff(a->post, a->n_post, b->post, b->n_post)))
		return d;
	if (a->timeout_s != b->timeout_s)
		return "timeout_s";
	if (a->ready_quiet_set != b->ready_quiet_set || a->ready_quiet_ms != b->ready_quiet_ms)
		return "ready_quiet_ms";
	if (a->hidden_ok != b->hidden_ok)
		return "hidden_ok";
	return NULL;
}

/* ---- the test --------------------------------------------------------------------------- */

static ksr_scenario *load(const char *text, const char *what)
{
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, what, &errs);
	for (size_t i = 0; i < errs.len && i < 20; i++)
		printf("# %s:%d:%d: %s\n", what, errs.items[i].line, errs.items[i].col,
		       errs.items[i].msg);
	ok(s && errs.len == 0, "%s loads", what);
	ksr_errlist_free(&errs);
	return s;
}

/* The YAML one step is written as, for a failure's diagnostics. */
static void show_step(const ksr_step *st)
{
	size_t n;
	char **lines = ksr_step_yaml(st, &n);
	for (size_t j = 0; j < n; j++)
		printf("#   %s\n", lines[j]);
	ksr_yaml_lines_free(lines, n);
}

static void compare_lists(const char *what, const ksr_step_list *a, const ksr_step_list *b)
{
	if (!is_int((long long)b->len, (long long)a->len, what))
		return;
	size_t bad = 0;
	for (size_t i = 0; i < a->len; i++) {
		const char *d = step_diff(&a->items[i], &b->items[i]);
		if (d && bad++ < 10) {
			printf("# %s %zu (%s, line %d): %s differs; written as:\n", what, i + 1,
			       a->items[i].info->name, a->items[i].pos.line, d);
			show_step(&a->items[i]);
		}
	}
	ok(bad == 0, "%s: %zu steps the same after the round trip (%zu differ)", what, a->len, bad);
}

static void compare_checks(const ksr_check_list *a, const ksr_check_list *b)
{
	if (!is_int((long long)b->len, (long long)a->len, "success: checks"))
		return;
	size_t bad = 0;
	for (size_t i = 0; i < a->len; i++) {
		const char *d = check_diff(&a->items[i], &b->items[i]);
		char *c = ksr_check_yaml(&a->items[i]);
		if (d && bad++ < 10)
			printf("# success: check %zu (%s): %s differs; written as %s\n", i + 1,
			       a->items[i].info->name, d, c ? c : "(nothing)");
		free(c);
	}
	ok(bad == 0, "success: %zu checks the same after the round trip (%zu differ)", a->len, bad);
}

/* Every row of the table is in the generated scenario. */
static void coverage(const ksr_scenario *app, const ksr_scenario *desk)
{
	size_t ns, nc;
	const ksr_step_info *steps = ksr_step_kinds(&ns);
	const ksr_check_info *checks = ksr_check_kinds(&nc);
	size_t missing = 0;
	for (size_t i = 0; i < ns; i++) {
		bool seen = false;
		for (size_t j = 0; j < desk->steps.len; j++)
			seen = seen || desk->steps.items[j].info == &steps[i];
		for (size_t j = 0; !steps[i].desktop_only && j < app->plan.len; j++)
			seen = seen || app->plan.items[j].info == &steps[i];
		if (!seen)
			printf("# step kind %s is not covered\n", steps[i].name), missing++;
	}
	for (size_t i = 0; i < nc; i++) {
		bool seen = false;
		for (size_t j = 0; j < app->success.len; j++)
			seen = seen || app->success.items[j].info == &checks[i];
		if (!seen)
			printf("# check kind %s is not covered\n", checks[i].name), missing++;
	}
	ok(missing == 0, "every step kind (%zu) and check kind (%zu) is in the scenarios", ns, nc);
}

static void round_trip(bool desktop, ksr_scenario **kept)
{
	char *text = generated(desktop);
	const char *what = desktop ? "generated-desktop.yaml" : "generated-app.yaml";
	ksr_scenario *a = load(text, what);
	free(text);
	*kept = a;
	if (!a)
		return;
	char *again = written(a, desktop);
	ksr_scenario *b = load(again, desktop ? "written-desktop.yaml" : "written-app.yaml");
	if (b) {
		compare_lists("steps", &a->steps, &b->steps);
		compare_lists("plan", &a->plan, &b->plan);
		compare_checks(&a->success, &b->success);
	} else {
		printf("# the written text:\n%s\n", again);
	}
	free(again);
	ksr_scenario_free(b);
}

/* Written strings reload as they were, whatever they hold. */
static void scalars(void)
{
	static const char *const tricky[] = {"${HOME}",
	                                     "$${HOME}",
	                                     "a$",
	                                     "$",
	                                     "${",
	                                     "x ${A:-b} y",
	                                     "\"q\" \\ #: -",
	                                     "line\nbreak\r\ttab",
	                                     "\xc2\x85nel \xe2\x80\xa8ls",
	                                     "caf\xc3\xa9",
	                                     NULL};
	for (size_t i = 0; tricky[i]; i++) {
		char *q = ksr_yaml_scalar(tricky[i]);
		char *doc = ksr_xasprintf("name: %s\nwindow: x\n", q);
		ksr_errlist errs = {0};
		ksr_scenario *s = ksr_scenario_load_string(doc, "scalar.yaml", &errs);
		ok(s && !strcmp(s->name, tricky[i]), "scalar %zu (%s) reads back as written", i, q);
		ksr_scenario_free(s);
		ksr_errlist_free(&errs);
		free(doc);
		free(q);
	}
}

int main(void)
{
	unsetenv("KSR_RT_UNSET");
	unsetenv("KSR_RECORD_DOLLAR");
	ksr_scenario *app = NULL, *desk = NULL;
	round_trip(false, &app);
	round_trip(true, &desk);
	if (app && desk)
		coverage(app, desk);
	ksr_scenario_free(app);
	ksr_scenario_free(desk);
	scalars();
	return tap_done();
}
