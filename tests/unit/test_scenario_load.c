/* The loader on good scenarios: every key of tests/data/scenarios/good/full.yaml
 * lands in the right field, defaults apply, ${VAR} expands, positions are kept. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario.h"
#include "tap.h"

#define GOOD "tests/data/scenarios/good/"

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static ksr_scenario *load(const char *path)
{
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load(path, &errs);
	for (size_t i = 0; i < errs.len; i++)
		printf("# %s:%d:%d: %s\n", path, errs.items[i].line, errs.items[i].col,
		       errs.items[i].msg);
	ok(s != NULL && errs.len == 0, "%s loads without errors", path);
	ksr_errlist_free(&errs);
	return s;
}

static ksr_scenario *load_str(const char *text)
{
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, "inline.yaml", &errs);
	for (size_t i = 0; i < errs.len; i++)
		printf("# inline.yaml:%d:%d: %s\n", errs.items[i].line, errs.items[i].col,
		       errs.items[i].msg);
	ksr_errlist_free(&errs);
	return s;
}

static void top_level(const ksr_scenario *s)
{
	is_str(s->name, "full-plain", "name with ${VAR:-default}");
	is_str(s->launch, "mousepad --disable-server", "launch");
	is_int(s->launch_pos.line, 3, "launch line");
	is_int(s->process_pos.line, 4, "process line");
	is_int(s->process_pos.col, 10, "process column");
	ok(ksr_pattern_match(s->process, "mousepad") && !ksr_pattern_match(s->process, "xmousepad"),
	   "process anchored");
	ok(ksr_pattern_match(s->process_cmdline, "mousepad --disable-server"), "process_cmdline");
	ok(ksr_pattern_match(s->window, "Untitled - Mousepad"), "window");
	ok(ksr_pattern_match(s->window_class, "MOUSEPAD"), "window_class (?i)");
	ok(near(s->boot_timeout_s, 30) && near(s->launch_timeout_s, 45.5) && near(s->settle_s, 2),
	   "timeouts");
	ok(s->keep_running && !s->atspi && !s->desktop && s->video, "booleans");
	is_int((long long)s->n_logs, 2, "two logs");
	is_str(s->logs[0], "/tmp/mousepad.log", "absolute log kept");
	is_str(s->logs[1], GOOD "logs/app.log", "relative log resolved");
	is_str(s->baseline, GOOD "baselines/mousepad.png", "baseline resolved");
	ok(near(s->baseline_tolerance, 0.05), "baseline_tolerance");
	is_int((long long)s->n_baseline_mask, 2, "two mask regions");
	ok(near(s->baseline_mask[0][1], 0.95) && near(s->baseline_mask[1][3], 0.1), "mask values");
	ok(s->error_dialogs_set && s->n_error_dialogs == 1 &&
	           ksr_pattern_match(s->error_dialogs[0], "Fatal ERROR"),
	   "error_dialogs");
	ok(s->first_run_prompts_set && ksr_pattern_match(s->first_run_prompts[0], "Welcome!"),
	   "first_run_prompts");
	ok(s->updaters_set && ksr_pattern_match(s->updaters[0], "Update available"), "updaters");
	ok(s->recovery_prompts_set && s->n_recovery_prompts == 1 &&
	           ksr_pattern_match(s->recovery_prompts[0], "Restore Session?"),
	   "recovery_prompts");
	is_int(s->sha256 ? (long long)strlen(s->sha256) : 0, 64, "sha256 is 64 hex digits");
}

static void targets_and_cdp(const ksr_scenario *s)
{
	is_int((long long)s->n_targets, 3, "three targets");
	const ksr_target *t = ksr_scenario_find_target(s, "ok");
	ok(t && near(t->fx, 0.82) && near(t->fy, 0.91) && t->window &&
	           !strcmp(ksr_pattern_source(t->window), "^Save As$"),
	   "target ok with its window");
	ok(t && t->pos.line == 22 && t->pos.col == 3, "target position");
	t = ksr_scenario_find_target(s, "literal");
	ok(t && near(t->fx, 0.25) && near(t->fy, 0.75) && !t->window, "target from \"FX FY\"");
	ok(ksr_scenario_find_target(s, "nope") == NULL, "unknown target");
	ok(s->cdp && s->cdp_port == 9333, "cdp port");
	is_str(s->cdp_host, "127.0.0.2", "cdp host");
	is_str(ksr_scenario_cdp_selector(s, "search"), "#q", "cdp target name resolves");
	is_str(ksr_scenario_cdp_selector(s, "#other"), "#other", "a selector stays");
}

static const ksr_step *step(const ksr_scenario *s, int index, const char *kind)
{
	const ksr_step *st = &s->steps.items[index - 1];
	ok(st->index == index && !strcmp(st->info->name, kind), "step %d is %s", index, kind);
	return st;
}

static void input_steps(const ksr_scenario *s)
{
	is_int((long long)s->steps.len, 22, "22 steps");
	const ksr_step *st = step(s, 1, "key");
	is_str(st->text, "ctrl+s alt+F4 Return", "key chords");
	ok(st->pos.line == 28 && st->pos.col == 5 && st->value_pos.col == 10, "key position");
	st = step(s, 2, "type");
	is_str(st->text, "héllo wörld", "type text");
	ok(st->n_checks == 1 && !strcmp(st->checks[0].info->name, "screen") &&
	           !strcmp(st->checks[0].text, "the text appears") && st->checks[0].pos.line == 30,
	   "expect: becomes a screen check");
	is_str(st->expect, "the text appears", "expect kept");
	st = step(s, 3, "click");
	ok(st->point.kind == KSR_POINT_CENTER && near(st->point.fx, 0.5), "click center");
	st = step(s, 4, "double_click");
	ok(st->point.kind == KSR_POINT_DECLARED && st->point.declared &&
	           !strcmp(st->point.declared->name, "file_menu") && near(st->point.fy, 0.04),
	   "double_click declared");
	ok(near(st->timeout_s, 3), "step timeout_s");
	st = step(s, 5, "right_click");
	ok(st->point.kind == KSR_POINT_LITERAL && near(st->point.fx, 0.1) &&
	           near(st->point.fy, 0.9),
	   "right_click \"FX FY\"");
	ok(st->target_window && !strcmp(ksr_pattern_source(st->target_window), "^Save As$"),
	   "target: window \"RE\"");
	st = step(s, 6, "click");
	ok(st->point.kind == KSR_POINT_LITERAL && near(st->point.fy, 0.25), "click [fx, fy]");
	ok(st->target_window && !strcmp(ksr_pattern_source(st->target_window), "Dialog"),
	   "target: {window: RE}");
	st = step(s, 7, "click");
	ok(st->target_window && !strcmp(ksr_pattern_source(st->target_window), "^Save As$"),
	   "a declared target brings its window");
	st = step(s, 8, "scroll");
	is_int(st->scroll_dy, -3, "scroll up 3");
	ok(st->point.kind == KSR_POINT_CENTER, "scroll at the centre");
	st = step(s, 9, "scroll");
	is_int(st->scroll_dy, 2, "scroll down 2");
	ok(st->point.kind == KSR_POINT_DECLARED, "scroll at a declared target");
}

static void other_steps(const ksr_scenario *s)
{
	const ksr_step *st = step(s, 10, "click_element");
	ok(st->name.re && ksr_name_match_test(&st->name, "BOLD") &&
	           !ksr_name_match_test(&st->name, "Bold text"),
	   "click_element /regex/");
	is_str(st->role, "toggle button", "role");
	ok(st->n_checks == 1 && !strcmp(st->checks[0].info->name, "state") &&
	           !strcmp(st->checks[0].state, "checked") &&
	           ksr_name_match_test(&st->checks[0].name, "Bold"),
	   "expect_state becomes a state check");
	st = step(s, 11, "click_grounded");
	ok(st->expect && st->n_checks == 1, "click_grounded with expect");
	is_str(step(s, 12, "observe")->text, "a text editor with an empty document", "observe");
	st = step(s, 13, "wait_window");
	ok(ksr_pattern_match(st->re, "Save As") && near(st->timeout_s, 10), "wait_window");
	is_str(step(s, 14, "cdp_navigate")->text, "https://example.com/index.html",
	       "cdp_navigate with ${VAR:-default}");
	is_str(step(s, 15, "cdp_click")->text, "search", "cdp_click keeps the name");
	st = step(s, 16, "cdp_type");
	ok(!strcmp(st->text, "search") && !strcmp(st->fill_text, "kasm"), "cdp_type");
	st = step(s, 17, "cdp_wait");
	ok(!strcmp(st->text, "#results") && !strcmp(st->wait_state, "visible"), "cdp_wait state");
	st = step(s, 18, "cdp_fill");
	ok(!strcmp(st->text, "input[name=q]") && st->fill_text && !*st->fill_text,
	   "cdp_fill with empty text");
	is_str(step(s, 19, "cdp_press")->text, "Enter", "cdp_press");
	is_str(step(s, 20, "cdp_eval")->text, "document.title.length > 0", "cdp_eval");
	st = step(s, 21, "shell");
	ok(!strcmp(st->text, "test -s /tmp/hello.txt") && near(st->timeout_s, 30), "shell");
	st = step(s, 22, "sleep");
	ok(near(st->seconds, 1.5), "sleep seconds");
}

static void checks(const ksr_scenario *s)
{
	const ksr_step *st = &s->steps.items[21];
	is_int((long long)st->n_checks, 9, "nine checks");
	const ksr_check *c = st->checks;
	ok(!strcmp(c[0].info->name, "window") && ksr_pattern_match(c[0].re, "a - Mousepad") &&
	           near(c[0].timeout_s, 5),
	   "window check, default timeout");
	ok(!strcmp(c[1].info->name, "no_window") && near(c[1].timeout_s, 2), "no_window timeout");
	ok(!strcmp(c[2].info->name, "process"), "process check");
	ok(!strcmp(c[3].info->name, "file") && !strcmp(c[3].text, "/tmp/hello.txt"), "file");
	ok(!strcmp(c[4].info->name, "shell") && !strcmp(c[4].text, "true"), "shell check");
	ok(!strcmp(c[5].info->name, "state") && !strcmp(c[5].role, "toggle button") &&
	           !strcmp(c[5].state, "checked") && !strcmp(c[5].name.text, "Bold"),
	   "state {name, role, state}");
	ok(!strcmp(c[6].info->name, "element") && c[6].name.re, "element /re/");
	ok(!strcmp(c[7].info->name, "page") && !strcmp(c[7].selector, "#q") &&
	           !strcmp(c[7].page_text, "kasm") &&
	           ksr_pattern_match(c[7].url, "https://example.com/") &&
	           ksr_pattern_match(c[7].title, "Example Domain"),
	   "page check");
	ok(!strcmp(c[8].info->name, "screen") && !strcmp(c[8].text, "an editor window"), "screen");
	ok(c[0].pos.line == 62 && c[0].pos.col == 9, "check position");
}

static void plan_goal(const ksr_scenario *s)
{
	is_int((long long)s->plan.len, 2, "two plan steps");
	const ksr_step *p = &s->plan.items[1];
	ok(p->n_post == 1 && !strcmp(p->post[0].state, "focused") &&
	           !strcmp(p->post[0].name.text, "Text area with spaces") &&
	           near(p->post[0].timeout_s, 1),
	   "post: state with spaces in the name");
	is_str(s->goal, "Save the text hello as /tmp/hello.txt", "goal");
	ok(s->success.len == 1 && !strcmp(s->success.items[0].info->name, "file"), "success");
	ok(s->blockers.len == 1 && ksr_pattern_match(s->blockers.items[0].re, "Please Sign In"),
	   "blockers");
	ok(s->goal_turns == 10 && near(s->goal_seconds, 90) && s->goal_model_calls == 30,
	   "goal_budget");
	ok(near(s->remediation_timeout_s, 120), "remediation_timeout_s");
}

static void full(void)
{
	unsetenv("KSR_TEST_FLAVOUR");
	unsetenv("KSR_TEST_PATH");
	ksr_scenario *s = load(GOOD "full.yaml");
	if (!s)
		return;
	top_level(s);
	targets_and_cdp(s);
	input_steps(s);
	other_steps(s);
	checks(s);
	plan_goal(s);
	ksr_scenario_free(s);
}

/* ready_quiet_ms: 50 unless the scenario says; a step's own wins, 0 included. */
static void ready_quiet(void)
{
	ksr_scenario *s = load_str("window: x\nsteps:\n  - key: a\n");
	ok(s && near(s->ready_quiet_ms, 50) && !s->steps.items[0].ready_quiet_set,
	   "ready_quiet_ms defaults to 50");
	ksr_scenario_free(s);
	s = load_str("window: x\nready_quiet_ms: 120\nsteps:\n  - key: a\n  - click: center\n"
	             "    ready_quiet_ms: 0\n");
	ok(s && near(s->ready_quiet_ms, 120) && !s->steps.items[0].ready_quiet_set &&
	           s->steps.items[1].ready_quiet_set && near(s->steps.items[1].ready_quiet_ms, 0),
	   "ready_quiet_ms at scenario and step level");
	ksr_scenario_free(s);
}

static void defaults(void)
{
	ksr_scenario *s = load(GOOD "minimal.yaml");
	if (!s)
		return;
	is_str(s->name, "minimal", "name defaults to the file's base name");
	ok(near(s->boot_timeout_s, 60) && near(s->launch_timeout_s, 60) && near(s->settle_s, 5),
	   "default timeouts");
	ok(near(s->paint_timeout_s, 30), "paint_timeout_s defaults to 30");
	ok(!s->keep_running && s->atspi && !s->desktop && !s->cdp && !s->video, "default booleans");
	ok(near(s->baseline_tolerance, 0.02) && near(s->remediation_timeout_s, 300),
	   "default tolerance and remediation");
	ok(s->goal_turns == 20 && near(s->goal_seconds, 180) && s->goal_model_calls == 60,
	   "default goal_budget");
	ok(!s->error_dialogs_set && !s->baseline && s->n_logs == 0, "nothing else set");
	ksr_scenario_free(s);

	s = load(GOOD "cdp_only.yaml");
	ok(s && s->cdp && s->cdp_port == 0 && s->cdp_host && !strcmp(s->cdp_host, "127.0.0.1"),
	   "a cdp_* step turns cdp on with the default host");
	ksr_scenario_free(s);
	s = load_str("window: x\ncdp: true\n");
	ok(s && s->cdp && s->cdp_port == 0, "cdp: true");
	ksr_scenario_free(s);
	ready_quiet();
}

static void desktop(void)
{
	ksr_scenario *s = load(GOOD "desktop.yaml");
	if (!s)
		return;
	ok(s->desktop && s->steps.len == 4, "desktop scenario");
	const ksr_step *st = &s->steps.items[0];
	ok(!strcmp(st->spawn.command, "xterm") && !strcmp(st->spawn.as, "term") &&
	           ksr_pattern_match(st->spawn.window, "xterm") && st->spawn.process,
	   "spawn fields");
	is_str(s->steps.items[2].text, "term", "kill names the spawn");
	ok(s->steps.items[3].spawn.as == NULL && s->steps.items[3].spawn.process == NULL,
	   "spawn without process and as");
	ksr_scenario_free(s);
}

static void vars(void)
{
	setenv("KSR_TEST_FLAVOUR", "brave", 1);
	setenv("KSR_TEST_EMPTY", "", 1);
	ksr_scenario *s = load_str("name: ${KSR_TEST_FLAVOUR}-${KSR_TEST_FLAVOUR:-x}\n"
	                           "window: ${KSR_TEST_EMPTY:-fallback}\n"
	                           "launch: echo $$ $HOME $ ${KSR_TEST_EMPTY}end\n"
	                           "settle_s: ${KSR_TEST_NUM:-7}\n");
	ok(s != NULL, "variables load");
	if (s) {
		is_str(s->name, "brave-brave", "${VAR} and ${VAR:-d} with VAR set");
		is_str(ksr_pattern_source(s->window), "fallback", "empty VAR takes the default");
		is_str(s->launch, "echo $$ $HOME $ end", "$$, $NAME and a lone $ stay as written");
		ok(near(s->settle_s, 7), "a plain ${VAR:-7} is still a number");
	}
	ksr_scenario_free(s);
	unsetenv("KSR_TEST_FLAVOUR");
	unsetenv("KSR_TEST_EMPTY");
}

static void key_lists(void)
{
	const char *const *top = ksr_scenario_top_level_keys();
	size_t n = 0;
	while (top[n])
		n++;
	is_int((long long)n, 34, "34 top-level keys");
	const char *const *mods = ksr_scenario_modifier_keys();
	n = 0;
	while (mods[n])
		n++;
	is_int((long long)n, 12, "12 modifier keys");
	ok(ksr_scenario_mapping_keys("spawn") && !ksr_scenario_mapping_keys("nope"),
	   "mapping key lists");
}

/* drag: two points of one window; a declared target's window comes along. */
static void drag(void)
{
	ksr_scenario *s = load_str("window: x\n"
	                           "targets:\n"
	                           "  handle: [0.2, 0.3]\n"
	                           "  bin: {at: [0.9, 0.8], window: ^Trash$}\n"
	                           "steps:\n"
	                           "  - drag: {from: handle, to: [0.7, 0.3]}\n"
	                           "  - drag: {from: center, to: \"0.1 0.9\"}\n"
	                           "    target: window \"^Other$\"\n"
	                           "    ready_quiet_ms: 0\n"
	                           "  - drag: {from: [0.1, 0.1], to: bin}\n");
	ok(s && s->steps.len == 3, "three drags load");
	if (!s)
		return;
	const ksr_step *st = &s->steps.items[0];
	ok(st->info->kind == KSR_KIND_DRAG && st->info->target == KSR_TARGET_POINT &&
	           st->info->rung == KSR_RUNG_DECLARED,
	   "drag row: declared rung, a point target");
	ok(st->point.kind == KSR_POINT_DECLARED && near(st->point.fx, 0.2) &&
	           near(st->point.fy, 0.3) && st->drag_to.kind == KSR_POINT_LITERAL &&
	           near(st->drag_to.fx, 0.7) && near(st->drag_to.fy, 0.3) && !st->target_window,
	   "from a declared target to a literal point, the app's window");
	st = &s->steps.items[1];
	ok(st->point.kind == KSR_POINT_CENTER && near(st->drag_to.fx, 0.1) &&
	           near(st->drag_to.fy, 0.9) && st->target_window &&
	           !strcmp(ksr_pattern_source(st->target_window), "^Other$") && st->ready_quiet_set,
	   "from center to \"FX FY\" in target: window");
	st = &s->steps.items[2];
	ok(st->drag_to.declared && st->target_window &&
	           !strcmp(ksr_pattern_source(st->target_window), "^Trash$"),
	   "a declared to: brings its window");
	ksr_scenario_free(s);
}

/* paint_timeout_s is read like settle_s (full.yaml's line numbers are asserted
 * above, so it is tried inline). */
static void paint_timeout(void)
{
	ksr_scenario *s = load_str("process: x\nsettle_s: 1\npaint_timeout_s: 12.5\n");
	ok(s && near(s->paint_timeout_s, 12.5), "paint_timeout_s");
	ksr_scenario_free(s);
	s = load_str("process: x\npaint_timeout_s: 0\n");
	ok(s && near(s->paint_timeout_s, 0), "paint_timeout_s: 0 (no paint wait)");
	ksr_scenario_free(s);
}

int main(void)
{
	full();
	drag();
	defaults();
	desktop();
	vars();
	key_lists();
	paint_timeout();
	return tap_done();
}
