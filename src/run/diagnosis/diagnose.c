/* Diagnosis after a failure (docs/scenario.md), crash signatures at the end of a
 * passing run, and stopping the app at the end.
 *
 * Crash or crash loop: the verdict takes the first failure event, and when the
 * app dies we cannot yet tell whether something (a Kasm custom_startup.sh)
 * will start it again a second later. So a crash is held (ksr_diag_hold_crash:
 * run->failed is set, no failure event yet), diagnosis re-checks for a few
 * seconds, then records one failure: `crash-loop` when a new instance came
 * back, else `crashed`, with any crash signature from the logs in the reason.
 * A new instance is looked for by the app wait's process match on the run's
 * display (src/run/context/relaunch.c); one that started since the app was
 * last seen alive counts even when it was there before the crash was held.
 * A launcher's one restart (an end without a signal, a new instance from the
 * same launcher that comes up) never gets here: relaunch.c follows it.
 * Every path out of ksr_diagnose records the held failure. */
#include "run/diagnosis/diagnose.h"
#include "run/diagnosis/dialogs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "ksr/log_tail.h"
#include "run/vision/judge.h"

#define RECHECK_MS      3000 /* a supervisor relaunches within a second or two */
#define RECHECK_TICK_MS 100
#define TAIL_BYTES      8192        /* shown in the report */
#define SCAN_BYTES      (64 * 1024) /* searched for signatures, copied as log-N.txt */
#define MAX_NEW         8

/* Lines that mean a process died badly, whoever wrote them: the shell
 * ("Segmentation fault (core dumped)", "Aborted"), the C++ runtime ("terminate
 * called"), glibc ("double free or corruption"), GLib ("Gtk-ERROR **"),
 * Chromium ("FATAL:", "Check failed:"), Rust ("panicked at"). */
static const char crash_signatures[] =
        "(Segmentation fault|SIGSEGV|SIGABRT|SIGBUS|SIGILL|SIGFPE|\\bAborted\\b|\\babort\\(\\)|"
        "core dumped|terminate called|\\bFatal\\b|\\bFATAL\\b|Trace/breakpoint trap|Bus error|"
        "Illegal instruction|Floating point exception|stack smashing detected|"
        "double free or corruption|free\\(\\): invalid|-ERROR \\*\\*|panicked at|Check failed:)";

struct ksr_diag {
	char reason[768];
	bool by_window;       /* no process: pattern, so instances are windows */
	unsigned long *known; /* pids (or window ids) there when the app died */
	size_t n_known;
	unsigned long found[MAX_NEW]; /* new ones seen since */
	size_t n_found;
	int64_t held_ms, back_ms;
	char signature[420]; /* "; PATH shows "LINE"" for the reason */
};

/* ---- holding a crash ---------------------------------------------------- */

/* An instance there when the app was found gone: one that started since the
 * app was last seen alive (or from the app's own launcher) came back already
 * (a launcher restarts within milliseconds, before a crash is even described);
 * any other was there all along (another process the pattern matches). */
static void note_present(ksr_run *run, struct ksr_diag *d, unsigned long id)
{
	int64_t after = 0;
	if (!d->by_window && d->n_found < MAX_NEW &&
	    ksr_run_instance_is_new(run, (int)id, &after)) {
		if (!d->n_found)
			d->back_ms = after;
		d->found[d->n_found++] = id;
		return;
	}
	d->known[d->n_known++] = id;
}

void ksr_diag_hold_crash(ksr_run *run, const char *reason)
{
	if (run->diag)
		return; /* one crash is held; the first one */
	if (run->x && !ksr_x11_still_connected(run->x) && !run->failed) {
		/* The X server went first and the app's connection broke with
		 * ours: its exit is the display's doing, the setup's fault. Seen
		 * when the app's exit reached us before the end of our own
		 * connection did. */
		ksr_run_fail_setup(run, KSR_OUTCOME_NO_DISPLAY, 0,
		                   "the X display connection was lost; %s after it", reason);
		return;
	}
	struct ksr_diag *d = ksr_xcalloc(1, sizeof *d);
	snprintf(d->reason, sizeof d->reason, "%s", reason);
	d->by_window = !run->sc->process && !run->sc->process_cmdline;
	d->held_ms = ksr_now_ms();
	unsigned long *now = NULL;
	size_t n = ksr_run_app_instances(run, d->by_window, &now);
	d->known = ksr_xcalloc(n + 2, sizeof *d->known);
	for (size_t i = 0; i < n; i++)
		note_present(run, d, now[i]);
	free(now);
	/* The dead app itself, in case /proc still showed it. */
	d->known[d->n_known++] = d->by_window ? run->window.id : (unsigned long)run->app_pid;
	run->diag = d;
	if (!run->failed) {
		run->failed = true;
		run->failure_outcome = KSR_OUTCOME_CRASHED;
	}
}

static bool known(const struct ksr_diag *d, unsigned long v)
{
	for (size_t i = 0; i < d->n_known; i++)
		if (d->known[i] == v)
			return true;
	for (size_t i = 0; i < d->n_found; i++)
		if (d->found[i] == v)
			return true;
	return false;
}

static bool came_back(ksr_run *run, struct ksr_diag *d)
{
	unsigned long *now = NULL;
	size_t n = ksr_run_app_instances(run, d->by_window, &now);
	for (size_t i = 0; i < n; i++)
		if (!known(d, now[i]) && d->n_found < MAX_NEW)
			d->found[d->n_found++] = now[i];
	free(now);
	return d->n_found > 0;
}

/* Watch for a new instance over a short window, bounded by a quarter of what
 * is left of the run (the rest is for the report) and cancellable. */
static void recheck(ksr_run *run, struct ksr_diag *d)
{
	int64_t budget = ksr_deadline_remaining_ms(run->hard) / 4;
	ksr_deadline end =
	        ksr_deadline_min(ksr_deadline_in_ms(RECHECK_MS), ksr_deadline_in_ms(budget));
	if (d->n_found)
		return; /* back before the crash was held (note_present) */
	for (;;) {
		if (came_back(run, d)) {
			d->back_ms = ksr_now_ms() - d->held_ms;
			return;
		}
		if (ksr_deadline_passed(end))
			return;
		ksr_deadline tick = ksr_deadline_min(end, ksr_deadline_in_ms(RECHECK_TICK_MS));
		if (ksr_sleep_until(tick) == KSR_WAIT_CANCELLED)
			return;
	}
}

static void describe_found(const ksr_run *run, const struct ksr_diag *d, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", d->by_window ? "window" : "pid");
	for (size_t i = 0; i < d->n_found && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, d->by_window ? "%s0x%lx" : "%s%lu",
		                      i ? ", " : " ", d->found[i]);
	const ksr_pattern *p = d->by_window ? run->sc->window : run->sc->process;
	if (p && n < len)
		snprintf(buf + n, len - n, " matching %s", ksr_pattern_source(p));
}

static void emit_recheck(ksr_run *run, const struct ksr_diag *d)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddBoolToObject(f, "came_back", d->n_found > 0);
	cJSON_AddStringToObject(f, "by", d->by_window ? "window" : "process");
	cJSON *ids = cJSON_AddArrayToObject(f, "new");
	for (size_t i = 0; i < d->n_found; i++)
		cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)d->found[i]));
	if (d->n_found)
		cJSON_AddNumberToObject(f, "after_ms", (double)d->back_ms);
	ksr_run_emit(run, "crash_recheck", f);
}

/* Record the held crash as the run's failure, refined by what diagnosis found. */
static void release_held(ksr_run *run)
{
	struct ksr_diag *d = run->diag;
	if (!d)
		return;
	run->diag = NULL;
	char before[160] = ""; /* the second end after a launcher's restart */
	if (run->life.relaunches)
		snprintf(before, sizeof before,
		         "; it was already the app's second instance (its launcher restarted "
		         "it after pid %d %s)",
		         run->life.first_pid, run->life.first_exit);
	if (d->n_found) {
		char found[256];
		describe_found(run, d, found, sizeof found);
		run->failure_outcome = KSR_OUTCOME_CRASH_LOOP;
		ksr_run_fail(run, KSR_OUTCOME_CRASH_LOOP, 0,
		             "the app keeps crashing and coming back: %s, and a new instance (%s) "
		             "appeared %.1f s later%s%s",
		             d->reason, found, (double)d->back_ms / 1000.0, before, d->signature);
	} else {
		ksr_run_fail(run, KSR_OUTCOME_CRASHED, 0, "%s%s%s", d->reason, before,
		             d->signature);
	}
	free(d->known);
	free(d);
}

void ksr_diag_record_held_now(ksr_run *run)
{
	const struct ksr_diag *d = run->diag;
	if (d) /* not freed: the main thread may still hold it */
		ksr_run_fail(run, KSR_OUTCOME_CRASHED, 0, "%s%s", d->reason, d->signature);
}

/* ---- logs --------------------------------------------------------------- */

/* The first line of text carrying a crash signature, copied (trimmed) to hit. */
static bool find_signature(const ksr_pattern *sig, const char *text, char *hit, size_t len)
{
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		char one[1024];
		snprintf(one, sizeof one, "%.*s", (int)(n < sizeof one - 1 ? n : sizeof one - 1),
		         line);
		if (ksr_pattern_match(sig, one)) {
			snprintf(hit, len, "%.200s", one);
			return true;
		}
		line += n + (end ? 1 : 0);
	}
	return false;
}

static void emit_tail(ksr_run *run, const char *shown, const char *text)
{
	size_t len = strlen(text);
	const char *from = len > TAIL_BYTES ? text + len - TAIL_BYTES : text;
	while (from > text && (*from & 0xc0) == 0x80)
		from++; /* not inside a UTF-8 sequence */
	cJSON *t = cJSON_CreateObject();
	cJSON_AddStringToObject(t, "path", shown);
	cJSON_AddStringToObject(t, "text", from);
	ksr_run_emit(run, "log_tail", t);
}

static void copy_log(ksr_run *run, int n, const char *path, const char *raw, size_t len)
{
	char name[32];
	snprintf(name, sizeof name, "log-%d.txt", n);
	ksr_err err = {0};
	if (ksr_evidence_write_text(run->out, name, raw, len, &err) < 0)
		return;
	char what[600];
	snprintf(what, sizeof what, "the last %zu bytes of %s", len, path);
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", name);
	cJSON_AddStringToObject(a, "kind", "log");
	cJSON_AddStringToObject(a, "description", what);
	ksr_run_emit(run, "artifact", a);
}

static void emit_signature(ksr_run *run, const char *shown, const char *line)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "path", shown);
	cJSON_AddStringToObject(f, "line", line);
	ksr_run_emit(run, "crash_signature", f);
}

typedef struct log_job {
	const ksr_pattern *sig;
	bool failed_run; /* diagnosis: tail every log; else only one with a signature */
	int hits;
	char first_hit[400];
	char unreadable[300];
} log_job;

/* One log: n = 0 for launch.log (already in OUT), else its index in logs:. */
static void examine_log(ksr_run *run, log_job *job, const char *path, const char *shown, int n)
{
	size_t len = 0;
	bool whole = false;
	int errnum = 0;
	char *buf = ksr_log_read_tail(path, SCAN_BYTES, &len, &whole, &errnum);
	if (!buf) {
		size_t u = strlen(job->unreadable);
		snprintf(job->unreadable + u, sizeof job->unreadable - u, "%s%s (%s)",
		         u ? ", " : "", shown, strerror(errnum));
		return;
	}
	if (n > 0 && job->failed_run)
		copy_log(run, n, path, buf, len);
	char hit[256];
	bool found = find_signature(job->sig, ksr_log_clean_text(buf, len, whole), hit, sizeof hit);
	if (n > 0 && found && !job->failed_run)
		copy_log(run, n, path, buf, strlen(buf)); /* cleaned: still the log's text */
	if (job->failed_run || found)
		emit_tail(run, shown, buf);
	if (found) {
		emit_signature(run, shown, hit);
		if (!job->hits++)
			snprintf(job->first_hit, sizeof job->first_hit, "%s shows \"%s\"", shown,
			         hit);
		if (!job->failed_run)
			ksr_run_concern(
			        run, KSR_CONCERN_CRASH_SIGNATURE, 0,
			        "%s shows a crash signature although the app is still running: "
			        "\"%s\"",
			        shown, hit);
	}
	free(buf);
}

static void examine_logs(ksr_run *run, log_job *job)
{
	ksr_err err = {0};
	ksr_pattern *sig = ksr_pattern_compile(crash_signatures, &err);
	if (!sig)
		return; /* a runtime bug; the unit-tested pattern compiles */
	job->sig = sig;
	if (run->launched_pid > 0) {
		char *path = ksr_evidence_path(run->out, "launch.log");
		examine_log(run, job, path, "launch.log", 0);
		free(path);
	}
	for (size_t i = 0; i < run->sc->n_logs; i++)
		examine_log(run, job, run->sc->logs[i], run->sc->logs[i], (int)i + 1);
	ksr_pattern_free(sig);
}

void ksr_diag_scan_logs_at_end(ksr_run *run)
{
	if (!run->sc)
		return;
	log_job job = {0};
	examine_logs(run, &job);
}

/* ---- diagnosis ---------------------------------------------------------- */

static bool diagnosis_applies(const ksr_run *run)
{
	switch (run->failure_outcome) {
	case KSR_OUTCOME_INTERRUPTED:
	case KSR_OUTCOME_INVALID_SCENARIO:
	case KSR_OUTCOME_NO_DISPLAY:
	case KSR_OUTCOME_OUTPUT_UNWRITABLE:
		return false;
	default:
		return true;
	}
}

static void append(char *buf, size_t len, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Append to a stage note, "; " between parts, cut at len. */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n && n + 2 < len)
		n += (size_t)snprintf(buf + n, len - n, "; ");
	if (n + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

static void diagnose(ksr_run *run, char *note, size_t len)
{
	ksr_err shot_err = {0};
	if (!run->x || !ksr_x11_alive(run->x))
		append(note, len, "no failure screenshot (99-failure.png): %s",
		       run->x ? "the X display connection was lost" : "no X display");
	else if (ksr_run_screenshot(run, "99-failure.png", "the screen when the run failed",
	                            &shot_err) == 0)
		append(note, len, "failure screenshot");
	else
		append(note, len, "no failure screenshot (99-failure.png): %s", shot_err.msg);
	/* An error dialog on screen is context for whatever failed (a step
	 * that could not find its button behind it); the outcome stays. */
	char dialog[256] = "";
	if (run->x && ksr_x11_alive(run->x) && run->failure_outcome != KSR_OUTCOME_ERROR_DIALOG)
		ksr_dialogs_on_failure(run, dialog, sizeof dialog);
	if (dialog[0])
		append(note, len, "%s", dialog);
	char described[96]; /* with a model: what the failure screen shows */
	if (ksr_judge_describe_failure(run, described, sizeof described))
		append(note, len, "%s", described);
	if (run->diag) {
		recheck(run, run->diag);
		emit_recheck(run, run->diag);
		append(note, len, "the app %s",
		       run->diag->n_found ? "came back: a crash loop" : "did not come back");
	}
	log_job job = {.failed_run = true};
	examine_logs(run, &job);
	if (job.hits && run->diag)
		snprintf(run->diag->signature, sizeof run->diag->signature, "; %s", job.first_hit);
	append(note, len, "%d crash signature%s in the logs", job.hits, job.hits == 1 ? "" : "s");
	if (job.unreadable[0])
		append(note, len, "unreadable: %s", job.unreadable);
}

void ksr_diagnose(ksr_run *run)
{
	if (!run->sc || !diagnosis_applies(run) || ksr_cancelled()) {
		release_held(run);
		return;
	}
	ksr_events_set_stage(run->ev, "diagnosis");
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", "diagnosis");
	ksr_run_emit(run, "stage.start", f);
	int64_t started = ksr_now_ms();
	char note[512] = "";
	diagnose(run, note, sizeof note);
	release_held(run);
	/* A signal cut the diagnosis short: the failure found before it stands,
	 * but what diagnosis recorded may be partial, and the stage says so. */
	bool cut = ksr_cancelled();
	if (cut)
		append(note, sizeof note, "cut short by a signal");
	ksr_run_emit_stage_end(run, "diagnosis", cut ? "interrupted" : "ok", note, started);
	ksr_events_set_stage(run->ev, NULL);
}
