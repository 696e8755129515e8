/* The scenario: what the loader makes of a YAML file (docs/scenario.md). Every node
 * keeps its line and column so that run-time errors can name the scenario line. */
#ifndef KSR_SCENARIO_H
#define KSR_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/keys.h"
#include "ksr/page.h"
#include "ksr/vocabulary.h"
#include "ksr/pattern.h"

typedef struct ksr_pos {
	int line, col; /* 1-based; 0 = not from the file */
} ksr_pos;

/* A declared position (rung 1): fractions of a window's client area. */
typedef struct ksr_target {
	char *name;
	double fx, fy;
	ksr_pattern *window; /* NULL: the app's window */
	ksr_pos pos;
} ksr_target;

/* Where a click lands. */
typedef enum ksr_point_kind {
	KSR_POINT_CENTER,   /* rung "center" */
	KSR_POINT_DECLARED, /* rung "declared": a name from targets: */
	KSR_POINT_LITERAL,  /* rung "literal": "FX FY" or [fx, fy] */
} ksr_point_kind;

/* hover: a point form (point above), {element, role?} (name, role) or
 * {selector} (text: a selector or cdp_targets name). */
typedef enum ksr_hover_via {
	KSR_HOVER_POINT,
	KSR_HOVER_ELEMENT,
	KSR_HOVER_PAGE,
} ksr_hover_via;

typedef struct ksr_point {
	ksr_point_kind kind;
	double fx, fy;              /* resolved fractions (0.5 0.5 for center) */
	const ksr_target *declared; /* KSR_POINT_DECLARED */
} ksr_point;

/* What finds an accessibility control besides its name and role
 * (docs/scenario.md#locators): the label that labels it, an ancestor it is
 * inside, its place among the controls that match. Zero: none of them. */
typedef struct ksr_locator {
	ksr_name_match label;   /* label: (text NULL: none) */
	bool in;                /* in: given */
	ksr_name_match in_name; /* in: the ancestor's name (text NULL: any name) */
	char *in_role;          /* in: {role:} (NULL: any role) */
	int nth;                /* nth: 1-based, in reading order; 0: not given */
} ksr_locator;

typedef struct ksr_check {
	const ksr_check_info *info; /* row of the check table (kind, name, backend...) */
	ksr_pos pos;
	double timeout_s;           /* default 5 */
	ksr_pattern *re;            /* window, no_window, process */
	char *text;                 /* file path, shell command, screen description */
	ksr_name_match name;        /* state, element */
	char *role;                 /* state, element: optional role name */
	char *state;                /* state: the state word ("checked") */
	char *selector, *page_text; /* page */
	ksr_pattern *url, *title;   /* page */
	bool hidden_ok; /* state, element: the step's hidden_ok: (a hidden control counts) */
	/* state, element, text in desktop mode: the step's tool: (borrowed from
	 * the step; NULL: the newest tool) */
	const char *tool;
	/* text: the control (name optional: none = the focused one, else the
	 * first showing one with text or a value) and the test: equals/contains
	 * use `text`, matches uses `re`. */
	enum { KSR_TEXT_EQUALS, KSR_TEXT_CONTAINS, KSR_TEXT_MATCHES } text_op;
	ksr_locator loc; /* state, element, no_element, text: label:, in:, nth: */
} ksr_check;

typedef struct ksr_step {
	const ksr_step_info *info; /* its row of the vocabulary (ksr/vocabulary.def) */
	ksr_pos pos;               /* the step's mapping */
	ksr_pos value_pos;         /* the action key's value */
	int index;                 /* 1-based within its list */

	/* The action's value, by the row's argument shape. */
	char *text;        /* chords, text, description, URL, selector, JS, command, kill name */
	ksr_chord *chords; /* key: text's chords, parsed once when the step is made */
	size_t n_chords;
	ksr_point point; /* click, double_click, right_click; scroll: where (center); drag: from */
	ksr_point drag_to;   /* drag: where the button is released */
	int scroll_dy;       /* scroll: negative up, positive down (clicks of the wheel) */
	ksr_name_match name; /* click_element; hover's element form (text NULL: any name) */
	ksr_locator loc;     /* click_element's label:, in:, nth: */
	struct {
		ksr_hover_via via; /* which form hover: took */
	} hover;
	ksr_pattern *re; /* wait_window */
	double seconds;  /* sleep */
	char *fill_text; /* cdp_type / cdp_fill {selector, text}: text; selector in `text` */
	struct {
		char *command, *as;
		ksr_pattern *window, *process; /* window: NULL only with desktop_entry */
		char *desktop_entry;           /* desktop_entry: ID (instead of command:) */
	} spawn;

	/* Modifiers. */
	ksr_pattern *target_window; /* target: window "RE" (or the declared target's window) */
	char *role;                 /* click_element role: */
	char *wait_state;           /* cdp_wait state: visible|hidden|attached|detached */
	char *expect;               /* expect: (also present as a screen check in checks) */
	ksr_check *checks;          /* checks:, plus expect: and expect_state: as checks */
	size_t n_checks;
	ksr_check *post; /* plan steps: post: */
	size_t n_post;
	double timeout_s;      /* 0 = the action's default */
	double ready_quiet_ms; /* ready_quiet_ms:, when ready_quiet_set (else the scenario's) */
	bool ready_quiet_set;
	bool hidden_ok;    /* hidden_ok: true: act on and check controls that are not showing */
	bool no_effect_ok; /* expect_effect: false: an input the app may ignore (no concern) */
	char *tool; /* tool: desktop mode: the spawn as: name the step acts on (NULL: newest) */
} ksr_step;

typedef struct ksr_step_list {
	ksr_step *items;
	size_t len;
} ksr_step_list;

typedef struct ksr_check_list {
	ksr_check *items;
	size_t len;
} ksr_check_list;

typedef struct ksr_cdp_target {
	char *name, *selector;
	ksr_pos pos;
} ksr_cdp_target;

typedef struct ksr_scenario {
	char *path;   /* as given */
	char *dir;    /* its folder, for relative paths */
	char *sha256; /* of the file's bytes, hex */
	char *name;

	char *launch;
	ksr_pattern *process, *process_cmdline, *window, *window_class;
	ksr_pos launch_pos, process_pos, window_pos;
	double boot_timeout_s, launch_timeout_s, settle_s;
	/* A window still one flat colour after settle_s is waited for this much
	 * longer to paint (docs/scenario.md#painted-before-judged). */
	double paint_timeout_s;
	bool keep_running, atspi, desktop;
	bool video; /* record the run's video (docs/report.md#video) */

	char **logs;
	size_t n_logs;

	char *baseline; /* resolved against dir */
	double baseline_tolerance;
	double (*baseline_mask)[4];
	size_t n_baseline_mask;

	ksr_pattern **error_dialogs, **first_run_prompts, **updaters, **recovery_prompts;
	size_t n_error_dialogs, n_first_run_prompts, n_updaters, n_recovery_prompts;
	/* else built-in defaults */
	bool error_dialogs_set, first_run_prompts_set, updaters_set, recovery_prompts_set;

	ksr_target *targets;
	size_t n_targets;

	bool cdp; /* cdp: given, or any cdp_* step */
	char *cdp_host;
	int cdp_port;                 /* 0: discover (DevToolsActivePort, else 9222) */
	ksr_page_browser cdp_browser; /* cdp: {browser: ...}: the page protocol to speak */
	ksr_cdp_target *cdp_targets;
	size_t n_cdp_targets;

	ksr_step_list steps, plan;
	char *goal;
	ksr_pos goal_pos;
	ksr_check_list success, blockers;
	int goal_turns, goal_model_calls;
	double goal_seconds;
	double remediation_timeout_s;
	double ready_quiet_ms; /* no repaint for this long before input (default 50; 0 off) */
} ksr_scenario;

/* Load and check a scenario. On failure returns NULL and fills errs with every
 * rejection found ("did you mean", duplicates, YAML errors...). errs' positions
 * are the file's; the caller formats them as `file:line:col: message`. */
ksr_scenario *ksr_scenario_load(const char *path, ksr_errlist *errs);
ksr_scenario *ksr_scenario_load_string(const char *text, const char *path_for_messages,
                                       ksr_errlist *errs);
void ksr_scenario_free(ksr_scenario *s); /* NULL-safe */

const ksr_target *ksr_scenario_find_target(const ksr_scenario *s, const char *name);
const char *ksr_scenario_cdp_selector(const ksr_scenario *s, const char *name_or_selector);

/* The top-level keys the loader accepts, NULL-terminated (for the docs/schema test). */
const char *const *ksr_scenario_top_level_keys(void);
/* The step modifiers the loader accepts, NULL-terminated. */
const char *const *ksr_scenario_modifier_keys(void);
/* The keys of a sub-mapping, NULL-terminated, or NULL for an unknown which:
 * "targets" (a declared target's {at, window}), "cdp", "goal_budget", "spawn",
 * "selector_text" (cdp_type/cdp_fill), "state", "page", "target", "locator"
 * (an element's {name, role, label, in, nth}), "in" ({name, role}). */
const char *const *ksr_scenario_mapping_keys(const char *which);

#endif
