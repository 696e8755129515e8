/* The one deadline/cancel primitive. Every wait in the runtime (X events, child
 * processes, HTTP, WebSockets, D-Bus) takes a ksr_deadline and polls the cancel
 * file descriptor beside its own, so SIGTERM/SIGINT end any wait at once. */
#ifndef KSR_DEADLINE_H
#define KSR_DEADLINE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

/* An absolute point on CLOCK_MONOTONIC, in milliseconds. */
typedef struct ksr_deadline {
	int64_t at_ms;
} ksr_deadline;

#define KSR_DEADLINE_NEVER ((ksr_deadline){.at_ms = INT64_MAX})

typedef enum ksr_wait {
	KSR_WAIT_READY = 0, /* one of the caller's descriptors is ready */
	KSR_WAIT_TIMEOUT,   /* the deadline passed first */
	KSR_WAIT_CANCELLED, /* SIGTERM/SIGINT (or ksr_cancel_request) came first */
	KSR_WAIT_ERROR,     /* poll failed; errno says why */
} ksr_wait;

int64_t ksr_now_ms(void);
ksr_deadline ksr_deadline_in_ms(int64_t ms);
ksr_deadline ksr_deadline_min(ksr_deadline a, ksr_deadline b);
int64_t ksr_deadline_remaining_ms(ksr_deadline d); /* 0 when passed */
bool ksr_deadline_passed(ksr_deadline d);

/* Install SIGTERM/SIGINT handlers that write to a self-pipe. The pipe is never
 * drained, so once cancelled every later wait returns KSR_WAIT_CANCELLED at once.
 * Returns 0, or -1 with errno. Safe to call more than once. */
int ksr_cancel_install(void);
int ksr_cancel_fd(void); /* readable once cancelled; -1 before install */
/* Cancelled by a signal or request, or a watched descriptor fired (below). */
bool ksr_cancelled(void);
int ksr_cancel_signal(void);   /* the signal that cancelled, -1 a request, or 0 */
void ksr_cancel_request(void); /* cancel from code (tests, MCP cancellation) */
/* Undo a ksr_cancel_request once the cancelled work has ended (the MCP server
 * keeps serving after a cancelled tool call). A real SIGTERM/SIGINT stays. */
void ksr_cancel_reset(void);
/* For a front end to which SIGTERM/SIGINT means "finish now" rather than
 * "abandon" (record writes the scenario so far): the signal that cancelled
 * (0: none) is taken and the cancellation cleared, so the finishing work's
 * waits run; a later signal cancels again. */
int ksr_cancel_take_signal(void);

/* Poll fds (may be NULL/0) together with the cancel fd until one is ready, the
 * deadline passes or the run is cancelled. Retries on EINTR. */
ksr_wait ksr_wait_fds(struct pollfd *fds, int nfds, ksr_deadline d);

/* ksr_wait_fds without the cancel fd: READY, TIMEOUT or ERROR, never CANCELLED.
 * Only for cleanup waits that must still run to their deadline after
 * SIGTERM/SIGINT (a stopped process group going, Xvfb exiting after its
 * SIGTERM): a cancelled run must not leave them behind. With no fds (no pidfd:
 * an old kernel, valgrind, a seccomp filter) it is a bounded sleep, so callers
 * keep the deadline short and re-check what they wait for. Retries on EINTR. */
ksr_wait ksr_wait_fds_uncancellable(struct pollfd *fds, int nfds, ksr_deadline d);

/* Sleep until the deadline, cancellable. Returns TIMEOUT or CANCELLED. */
ksr_wait ksr_sleep_until(ksr_deadline d);
ksr_wait ksr_sleep_ms(int64_t ms);

const char *ksr_wait_name(ksr_wait w);

/* Guards: watched descriptors, what must end every wait at once besides a signal (the
 * app's pidfd after app wait, a spawned tool's). Each ksr_wait_fds of the
 * thread that added them polls them beside the cancel fd; when one turns
 * readable and its check (NULL: readable is enough) says FIRED, that wait and
 * every later one return KSR_WAIT_CANCELLED and ksr_cancelled() is true, until
 * ksr_guard_clear or ksr_guard_remove of that fd: the existing cancel path of
 * every wait ends the step, and ksr_guard_fired() tells the caller it was the
 * watch, not a signal. The registry is per thread: a server's other threads
 * (MCP, the watchdog) never see a run's watches. */
typedef enum ksr_guard_verdict {
	KSR_GUARD_QUIET = 0, /* nothing that matters (drained): keep watching */
	KSR_GUARD_FIRED,     /* end the waits */
	KSR_GUARD_DROP,      /* it ended harmlessly (a tool exiting 0): stop watching it */
} ksr_guard_verdict;
typedef ksr_guard_verdict (*ksr_guard_check)(int fd, void *ud);

#define KSR_GUARD_MAX 8
/* 0, or -1 when the registry is full (errno ENOSPC). The fd stays the caller's. */
int ksr_guard_add(int fd, ksr_guard_check check, void *ud);
void ksr_guard_remove(int fd);
void ksr_guard_clear(void);
int ksr_guard_fired(void); /* the fd that fired, or -1 */

#endif
