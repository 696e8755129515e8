/* The app stages' shared helpers (app_exit.c): the app wait, settle and the
 * final checks all need to know whether the app is alive and how it ended. */
#ifndef KSR_RUN_STAGES_APP_H
#define KSR_RUN_STAGES_APP_H

#include "ksr/strbuf.h"
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

/* A launch a front end waits on for a window (inspect --launch, record
 * --launch): it has no process pattern, so its process group says whether
 * anything of the app is left. */
typedef struct ksr_launch_watch {
	int pid;          /* the launch command, also its process group */
	int64_t start_ms; /* when it was launched */
	int64_t ended_ms; /* when it was seen ended (0: not yet) */
	int status;       /* waitpid status once ended */
} ksr_launch_watch;
/* The launch command ended and no process of its group is left: at once for
 * a non-zero status or a signal; grace_ms after the end for an exit 0 (it may
 * have handed over to a process in another group or a running instance). */
bool ksr_launch_watch_gone(ksr_launch_watch *w, int grace_ms);
/* A new empty file for a launch's output (in $TMPDIR, else /tmp), so that
 * its last lines can be quoted; the caller unlinks and frees it. NULL if
 * none could be made. */
char *ksr_launch_temp_log(const char *tool);
/* "sh (pid 12) exited with status 1 after 0.2 s: "last output"" into b: the
 * last lines of log (NULL: none kept), quoted as data. */
void ksr_launch_watch_describe(const ksr_launch_watch *w, const char *command, const char *log,
                               ksr_strbuf *b);

#endif
