/* The stdio transport: a reader loop on in_fd splitting newline-delimited
 * messages, a worker thread handling them in order (tool calls may run for
 * minutes), cancellations applied by the reader at once. All output goes
 * through one mutex so replies and notifications never interleave. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/deadline.h"
#include "mcp/mcp_priv.h"

#define CHUNK 65536

typedef struct item {
	struct item *next;
	char *msg;
	size_t len;
} item;

typedef struct stdio_srv {
	ksr_mcp *m;
	int out_fd;
	pthread_mutex_t out_lock;
	pthread_mutex_t q_lock;
	pthread_cond_t q_cond;
	item *head, *tail;
	bool eof;
} stdio_srv;

static void write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return; /* the client is gone (EPIPE): nothing more to say */
		s += w, n -= (size_t)w;
	}
}

static void emit(void *ud, const char *line)
{
	stdio_srv *s = ud;
	pthread_mutex_lock(&s->out_lock);
	write_all(s->out_fd, line, strlen(line));
	write_all(s->out_fd, "\n", 1);
	pthread_mutex_unlock(&s->out_lock);
}

static void emit_take(stdio_srv *s, char *line)
{
	if (line)
		emit(s, line);
	free(line);
}

static void push(stdio_srv *s, const char *msg, size_t len)
{
	item *it = ksr_xcalloc(1, sizeof *it);
	it->msg = ksr_xstrndup(msg, len);
	it->len = len;
	pthread_mutex_lock(&s->q_lock);
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	pthread_cond_signal(&s->q_cond);
	pthread_mutex_unlock(&s->q_lock);
}

/* The next message, or NULL once the input ended and the queue is empty. */
static item *pop(stdio_srv *s)
{
	pthread_mutex_lock(&s->q_lock);
	while (!s->head && !s->eof)
		pthread_cond_wait(&s->q_cond, &s->q_lock);
	item *it = s->head;
	if (it) {
		s->head = it->next;
		if (!s->head)
			s->tail = NULL;
	}
	pthread_mutex_unlock(&s->q_lock);
	return it;
}

static void *worker(void *arg)
{
	stdio_srv *s = arg;
	item *it;
	while ((it = pop(s))) {
		emit_take(s, ksr_mcp_handle(s->m, it->msg, it->len, emit, s));
		free(it->msg);
		free(it);
	}
	return NULL;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(" \t\r", p[i]))
			return false;
	return true;
}

/* One complete line: a cancellation is applied now (the worker may be busy
 * with the very request it cancels); everything else is queued. */
static void on_line(stdio_srv *s, const char *p, size_t n)
{
	if (blank(p, n))
		return;
	char *cancel = ksr_mcp_cancelled_id(p, n);
	if (cancel) {
		ksr_mcp_cancel(s->m, cancel);
		free(cancel);
		return;
	}
	push(s, p, n);
}

/* Wait for input. The cancel descriptor stays readable while an MCP
 * cancellation is being applied, so only a real signal ends the server. */
static int wait_input(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	for (;;) {
		if (ksr_cancel_signal() > 0)
			return -1;
		ksr_wait w = ksr_cancelled() ? KSR_WAIT_TIMEOUT
		                             : ksr_wait_fds(&pfd, 1, ksr_deadline_in_ms(1000));
		if (w == KSR_WAIT_READY)
			return 0;
		if (w == KSR_WAIT_TIMEOUT && ksr_cancelled() && poll(&pfd, 1, 50) > 0)
			return 0; /* see above: wait on the input alone for now */
		if (w == KSR_WAIT_ERROR)
			return -1;
	}
}

typedef struct line_buf {
	char *buf;
	size_t len, cap;
	bool skipping; /* inside an over-long line: drop until its newline */
} line_buf;

/* Split what was read into lines; over-long ones get one error reply. */
static void feed(stdio_srv *s, line_buf *lb, const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		if (!lb->skipping && lb->len + take > KSR_MCP_MAX_MESSAGE) {
			lb->skipping = true;
			lb->len = 0;
			emit_take(s, ksr_mcp_error_reply(-32600, "message too long (over 16 MiB)"));
		}
		if (!lb->skipping) {
			if (lb->len + take > lb->cap) {
				lb->cap = (lb->len + take) * 2;
				lb->buf = ksr_xrealloc(lb->buf, lb->cap);
			}
			memcpy(lb->buf + lb->len, data, take);
			lb->len += take;
		}
		if (!nl)
			return;
		if (!lb->skipping)
			on_line(s, lb->buf, lb->len);
		lb->len = 0;
		lb->skipping = false;
		data += take + 1, n -= take + 1;
	}
}

static int read_loop(stdio_srv *s, int in_fd, ksr_err *err)
{
	line_buf lb = {0};
	char *chunk = ksr_xmalloc(CHUNK);
	int rc = 0;
	while (wait_input(in_fd) == 0) {
		ssize_t n = read(in_fd, chunk, CHUNK);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			rc = ksr_err_errno(err, "reading standard input");
		if (n <= 0)
			break;
		feed(s, &lb, chunk, (size_t)n);
	}
	if (lb.len && !lb.skipping) /* a last message without its newline */
		on_line(s, lb.buf, lb.len);
	free(lb.buf);
	free(chunk);
	return rc;
}

int ksr_mcp_serve_stdio(ksr_mcp *m, int in_fd, int out_fd, ksr_err *err)
{
	stdio_srv s = {.m = m, .out_fd = out_fd};
	pthread_mutex_init(&s.out_lock, NULL);
	pthread_mutex_init(&s.q_lock, NULL);
	pthread_cond_init(&s.q_cond, NULL);
	pthread_t th;
	int rc = -1;
	if (pthread_create(&th, NULL, worker, &s) != 0) {
		ksr_err_set(err, "cannot start the worker thread");
		goto cleanup;
	}
	rc = read_loop(&s, in_fd, err);
	pthread_mutex_lock(&s.q_lock);
	s.eof = true;
	pthread_cond_signal(&s.q_cond);
	pthread_mutex_unlock(&s.q_lock);
	pthread_join(th, NULL);
cleanup:
	pthread_cond_destroy(&s.q_cond);
	pthread_mutex_destroy(&s.q_lock);
	pthread_mutex_destroy(&s.out_lock);
	return rc;
}
