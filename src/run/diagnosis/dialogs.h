/* Dialogs (docs/scenario.md, first look and settle): every top-level window is
 * classified by its title and type against the scenario's recovery_prompts,
 * first_run_prompts, updaters and error_dialogs (or the built-in defaults);
 * where the app is on the accessibility bus, the names of its showing
 * dialogs, alerts, headings and landmarks are read against the first two. */
#ifndef KSR_RUN_DIALOGS_H
#define KSR_RUN_DIALOGS_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/atspi.h"
#include "ksr/error.h"
#include "ksr/pattern.h"
#include "ksr/scenario.h"

typedef enum ksr_dialog_class {
	KSR_DIALOG_MAIN,       /* the app's own window, matching no list that applies to it */
	KSR_DIALOG_WINDOW,     /* an ordinary window whose title matches nothing */
	KSR_DIALOG_ERROR,      /* error_dialogs matched: fails the run */
	KSR_DIALOG_FIRST_RUN,  /* first_run_prompts matched: a concern */
	KSR_DIALOG_UPDATER,    /* updaters matched: a concern */
	KSR_DIALOG_UNEXPECTED, /* a dialog-type window matching nothing: a concern */
	KSR_DIALOG_RECOVERY,   /* recovery_prompts matched: a concern, never an error */
} ksr_dialog_class;

/* The lists in force: the scenario's where it sets them (an empty list
 * switches a list off), else the built-in defaults (compiled here, owned). */
typedef struct ksr_dialog_rules {
	ksr_pattern *const *error, *const *first_run, *const *updater, *const *recovery;
	size_t n_error, n_first_run, n_updater, n_recovery;
	ksr_pattern *owned[4];
} ksr_dialog_rules;

/* The built-in default patterns, documented in docs/scenario.md. */
extern const char *const ksr_dialog_default_error;
extern const char *const ksr_dialog_default_first_run;
extern const char *const ksr_dialog_default_updater;
extern const char *const ksr_dialog_default_recovery;

int ksr_dialog_rules_init(ksr_dialog_rules *r, const ksr_scenario *sc, ksr_err *err);
void ksr_dialog_rules_clear(ksr_dialog_rules *r); /* NULL-safe */

/* Pure: recovery_prompts, then first_run_prompts, then updaters, then
 * error_dialogs, then the type. The app's own window (is_main) is classified
 * too, with two differences (docs/scenario.md#dialogs): words inside file
 * names in its title (a document's name: "welcome.txt - Mousepad") do not
 * count, and error_dialogs apply only when it is dialog-type (an editor's
 * title names whatever the document is called); matching nothing, it is
 * KSR_DIALOG_MAIN whatever its type. */
ksr_dialog_class ksr_dialog_classify(const ksr_dialog_rules *r, const char *title, bool is_dialog,
                                     bool is_main);
/* Pure: an accessible's name inside the app's windows (a heading, a
 * landmark, an in-window dialog): KSR_DIALOG_RECOVERY, KSR_DIALOG_FIRST_RUN
 * or KSR_DIALOG_WINDOW (nothing: error and updater words in a window's
 * content are the document's, not the app's). */
ksr_dialog_class ksr_dialog_classify_node(const ksr_dialog_rules *r, const char *name);
const char *ksr_dialog_class_name(ksr_dialog_class c); /* "error", "first-run", ... */

struct ksr_run;
/* Settle's end: an updater window still on screen is an `updater` concern
 * (remembered, so the first look does not report it again). */
void ksr_dialogs_after_settle(struct ksr_run *run);
/* First look: a "dialog" event per top-level window; an error dialog fails the
 * run (error-dialog); recovery and first-run prompts, updaters and unexpected
 * dialogs are concerns. nodes (NULL: the app is not on the bus) are the
 * app's showing landmarks (ksr_atspi_landmarks_read): one matching the
 * recovery or first-run list is a concern naming it and its role (a
 * "dialog.node" event), at most one of each a window, none in a window whose
 * title was already one. Returns false when an error dialog failed the run. */
bool ksr_dialogs_first_look(struct ksr_run *run, const ksr_atspi_landmarks *nodes, char *note,
                            size_t len);
/* Final checks: every top-level window classified again, as at first look (a
 * "dialog" event each, when "final checks"): an error dialog still up fails
 * the run (error-dialog, naming its title); a recovery, first-run or updater
 * window is a concern unless an earlier look already raised one for the same
 * window (by id); a dialog matching nothing is recorded only (the steps may
 * have opened it). Returns false when an error dialog failed the run. */
bool ksr_dialogs_at_end(struct ksr_run *run, char *note, size_t len);
struct ksr_tool;
/* Desktop mode, once a spawned tool's spawn settled: the first look's rules
 * on that tool's windows only (the one its spawn waited for is its main
 * window; others are transient for it or have a _NET_WM_PID in its process
 * group), a "dialog" event each (when "tool look", with the tool's name);
 * nodes (NULL: the tool is not on the bus) are its landmarks. An error dialog
 * fails the run (error-dialog); the concerns name the tool. Returns false
 * when an error dialog failed the run. */
bool ksr_dialogs_tool_look(struct ksr_run *run, const struct ksr_tool *tool,
                           const ksr_atspi_landmarks *nodes, char *note, size_t len);
/* Desktop mode's final checks: each spawned tool still running has its
 * windows (as ksr_dialogs_tool_look tells them) classified again as the
 * app's are at the end: an error dialog still up fails the run
 * (error-dialog, naming the tool). Returns false when one did. */
bool ksr_dialogs_tools_at_end(struct ksr_run *run, char *note, size_t len);
/* Diagnosis after another failure: the error dialogs on screen, as context
 * (a "dialog" event each, when "diagnosis"; the outcome stays): note
 * receives 'an error dialog "T" (class) is on screen', or "" for none. */
void ksr_dialogs_on_failure(struct ksr_run *run, char *note, size_t len);

#endif
