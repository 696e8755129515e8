/* The watchdog: the promise that DONE exists when the deadline comes, even when
 * the main thread is blocked somewhere no cancel descriptor reaches (Xlib
 * waiting on a SIGSTOPped X server, a filesystem call). A second thread sleeps
 * on a pipe until the run deadline's last seconds, or a grace period after
 * SIGTERM; if the main thread has not started the report by then, it takes the
 * event lock (the main thread then blocks at its next event), records the
 * failure, writes the report and DONE, stops what the run started and exits. */
#include "run/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "run/diagnosis/diagnose.h"

/* How long the main thread may take to wind down after SIGTERM. */
#define CANCEL_GRACE_MS 15000
/* The watchdog acts this long before the run deadline (or a quarter of the reserve). */
#define BEFORE_DEADLINE_MS 3000

struct ksr_watchdog {
	pthread_t thread;
	int stop_pipe[2];
};

static ksr_deadline fire_time(const ksr_run *run)
{
	int64_t reserve = run->hard.at_ms - run->work.at_ms;
	int64_t margin = reserve / 4 < BEFORE_DEADLINE_MS ? reserve / 4 : BEFORE_DEADLINE_MS;
	return (ksr_deadline){.at_ms = run->hard.at_ms - margin};
}

/* Wait for the stop pipe until d; true when the run finished normally. */
static bool wait_stop(struct ksr_watchdog *w, ksr_deadline d, bool with_cancel)
{
	for (;;) {
		struct pollfd p[2] = {{.fd = w->stop_pipe[0], .events = POLLIN},
		                      {.fd = ksr_cancel_fd(), .events = POLLIN}};
		int n = with_cancel && p[1].fd >= 0 ? 2 : 1;
		int64_t left = ksr_deadline_remaining_ms(d);
		int r = poll(p, (nfds_t)n, left > 60000 ? 60000 : (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0 && (p[0].revents & (POLLIN | POLLHUP)))
			return true;
		if (r > 0 && n == 2 && (p[1].revents & POLLIN))
			return false; /* cancelled: the caller grants a grace period */
		if (ksr_deadline_passed(d))
			return false;
	}
}

/* The last "<kind>.start" event with no matching end after it, or NULL. */
static const cJSON *open_event(const ksr_run *run, const char *start, const char *end)
{
	const cJSON *last = NULL;
	const cJSON *e;
	cJSON_ArrayForEach(e, ksr_events_all(run->ev))
	{
		const char *name =
		        cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "event"));
		if (name && strcmp(name, start) == 0)
			last = e;
		else if (name && strcmp(name, end) == 0)
			last = NULL;
	}
	return last;
}

static cJSON *copy_field(cJSON *to, const cJSON *from, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
	if (v)
		cJSON_AddItemToObject(to, key, cJSON_Duplicate(v, true));
	return to;
}

/* Close the step and the stage the main thread was blocked in, so the report
 * says where it stopped rather than leaving them "running". */
static void close_open_rows(ksr_run *run, const char *status)
{
	const cJSON *step = open_event(run, "step.start", "step.end");
	if (step) {
		cJSON *f = cJSON_CreateObject();
		copy_field(f, step, "index");
		copy_field(f, step, "line");
		copy_field(f, step, "kind");
		cJSON_AddItemToObject(f, "checks", cJSON_CreateArray());
		cJSON_AddStringToObject(f, "status", "error");
		cJSON_AddStringToObject(f, "reason", "the runtime was blocked in this step");
		ksr_run_emit(run, "step.end", f);
	}
	const cJSON *stage = open_event(run, "stage.start", "stage.end");
	if (stage) {
		cJSON *f = cJSON_CreateObject();
		copy_field(f, stage, "name");
		cJSON_AddStringToObject(f, "status", status);
		cJSON_AddStringToObject(f, "reason",
		                        "the runtime was blocked in this stage; the "
		                        "watchdog took over");
		ksr_run_emit(run, "stage.end", f);
	}
}

static void kill_session(const ksr_session *s)
{
	int pids[] = {ksr_session_wm_pid(s), ksr_session_dbus_pid(s), ksr_session_xvfb_pid(s)};
	for (size_t i = 0; i < sizeof pids / sizeof pids[0]; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
}

static void emergency(ksr_run *run)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 2;
	if (pthread_mutex_timedlock(&run->lock, &until) != 0)
		return; /* the main thread holds the lock: it is not stuck */
	/* Keep the lock to the end: should the main thread wake, it blocks at
	 * its next event, and only this thread writes the evidence. */
	ksr_run_hold_lock(true);
	if (run->launched_pid > 0 && !(run->sc && run->sc->keep_running)) {
		ksr_proc_stop_group(run->launched_pid, 1000);
		ksr_proc_stop_tagged(run->run_id, 1000); /* what left the group */
	}
	for (size_t i = 0; i < run->n_tools; i++) /* desktop mode's spawned tools */
		if (!run->tools[i].stopped && run->tools[i].pid > 1)
			kill(-run->tools[i].pid, SIGKILL);
	ksr_diag_record_held_now(run); /* a crash found before the main thread got stuck */
	const char *stage = run->current_stage ? run->current_stage : "the run";
	if (ksr_cancelled())
		ksr_run_fail(run, KSR_OUTCOME_INTERRUPTED, 0,
		             "interrupted, and the runtime was still blocked in %s %d s later; the "
		             "watchdog wrote this report",
		             stage, CANCEL_GRACE_MS / 1000);
	else
		ksr_run_fail(
		        run, KSR_OUTCOME_DEADLINE, 0,
		        "the run deadline (%d s) came while the runtime was blocked in %s; the "
		        "watchdog wrote this report",
		        run->opts->deadline_s, stage);
	close_open_rows(run, ksr_cancelled() ? "interrupted" : "timeout");
	int code = ksr_run_finish_report(run);
	/* By PID only: the main thread may wake and free the session itself. */
	kill_session(run->session);
	_exit(code ? code : 2);
}

static void *watch(void *arg)
{
	ksr_run *run = arg;
	struct ksr_watchdog *w = run->watchdog;
	ksr_deadline fire = fire_time(run);
	if (wait_stop(w, fire, true))
		return NULL;
	if (ksr_cancelled()) {
		ksr_deadline grace = ksr_deadline_min(fire, ksr_deadline_in_ms(CANCEL_GRACE_MS));
		if (wait_stop(w, grace, false))
			return NULL;
	}
	emergency(run);
	return NULL;
}

int ksr_watchdog_start(ksr_run *run)
{
	struct ksr_watchdog *w = ksr_xcalloc(1, sizeof *w);
	if (pipe2(w->stop_pipe, O_CLOEXEC) < 0) {
		free(w);
		return -1;
	}
	run->watchdog = w;
	/* The thread must not take SIGTERM/SIGINT: the main thread's handler
	 * writes the cancel pipe either way, but a blocked main thread should
	 * see EINTR where it can. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int rc = pthread_create(&w->thread, NULL, watch, run);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(w->stop_pipe[0]);
		close(w->stop_pipe[1]);
		free(w);
		run->watchdog = NULL;
		return -1;
	}
	return 0;
}

void ksr_watchdog_stop(ksr_run *run)
{
	struct ksr_watchdog *w = run->watchdog;
	if (!w)
		return;
	close(w->stop_pipe[1]); /* POLLHUP wakes the thread */
	pthread_join(w->thread, NULL);
	close(w->stop_pipe[0]);
	free(w);
	run->watchdog = NULL;
}
