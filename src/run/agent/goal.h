/* The guarded goal loop (docs/agentic.md): each turn the planner reads the goal,
 * the judge's description of the screen (never the screenshot), the history
 * and the offered tools, and picks one. It never supplies a coordinate or a
 * selector: a name must be in the offered lists and anything shaped like a
 * coordinate or a selector is rejected (the planner is told why next turn).
 * Actions run through the step runner, as scripted steps do; success:
 * checks decide the verdict. The guard (goal_guard.c) is pure and unit-tested. */
#ifndef KSR_RUN_GOAL_H
#define KSR_RUN_GOAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "ksr/scenario.h"
#include "ksr/vocabulary.h"

/* What the planner may name this turn (owned strings). */
typedef struct ksr_goal_offer {
	char **targets; /* declared targets (rung 1) */
	size_t n_targets;
	char **cdp_targets; /* cdp_targets names (rung 0), with a CDP session */
	size_t n_cdp_targets;
	char **elements; /* accessibility names from the probe (rung 2) */
	size_t n_elements;
	char **page_ids;    /* cdp_list_interactive ids "@e..." (rung 0) */
	char **page_labels; /* "role name" of each, shown to the planner */
	size_t n_page;
	bool grounded; /* a grounder is configured: click_grounded offered (rung 3) */
} ksr_goal_offer;

void ksr_goal_offer_clear(ksr_goal_offer *o); /* NULL-safe */
/* Append a copy of s to a list unless it is already there (or empty). */
void ksr_goal_offer_add(char ***list, size_t *n, const char *s);

#define KSR_GOAL_WAIT_MAX_S 10.0

/* An accepted choice; strings borrow from the answer. */
typedef struct ksr_goal_choice {
	ksr_goal_tool tool;
	const char *name;   /* click_target, page_click, click_element, page_element */
	const char *text;   /* key chords, type text, click_grounded description */
	const char *expect; /* click_grounded */
	double seconds;     /* wait */
	bool success;       /* done */
	const char *claim;  /* done */
} ksr_goal_choice;

/* The tools' names, in the vocabulary's order (the planner's JSON schema). */
void ksr_goal_tool_names(const char **names, size_t *n);

/* Anything shaped like a screen coordinate: "120,340", "(120, 340)",
 * "[0.5, 0.3]", "0.5 0.3", "640x360", "x=120", "x: 120 y: 40". */
bool ksr_goal_looks_like_coordinate(const char *s);
/* Anything shaped like a CSS or XPath selector: "#id", ".class", "a > b",
 * "[name=q]", "div:nth-child(2)", "//button". */
bool ksr_goal_looks_like_selector(const char *s);

/* Check the planner's answer against the offer: 0 accepted (c filled), -1
 * rejected (why: one sentence for the planner's next turn). */
int ksr_goal_validate(const ksr_goal_offer *o, const cJSON *answer, ksr_goal_choice *c, char *why,
                      size_t len);

/* The offered tools as the prompt lists them (free it). */
char *ksr_goal_offer_text(const ksr_goal_offer *o);

/* The goal-loop stage (goal.c): after a completed plan, only the success:
 * checks; otherwise the loop. false when the stage failed (recorded). */
typedef struct ksr_run ksr_run;
bool ksr_goal_stage(ksr_run *run, char *note, size_t len);

#endif
