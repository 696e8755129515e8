/* The ladder: one table maps each step kind to its rung, backend, whether it
 * needs a model, how its value is parsed and which executor runs it; a second
 * table does the same for checks. Adding a step kind = one row + one executor
 * + one test. The loader reads the parse columns, the run reads the rest. */
#ifndef KSR_LADDER_H
#define KSR_LADDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ksr_run ksr_run;
typedef struct ksr_step ksr_step;
typedef struct ksr_check ksr_check;
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
	KSR_SHAPE_SECONDS, /* number >= 0 */
	KSR_SHAPE_SPAWN,   /* {command, window, process?, as?} */
	KSR_SHAPE_IDENT,   /* kill: an `as` name */
	KSR_SHAPE_STATE,   /* "NAME STATE" or {name, role, state} */
	KSR_SHAPE_PAGE,    /* {selector, text?, url?, title?} */
} ksr_shape;

/* Which modifiers a step kind accepts (bits). */
enum {
	KSR_MOD_TARGET = 1u << 0,
	KSR_MOD_ROLE = 1u << 1,
	KSR_MOD_EXPECT = 1u << 2,
	KSR_MOD_EXPECT_STATE = 1u << 3,
	KSR_MOD_CHECKS = 1u << 4,
	KSR_MOD_TIMEOUT = 1u << 5,
	KSR_MOD_STATE = 1u << 6, /* cdp_wait's state: */
};
#define KSR_MOD_COMMON (KSR_MOD_EXPECT | KSR_MOD_EXPECT_STATE | KSR_MOD_CHECKS | KSR_MOD_TIMEOUT)

typedef enum ksr_step_status {
	KSR_STEP_OK = 0,
	KSR_STEP_FAILED, /* the app: step-failed / check-failed (app-failed) */
	KSR_STEP_ERROR,  /* the setup: backend-unavailable, deadline... (test-error) */
} ksr_step_status;

/* What an executor reports; the run turns it into a step event. */
typedef struct ksr_step_result {
	ksr_step_status status;
	const char *outcome; /* outcome word when not OK: "step-failed", "backend-unavailable"... */
	char reason[512];    /* one sentence; the run prefixes the scenario line */
	const char *rung;    /* "center", "declared", "literal", "element", "grounded", or NULL */
	bool has_window;
	int win_x, win_y, win_w, win_h; /* geometry used, root coordinates */
	bool has_pixel;
	int px, py;   /* the pixel the action resolved to */
	cJSON *extra; /* more fields for the step row (owned; may stay NULL) */
} ksr_step_result;

typedef void (*ksr_step_exec_fn)(ksr_run *run, const ksr_step *step, ksr_step_result *res);

typedef struct ksr_step_info {
	const char *name; /* the YAML action key */
	ksr_rung rung;
	ksr_backend backend;
	bool needs_model;
	ksr_shape shape;
	uint32_t modifiers;    /* KSR_MOD_* accepted */
	bool desktop_only;     /* spawn, kill */
	ksr_step_exec_fn exec; /* NULL: no backend -> backend-unavailable at run time */
} ksr_step_info;

/* A check's evaluation: 1 holds, 0 does not (yet), -1 cannot be evaluated
 * (backend unavailable: why says which). Polled until it holds or times out. */
typedef int (*ksr_check_eval_fn)(ksr_run *run, const ksr_check *check, char *why, size_t why_len);

typedef struct ksr_check_info {
	const char *name; /* the YAML key */
	ksr_backend backend;
	bool needs_model;
	ksr_shape shape;
	ksr_check_eval_fn eval; /* NULL: no backend -> the check errors, naming it */
} ksr_check_info;

const ksr_step_info *ksr_ladder_find(const char *name);
const ksr_step_info *ksr_ladder_rows(size_t *n);
const ksr_check_info *ksr_checks_find(const char *name);
const ksr_check_info *ksr_checks_rows(size_t *n);

#endif
