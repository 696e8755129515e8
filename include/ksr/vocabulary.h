/* The step vocabulary (the rows are in ksr/vocabulary.def): for each step
 * kind its rung, backend, whether it needs a model, how its value is parsed,
 * which modifiers it takes, what the runner resolves before it acts and what
 * it does after; the same for checks and for the goal loop's tools. The
 * scenario layer owns these tables; the run layer adds the executor column
 * (src/run/actions/executors.c). See docs/design.md. */
#ifndef KSR_VOCABULARY_H
#define KSR_VOCABULARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksr/verdict.h"

typedef struct cJSON cJSON;

typedef enum ksr_rung {
	KSR_RUNG_NONE = -1,
	KSR_RUNG_PAGE = 0,     /* DOM over CDP */
	KSR_RUNG_DECLARED = 1, /* fractions of a window */
	KSR_RUNG_ELEMENT = 2,  /* accessibility */
	KSR_RUNG_GROUNDED = 3, /* vision model */
} ksr_rung;

typedef enum ksr_backend {
	KSR_BACKEND_NONE,
	KSR_BACKEND_XTEST,
	KSR_BACKEND_ATSPI,
	KSR_BACKEND_CDP,
	KSR_BACKEND_VISION,
	KSR_BACKEND_SHELL,
	KSR_BACKEND_X11, /* observation only (window checks) */
	KSR_BACKEND_PROC,
	KSR_BACKEND_FILE,
} ksr_backend;

const char *ksr_backend_name(ksr_backend b);

/* How an action's value is read at load time. */
typedef enum ksr_shape {
	KSR_SHAPE_CHORDS,      /* key: "ctrl+s alt+F4" */
	KSR_SHAPE_TEXT,        /* any non-empty string */
	KSR_SHAPE_POINT,       /* center | target name | "FX FY" | [fx, fy] */
	KSR_SHAPE_SCROLL,      /* up N | down N */
	KSR_SHAPE_NAME,        /* exact or /regex/ */
	KSR_SHAPE_DESCRIPTION, /* text for a model */
	KSR_SHAPE_PATTERN,     /* PCRE2 */
	KSR_SHAPE_URL,
	KSR_SHAPE_SELECTOR,      /* cdp_targets name or CSS selector */
	KSR_SHAPE_SELECTOR_TEXT, /* {selector, text} */
	KSR_SHAPE_JS,
	KSR_SHAPE_COMMAND,
	KSR_SHAPE_SECONDS,    /* number >= 0 */
	KSR_SHAPE_SPAWN,      /* {command, window, process?, as?} */
	KSR_SHAPE_IDENT,      /* kill: an `as` name */
	KSR_SHAPE_STATE,      /* "NAME STATE" or {name, role, state} */
	KSR_SHAPE_PAGE,       /* {selector, text?, url?, title?} */
	KSR_SHAPE_HOVER,      /* a POINT value, {element, role?} or {selector} */
	KSR_SHAPE_TEXT_CHECK, /* {name?, role?, equals | contains | matches} */
	KSR_SHAPE_DRAG,       /* {from: POINT, to: POINT} */
} ksr_shape;

/* What the step runner resolves before the executor acts. */
typedef enum ksr_target_kind {
	KSR_TARGET_NONE,     /* nothing: the executor needs no window */
	KSR_TARGET_WINDOW,   /* the window input goes to: target: window, else the app's
	                        (desktop mode: the newest tool's, or the screen) */
	KSR_TARGET_POINT,    /* that window and a pixel in it (the step's point) */
	KSR_TARGET_ELEMENT,  /* an accessibility control: the executor's walk finds it */
	KSR_TARGET_PAGE,     /* a page element: CDP resolves it with the action */
	KSR_TARGET_GROUNDED, /* a place a vision model finds on the screen */
} ksr_target_kind;

/* What the step runner does after the act. */
typedef enum ksr_after {
	KSR_AFTER_NOTHING,
	KSR_AFTER_SHOTS, /* let the screen settle, then NN-step.png (+ -annotated) */
} ksr_after;

/* Every step kind, in the order of ksr/vocabulary.def. */
typedef enum ksr_step_kind {
#define KSR_STEP(name, KIND, ...) KSR_KIND_##KIND,
#include "ksr/vocabulary.def"
	KSR_KIND_COUNT,
	KSR_KIND_NONE = -1, /* a goal tool that runs no step */
} ksr_step_kind;

typedef enum ksr_check_kind {
#define KSR_CHECK(name, KIND, ...) KSR_CHECK_KIND_##KIND,
#include "ksr/vocabulary.def"
	KSR_CHECK_KIND_COUNT,
} ksr_check_kind;

/* The goal loop's tools (docs/agentic.md). */
typedef enum ksr_goal_tool {
#define KSR_GOAL_TOOL(name, TOOL, ...) KSR_GOAL_##TOOL,
#include "ksr/vocabulary.def"
	KSR_GOAL_TOOL_COUNT,
} ksr_goal_tool;

/* Which modifiers a step kind accepts (bits). */
enum {
	KSR_MOD_TARGET = 1u << 0,
	KSR_MOD_ROLE = 1u << 1,
	KSR_MOD_EXPECT = 1u << 2,
	KSR_MOD_EXPECT_STATE = 1u << 3,
	KSR_MOD_CHECKS = 1u << 4,
	KSR_MOD_TIMEOUT = 1u << 5,
	KSR_MOD_STATE = 1u << 6,     /* cdp_wait's state: */
	KSR_MOD_HIDDEN_OK = 1u << 7, /* act on (and check) a control that is not showing */
	KSR_MOD_READY = 1u << 8,     /* ready_quiet_ms: (X11 input steps) */
	KSR_MOD_EFFECT = 1u << 9,    /* expect_effect:; the runner watches what the input did */
	KSR_MOD_TOOL = 1u << 15,     /* tool: desktop mode's spawned tool the step acts on */
};
#define KSR_MOD_COMMON                                                                             \
	(KSR_MOD_EXPECT | KSR_MOD_EXPECT_STATE | KSR_MOD_CHECKS | KSR_MOD_TIMEOUT | KSR_MOD_TOOL)

typedef enum ksr_step_status {
	KSR_STEP_OK = 0,
	KSR_STEP_FAILED, /* the app: step-failed / check-failed (app-failed) */
	KSR_STEP_ERROR,  /* the setup: backend-unavailable, deadline... (test-error) */
} ksr_step_status;

/* What an executor reports; the run turns it into a step event. */
typedef struct ksr_step_result {
	ksr_step_status status;
	ksr_outcome outcome; /* when not OK: KSR_OUTCOME_STEP_FAILED, _BACKEND_UNAVAILABLE... */
	char reason[512];    /* one sentence; the run prefixes the scenario line */
	const char *rung;    /* "center", "declared", "literal", "element", "grounded", or NULL */
	bool has_window;
	int win_x, win_y, win_w, win_h; /* geometry used, root coordinates */
	bool has_pixel;
	int px, py;   /* the pixel the action resolved to */
	bool acted;   /* the input was delivered: the runner settles and takes the shots */
	cJSON *extra; /* more fields for the step row (owned; may stay NULL) */
} ksr_step_result;

typedef struct ksr_step_info {
	const char *name; /* the YAML action key */
	ksr_step_kind kind;
	ksr_rung rung;
	ksr_backend backend;
	bool needs_model;
	ksr_shape shape;
	uint32_t modifiers; /* KSR_MOD_* accepted */
	ksr_target_kind target;
	ksr_after after;
	bool desktop_only; /* spawn, kill */
	const char *alias; /* the row's other name: its alias ("cdp_click", "" when none),
	                    * or, found by its alias, the row's own name ("page_click") */
} ksr_step_info;

typedef struct ksr_check_info {
	const char *name; /* the YAML key */
	ksr_check_kind kind;
	ksr_backend backend;
	bool needs_model;
	ksr_shape shape;
} ksr_check_info;

typedef struct ksr_goal_tool_info {
	const char *name;  /* as the planner names it */
	const char *alias; /* an older name still accepted from a model, "" when none */
	ksr_goal_tool tool;
	ksr_step_kind step; /* the step kind it runs, KSR_KIND_NONE for wait and done */
} ksr_goal_tool_info;

const ksr_step_info *ksr_step_kind_find(const char *name);
const ksr_step_info *ksr_step_kind_info(ksr_step_kind kind);
const ksr_step_info *ksr_step_kinds(size_t *n);
const ksr_check_info *ksr_check_kind_find(const char *name);
const ksr_check_info *ksr_check_kind_info(ksr_check_kind kind);
const ksr_check_info *ksr_check_kinds(size_t *n);
const ksr_goal_tool_info *ksr_goal_tools(size_t *n);
const ksr_goal_tool_info *ksr_goal_tool_find(const char *name);

#endif
