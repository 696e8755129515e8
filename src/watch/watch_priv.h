/* The watcher's internals (ksr/watch.h): watch.c owns inotify, the folders
 * and the wait; watch_run.c turns one run folder's files into lines;
 * watch_format.c prints lines as text or JSON. */
#ifndef KSR_WATCH_PRIV_H
#define KSR_WATCH_PRIV_H

#include <sys/types.h>

#include "ksr/watch.h"

typedef struct ksr_watch_run {
	char *dir;
	int wd;                /* inotify watch on dir, -1 while dir is missing */
	int64_t waiting_since; /* monotonic ms: since when it has no run (no-run timeout) */
	off_t off;             /* how much of trace.jsonl has been read */
	char *partial;         /* an incomplete last line */
	size_t plen;
	char *run_id, *scenario;
	int pid, pidfd;         /* from run.start; pidfd -1 when none or closed */
	bool pidfd_polled;      /* pidfd is in the watcher's epoll set */
	bool pid_gone;          /* the runtime's process has exited */
	int64_t lock_recheck;   /* pid gone but .lock still held: look again then */
	bool seen, ready;       /* the first sync ran; run.start read */
	bool history;           /* DONE existed when first seen: only READY + terminal */
	bool blocked, terminal; /* BLOCKED exists; the terminal line was queued */
	bool given_up;          /* no run within the timeout */
	bool ended_blocked;     /* its outcome is blocked or blocked-by-prompt */
	int exit_code;
	cJSON *report; /* report.json once DONE (NULL if unreadable) */
	cJSON *terminal_line;
} ksr_watch_run;

/* Queue a line (consumed); the heartbeat clock restarts. */
void ksr_watch_emit(ksr_watch *w, cJSON *line);
cJSON *ksr_watch_line(const char *type, const char *event);

/* watch_run.c: read what is new in the run's folder (trace lines, BLOCKED,
 * DONE) and queue the lines it means. */
void ksr_watch_run_sync(ksr_watch *w, ksr_watch_run *r);
/* The runtime's process ended (pidfd) or was never there: terminal_died
 * unless DONE exists or its lock is still held. */
void ksr_watch_run_check_died(ksr_watch *w, ksr_watch_run *r);
void ksr_watch_run_free(ksr_watch_run *r);

#endif
