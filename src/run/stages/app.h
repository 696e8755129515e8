/* The app stages' shared helpers (app_exit.c): the app wait, settle and the
 * final checks all need to know whether the app is alive and how it ended. */
#ifndef KSR_RUN_STAGES_APP_H
#define KSR_RUN_STAGES_APP_H

#include "run/context/context.h"

/* /proc has no change events: rescan on every X event and on this slow timer. */
#define PROC_RESCAN_MS 250

/* "killed by signal 11 (SEGV)", "exited with status 3", ... */
void ksr_app_describe_exit(int status, char *buf, size_t len);
/* Reap the launch command if it has ended, waiting up to wait_ms. */
bool ksr_app_reap_launch(ksr_run *run, int wait_ms);
/* The app is gone: record a crash (held for diagnosis), when = "during settle". */
void ksr_app_record_crash(ksr_run *run, const char *when);
/* The app's process is alive (true when no pid is known: the window decides),
 * or a launcher replaced it and app_pid is the new one's (relaunch.c). */
bool ksr_app_alive(ksr_run *run);
/* A wait holding a pidfd (*pidfd, for *pid) for the app: after
 * ksr_app_alive followed a relaunch, the old pid's fd is readable for good;
 * reopen it for the new app_pid. */
void ksr_app_pidfd_follow(ksr_run *run, int *pidfd, int *pid);

#endif
