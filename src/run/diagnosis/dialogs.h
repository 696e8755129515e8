/* Dialogs (docs/scenario.md, first look and settle): every top-level window is
 * classified by its title and type against the scenario's error_dialogs,
 * first_run_prompts and updaters (or the built-in defaults). */
#ifndef KSR_RUN_DIALOGS_H
#define KSR_RUN_DIALOGS_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/pattern.h"
#include "ksr/scenario.h"

typedef enum ksr_dialog_class {
	KSR_DIALOG_MAIN,       /* the app's own window: never a dialog */
	KSR_DIALOG_WINDOW,     /* an ordinary window whose title matches nothing */
	KSR_DIALOG_ERROR,      /* error_dialogs matched first: fails the run */
	KSR_DIALOG_FIRST_RUN,  /* first_run_prompts matched: a concern */
	KSR_DIALOG_UPDATER,    /* updaters matched: a concern */
	KSR_DIALOG_UNEXPECTED, /* a dialog-type window matching nothing: a concern */
} ksr_dialog_class;

/* The three lists in force: the scenario's where it sets them (an empty list
 * switches a list off), else the built-in defaults (compiled here, owned). */
typedef struct ksr_dialog_rules {
	ksr_pattern *const *error, *const *first_run, *const *updater;
	size_t n_error, n_first_run, n_updater;
	ksr_pattern *owned[3];
} ksr_dialog_rules;

/* The built-in default patterns, documented in docs/scenario.md. */
extern const char *const ksr_dialog_default_error;
extern const char *const ksr_dialog_default_first_run;
extern const char *const ksr_dialog_default_updater;

int ksr_dialog_rules_init(ksr_dialog_rules *r, const ksr_scenario *sc, ksr_err *err);
void ksr_dialog_rules_clear(ksr_dialog_rules *r); /* NULL-safe */

/* Pure: first_run_prompts, then updaters, then error_dialogs, then the type. */
ksr_dialog_class ksr_dialog_classify(const ksr_dialog_rules *r, const char *title, bool is_dialog,
                                     bool is_main);
const char *ksr_dialog_class_name(ksr_dialog_class c); /* "error", "first-run", ... */

struct ksr_run;
/* Settle's end: an updater window still on screen is an `updater` concern
 * (remembered, so the first look does not report it again). */
void ksr_dialogs_after_settle(struct ksr_run *run);
/* First look: a "dialog" event per top-level window; an error dialog fails the
 * run (error-dialog); first-run prompts, updaters and unexpected dialogs are
 * concerns. Returns false when an error dialog failed the run. */
bool ksr_dialogs_first_look(struct ksr_run *run, char *note, size_t len);

#endif
