/* The backend HTTP server over a loopback socket: a head answered at once, a
 * body handed over whole, a body over the cap, an answer given later as a
 * stream after a wake from another thread, a client that leaves mid-wait; the
 * serve loop ends at its deadline and not on a ksr_cancel_request. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ksr/http_server.h"
#include "ksr/strbuf.h"
#include "tap.h"

typedef struct fixture {
	ksr_http_server *srv;
	ksr_http_conn *waiting;
	int wakes;
	atomic_int closes;   /* read by the test thread */
	atomic_int deferred; /* requests on_request kept for later */
	char seen_host[64];
	bool too_large;
} fixture;

static ksr_http_head_action on_head(void *ud, ksr_http_conn *c, const ksr_http_request *r)
{
	fixture *f = ud;
	const char *host = ksr_http_request_header(r, "HOST");
	snprintf(f->seen_host, sizeof f->seen_host, "%s", host ? host : "");
	if (!strcmp(r->method, "GET")) {
		ksr_http_header h[] = {{"x-path", r->path}};
		ksr_http_respond(c, 200, "text/plain", h, 1, "hi", 2);
		return KSR_HTTP_ANSWERED;
	}
	return strcmp(r->path, "/skip") ? KSR_HTTP_READ_BODY : KSR_HTTP_SKIP_BODY;
}

static void on_request(void *ud, ksr_http_conn *c, const ksr_http_request *r)
{
	fixture *f = ud;
	f->too_large = r->body_too_large;
	if (!strcmp(r->path, "/later")) {
		f->waiting = c;
		ksr_http_conn_set_user(c, f);
		atomic_fetch_add(&f->deferred, 1);
		return;
	}
	ksr_http_respond(c, r->body_too_large ? 413 : 200, NULL, NULL, 0, r->body, r->body_len);
}

static void on_wake(void *ud)
{
	fixture *f = ud;
	f->wakes++;
	if (!f->waiting)
		return;
	ksr_http_conn *c = f->waiting;
	f->waiting = NULL;
	ksr_http_conn_set_user(c, NULL);
	ksr_http_stream_begin(c, 200, "text/event-stream", NULL, 0);
	ksr_http_stream_write(c, "a\n", 2);
	ksr_http_stream_write(c, "b\n", 2);
	ksr_http_stream_end(c);
}

static void on_close(void *ud, ksr_http_conn *c, void *user)
{
	fixture *f = ud;
	(void)c;
	ok(user == f, "on_close hands back the user pointer");
	f->waiting = NULL;
	atomic_fetch_add(&f->closes, 1);
}

typedef struct serve_arg {
	ksr_http_server *srv;
	ksr_deadline d;
	int rc;
} serve_arg;

static void *serve(void *arg)
{
	serve_arg *a = arg;
	a->rc = ksr_http_server_serve(a->srv, a->d, NULL);
	return NULL;
}

static int dial(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {.tv_sec = 10};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send a request, read until the server closes. */
static char *exchange(int port, const char *req)
{
	int fd = dial(port);
	ksr_strbuf b = {0};
	if (fd < 0)
		return ksr_strbuf_take(&b);
	ssize_t w = write(fd, req, strlen(req));
	(void)w;
	char buf[4096];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		ksr_strbuf_addn(&b, buf, (size_t)n);
	close(fd);
	return ksr_strbuf_take(&b);
}

/* Wait until the request is kept for later (n deferrals in all), up to 10 s. */
static bool wait_deferred(fixture *f, int n)
{
	for (int i = 0; i < 1000 && atomic_load(&f->deferred) < n; i++)
		usleep(10 * 1000);
	return atomic_load(&f->deferred) >= n;
}

static void *wake_soon(void *arg)
{
	fixture *f = arg;
	wait_deferred(f, 1);
	ksr_http_server_wake(f->srv);
	return NULL;
}

int main(void)
{
	ksr_cancel_install();
	fixture f = {0};
	const char *headers[] = {"Host", "Mcp-Session-Id", NULL};
	ksr_http_server_opts o = {.host = "127.0.0.1",
	                          .port = 0,
	                          .max_body = 16,
	                          .headers = headers,
	                          .on_head = on_head,
	                          .on_request = on_request,
	                          .on_wake = on_wake,
	                          .on_close = on_close,
	                          .ud = &f};
	ksr_err err = {0};
	f.srv = ksr_http_server_create(&o, &err);
	ok(f.srv != NULL, "create: %s", err.msg);
	if (!f.srv)
		return tap_done();
	int port = ksr_http_server_port(f.srv);
	ok(port > 0, "a port is bound (%d)", port);

	/* (A port in use is not tried here: lws 4.1.6 leaks its SMD registration when
	 * lws_create_context fails, which LeakSanitizer reports.) */
	ksr_http_server_destroy(NULL);

	serve_arg sa = {.srv = f.srv, .d = ksr_deadline_in_ms(5000), .rc = -1};
	int64_t t0 = ksr_now_ms();
	pthread_t st;
	pthread_create(&st, NULL, serve, &sa);

	char *r = exchange(port, "GET /x HTTP/1.1\r\nHost: h.test\r\n\r\n");
	ok(!strncmp(r, "HTTP/1.1 200", 12), "GET answered from on_head");
	ok(strstr(r, "x-path: /x\r\n") && strstr(r, "connection: close\r\n") &&
	           strstr(r, "content-length: 2\r\n"),
	   "extra header, Connection: close, Content-Length");
	ok(strlen(r) >= 2 && !strcmp(r + strlen(r) - 2, "hi"), "body");
	is_str(f.seen_host, "h.test", "a listed header is read (any case)");
	free(r);

	ksr_cancel_request(); /* as an MCP cancellation does: the loop serves on */
	usleep(100 * 1000);
	ksr_cancel_reset();

	r = exchange(port, "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello");
	ok(!strncmp(r, "HTTP/1.1 200", 12) && !strcmp(r + strlen(r) - 5, "hello"),
	   "a POST body is handed over whole (after a ksr_cancel_request)");
	free(r);
	r = exchange(port, "POST /echo HTTP/1.1\r\nHost: h\r\nContent-Length: 20\r\n\r\n"
	                   "01234567890123456789");
	ok(!strncmp(r, "HTTP/1.1 413", 12) && f.too_large, "over max_body: body_too_large");
	free(r);
	r = exchange(port, "POST /skip HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc");
	ok(!strncmp(r, "HTTP/1.1 200", 12) && strstr(r, "content-length: 0\r\n"),
	   "a skipped body is read and dropped");
	free(r);

	pthread_t wt;
	pthread_create(&wt, NULL, wake_soon, &f);
	r = exchange(port, "POST /later HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx");
	pthread_join(wt, NULL);
	ok(!strncmp(r, "HTTP/1.1 200", 12) && strstr(r, "cache-control: no-cache\r\n") &&
	           !strstr(r, "content-length") && strstr(r, "\r\n\r\na\nb\n"),
	   "a later answer streams after a wake");
	ok(f.wakes >= 1, "on_wake ran");
	free(r);

	int fd = dial(port); /* leaves while its request waits */
	const char *req = "POST /later HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx";
	ssize_t w = write(fd, req, strlen(req));
	(void)w;
	ok(wait_deferred(&f, 2), "the second request waits");
	close(fd);
	for (int i = 0; i < 50 && !atomic_load(&f.closes); i++)
		usleep(20 * 1000);
	is_int(atomic_load(&f.closes), 1, "a client that leaves: on_close once");

	pthread_join(st, NULL);
	is_int(sa.rc, 0, "serve returns 0 at its deadline");
	ok(ksr_now_ms() - t0 >= 4900, "not before it");
	ksr_http_server_destroy(f.srv);
	return tap_done();
}
