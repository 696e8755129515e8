/* Private to the step runner's resolve and ready phases (target_*.c): the
 * conditions the ready phase waits for, each recording itself in the step
 * row's ready: object (rd) and, when it never held, failing the result with
 * ready.never naming it. The phases' public surface is run/actions/exec.h. */
#ifndef KSR_RUN_ACTIONS_TARGET_H
#define KSR_RUN_ACTIONS_TARGET_H

#include "run/actions/exec.h"

#define READY_DEFAULT_S 10 /* viewable, answering, uncovered: without timeout_s */

/* The step's timeout_s, else dflt_ms, within the run's deadline. */
ksr_deadline ksr_ready_bound(const ksr_run *run, const ksr_step *step, int64_t dflt_ms);
/* The same in seconds, for the messages. */
double ksr_ready_bound_s(const ksr_step *step, int64_t dflt_ms);
/* A condition that never held: records ready.never; always false. */
bool ksr_ready_never(cJSON *rd, const char *never);
/* The run ended or the display went while waiting: true with res set. */
bool ksr_ready_wait_failed(ksr_run *run, const ksr_step *step, ksr_wait w, ksr_step_result *res);

/* ---- the window (target_waits.c) ---- */

/* Mapped and viewable. */
bool ksr_ready_viewable(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                        cJSON *rd, ksr_step_result *res);
/* Its app answers _NET_WM_PING (the event loop runs). */
bool ksr_ready_answering(ksr_run *run, const ksr_step *step, unsigned long id, ksr_deadline d,
                         cJSON *rd, ksr_step_result *res);
/* No other top-level over the pixel. */
bool ksr_ready_uncovered(ksr_run *run, const ksr_step *step, unsigned long id, int px, int py,
                         ksr_deadline d, cJSON *rd, ksr_step_result *res);
/* No repaint for the quiet interval (acted on anyway, with a note, when the
 * bound runs out). */
bool ksr_ready_quiet(ksr_run *run, const ksr_step *step, unsigned long id, cJSON *rd,
                     ksr_step_result *res);

/* ---- the device (target_input.c) ---- */

/* No other client holds an active grab of the device (an app's own grab,
 * its open menu, passes); one that lasts past a short grace is test-error
 * backend-unavailable. ready.input says which. */
bool ksr_ready_input(ksr_run *run, const ksr_step *step, ksr_x11_device dev,
                     unsigned long app_window, ksr_deadline d, cJSON *rd, ksr_step_result *res);

/* ---- its controls, over accessibility (target_controls.c) ---- */

/* The control a pointer action at the pixel reaches is sensitive and showing. */
bool ksr_ready_control(ksr_run *run, const ksr_step *step, const ksr_window *w, int px, int py,
                       ksr_deadline d, cJSON *rd, ksr_step_result *res);
/* Return into a dialog: its default button is sensitive. */
bool ksr_ready_default(ksr_run *run, const ksr_step *step, const ksr_window *w, ksr_deadline d,
                       cJSON *rd, ksr_step_result *res);

#endif
