/* The check vocabulary's evaluators (window, no_window, process, file, shell)
 * and the poll that runs any check until it holds or its timeout passes. */
#include "run/actions/exec.h"
#include "run/actions/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ksr/proc.h"
#include "run/actions/exec.h"

/* A check re-evaluates on every window change and at least this often. */
#define CHECK_TICK_MS 100

int ksr_check_window(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	ksr_window w = {0};
	if (!ksr_run_find_window(run, c->re, NULL, &w)) {
		snprintf(why, len, "no window matching %s is mapped", ksr_pattern_source(c->re));
		return 0;
	}
	snprintf(why, len, "window \"%s\" is mapped", w.title ? w.title : "");
	ksr_run_window_release(&w);
	return 1;
}

int ksr_check_no_window(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	ksr_window w = {0};
	if (ksr_run_find_window(run, c->re, NULL, &w)) {
		snprintf(why, len, "window \"%s\" is still mapped", w.title ? w.title : "");
		ksr_run_window_release(&w);
		return 0;
	}
	snprintf(why, len, "no window matching %s is mapped", ksr_pattern_source(c->re));
	return 1;
}

int ksr_check_process(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	(void)run;
	ksr_proc_list procs = {0};
	ksr_err err = {0};
	ksr_proc_find(c->re, NULL, &procs, &err);
	int held = procs.len > 0;
	if (held)
		snprintf(why, len, "process %s (pid %d) runs", procs.items[0].name,
		         procs.items[0].pid);
	else
		snprintf(why, len, "no process matching %s runs", ksr_pattern_source(c->re));
	ksr_proc_list_clear(&procs);
	return held;
}

int ksr_check_file(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	(void)run;
	struct stat st;
	if (stat(c->text, &st) < 0) {
		snprintf(why, len, "%s does not exist", c->text);
		return 0;
	}
	if (st.st_size == 0) {
		snprintf(why, len, "%s is empty", c->text);
		return 0;
	}
	snprintf(why, len, "%s exists (%lld bytes)", c->text, (long long)st.st_size);
	return 1;
}

int ksr_check_shell(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	int code = -1;
	ksr_err err = {0};
	ksr_deadline d =
	        ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(c->timeout_s * 1000)));
	ksr_wait w = ksr_proc_run(c->text, d, &code, NULL, 0, &err);
	if (w == KSR_WAIT_ERROR) {
		snprintf(why, len, "the command could not be run: %s", err.msg);
		return -1;
	}
	if (w != KSR_WAIT_READY) {
		snprintf(why, len, "the command did not finish (%s)", ksr_wait_name(w));
		return 0;
	}
	if (code == 126 || code == 127) {
		snprintf(why, len, "the command could not be executed (exit %d)", code);
		return -1;
	}
	snprintf(why, len, "the command exited with %d", code);
	return code == 0;
}

static bool watches_windows(const ksr_check *c)
{
	return c->info->backend == KSR_BACKEND_X11;
}

int ksr_check_once(ksr_run *run, const ksr_check *c, char *why, size_t len)
{
	/* A check of a step with tool: looks at that tool (desktop mode). */
	const char *was = run->a11y_tool;
	if (c->tool)
		run->a11y_tool = c->tool;
	int r = ksr_check_evaluator(c->info->kind)(run, c, why, len);
	run->a11y_tool = was;
	return r;
}

ksr_check_status ksr_run_check(ksr_run *run, const ksr_check *c, char *detail, size_t len)
{
	ksr_deadline until =
	        ksr_deadline_min(run->work, ksr_deadline_in_ms((int64_t)(c->timeout_s * 1000)));
	for (;;) {
		int r = ksr_check_once(run, c, detail, len);
		if (r > 0)
			return KSR_CHECK_HELD;
		if (r < 0)
			return KSR_CHECK_ERROR;
		ksr_deadline tick = ksr_deadline_min(until, ksr_deadline_in_ms(CHECK_TICK_MS));
		ksr_wait w = watches_windows(c) && run->x ? ksr_x11_wait_change(run->x, tick)
		                                          : ksr_sleep_until(tick);
		if (w == KSR_WAIT_CANCELLED ||
		    (w == KSR_WAIT_TIMEOUT && ksr_deadline_passed(run->work))) {
			ksr_run_wait_ended_run(run, w, c->pos.line, "a check");
			return KSR_CHECK_ENDED;
		}
		if (w == KSR_WAIT_ERROR && watches_windows(c)) {
			snprintf(detail, len, "the X display connection was lost");
			return KSR_CHECK_ERROR;
		}
		if (ksr_deadline_passed(until)) {
			/* One last look: the change may have come with the last tick. */
			r = ksr_check_once(run, c, detail, len);
			if (r > 0)
				return KSR_CHECK_HELD;
			size_t n = strlen(detail);
			snprintf(detail + n, len - n, " (after %g s)", c->timeout_s);
			return r < 0 ? KSR_CHECK_ERROR : KSR_CHECK_NOT_HELD;
		}
	}
}
