/* Settle: the app is given settle_s to come up; its death ends it. */
#include "run/stages/stage.h"
#include "run/stages/app.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "run/diagnosis/diagnose.h"
#include "run/diagnosis/dialogs.h"

/* ---- settle ------------------------------------------------------------- */

static double settle_limit(const ksr_run *run)
{
	return run->sc->settle_s;
}

static ksr_stage_status stage_settle(ksr_run *run, char *note, size_t len)
{
	int pidfd_pid = run->app_pid;
	int pidfd = pidfd_pid > 0 ? ksr_proc_pidfd(pidfd_pid) : -1;
	ksr_stage_status st = KSR_STAGE_OK;
	for (;;) {
		if (!ksr_app_alive(run)) {
			ksr_app_record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
			break;
		}
		ksr_app_pidfd_follow(run, &pidfd, &pidfd_pid); /* a relaunch was followed */
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick =
		        ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_wait_fds(&p, pidfd >= 0 ? 1 : 0, tick);
		if (w == KSR_WAIT_READY ||
		    (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(run->stage)))
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "settle")) {
			st = KSR_STAGE_FAILED;
			break;
		}
		if (!ksr_app_alive(run)) {
			ksr_app_record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
		}
		break;
	}
	if (pidfd >= 0)
		close(pidfd);
	if (st == KSR_STAGE_OK) {
		snprintf(note, len, "settled %g s; the app is alive", run->sc->settle_s);
		ksr_dialogs_after_settle(run);
		ksr_run_watch_app(run); /* from here on its death ends every wait */
	}
	return st;
}

const ksr_stage_def ksr_stage_settle = {
        .name = "settle", .limit_s = settle_limit, .run = stage_settle};
