/* Executors and check evaluators named by the ladder table. A backend that is
 * not built yet maps its macro to NULL (backend-unavailable at run time). */
#ifndef KSR_RUN_EXEC_H
#define KSR_RUN_EXEC_H

#include "ksr/ladder.h"

/* Set a step result's status, outcome word and reason (steps.c). */
void ksr_step_fail(ksr_step_result *res, ksr_step_status st, const char *outcome, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));
/* The result's extra fields for the step row, created on first use. */
cJSON *ksr_step_extra(ksr_step_result *res);

void ksr_exec_shell(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_sleep(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_wait_window(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_key(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_type(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_click(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_scroll(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_spawn(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_kill(ksr_run *run, const ksr_step *step, ksr_step_result *res);
/* Shared by the acting executors (exec_input.c): let the screen settle, save
 * NN-step.png and, when res has a pixel, NN-step-annotated.png; their names go
 * into the step row. */
void ksr_exec_step_shots(ksr_run *run, const ksr_step *step, ksr_step_result *res);

int ksr_check_window(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
int ksr_check_no_window(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
int ksr_check_process(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
int ksr_check_file(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
int ksr_check_shell(ksr_run *run, const ksr_check *c, char *why, size_t why_len);

/* Accessibility (exec_atspi.c): click_element; the state: and element: checks. */
void ksr_exec_click_element(ksr_run *run, const ksr_step *step, ksr_step_result *res);
int ksr_check_state(ksr_run *run, const ksr_check *c, char *why, size_t why_len);
int ksr_check_element(ksr_run *run, const ksr_check *c, char *why, size_t why_len);

/* CDP (exec_cdp.c): every cdp_* step, dispatched on the step's name; the page: check. */
void ksr_exec_cdp(ksr_run *run, const ksr_step *step, ksr_step_result *res);
int ksr_check_page(ksr_run *run, const ksr_check *c, char *why, size_t why_len);

/* Vision models (exec_vision.c): observe, click_grounded (rung 3); the screen: check. */
void ksr_exec_observe(ksr_run *run, const ksr_step *step, ksr_step_result *res);
void ksr_exec_click_grounded(ksr_run *run, const ksr_step *step, ksr_step_result *res);
int ksr_check_screen(ksr_run *run, const ksr_check *c, char *why, size_t why_len);

#define KSR_EXEC_SHELL       ksr_exec_shell
#define KSR_EXEC_SLEEP       ksr_exec_sleep
#define KSR_EXEC_WAIT_WINDOW ksr_exec_wait_window
/* Owned by later issues: X11 input (#4), accessibility (#5), CDP (#6), models (#7). */
#define KSR_EXEC_KEY            ksr_exec_key
#define KSR_EXEC_TYPE           ksr_exec_type
#define KSR_EXEC_CLICK          ksr_exec_click
#define KSR_EXEC_SCROLL         ksr_exec_scroll
#define KSR_EXEC_CLICK_ELEMENT  ksr_exec_click_element
#define KSR_EXEC_CLICK_GROUNDED ksr_exec_click_grounded
#define KSR_EXEC_OBSERVE        ksr_exec_observe
#define KSR_EXEC_CDP            ksr_exec_cdp
#define KSR_EXEC_SPAWN          ksr_exec_spawn
#define KSR_EXEC_KILL           ksr_exec_kill

#define KSR_CHECK_WINDOW    ksr_check_window
#define KSR_CHECK_NO_WINDOW ksr_check_no_window
#define KSR_CHECK_PROCESS   ksr_check_process
#define KSR_CHECK_FILE      ksr_check_file
#define KSR_CHECK_SHELL     ksr_check_shell
#define KSR_CHECK_STATE     ksr_check_state
#define KSR_CHECK_ELEMENT   ksr_check_element
#define KSR_CHECK_PAGE      ksr_check_page
#define KSR_CHECK_SCREEN    ksr_check_screen

#endif
