/* Watching runs (docs/watch.md): follow one or many evidence folders
 * with inotify and turn what changes in them into lines — READY, EVENT, WAITING,
 * ERROR, DONE — one per change, never one for "no change". The watcher reads
 * only the evidence folder (trace.jsonl, BLOCKED, DONE, report.json) and the
 * runtime's PID from run.start; it never prints: the front end takes the lines
 * (cJSON objects) and formats them with ksr_watch_format. */
#ifndef KSR_WATCH_H
#define KSR_WATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct ksr_watch ksr_watch;

typedef struct ksr_watch_opts {
	/* A path is a folder of runs: each subfolder (existing or created later)
	 * is a run's evidence folder. */
	bool recursive;
	/* How long a folder may go without a run (no run.start yet, or missing, or
	 * deleted) before it is given up with ERROR no-run. <= 0: 600 s. */
	int64_t timeout_ms;
	/* WAITING cadence while a run is paused on a blocker and nothing else is
	 * printed; 0 disables. */
	int64_t heartbeat_ms;
} ksr_watch_opts;

ksr_watch *ksr_watch_create(const ksr_watch_opts *opts, ksr_err *err);
void ksr_watch_free(ksr_watch *w); /* NULL-safe */

/* Follow path (a run's folder, or with recursive a folder of runs). A path
 * that does not exist yet is waited for (its parent is watched). */
int ksr_watch_add(ksr_watch *w, const char *path, ksr_err *err);

/* Read what changed, waiting for it until d (or cancel). New lines are
 * queued for ksr_watch_next; while lines are queued (e.g. by ksr_watch_add)
 * it returns at once, so take them before calling again. READY/TIMEOUT: call again unless finished;
 * CANCELLED: the watch was interrupted (an ERROR line is queued);
 * ERROR: inotify failed (an ERROR line is queued). */
ksr_wait ksr_watch_step(ksr_watch *w, ksr_deadline d);

/* The next queued line (owned by the caller: cJSON_Delete), or NULL. Every
 * line is an object whose first key "type" is READY, EVENT, WAITING, ERROR or
 * DONE; EVENT lines have "event" next (stage, step, concern, blocked, resumed,
 * terminal_pass, terminal_pass_with_concerns, terminal_app_failed,
 * terminal_test_error, terminal_died). */
cJSON *ksr_watch_next(ksr_watch *w);

/* Every run is terminal (or given up) and the DONE line has been queued. */
bool ksr_watch_finished(const ksr_watch *w);
/* The worst exit code of the runs: 2 > 1 > 0 (died and given-up runs are 2). */
int ksr_watch_exit_code(const ksr_watch *w);

/* The finished runs, for JUnit: report.json of each (NULL when it could not
 * be read) and its evidence folder. i < ksr_watch_n_runs. */
size_t ksr_watch_n_runs(const ksr_watch *w);
const cJSON *ksr_watch_run_report(const ksr_watch *w, size_t i);
const char *ksr_watch_run_dir(const ksr_watch *w, size_t i);
/* A terminal line for a run without a report (died, given up), or NULL. */
const cJSON *ksr_watch_run_terminal(const ksr_watch *w, size_t i);

/* One line as text: TYPE, then the event word, then key=value pairs; a value
 * is double-quoted (with \" \\ \n \t \xNN escapes) unless it is non-empty and
 * made only of [A-Za-z0-9._:/@+,-], so a line splits unambiguously. Or as one
 * compact JSON object (json). Returns a newly allocated string, no newline. */
char *ksr_watch_format(const cJSON *line, bool json);

#endif
