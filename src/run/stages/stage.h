/* Stages (internal): each stage file defines its ksr_stage_def, tmux-style;
 * stages.c lists them in the order docs/scenario.md gives and runs them. */
#ifndef KSR_RUN_STAGE_H
#define KSR_RUN_STAGE_H

#include "run/context/context.h"

typedef enum ksr_stage_status {
	KSR_STAGE_OK,
	KSR_STAGE_FAILED,
	KSR_STAGE_SKIPPED,
} ksr_stage_status;

typedef struct ksr_stage_def {
	const char *name;
	/* Seconds this stage may take (NULL or 0: only the run deadline bounds it). */
	double (*limit_s)(const ksr_run *run);
	/* NULL when the stage runs; else why it is skipped. */
	const char *(*skip)(const ksr_run *run);
	/* Runs the stage; note gets a short description for the stage's row. */
	ksr_stage_status (*run)(ksr_run *run, char *note, size_t len);
} ksr_stage_def;

extern const ksr_stage_def ksr_stage_boot_wait;
extern const ksr_stage_def ksr_stage_launch;
extern const ksr_stage_def ksr_stage_app_wait;
extern const ksr_stage_def ksr_stage_settle;
extern const ksr_stage_def ksr_stage_probe;
extern const ksr_stage_def ksr_stage_first_look;
extern const ksr_stage_def ksr_stage_browser_attach;
extern const ksr_stage_def ksr_stage_steps;
extern const ksr_stage_def ksr_stage_plan;
extern const ksr_stage_def ksr_stage_goal_loop;
extern const ksr_stage_def ksr_stage_final_checks;

/* Run the stages in order (stages.c). */
void ksr_stages_run(ksr_run *run);

#endif
