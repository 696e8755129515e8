/* Deadlines and cancellation: a self-pipe made readable by SIGTERM/SIGINT and
 * never drained, so cancellation is level-triggered for every later wait. */
#include "ksr/deadline.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int cancel_pipe[2] = {-1, -1};
static volatile sig_atomic_t cancel_signal;

int64_t ksr_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ksr_deadline ksr_deadline_in_ms(int64_t ms)
{
	if (ms < 0)
		ms = 0;
	int64_t now = ksr_now_ms();
	if (ms > INT64_MAX - now)
		return KSR_DEADLINE_NEVER;
	return (ksr_deadline){.at_ms = now + ms};
}

ksr_deadline ksr_deadline_min(ksr_deadline a, ksr_deadline b)
{
	return a.at_ms < b.at_ms ? a : b;
}

int64_t ksr_deadline_remaining_ms(ksr_deadline d)
{
	if (d.at_ms == INT64_MAX)
		return INT64_MAX;
	int64_t left = d.at_ms - ksr_now_ms();
	return left > 0 ? left : 0;
}

bool ksr_deadline_passed(ksr_deadline d)
{
	return ksr_deadline_remaining_ms(d) == 0;
}

static void on_cancel_signal(int sig)
{
	int saved = errno;
	if (!cancel_signal || (sig > 0 && cancel_signal < 0))
		cancel_signal = sig; /* a real signal outranks a request from code */
	if (cancel_pipe[1] >= 0) {
		char byte = 1;
		ssize_t r = write(cancel_pipe[1], &byte, 1);
		(void)r;
	}
	errno = saved;
}

int ksr_cancel_install(void)
{
	if (cancel_pipe[0] < 0 && pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_cancel_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return -1;
	/* A closed pipe to a child (a dead shell step, a broken socket) must be an
	 * error value, not the end of the runtime. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int ksr_cancel_fd(void)
{
	return cancel_pipe[0];
}

/* ---- watched descriptors ------------------------------------------------ */

typedef struct watch {
	int fd;
	ksr_guard_check check;
	void *ud;
} watch;

static _Thread_local watch watches[KSR_GUARD_MAX];
static _Thread_local int n_watches;
static _Thread_local int fired_fd = -1;

int ksr_guard_add(int fd, ksr_guard_check check, void *ud)
{
	if (n_watches == KSR_GUARD_MAX) {
		errno = ENOSPC;
		return -1;
	}
	watches[n_watches++] = (watch){.fd = fd, .check = check, .ud = ud};
	return 0;
}

void ksr_guard_remove(int fd)
{
	for (int i = 0; i < n_watches; i++)
		if (watches[i].fd == fd) {
			watches[i--] = watches[--n_watches];
		}
	if (fired_fd == fd)
		fired_fd = -1;
}

void ksr_guard_clear(void)
{
	n_watches = 0;
	fired_fd = -1;
}

static bool watch_poll_now(void);

int ksr_guard_fired(void)
{
	watch_poll_now();
	return fired_fd;
}

/* A watched fd polled readable: ask its check what it means. */
static void watch_ready(int fd)
{
	for (int i = 0; i < n_watches; i++) {
		if (watches[i].fd != fd)
			continue;
		watch w = watches[i];
		ksr_guard_verdict v = w.check ? w.check(fd, w.ud) : KSR_GUARD_FIRED;
		if (v == KSR_GUARD_FIRED && fired_fd < 0)
			fired_fd = fd;
		else if (v == KSR_GUARD_DROP)
			ksr_guard_remove(fd);
		return;
	}
}

/* Look at the watched fds without waiting: code that polls no fd of its own
 * (a curl transfer's progress callback) still sees a death at once. */
static bool watch_poll_now(void)
{
	struct pollfd p[KSR_GUARD_MAX];
	int n = n_watches;
	for (int i = 0; i < n; i++)
		p[i] = (struct pollfd){.fd = watches[i].fd, .events = POLLIN};
	if (fired_fd < 0 && n > 0 && poll(p, (nfds_t)n, 0) > 0)
		for (int i = 0; i < n && fired_fd < 0; i++)
			if (p[i].revents)
				watch_ready(p[i].fd);
	return fired_fd >= 0;
}

bool ksr_cancelled(void)
{
	return cancel_signal != 0 || watch_poll_now();
}

int ksr_cancel_signal(void)
{
	return cancel_signal;
}

void ksr_cancel_request(void)
{
	if (cancel_pipe[0] < 0)
		ksr_cancel_install();
	on_cancel_signal(-1);
}

int ksr_cancel_take_signal(void)
{
	int sig = cancel_signal;
	if (cancel_pipe[0] < 0 || sig <= 0)
		return 0;
	cancel_signal = 0;
	char buf[64];
	while (read(cancel_pipe[0], buf, sizeof buf) > 0)
		;
	return sig;
}

void ksr_cancel_reset(void)
{
	if (cancel_signal >= 0 || cancel_pipe[0] < 0)
		return;
	char buf[64];
	while (read(cancel_pipe[0], buf, sizeof buf) > 0)
		;
	if (cancel_signal < 0)
		cancel_signal = 0;
	else /* a signal raced the reset: keep the pipe readable */
		on_cancel_signal(cancel_signal);
}

static int poll_timeout(ksr_deadline d)
{
	int64_t left = ksr_deadline_remaining_ms(d);
	return left > 60000 ? 60000 : (int)left; /* re-check long waits every minute */
}

ksr_wait ksr_wait_fds(struct pollfd *fds, int nfds, ksr_deadline d)
{
	enum { MAX_FDS = 32 };
	struct pollfd all[MAX_FDS + KSR_GUARD_MAX + 1];
	if (nfds > MAX_FDS) {
		errno = EINVAL;
		return KSR_WAIT_ERROR;
	}
	for (;;) {
		if (ksr_cancelled())
			return KSR_WAIT_CANCELLED;
		int n = 0;
		for (int i = 0; i < nfds; i++) {
			fds[i].revents = 0;
			all[n++] = fds[i];
		}
		int nw = n_watches;
		for (int i = 0; i < nw; i++)
			all[n + i] = (struct pollfd){.fd = watches[i].fd, .events = POLLIN};
		all[n + nw] = (struct pollfd){.fd = cancel_pipe[0], .events = POLLIN};
		int r = poll(all, (nfds_t)(n + nw + 1), poll_timeout(d));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return KSR_WAIT_ERROR;
		for (int i = 0; i < nw && r > 0; i++)
			if (all[n + i].revents) {
				watch_ready(all[n + i].fd);
				r--; /* a quiet watch is no answer to the caller's own fds */
			}
		if (ksr_cancelled() || (all[n + nw].revents & POLLIN))
			return KSR_WAIT_CANCELLED;
		if (r > 0) {
			for (int i = 0; i < nfds; i++)
				fds[i].revents = all[i].revents;
			return KSR_WAIT_READY;
		}
		if (ksr_deadline_passed(d))
			return KSR_WAIT_TIMEOUT;
	}
}

ksr_wait ksr_wait_fds_uncancellable(struct pollfd *fds, int nfds, ksr_deadline d)
{
	for (;;) {
		int r = poll(fds, (nfds_t)(nfds > 0 ? nfds : 0), poll_timeout(d));
		if (r < 0 && errno == EINTR)
			continue; /* the very signal that cancelled the run: keep waiting */
		if (r < 0)
			return KSR_WAIT_ERROR;
		if (r > 0)
			return KSR_WAIT_READY;
		if (ksr_deadline_passed(d))
			return KSR_WAIT_TIMEOUT;
	}
}

ksr_wait ksr_sleep_until(ksr_deadline d)
{
	return ksr_wait_fds(NULL, 0, d);
}

ksr_wait ksr_sleep_ms(int64_t ms)
{
	return ksr_sleep_until(ksr_deadline_in_ms(ms));
}

const char *ksr_wait_name(ksr_wait w)
{
	switch (w) {
	case KSR_WAIT_READY:
		return "ready";
	case KSR_WAIT_TIMEOUT:
		return "timeout";
	case KSR_WAIT_CANCELLED:
		return "cancelled";
	case KSR_WAIT_ERROR:
		return "error";
	}
	return "?";
}
