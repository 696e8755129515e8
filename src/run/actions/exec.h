/* The step runner's insides: the executor of each step kind and the
 * evaluator of each check kind (declared here from ksr/vocabulary.def, their
 * table in executors.c), the target the runner resolved before the act, and
 * the phases the runner and the executors share (docs/design.md). */
#ifndef KSR_RUN_EXEC_H
#define KSR_RUN_EXEC_H

#include "ksr/vocabulary.h"
#include "run/context/context.h"

/* What the runner resolved before the act, for KSR_TARGET_WINDOW and
 * KSR_TARGET_POINT rows (zero for the others). */
typedef struct ksr_step_target {
	ksr_window win; /* the window the input goes to; id 0: the screen (desktop mode) */
	bool has_point; /* KSR_TARGET_POINT with a point form: the pixel below */
	int px, py;
	int to_x, to_y; /* drag: the pixel of to: (px, py is from:), inside the window */
} ksr_step_target;

typedef void (*ksr_step_exec_fn)(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                                 ksr_step_result *res);
/* A check's evaluation: 1 holds, 0 does not (yet), -1 cannot be evaluated
 * (backend unavailable: why says which). Polled until it holds or times out. */
typedef int (*ksr_check_eval_fn)(ksr_run *run, const ksr_check *check, char *why, size_t why_len);

/* The executor column of the vocabulary (executors.c). */
ksr_step_exec_fn ksr_executor(ksr_step_kind kind);
ksr_check_eval_fn ksr_check_evaluator(ksr_check_kind kind);

/* A fact for the row of the check being evaluated (runner.c), such as
 * text's "read": "name"; replaced by a later evaluation's; nothing outside
 * a check row. */
void ksr_check_note(const char *key, const char *value);

/* Set a step result's status, outcome and reason (runner.c). */
void ksr_step_fail(ksr_step_result *res, ksr_step_status st, ksr_outcome outcome, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));
/* The result's extra fields for the step row, created on first use. */
cJSON *ksr_step_extra(ksr_step_result *res);

/* Desktop mode, once a spawn has its tool's window (tool_looks.c): settle_s,
 * the painted rule, the tool's accessibility probe and the first look's
 * dialog rules on its windows; a `tool` event records them. */
void ksr_tool_looks(ksr_run *run, const ksr_step *step, ksr_tool *t, const ksr_window *w,
                    const char *command, ksr_step_result *res);

/* ---- phases (target_*.c, evidence.c) --------------------------------------- */

/* resolve: the window the step acts on (target: window, else the app's; in
 * desktop mode the newest tool's or the screen). false: res says why. */
bool ksr_step_resolve(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res);
/* ready: the window viewable and its app answering, activate it, read its
 * geometry now (after any raise or move the activation caused) and, for a
 * point form, the pixel; the point not covered; no repaint for the quiet
 * interval (docs/design.md). false: res says why. */
bool ksr_step_ready(ksr_run *run, const ksr_step *step, ksr_step_target *t, ksr_step_result *res);
/* ready for input that an executor aims itself (an element's extents, a
 * grounded point): the top-level at the point (window id, or the window over
 * it there: a dialog) viewable, its app answering, no repaint for the quiet
 * interval. false: res says why. The row gets ready: {waited_ms, quiet_ms,
 * ...} (docs/report.md). */
bool ksr_step_ready_at(ksr_run *run, const ksr_step *step, unsigned long id, int px, int py,
                       ksr_step_result *res);
/* The effect watch of an input step (effect.c): begun just before the act,
 * read after the settle wait. */
#define KSR_EFFECT_WINDOWS 16
typedef struct ksr_effect_watch {
	bool on;               /* the row watches (KSR_MOD_EFFECT) and the display is there */
	bool damage;           /* at least one window's repaints are tracked */
	unsigned long wins[3]; /* the window the input went to, the app's, a tool's */
	unsigned long focus;   /* the X input focus before the act */
	int64_t since_ms;      /* ksr_now_ms() just before the act */
	long repaints[2];      /* wins[0..1]'s repaints read before the act (-1: not tracked) */
	int pid, pgid;         /* the app's process (a tool's, and its process group) */
	/* The app's top-level windows before the act: id and a hash of the
	 * title (a window that came, went or was retitled is a window change). */
	size_t n_before;
	bool before_full; /* more than were kept: a difference in count is not told */
	struct ksr_effect_window {
		unsigned long id;
		uint64_t title;
	} before[KSR_EFFECT_WINDOWS];
} ksr_effect_watch;
void ksr_effect_begin(ksr_run *run, const ksr_step *step, unsigned long window,
                      ksr_effect_watch *w);
/* The row gets effect: "repaint", "focus", "window", "a11y-state" ("+"-joined),
 * "none" or "unknown"; none on a step without checks is a no-effect concern. */
void ksr_effect_end(ksr_run *run, const ksr_step *step, const ksr_effect_watch *w,
                    ksr_step_result *res);
/* The step's ready_quiet_ms:, else the scenario's; 0: the quiet waits are off. */
double ksr_step_quiet_ms(const ksr_run *run, const ksr_step *step);
/* settled: let the app react to the input before anything looks at it: its
 * windows (window, and the app's) quiet again. The row gets field: {...}
 * ("settled"; "settled_after_checks" for the wait after checks that held). */
void ksr_step_settle(ksr_run *run, const ksr_step *step, unsigned long window, const char *field,
                     ksr_step_result *res);
/* evidence: NN-step.png and, when res has a pixel, NN-step-annotated.png;
 * their names (or the capture's error) go into the step row. */
void ksr_step_shots(ksr_run *run, const ksr_step *step, ksr_step_result *res);
/* 99-final.png once the app is quiet, at the end of a run that did not fail. */
void ksr_run_final_shot(ksr_run *run);

/* The run ended (cancelled, deadline) while the step waited: records it and
 * marks the result an error. false when w means neither. */
bool ksr_step_run_ended(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res);

/* The page's errors received since the last look (exec_cdp.c): a page_error
 * event each, in the step being run (the trace's step; 0 outside the steps),
 * and one page-error concern naming during (a few words: "step 2", "the
 * page's load, before the steps") and line (0: none). Nothing without a page. */
void ksr_run_page_errors(ksr_run *run, const char *during, int line);

/* hover's page form (exec_cdp.c): the page's mouse onto the step's element. */
void ksr_cdp_step_hover(ksr_run *run, const ksr_step *step, ksr_step_result *res);

/* ---- the executors and evaluators, one per row ---------------------------------- */

#define KSR_STEP(nm, KIND, rng, be, model, shp, mods, tgt, aft, desk, exec, ...)                   \
	void exec(ksr_run *run, const ksr_step *step, const ksr_step_target *t,                    \
	          ksr_step_result *res);
#include "ksr/vocabulary.def"

#define KSR_CHECK(nm, KIND, be, model, shp, eval)                                                  \
	int eval(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
#include "ksr/vocabulary.def"

#endif
