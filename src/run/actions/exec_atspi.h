/* The run's way to the accessibility backend (internal), shared by the
 * probe stage, click_element, the state/element checks and inspect. */
#ifndef KSR_RUN_EXEC_ATSPI_H
#define KSR_RUN_EXEC_ATSPI_H

#include "ksr/atspi.h"
#include "run/context/context.h"

typedef struct ksr_run_atspi {
	ksr_atspi *a;
	ksr_atspi_app app;
	const char *found_by; /* "pid" or "name" */
	bool no_bus; /* the open failed for want of a bus, or the bus or registry was silent (not
	                the app) */
} ksr_run_atspi;

/* Open the bus and find the run's app (its PID, else its WM_CLASS name). */
int ksr_run_atspi_open(ksr_run *run, ksr_deadline d, ksr_run_atspi *t, ksr_err *err);
/* The same, looking again whenever the bus says an app joined (its signals,
 * no polling), until appear: for an app that registers a little after its
 * window maps. */
int ksr_run_atspi_open_until(ksr_run *run, ksr_deadline d, ksr_deadline appear, ksr_run_atspi *t,
                             ksr_err *err);
/* Walk the app; extents of window-relative toolkits get the app window's origin. */
int ksr_run_atspi_walk(ksr_run *run, ksr_run_atspi *t, int max_nodes, ksr_deadline d,
                       ksr_atspi_tree *tree, ksr_err *err);
void ksr_run_atspi_release(ksr_run_atspi *t); /* NULL-safe */

/* The connection kept for the run (readiness asks at every pointer step; one
 * open costs a bus discovery and an app search): opened on first use, opened
 * again when the app's PID changed, NULL when there is no bus or the app is
 * not on it (asked once). ksr_run_atspi_drop closes it at the end of the run. */
ksr_run_atspi *ksr_run_atspi_kept(ksr_run *run, ksr_deadline d);
void ksr_run_atspi_drop(ksr_run *run);

/* The centre of the control a step names (name:, role:), waited for up to the
 * step's timeout; the control is described in the step row. false: res says
 * why (not found, no extents, no bus). */
bool ksr_atspi_step_point(ksr_run *run, const ksr_step *step, int *px, int *py,
                          ksr_step_result *res);

/* A step's or a check's locator (its name, role, label:, in:, nth:, hidden_ok). */
ksr_atspi_locator ksr_step_locator(const ksr_step *step);
ksr_atspi_locator ksr_check_locator(const ksr_check *c);
/* Walk the app and find the control: a find-mode walk for a name alone,
 * else a full walk and the locator on it. 0 with *found (index -1: none),
 * -1 with err when the walk failed. */
int ksr_run_atspi_locate(ksr_run *run, ksr_run_atspi *t, const ksr_atspi_locator *l, ksr_deadline d,
                         ksr_atspi_tree *tree, ksr_atspi_located *found, ksr_err *err);
/* Why nothing fits l, into why: the locator, the tree's size, the closest
 * names (a name alone), how many fit when nth asked for more. */
void ksr_run_atspi_not_found(const ksr_run_atspi *t, const ksr_atspi_tree *tree,
                             const ksr_atspi_locator *l, const ksr_atspi_located *found,
                             const char *what, char *why, size_t len);

#endif
