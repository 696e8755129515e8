/* Diagnosis (docs/scenario.md): after an app failure, tell a crash from a crash loop,
 * save the failure screen and the log tails, and look for crash signatures in
 * the logs; at the end of a passing run, look for signatures too. */
#ifndef KSR_RUN_DIAGNOSE_H
#define KSR_RUN_DIAGNOSE_H

#include "run/context/context.h"

/* The app is gone. The failure is held, not yet recorded as an event: the
 * verdict takes the first failure, and only diagnosis (a few seconds later)
 * can tell `crashed` from `crash-loop`. run->failed is set at once so the
 * stages stop; ksr_diagnose records the failure, refined, in every
 * case (also when it is skipped). reason: "the app (pid N) ... during X". */
void ksr_diag_hold_crash(ksr_run *run, const char *reason);

/* The watchdog's path: record a held crash as `crashed` now, without the
 * recheck (the main thread is stuck) and without freeing it. */
void ksr_diag_record_held_now(ksr_run *run);

/* The end of a run that passed its final checks: a crash signature in
 * launch.log or a `logs:` file is a `crash-signature` concern. */
void ksr_diag_scan_logs_at_end(ksr_run *run);

/* Diagnosis after a failure (diagnose.c): the held crash told from a crash
 * loop, the failure screenshot, log tails, crash signatures. */
void ksr_diagnose(ksr_run *run);

#endif
