/* Processes: detached launch, finding processes by program name (not the
 * 15-character comm), liveness with pidfd, stopping a process group, and
 * running short bounded commands (shell steps and checks). */
#ifndef KSR_PROC_H
#define KSR_PROC_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#include "ksr/deadline.h"
#include "ksr/error.h"
#include "ksr/pattern.h"
#include "ksr/strbuf.h"

typedef struct ksr_proc {
	int pid;
	char *name;    /* base name of the executable, else of argv[0] */
	char *argv0;   /* base name of argv[0] */
	char *cmdline; /* argv joined with spaces */
} ksr_proc;

typedef struct ksr_proc_list {
	ksr_proc *items;
	size_t len;
} ksr_proc_list;

/* Run `sh -c command` detached: its own session and process group, stdin from
 * /dev/null, stdout and stderr appended to log_path (ksr_evidence_open_path: never through
 * a link), signal
 * mask and handlers reset. *pid is also the process group id. A log_path other
 * than /dev/null gets the output through a pipe: its first ksr_proc_log_cap()
 * bytes are kept, then a line starting KSR_PROC_LOG_CUT_NOTE says where it was
 * cut, and the rest is read and dropped. */
int ksr_proc_launch(const char *command, const char *log_path, int *pid, ksr_err *err);
/* The same, with run_id (NULL: none) set as KSR_PROC_RUN_TAG in the command's
 * environment, so that what it starts is known as this run's even once it
 * left the launch's session and group (ksr_proc_origin_of,
 * ksr_proc_stop_tagged). */
int ksr_proc_launch_tagged(const char *command, const char *log_path, const char *run_id, int *pid,
                           ksr_err *err);

/* The environment variable a run's launches carry (docs/scenario.md#the-app-wait). */
#define KSR_PROC_RUN_TAG "KASM_RUNTIME_RUN_ID"

/* A launch, for telling its processes from others (origin.c). */
typedef struct ksr_launch_tie {
	int pid;                        /* the launch command: a session and group leader */
	unsigned long long start_ticks; /* its start (ksr_proc_start_ticks) */
	const char *run_id;             /* the KSR_PROC_RUN_TAG value it was given */
} ksr_launch_tie;

/* How a process is tied to a launch. */
typedef enum ksr_proc_origin {
	KSR_ORIGIN_GONE,       /* no such process, or a zombie */
	KSR_ORIGIN_ATTACHED,   /* no launch to tie it to (the app is attached): anything counts */
	KSR_ORIGIN_OLDER,      /* started before the launch */
	KSR_ORIGIN_DESCENDANT, /* in the launch's session or group, or parents reaching it */
	KSR_ORIGIN_TAGGED,     /* started after it with its KSR_PROC_RUN_TAG (it daemonized) */
	KSR_ORIGIN_UNTOLD,     /* started after it; its environment tells nothing: not ours
	                        * to read, or written over (neither DISPLAY nor the tag) */
	KSR_ORIGIN_OTHER,      /* started after it, neither its descendant nor tagged */
} ksr_proc_origin;
ksr_proc_origin ksr_proc_origin_of(int pid, const ksr_launch_tie *t);
/* ATTACHED, DESCENDANT, TAGGED and UNTOLD count as the launch's. */
bool ksr_proc_origin_is_launch(ksr_proc_origin o);
/* "attached", "descendant", "tagged", "started-after", "older", "other", "gone". */
const char *ksr_proc_origin_name(ksr_proc_origin o);
/* When pid started, in clock ticks since boot; 0 when it is gone. */
unsigned long long ksr_proc_start_ticks(int pid);
/* Live processes (not this one) whose environment has KSR_PROC_RUN_TAG=run_id:
 * their pids into *pids (caller frees), how many. */
size_t ksr_proc_find_tagged(const char *run_id, int **pids);
/* SIGTERM every process carrying run_id, wait up to grace_ms for them to go,
 * then SIGKILL; how many there were. Not cancellable (cleanup). */
size_t ksr_proc_stop_tagged(const char *run_id, int grace_ms);
/* The same for pids, a list ksr_proc_find_tagged gave: each gets SIGTERM (the
 * SIGKILL after the grace goes to whatever still carries run_id);
 * ended_first[i] (NULL: not asked) tells pids[i] had ended before its signal.
 * How many were signalled. */
size_t ksr_proc_stop_listed(const char *run_id, const int *pids, size_t n, int grace_ms,
                            bool *ended_first);

#define KSR_PROC_LOG_CAP_DEFAULT (16u * 1024u * 1024u)
#define KSR_PROC_LOG_CUT_NOTE    "\n[kasm-session-runtime: output cut at "
/* KASM_RUNTIME_APP_LOG_MAX_BYTES (a positive integer), else 16 MiB. */
uint64_t ksr_proc_log_cap(void);

/* The environment a child of the runtime gets: environ without the runtime's
 * own credentials (ksr_redact_is_credential: the model API keys, the MCP
 * token). A new array of environ's own strings, NULL-ended: free the array
 * alone. Build it before fork (no allocation after). */
char **ksr_proc_child_environ(void);

/* Wait (up to ms) until every launch log has all its app has written so far
 * (the copier threads are idle with empty pipes). ksr_proc_reap and
 * ksr_proc_stop_group call it once the process is gone. */
void ksr_proc_logs_drain(int ms);

/* Processes (other than zombies and this one) whose name or argv[0] matches
 * name_re (NULL: any) and whose command line matches cmdline_re (NULL: any). */
int ksr_proc_find(const ksr_pattern *name_re, const ksr_pattern *cmdline_re, ksr_proc_list *out,
                  ksr_err *err);
void ksr_proc_list_clear(ksr_proc_list *l);
/* pid may be a client of display ("[host]:N[.S]", the screen ignored): its
 * environment names that display, names none (a process may write over its
 * environment: Chromium's title), or cannot be read (another user's process).
 * False when it names another display (another session's instance), or the
 * process is gone or a zombie (whose environment reads empty). */
bool ksr_proc_may_be_on_display(int pid, const char *display);
/* Keep in l only the processes that may be on display (NULL: keep all). */
void ksr_proc_list_drop_other_displays(ksr_proc_list *l, const char *display);
bool ksr_proc_alive(int pid); /* exists and is not a zombie */
/* A process of group pgid exists and is not a zombie. */
bool ksr_proc_group_alive(int pgid);
/* 1 when pid has a shared object whose file name contains one of names
 * (NULL-terminated) mapped, 0 when not, -1 when its maps cannot be read. */
int ksr_proc_maps_any(int pid, const char *const *names);

/* pidfd for pid (readable when it exits), or -1 where unsupported. */
int ksr_proc_pidfd(int pid);

/* Reap a child of ours without blocking: 1 reaped (status set), 0 still running,
 * -1 not our child. */
int ksr_proc_reap(int pid, int *status);

/* "killed by signal 11 (SEGV)", "exited with status 3", "ended by signal 9
 * (KILL; the launch shell's exit status 137)" for a waitpid status. */
void ksr_proc_describe_status(int status, char *buf, size_t len);

/* A launch waited on for its window (the app wait, inspect --launch, record
 * --launch). */
typedef struct ksr_launch_watch {
	int pid;          /* the launch command, also its process group */
	int64_t start_ms; /* when it was launched */
	int64_t ended_ms; /* when it was seen ended (0: not yet) */
	int status;       /* waitpid status once ended */
} ksr_launch_watch;
/* For a launch without a process pattern: the command ended (reaped here) and
 * no process of its group is left; at once for a non-zero status or a signal,
 * grace_ms after the end for an exit 0 (it may have handed over to a process
 * in another group, or to a running instance). */
bool ksr_launch_watch_gone(ksr_launch_watch *w, int grace_ms);
/* "sh (pid 12) exited with status 1 after 0.2 s: "its last output"" into b:
 * the name is the command's first word (not an assignment), its base name;
 * the last lines of log (NULL: none kept), quoted as data. */
void ksr_launch_watch_describe(const ksr_launch_watch *w, const char *command, const char *log,
                               ksr_strbuf *b);
/* A new empty file for a launch's output (in $TMPDIR, else /tmp) so that its
 * last lines can be quoted; the caller unlinks and frees it. NULL if none. */
char *ksr_launch_temp_log(const char *tool);

/* SIGTERM the group, wait up to grace_ms for it to go, then SIGKILL. Reaps pid
 * if it is our child. 0 when gone. */
int ksr_proc_stop_group(int pgid, int grace_ms);

/* Run `sh -c command` in its own process group, bounded by d: *exit_code is the
 * exit status, 128+N for signal N; on timeout or cancel the group is killed and
 * the wait result says which. Output (at most out_max bytes, stdout+stderr) into
 * *output when output != NULL. */
ksr_wait ksr_proc_run(const char *command, ksr_deadline d, int *exit_code, char **output,
                      size_t out_max, ksr_err *err);

/* The fields of /proc/PID/stat the runtime reads (origin.c; the relaunch
 * follower's lineage; settle's look at whether the app is still working). */
typedef struct ksr_proc_stat {
	char state;
	int ppid, pgrp, sid;
	unsigned long long cpu_ticks;   /* user + system time of all its threads */
	unsigned long long start_ticks; /* clock ticks since boot */
} ksr_proc_stat;
/* false when pid is gone (or its stat cannot be read). */
bool ksr_proc_read_stat(int pid, ksr_proc_stat *st);

#endif
