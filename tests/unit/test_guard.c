/* Guards of the wait primitive (include/ksr/deadline.h): a readable guarded
 * descriptor ends every wait of its thread as a cancel does, until removed;
 * its check can ignore noise or drop it; a real child's pidfd ends a wait at
 * its death; another thread never sees the guards. */
#include "ksr/deadline.h"
#include "ksr/proc.h"
#include "tap.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int drained;

/* Reads one byte: a byte 'q' is noise, 'x' ends the watched thing harmlessly. */
static ksr_guard_verdict check(int fd, void *ud)
{
	(void)ud;
	char c = 0;
	if (read(fd, &c, 1) == 1)
		drained++;
	return c == 'q' ? KSR_GUARD_QUIET : c == 'x' ? KSR_GUARD_DROP : KSR_GUARD_FIRED;
}

static void *other_thread(void *arg)
{
	(void)arg;
	return (void *)(long)ksr_sleep_ms(30);
}

int main(void)
{
	ksr_cancel_install();
	int p[2];
	if (pipe(p) < 0)
		return 1;

	ok(ksr_guard_add(p[0], NULL, NULL) == 0, "a pipe guarded");
	is_int(ksr_sleep_ms(20), KSR_WAIT_TIMEOUT, "a quiet guard lets the sleep end on time");
	ok(!ksr_cancelled() && ksr_guard_fired() == -1, "nothing fired yet");
	ok(write(p[1], "!", 1) == 1, "written");
	int64_t t0 = ksr_now_ms();
	is_int(ksr_sleep_ms(5000), KSR_WAIT_CANCELLED, "a readable guard cuts the sleep");
	ok(ksr_now_ms() - t0 < 1000, "at once");
	is_int(ksr_guard_fired(), p[0], "the guard tells which fd fired");
	ok(ksr_cancelled() && ksr_cancel_signal() == 0, "cancelled, by no signal");
	is_int(ksr_sleep_ms(5000), KSR_WAIT_CANCELLED, "level-triggered: every later wait too");
	pthread_t th;
	void *r = NULL;
	pthread_create(&th, NULL, other_thread, NULL);
	pthread_join(th, &r);
	is_int((long)r, KSR_WAIT_TIMEOUT, "another thread's wait never sees the guard");
	ksr_guard_remove(p[0]);
	ok(!ksr_cancelled() && ksr_guard_fired() == -1, "removed: waits are normal again");
	is_int(ksr_sleep_ms(10), KSR_WAIT_TIMEOUT, "a sleep ends on time again");
	char c;
	ok(read(p[0], &c, 1) == 1, "drained");

	ksr_guard_add(p[0], check, NULL);
	ok(write(p[1], "q", 1) == 1, "noise written");
	is_int(ksr_sleep_ms(100), KSR_WAIT_TIMEOUT, "QUIET: the wait goes on");
	is_int(drained, 1, "the check saw the noise");
	ok(write(p[1], "x", 1) == 1 && write(p[1], "y", 1) == 1, "drop, then more");
	is_int(ksr_sleep_ms(100), KSR_WAIT_TIMEOUT, "DROP: the wait goes on");
	is_int(ksr_sleep_ms(50), KSR_WAIT_TIMEOUT, "and the dropped fd is no longer polled");
	is_int(drained, 2, "the check saw the drop, then nothing");
	ok(read(p[0], &c, 1) == 1 && c == 'y', "the byte after the drop is unread");

	/* A real death: the pidfd of a child that exits ends a long wait. */
	int pid = fork();
	if (pid == 0) {
		usleep(200 * 1000);
		_exit(3);
	}
	int fd = ksr_proc_pidfd(pid);
	if (fd >= 0) {
		ksr_guard_add(fd, NULL, NULL);
		struct pollfd none = {.fd = p[0], .events = POLLIN};
		t0 = ksr_now_ms();
		is_int(ksr_wait_fds(&none, 1, ksr_deadline_in_ms(5000)), KSR_WAIT_CANCELLED,
		       "a child's death ends a wait on something else");
		ok(ksr_now_ms() - t0 < 2000, "within its death, not the deadline");
		ksr_guard_clear();
		ok(!ksr_cancelled(), "cleared");
		close(fd);
	} else {
		ok(true, "# skip: no pidfd here");
	}
	int st;
	waitpid(pid, &st, 0);
	return tap_done();
}
