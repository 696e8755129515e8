/* Plans (docs/agentic.md): replaying a compiled plan: (the plan stage) and writing
 * one (plan.yaml) from the steps a goal run took. A plan step is a scripted
 * step with post: checks; a post that does not hold hands over to the goal
 * loop when the scenario has a goal:, and fails the step otherwise. */
#ifndef KSR_RUN_PLAN_H
#define KSR_RUN_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/scenario.h"
#include "run/context/context.h"

/* Replay run->sc->plan. A post: that does not hold emits plan.handover
 * {step, line, check, check_line, detail, to} and, with a goal:, returns
 * KSR_PLAN_HANDED_OVER; without, it records check-failed. The state is
 * also kept in run->plan_state for the goal-loop stage. */
ksr_plan_state ksr_plan_replay(ksr_run *run, char *note, size_t len);

/* ---- compiling plan.yaml ----------------------------------------------------- */

typedef struct ksr_plan_out ksr_plan_out;

ksr_plan_out *ksr_plan_out_new(void);
void ksr_plan_out_free(ksr_plan_out *p); /* NULL-safe */
/* One step: its action as YAML "key: value" lines (the first is the action;
 * modifiers follow, e.g. expect:), and its post: checks as "kind: value" lines.
 * Values must already be YAML scalars (ksr_plan_quote). */
void ksr_plan_out_step(ksr_plan_out *p, const char *const *action, size_t n_action,
                       const char *const *post, size_t n_post);
size_t ksr_plan_out_len(const ksr_plan_out *p);
/* The document: a comment header, then `plan:` with one item a step. Free it. */
char *ksr_plan_out_render(const ksr_plan_out *p, const char *goal, bool needs_model);

/* s as a YAML double-quoted scalar the loader reads back as s (ksr_yaml_scalar). */
char *ksr_plan_quote(const char *s);

/* A check as one "kind: value" line for post:, written by its row's shape
 * (ksr_check_yaml); NULL for a check that asks a model (screen:). */
char *ksr_plan_check_line(const ksr_check *c);

#endif
