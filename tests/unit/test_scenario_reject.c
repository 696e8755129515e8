/* Every load-time rejection in docs/scenario.md, each at its exact line:column
 * with a fragment of its message; and the bad example files under tests/data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario.h"
#include "tap.h"

static void dump(const ksr_errlist *e)
{
	for (size_t i = 0; i < e->len; i++)
		printf("#   got %d:%d: %s\n", e->items[i].line, e->items[i].col, e->items[i].msg);
}

static bool has(const ksr_errlist *e, int line, int col, const char *frag)
{
	for (size_t i = 0; i < e->len; i++)
		if (e->items[i].line == line && e->items[i].col == col &&
		    strstr(e->items[i].msg, frag))
			return true;
	return false;
}

/* The text must be rejected with an error at line:col whose message holds frag. */
static void rejects(const char *what, const char *text, int line, int col, const char *frag)
{
	ksr_errlist e = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, "t.yaml", &e);
	bool found = has(&e, line, col, frag);
	if (!ok(!s && found, "%s: %d:%d '%s'", what, line, col, frag))
		dump(&e);
	ksr_scenario_free(s);
	ksr_errlist_free(&e);
}

static void accepts(const char *what, const char *text)
{
	ksr_errlist e = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, "t.yaml", &e);
	if (!ok(s && e.len == 0, "%s: accepted", what))
		dump(&e);
	ksr_scenario_free(s);
	ksr_errlist_free(&e);
}

static void unknown_keys(void)
{
	rejects("top-level typo", "process: x\nprocss: y\n", 2, 1,
	        "unknown key 'procss' in the scenario (did you mean 'process'?)");
	rejects("no suggestion when nothing is close", "process: x\nzzzzzzzz: 1\n", 2, 1,
	        "unknown key 'zzzzzzzz' in the scenario");
	rejects("step key typo", "process: x\nsteps:\n  - click: center\n    expct: a thing\n", 4,
	        5, "unknown key 'expct' in a step (did you mean 'expect'?)");
	rejects("action typo", "process: x\nsteps:\n  - clik: center\n", 3, 5,
	        "unknown key 'clik' in a step (did you mean 'click'?)");
	rejects("check key typo", "process: x\nsuccess:\n  - windw: x\n", 3, 5,
	        "unknown key 'windw' in a check (did you mean 'window'?)");
	rejects("sub-mapping key typo", "process: x\ngoal_budget: {turns: 1, secnds: 3}\n", 2, 25,
	        "unknown key 'secnds' in goal_budget (did you mean 'seconds'?)");
	rejects("spawn key typo",
	        "desktop: true\nsteps:\n  - spawn: {command: a, window: b, ass: t}\n", 3, 36,
	        "unknown key 'ass' in spawn (did you mean 'as'?)");
	rejects("page key typo", "process: x\nsuccess:\n  - page: {selector: a, titel: b}\n", 3, 25,
	        "unknown key 'titel' in page (did you mean 'title'?)");
	rejects("declared target key typo", "process: x\ntargets:\n  a: {att: [0.1, 0.1]}\n", 3, 7,
	        "unknown key 'att' in a target (did you mean 'at'?)");
}

static void duplicates_and_types(void)
{
	rejects("duplicate key", "process: x\nwindow: a\nwindow: b\n", 3, 1,
	        "duplicate key 'window' (first at line 2)");
	rejects("duplicate in a step", "process: x\nsteps:\n  - key: a\n    key: b\n", 4, 5,
	        "duplicate key 'key' (first at line 3)");
	rejects("string for a number", "process: x\nsettle_s: five\n", 2, 11,
	        "settle_s: expected a number, got 'five'");
	rejects("quoted number", "process: x\nsettle_s: \"5\"\n", 2, 11,
	        "settle_s: expected a number, got '5'");
	rejects("negative seconds", "process: x\nsteps:\n  - sleep: -1\n", 3, 12,
	        "sleep: -1 is outside 0..86400");
	rejects("not a bool", "process: x\natspi: yes\n", 2, 8,
	        "atspi: expected true or false, got 'yes'");
	rejects("mapping for a list", "process: x\nsteps: {a: b}\n", 2, 8,
	        "steps: expected a list, got a mapping");
	rejects("list for a string", "process: x\nlaunch: [a]\n", 2, 9,
	        "launch: expected a string, got a list");
	rejects("empty action value", "process: x\nsteps:\n  - key:\n", 3, 9,
	        "key: expected a string, got nothing");
	rejects("port out of range", "process: x\ncdp: {port: 70000}\n", 2, 13,
	        "cdp port: 70000 is outside 1..65535");
	rejects("fractional turns", "process: x\ngoal_budget: {turns: 1.5}\n", 2, 22,
	        "expected a whole number");
	rejects("top level not a mapping", "- a\n- b\n", 1, 1,
	        "the scenario: expected a mapping, got a list");
	rejects("tolerance above 1", "process: x\nbaseline_tolerance: 2\n", 2, 21,
	        "baseline_tolerance: 2 is outside 0..1");
}

static void fractions_and_targets(void)
{
	rejects("fraction in a list", "process: x\nsteps:\n  - click: [0.5, 1.2]\n", 3, 18,
	        "fraction 1.2 is outside 0..1");
	rejects("fraction in a string", "process: x\nsteps:\n  - click: \"1.5 0.5\"\n", 3, 12,
	        "fraction 1.5 is outside 0..1");
	rejects("fraction in a target", "process: x\ntargets:\n  a: [-0.1, 0.5]\n", 3, 7,
	        "fraction -0.1 is outside 0..1");
	rejects("three numbers", "process: x\nsteps:\n  - click: [0.1, 0.2, 0.3]\n", 3, 12,
	        "expected two fractions");
	rejects("mask fraction", "process: x\nbaseline_mask: [[0, 0, 1.5, 0.1]]\n", 2, 24,
	        "baseline_mask: fraction 1.5 is outside 0..1");
	rejects("undeclared target", "process: x\nsteps:\n  - click: nowhere\n", 3, 12,
	        "click: undeclared target 'nowhere'");
	rejects("undeclared target, did you mean",
	        "process: x\ntargets:\n  file_menu: [0.1, 0.1]\nsteps:\n  - click: file_mnu\n", 5,
	        12,
	        "undeclared target 'file_mnu' (declare it under targets:) (did you mean "
	        "'file_menu'?)");
	rejects("target named center", "process: x\ntargets:\n  center: [0.5, 0.5]\n", 3, 3,
	        "a target may not be named 'center'");
	rejects("declared target given another window",
	        "process: x\ntargets:\n  ok: {at: [0.5, 0.5], window: ^Save$}\nsteps:\n"
	        "  - click: ok\n    target: window \"^Other$\"\n",
	        6, 5, "'ok' is declared on window '^Save$' and cannot be given another window");
	accepts("declared target given its own window",
	        "process: x\ntargets:\n  ok: {at: [0.5, 0.5], window: ^Save$}\nsteps:\n"
	        "  - click: ok\n    target: window \"^Save$\"\n");
	rejects("bad target form", "process: x\nsteps:\n  - click: center\n    target: dialog\n", 4,
	        13, "target: expected window \"RE\" or {window: RE}");
}

static void patterns(void)
{
	rejects("invalid pattern", "window: \"(unclosed\"\n", 1, 9,
	        "window: invalid pattern '(unclosed': missing closing parenthesis at offset 9");
	rejects("invalid pattern in a check", "process: x\nsuccess:\n  - window: a[\n", 3, 13,
	        "window: invalid pattern 'a[': missing terminating ] for character class at offset "
	        "2");
	rejects("invalid /regex/ name", "process: x\nsteps:\n  - click_element: /(?<x/\n", 3, 20,
	        "click_element: invalid pattern '/(?<x/': syntax error in subpattern name");
	rejects("invalid pattern in a list", "process: x\nerror_dialogs: [ok, \"*bad\"]\n", 2, 21,
	        "error_dialogs: invalid pattern '*bad': quantifier does not follow a repeatable "
	        "item "
	        "at offset 0");
}

static void steps(void)
{
	rejects("zero action keys", "process: x\nsteps:\n  - expect: x\n", 3, 5,
	        "a step needs one action key (one of: key, type, click");
	rejects("two action keys", "process: x\nsteps:\n  - click: center\n    key: a\n", 4, 5,
	        "a step has one action key, but this one has 'click' and 'key'");
	rejects("a step that is a string", "process: x\nsteps:\n  - click center\n", 3, 5,
	        "a step must be a mapping with one action key, got a string");
	rejects("role on key", "process: x\nsteps:\n  - key: a\n    role: button\n", 4, 5,
	        "modifier 'role' does not apply to key (it takes: target, expect, expect_state, "
	        "checks, timeout_s, ready_quiet_ms, expect_effect)");
	rejects("expect_effect on shell",
	        "process: x\nsteps:\n  - shell: \"true\"\n    expect_effect: false\n", 4, 5,
	        "modifier 'expect_effect' does not apply to shell");
	rejects("expect_effect not a boolean",
	        "process: x\nsteps:\n  - key: F9\n    expect_effect: maybe\n", 4, 20,
	        "expect_effect");
	rejects("ready_quiet_ms on shell",
	        "process: x\nsteps:\n  - shell: a\n    ready_quiet_ms: 10\n", 4, 5,
	        "modifier 'ready_quiet_ms' does not apply to shell");
	rejects("state on cdp_click", "process: x\nsteps:\n  - cdp_click: a\n    state: visible\n",
	        4, 5, "modifier 'state' does not apply to cdp_click");
	rejects("target on shell", "process: x\nsteps:\n  - shell: a\n    target: window x\n", 4, 5,
	        "modifier 'target' does not apply to shell");
	rejects("expect on sleep", "process: x\nsteps:\n  - sleep: 1\n    expect: a\n", 4, 5,
	        "modifier 'expect' does not apply to sleep (it takes: checks)");
	rejects("post on a scripted step",
	        "process: x\nsteps:\n  - key: a\n    post: [{window: x}]\n", 4, 5,
	        "post: is only for plan: steps");
	rejects("plan step without post", "process: x\nplan:\n  - key: a\n", 3, 5,
	        "a plan: step needs post:");
	rejects("click_grounded without expect", "process: x\nsteps:\n  - click_grounded: OK\n", 3,
	        5, "click_grounded needs expect:");
	rejects("bad scroll", "process: x\nsteps:\n  - scroll: sideways 3\n", 3, 13,
	        "scroll: expected 'up N' or 'down N'");
	rejects("drag without to", "process: x\nsteps:\n  - drag: {from: center}\n", 3, 11,
	        "drag: needs from: and to:");
	rejects("drag as a string", "process: x\nsteps:\n  - drag: center\n", 3, 11,
	        "drag: expected a mapping");
	rejects("drag key typo", "process: x\nsteps:\n  - drag: {from: center, too: [0.1, 0.1]}\n",
	        3, 26, "unknown key 'too' in drag (did you mean 'to'?)");
	rejects("drag to an undeclared target",
	        "process: x\nsteps:\n  - drag: {from: center, to: bin}\n", 3, 30,
	        "drag to: undeclared target 'bin'");
	rejects("drag to a fraction out of range",
	        "process: x\nsteps:\n  - drag: {from: center, to: [0.5, 1.5]}\n", 3, 36,
	        "drag to: fraction 1.5 is outside 0..1");
	rejects("drag to the same point",
	        "process: x\nsteps:\n  - drag: {from: center, to: \"0.5 0.5\"}\n", 3, 30,
	        "drag: from: and to: are the same point");
	rejects("drag across windows",
	        "process: x\ntargets:\n  a: {at: [0.1, 0.1], window: ^A$}\n  b: [0.5, 0.5]\n"
	        "steps:\n  - drag: {from: a, to: b}\n",
	        6, 25, "a drag stays in one window");
	rejects("drag target: against a declared window",
	        "process: x\ntargets:\n  a: {at: [0.1, 0.1], window: ^A$}\n"
	        "steps:\n  - drag: {from: [0.5, 0.5], to: a}\n    target: window ^B$\n",
	        6, 5, "target: 'a' is declared on window '^A$'");
	rejects("drag takes no role",
	        "process: x\nsteps:\n  - drag: {from: center, to: [0.1, 0.1]}\n"
	        "    role: push button\n",
	        4, 5, "modifier 'role' does not apply to drag");
	rejects("bad cdp_wait state", "process: x\nsteps:\n  - cdp_wait: a\n    state: gone\n", 4,
	        12, "state: expected visible, hidden, attached or detached, got 'gone'");
	rejects("cdp_type without text", "process: x\nsteps:\n  - cdp_type: {selector: a}\n", 3, 15,
	        "cdp_type: needs selector: and text:");
	/* text= (docs/cdp.md, "Elements by text"): spelled as the page's finder reads it. */
	rejects("text= with no text", "process: x\nsteps:\n  - page_click: \"text=  \"\n", 3, 17,
	        "page_click: 'text=  ': text= needs the text to find");
	rejects("text= quoted empty", "process: x\nsuccess:\n  - page: {selector: 'text=\"\"'}\n",
	        3, 22, "page selector: 'text=\"\"': text= needs the text to find");
	rejects("text=/RE/ bad flag",
	        "process: x\nsteps:\n  - page_fill: {selector: text=/usr/bin, text: a}\n", 3, 27,
	        "'b' is not a regular expression flag here");
	rejects("text=/RE/ flag twice", "process: x\ncdp_targets:\n  a: text=/x/ii\n", 3, 6,
	        "cdp_targets: 'text=/x/ii': 'i' is not a regular expression flag here");
	accepts("text= forms",
	        "process: x\ncdp_targets:\n  send: text=Send\nsteps:\n  - page_click: send\n"
	        "  - page_click: text=/^send$/i\n  - page_wait: 'text=\"/usr/bin\"'\n"
	        "  - hover: {selector: text=/a/}\n  - page_type: {selector: 'text= a b ', text: "
	        "x}\n");
	rejects("expect_state without a state",
	        "process: x\nsteps:\n  - key: a\n"
	        "    expect_state: Bold\n",
	        4, 19, "expected \"NAME STATE\"");
}

static void checks(void)
{
	rejects("two check kinds", "process: x\nsuccess:\n  - window: a\n    file: b\n", 4, 5,
	        "a check has one kind, but this one has 'window' and 'file'");
	rejects("no check kind", "process: x\nsuccess:\n  - timeout_s: 3\n", 3, 5,
	        "a check needs one of: window, no_window, process");
	rejects("page without selector", "process: x\nsuccess:\n  - page: {url: x}\n", 3, 11,
	        "page: needs selector:");
	rejects("state mapping without state", "process: x\nsuccess:\n  - state: {name: a}\n", 3,
	        12, "state: needs state: (and name:, label:, in: or role:)");
	/* Locators (docs/scenario.md#locators): each mistake at its key's value. */
	rejects("locator with nothing to find", "process: x\nsteps:\n  - click_element: {nth: 2}\n",
	        3, 20, "click_element: needs name:, label:, in: or role: (what finds the control)");
	rejects("locator nth not a count",
	        "process: x\nsteps:\n  - click_element: {role: text, nth: 0}\n", 3, 38,
	        "click_element nth: 0 is outside 1..10000");
	rejects("locator unknown key",
	        "process: x\nsteps:\n  - click_element: {lable: \"Host:\"}\n", 3, 21,
	        "unknown key 'lable' in click_element (did you mean 'label'?)");
	rejects("locator in: without name or role",
	        "process: x\nsuccess:\n  - text: {in: {}, contains: a}\n", 3, 16,
	        "text in: needs name: or role: (the ancestor the control is inside)");
	rejects("locator in: bad role",
	        "process: x\nsuccess:\n  - no_element: {in: {role: pannel}}\n", 3, 29,
	        "no_element in: unknown accessibility role 'pannel'");
	rejects("locator label: bad pattern",
	        "process: x\nsuccess:\n  - element: {label: \"/(x/\"}\n", 3, 22,
	        "element label: invalid pattern");
	rejects("role twice",
	        "process: x\nsteps:\n  - click_element: {label: a, role: text}\n    role: text\n",
	        4, 5, "role: is given twice (in click_element's mapping and here)");
	rejects("check timeout type", "process: x\nsuccess:\n  - file: a\n    timeout_s: soon\n", 4,
	        16, "timeout_s: expected a number, got 'soon'");
}

static void modes(void)
{
	rejects("desktop with process", "desktop: true\nprocess: x\n", 2, 10,
	        "process: not allowed with desktop: true");
	rejects("desktop with window", "desktop: true\nwindow: x\n", 2, 9,
	        "window: not allowed with desktop: true");
	rejects("no way to find the app", "name: x\n", 1, 1,
	        "the scenario needs process: (or process_cmdline:) or window:");
	accepts("process_cmdline alone", "process_cmdline: --profile\n");
	accepts("window alone", "window: x\n");
	rejects("spawn outside desktop mode",
	        "process: x\nsteps:\n  - spawn: {command: a, window: b}\n", 3, 5,
	        "spawn: only in desktop mode (desktop: true)");
	rejects("kill outside desktop mode", "process: x\nsteps:\n  - kill: a\n", 3, 5,
	        "kill: only in desktop mode");
	rejects("kill of an unknown name",
	        "desktop: true\nsteps:\n  - spawn: {command: a, window: b, as: term}\n"
	        "  - kill: trem\n",
	        4, 11, "kill: 'trem' names no earlier spawn step's as: (did you mean 'term'?)");
	rejects("kill before its spawn",
	        "desktop: true\nsteps:\n  - kill: term\n  - spawn: {command: a, window: b, as: "
	        "term}\n",
	        3, 11, "kill: 'term' names no earlier spawn step's as:");
	rejects("spawn name used twice",
	        "desktop: true\nsteps:\n  - spawn: {command: a, window: b, as: t}\n"
	        "  - spawn: {command: a, window: b, as: t}\n",
	        4, 40, "spawn: the name 't' is already used (line 3)");
}

static void variables(void)
{
	unsetenv("KSR_TEST_UNSET_X");
	rejects("unset variable", "process: x\nwindow: a ${KSR_TEST_UNSET_X} b\n", 2, 9,
	        "environment variable 'KSR_TEST_UNSET_X' is not set");
	rejects("unset variable in a step",
	        "process: x\nsteps:\n  - shell: echo ${KSR_TEST_UNSET_X}\n", 3, 12,
	        "environment variable 'KSR_TEST_UNSET_X' is not set");
	rejects("unterminated", "process: x\nlaunch: echo ${HOME\n", 2, 9,
	        "unterminated ${ (missing '}')");
	rejects("no name", "process: x\nlaunch: echo ${}\n", 2, 9,
	        "'${' must be followed by a variable name");
	rejects("other operators", "process: x\nlaunch: echo ${HOME:=x}\n", 2, 9,
	        "only ${HOME} and ${HOME:-default}");
}

static void yaml_errors(void)
{
	rejects("unclosed quote", "process: x\nwindow: \"abc\nsettle_s: 1\n", 2, 9,
	        "YAML syntax error: while scanning a quoted scalar");
	rejects("unclosed flow sequence", "process: x\nlogs: [a, b\nsettle_s: 1\n", 2, 7,
	        "YAML syntax error: while parsing a flow sequence");
	rejects("unclosed flow mapping", "process: x\ncdp: {port: 1\n", 2, 6,
	        "YAML syntax error: while parsing a flow mapping");
	rejects("bad indentation", "process: x\n  window: y\n", 2, 9,
	        "YAML syntax error: mapping values are not allowed in this context");
	rejects("tab indentation", "process: x\nsteps:\n\t- key: a\n", 3, 1,
	        "YAML syntax error: while scanning for the next token");
	rejects("empty file", "", 1, 1, "the scenario is empty");
	rejects("two documents", "process: x\n---\nprocess: y\n", 2, 1,
	        "one YAML document, not several");
	rejects("alias", "process: &p x\nwindow: *p\n", 2, 9,
	        "YAML aliases (*p) are not supported");
	rejects("anchor", "process: &p x\nwindow: *p\n", 1, 10,
	        "YAML anchors (&p) are not supported");
	rejects("alias bomb",
	        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	        "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
	        "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
	        2, 8, "YAML aliases (*a) are not supported");
	rejects("a key that is a list", "process: x\n[a]: 1\n", 2, 1,
	        "a mapping key must be a plain string");
}

static void caps(void)
{
	size_t big = 1024 * 1024 + 16;
	char *text = malloc(big + 1);
	memset(text, '#', big);
	memcpy(text, "process: x\n", 11);
	text[big] = 0;
	rejects("size cap", text, 0, 0, "larger than 1048576 bytes");
	size_t items = 60000;
	char *list = malloc(32 + 2 * items);
	strcpy(list, "process: x\nlogs: [");
	size_t n = strlen(list);
	for (size_t i = 0; i < items; i++)
		list[n++] = 'a', list[n++] = ',';
	strcpy(list + n, "a]\n");
	/* The 50001st node: root, two keys, two values, the list, then items from column 8. */
	rejects("node cap", list, 2, 8 + 2 * (50001 - 6), "too many YAML nodes");
	char deep[400] = "process: x\nlogs: ";
	for (int i = 0; i < 100; i++)
		strcat(deep, "[");
	rejects("depth cap", deep, 2, 71, "nested too deeply");
	free(list);
	free(text);
}

static void several(void)
{
	ksr_errlist e = {0};
	ksr_scenario *s = ksr_scenario_load_string("procss: x\nsettle_s: soon\nsteps:\n"
	                                           "  - click: [2, 0]\n  - click_grounded: a\n",
	                                           "t.yaml", &e);
	bool five = ok(!s && e.len == 5, "five errors reported at once (got %zu)", e.len);
	five = ok(e.len == 5 && e.items[0].line == 1 && e.items[1].line == 1 &&
	                  e.items[2].line == 2 && e.items[3].line == 4 && e.items[4].line == 5,
	          "errors in file order") &&
	       five;
	if (!five)
		dump(&e);
	ksr_errlist_free(&e);
}

static void bad_files(void)
{
	static const struct {
		const char *file;
		int line, col;
		const char *frag;
	} cases[] = {
	        {"unknown_key.yaml", 3, 1, "did you mean 'settle_s'?"},
	        {"grounded_no_expect.yaml", 4, 5, "click_grounded needs expect:"},
	        {"unclosed_quote.yaml", 3, 9, "while scanning a quoted scalar"},
	        {"alias_bomb.yaml", 3, 8, "YAML aliases (*a) are not supported"},
	        {"desktop_process.yaml", 3, 10, "not allowed with desktop: true"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[256];
		snprintf(path, sizeof path, "tests/data/scenarios/bad/%s", cases[i].file);
		ksr_errlist e = {0};
		ksr_scenario *s = ksr_scenario_load(path, &e);
		if (!ok(!s && has(&e, cases[i].line, cases[i].col, cases[i].frag), "%s", path))
			dump(&e);
		ksr_scenario_free(s);
		ksr_errlist_free(&e);
	}
	ksr_errlist e = {0};
	ok(!ksr_scenario_load("tests/data/scenarios/bad/does-not-exist.yaml", &e) && e.len == 1 &&
	           strstr(e.items[0].msg, "cannot open the scenario"),
	   "a missing file");
	ksr_errlist_free(&e);
}

/* Issue 31, item 9: a NUL is refused where it is, a byte order mark is not
 * content, and the values after ${VAR} expansion have a cap that is checked
 * while expanding and names the variable (docs/scenario.md#limits). */
static void bounded_inputs(void)
{
	rejects("\\0 in a quoted value", "process: x\nname: \"a\\0b\"\n", 2, 7,
	        "a NUL character (\\0) in a value is not allowed");
	rejects("\\0 in a quoted key", "process: x\n\"k\\0\": 1\n", 2, 1,
	        "a NUL character (\\0) in a key is not allowed");
	accepts("a UTF-8 byte order mark", "\xef\xbb\xbfprocess: x\nname: bom\n");
	rejects("positions after a byte order mark", "\xef\xbb\xbfprocess: x\nprocss: y\n", 2, 1,
	        "unknown key 'procss'");

	char *big = malloc(100001);
	memset(big, 'v', 100000);
	big[100000] = 0;
	setenv("KSR_T_BIG", big, 1);
	free(big);
	char *text = malloc(64 * 30 + 64), *p = text;
	p += sprintf(p, "process: x\nsteps:\n");
	for (int i = 0; i < 41; i++)
		p += sprintf(p, "  - shell: ${KSR_T_BIG}\n");
	accepts("41 uses of 100,000 bytes: under the cap", text);
	free(text);
	text = malloc(64 * 60 + 64), p = text;
	p += sprintf(p, "process: x\nsteps:\n");
	for (int i = 0; i < 60; i++)
		p += sprintf(p, "  - shell: ${KSR_T_BIG}\n");
	ksr_errlist e = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, "t.yaml", &e);
	if (!ok(!s && e.len == 1 &&
	                has(&e, 44, 12,
	                    "expanding ${KSR_T_BIG} (100000 bytes) makes the "
	                    "scenario larger than 4194304 bytes"),
	        "the 42nd use is refused, naming the variable, and only once"))
		dump(&e);
	ksr_scenario_free(s);
	ksr_errlist_free(&e);
	free(text);
	unsetenv("KSR_T_BIG");

	ksr_errlist d = {0};
	s = ksr_scenario_load("/tmp", &d);
	ok(!s && d.len == 1 &&
	           strstr(d.items[0].msg, "the scenario is a directory, not a regular file"),
	   "a directory is not a scenario: %s", d.len ? d.items[0].msg : "no error");
	ksr_scenario_free(s);
	ksr_errlist_free(&d);
}

int main(void)
{
	bounded_inputs();
	unknown_keys();
	duplicates_and_types();
	fractions_and_targets();
	patterns();
	steps();
	checks();
	modes();
	variables();
	yaml_errors();
	caps();
	several();
	bad_files();
	return tap_done();
}
