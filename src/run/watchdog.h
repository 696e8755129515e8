/* The top of src/run: the orchestrator (run.c) and the watchdog that takes
 * over its report when the main thread is stuck (watchdog.c). */
#ifndef KSR_RUN_WATCHDOG_H
#define KSR_RUN_WATCHDOG_H

#include "run/context/context.h"

/* The report: verdict, report.json, report.md, DONE (run.c). Returns the exit code. */
int ksr_run_finish_report(ksr_run *run);

/* Start after the evidence folder is open; stop before the report. If the
 * main thread has not reached the report shortly before the run deadline (or
 * some seconds after SIGTERM), the watchdog records the failure, writes the
 * report and DONE, stops the app and the private display, and ends the
 * process with exit code 2. */
int ksr_watchdog_start(ksr_run *run);
void ksr_watchdog_stop(ksr_run *run);

#endif
