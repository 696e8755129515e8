/* The run's side of the vision models (judge.c): configuration per role, the
 * screenshot prepared for a model, model_call events, and the two optional
 * judgements made outside steps: the first look and the failure screen. */
#ifndef KSR_RUN_JUDGE_H
#define KSR_RUN_JUDGE_H

#include "ksr/model.h"
#include "run/context/context.h"

/* Seconds one model call may take (bounded by the run's working deadline). */
#define KSR_JUDGE_CALL_S 60

/* The role's configuration: 1 configured, 0 none, -1 invalid; why says which
 * (naming the variables to set). */
int ksr_judge_config(ksr_model_role role, ksr_model_config *cfg, char *why, size_t len);

/* Capture the screen and prepare it for a model (the full image is kept when
 * full is not NULL: free it). -1 with err. */
int ksr_judge_capture(ksr_run *run, ksr_image **full, ksr_model_image *img, ksr_err *err);

/* One model_call event: {role, ok, ms} plus purpose, model, api, attempts,
 * status and a redacted error for the trace. */
void ksr_judge_emit_call(ksr_run *run, const ksr_model_config *cfg, const char *purpose,
                         const ksr_model_usage *u);

/* First look (stage_first_look.c): with a judge configured, ask "rendered?"
 * and "error showing?" about the first-look screenshot. Not rendered ->
 * not-rendered, an error -> error-dialog (app-failed); the judge unreachable ->
 * a model-unreachable concern only. note gets a short phrase. */
void ksr_judge_first_look(ksr_run *run, const ksr_image *screen, char *note, size_t len);

/* Diagnosis (diagnose.c): with a judge configured, describe the failure
 * screen; recorded as a screen_description event and a text artifact, never
 * changing the verdict. true when there is something for the stage note. */
bool ksr_judge_describe_failure(ksr_run *run, char *note, size_t len);

#endif
