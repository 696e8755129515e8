/* The app's end: reaping the launch command, telling how the app ended,
 * recording its crash (held for diagnosis). Shared by the app stages. */
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

void ksr_app_describe_exit(int status, char *buf, size_t len)
{
	ksr_proc_describe_status(status, buf, len);
}

/* Reap the launch command if it has ended, waiting briefly: when the app was a
 * child of the launch shell, the shell ends right after it. Not cancellable:
 * this is how the failure is described, and it is bounded. */
bool ksr_app_reap_launch(ksr_run *run, int wait_ms)
{
	if (run->launched_pid <= 0 || run->launch_reaped)
		return run->launch_reaped;
	int fd = wait_ms > 0 ? ksr_proc_pidfd(run->launched_pid) : -1;
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ksr_deadline d = ksr_deadline_in_ms(wait_ms);
	for (;;) {
		if (ksr_proc_reap(run->launched_pid, &run->launch_status) == 1) {
			run->launch_reaped = true;
			break;
		}
		if (ksr_deadline_passed(d))
			break;
		/* The pidfd turns readable when the command exits; without one (old
		 * kernels, valgrind) look again in 20 ms. A cancel ends the wait:
		 * the caller then reports what it knows. */
		ksr_wait w = fd >= 0 ? ksr_wait_fds(&p, 1, d)
		                     : ksr_sleep_until(ksr_deadline_min(d, ksr_deadline_in_ms(20)));
		if (w == KSR_WAIT_CANCELLED || w == KSR_WAIT_ERROR) {
			if (ksr_proc_reap(run->launched_pid, &run->launch_status) == 1)
				run->launch_reaped = true;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	return run->launch_reaped;
}

/* The app is gone: record a crash with whatever we know of how it ended. */
void ksr_app_record_crash(ksr_run *run, const char *when)
{
	char how[128] = "exited";
	int own = 0;
	if (run->app_pid != run->launched_pid && ksr_run_app_exit_status(run, &own)) {
		ksr_app_describe_exit(own, how, sizeof how); /* the kernel kept it (pidfd) */
	} else if (run->launched_pid > 0 && ksr_app_reap_launch(run, 300)) {
		int st = run->launch_status;
		if (run->app_pid == run->launched_pid || WIFSIGNALED(st) ||
		    (WIFEXITED(st) && WEXITSTATUS(st) > 128))
			ksr_app_describe_exit(st, how, sizeof how);
	}
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNumberToObject(f, "pid", run->app_pid);
	cJSON_AddStringToObject(f, "how", how);
	ksr_run_emit(run, "app.exit", f);
	/* Held, not recorded: diagnosis tells a crash from a crash loop first. */
	char reason[256];
	snprintf(reason, sizeof reason, "the app (pid %d) %s %s", run->app_pid, how, when);
	ksr_diag_hold_crash(run, reason);
}

static bool pid_alive(ksr_run *run)
{
	if (run->app_pid == run->launched_pid) {
		ksr_app_reap_launch(run, 0);
		return !run->launch_reaped && ksr_proc_alive(run->app_pid);
	}
	return ksr_proc_alive(run->app_pid);
}

/* Alive, or replaced by its launcher (docs/scenario.md#launcher-restarts):
 * then app_pid is the new instance's, and it is alive. */
bool ksr_app_alive(ksr_run *run)
{
	if (run->app_pid <= 0)
		return true; /* nothing known to watch: the window decides */
	if (pid_alive(run)) {
		ksr_run_app_seen_alive(run);
		return true;
	}
	return ksr_run_follow_relaunch(run);
}

void ksr_app_pidfd_follow(ksr_run *run, int *pidfd, int *pid)
{
	if (*pid == run->app_pid)
		return;
	if (*pidfd >= 0)
		close(*pidfd);
	*pid = run->app_pid;
	*pidfd = *pid > 0 ? ksr_proc_pidfd(*pid) : -1;
}
