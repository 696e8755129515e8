/* The run context's bottom: recording events, failures and concerns, and
 * telling what a wait that ended without its event means. Every stage,
 * executor and diagnosis step records through these. */
#include "run/context/context.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>

static _Thread_local bool holding_lock;

void ksr_run_hold_lock(bool held)
{
	holding_lock = held;
}

/* Events are recorded under run->lock: the watchdog thread may take over the
 * record when the main thread is stuck. */
const cJSON *ksr_run_emit(ksr_run *run, const char *event, cJSON *fields)
{
	if (!holding_lock)
		pthread_mutex_lock(&run->lock);
	const cJSON *rec = ksr_events_emit(run->ev, event, fields);
	if (run->opts->on_event)
		run->opts->on_event(run->opts->on_event_ud, rec);
	if (!holding_lock)
		pthread_mutex_unlock(&run->lock);
	return rec;
}

static void record_failure(ksr_run *run, ksr_outcome o, bool setup, int line, const char *fmt,
                           va_list ap)
{
	/* A failure recorded while the app's death is not yet noticed is its
	 * consequence (a wait cut short, a window gone with its process): the
	 * death is the failure. */
	if (!run->failed && o == KSR_OUTCOME_WINDOW_LOST && run->app_watched) {
		/* The X server sees a dying client's connection close a moment
		 * before its pidfd turns readable. */
		struct pollfd p = {.fd = run->app_watch_fd, .events = POLLIN};
		ksr_wait_fds_uncancellable(&p, 1, ksr_deadline_in_ms(KSR_WINDOW_GRACE_MS));
	}
	if (!run->failed && ksr_run_alive_check(run))
		return;
	char reason[768];
	int n = line > 0 ? snprintf(reason, sizeof reason, "line %d: ", line) : 0;
	vsnprintf(reason + n, sizeof reason - (size_t)n, fmt, ap);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "outcome", ksr_outcome_name(o));
	cJSON_AddStringToObject(f, "reason", reason);
	if (line > 0)
		cJSON_AddNumberToObject(f, "line", line);
	if (setup)
		cJSON_AddBoolToObject(f, "setup_fault", true);
	if (!run->failed) {
		run->failed = true;
		run->failure_outcome = o;
	}
	ksr_run_emit(run, "failure", f);
}

void ksr_run_fail(ksr_run *run, ksr_outcome outcome, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record_failure(run, outcome, false, line, fmt, ap);
	va_end(ap);
}

void ksr_run_fail_setup(ksr_run *run, ksr_outcome outcome, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	record_failure(run, outcome, true, line, fmt, ap);
	va_end(ap);
}

void ksr_run_concern(ksr_run *run, ksr_concern code, int line, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "code", ksr_concern_name(code));
	cJSON_AddStringToObject(c, "message", msg);
	if (line > 0)
		cJSON_AddNumberToObject(c, "line", line);
	ksr_run_emit(run, "concern", c);
}

bool ksr_run_wait_ended_run(ksr_run *run, ksr_wait w, int line, const char *what)
{
	if (ksr_run_alive_check(run))
		return true;
	if (w == KSR_WAIT_CANCELLED || ksr_cancelled()) {
		int sig = ksr_cancel_signal();
		ksr_run_fail(run, KSR_OUTCOME_INTERRUPTED, line, "interrupted by %s during %s",
		             sig == SIGINT ? "SIGINT"
		             : sig > 0     ? "SIGTERM"
		                           : "a cancel request",
		             what);
		return true;
	}
	if (w == KSR_WAIT_TIMEOUT && ksr_deadline_passed(run->work)) {
		ksr_run_fail(run, KSR_OUTCOME_DEADLINE, line,
		             "the run deadline (%d s, less the reserve for the report) passed "
		             "during %s",
		             run->opts->deadline_s, what);
		return true;
	}
	return false;
}

void ksr_run_emit_stage_end(ksr_run *run, const char *name, const char *status, const char *why,
                            int64_t started)
{
	char where[96];
	snprintf(where, sizeof where, "the end of the %s stage", name);
	ksr_run_wm_check(run, where, 0); /* before the row: the stage it went in */
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "name", name);
	cJSON_AddStringToObject(f, "status", status);
	if (why && *why)
		cJSON_AddStringToObject(f, "reason", why);
	cJSON_AddNumberToObject(f, "duration_ms", (double)(ksr_now_ms() - started));
	ksr_run_emit(run, "stage.end", f);
}
