/* libFuzzer target for what `mcp --http` reads from a request without a
 * socket (src/mcp/http_check.c): the --http listen address, the Host and
 * Origin loopback tests (DNS rebinding, cross-site pages), the bearer token
 * and Accept. The request line and header framing are libwebsockets' own
 * (under src/backend/http/server.c).
 * The input is six newline-separated fields: listen, Host, Origin,
 * Authorization, token, Accept. Besides "no crash", the properties a
 * security check must keep are asserted.
 *
 * The same input is then a script for a live `mcp --http` server (one, on a
 * loopback port, for the whole run, with no display): its bytes are
 * operations on up to four client connections: queue a canned request (with
 * the server's session id) or raw bytes, send what is queued (several requests
 * in one send: pipelining), read, half-close, close (or reset). After the
 * script the server must answer a ping on a new connection within 10 s: no
 * request order, pipelining, interleaving or disconnect may crash it (ASan)
 * or cut it off. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ksr/mcp.h"
#include "ksr/mcp_http.h"

#define N_FIELDS 6

static void check_addr(const char *listen)
{
	ksr_mcp_http_addr a;
	ksr_err err = {0};
	if (ksr_mcp_http_parse_addr(listen, &a, &err) < 0) {
		if (!err.msg[0])
			abort(); /* a refusal names its cause */
		return;
	}
	if (a.port < 0 || a.port > 65535 || !memchr(a.host, '\0', sizeof a.host))
		abort();
	/* A bind said to be loopback must pass the Host test with its own name:
	 * else the token rule (required off loopback) and the Host check disagree. */
	char host[300];
	snprintf(host, sizeof host, a.ipv6 ? "[%s]:%d" : "%s:%d", a.host, a.port);
	if (a.loopback && !ksr_mcp_http_host_is_loopback(host))
		abort();
}

static void check_origin(const char *origin)
{
	if (ksr_mcp_http_origin_is_loopback(origin) && strncasecmp(origin, "http://", 7) != 0 &&
	    strncasecmp(origin, "https://", 8) != 0)
		abort();
}

static void check_bearer(const char *auth, const char *token)
{
	bool ok = ksr_mcp_http_bearer_ok(auth, token);
	if (ok && !*token)
		abort(); /* an empty token lets nobody in */
	size_t n = strlen(token);
	if (!n || token[0] == ' ' || token[n - 1] == ' ')
		return;
	char *right = malloc(n + 8);
	memcpy(right, "Bearer ", 7);
	memcpy(right + 7, token, n + 1);
	if (!ksr_mcp_http_bearer_ok(right, token))
		abort(); /* the right token is let in */
	free(right);
}

static void check_accept(const char *accept)
{
	(void)ksr_mcp_http_accepts(accept, "application/json");
	(void)ksr_mcp_http_accepts(accept, "text/event-stream");
	if (!ksr_mcp_http_accepts("*/*", accept))
		abort();
}

/* ---- the live server ---------------------------------------------------------- */

#define N_CONNS   4
#define MAX_OPS   64
#define ANSWER_MS 10000

static int port;
static char sid[64];
static pthread_mutex_t port_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t port_cond = PTHREAD_COND_INITIALIZER;

static void on_listen(void *ud, const char *host, int p)
{
	(void)ud;
	(void)host;
	pthread_mutex_lock(&port_lock);
	port = p;
	pthread_cond_broadcast(&port_cond);
	pthread_mutex_unlock(&port_lock);
}

static void *serve(void *arg)
{
	ksr_mcp *m = arg;
	ksr_mcp_http_opts o = {.listen = "127.0.0.1:0", .on_listen = on_listen};
	ksr_err err = {0};
	ksr_mcp_serve_http(m, &o, &err);
	fprintf(stderr, "fuzz_mcp_http: the server stopped: %s\n", err.msg);
	abort();
}

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		/* Interrupted (SIGALRM), the connect goes on: wait for its end. */
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		int e = 0;
		socklen_t len = sizeof e;
		bool ok = errno == EINTR && poll(&p, 1, ANSWER_MS) == 1 &&
		          !getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) && !e;
		if (!ok) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static size_t post(char *out, size_t cap, const char *body, bool with_sid)
{
	int n = snprintf(out, cap,
	                 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
	                 "application/json\r\nAccept: application/json, "
	                 "text/event-stream\r\n%s%s%sContent-Length: %zu\r\n\r\n%s",
	                 with_sid ? "Mcp-Session-Id: " : "", with_sid ? sid : "",
	                 with_sid ? "\r\n" : "", strlen(body), body);
	return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A canned request, k of them. */
static size_t canned(unsigned k, char *out, size_t cap)
{
	static const char *const bodies[] = {
	        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	        "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
	        "\"name\":\"fuzz\",\"version\":\"1\"}}}",
	        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
	        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}",
	        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
	        "\"name\":\"window.list\"}}",
	        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
	        "\"requestId\":4}}",
	};
	k %= 8;
	if (k < 6)
		return post(out, cap, bodies[k], k != 0);
	const char *raw = k == 6 ? "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	                         : "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
	                           "chunked\r\n\r\n5\r\n{\"a\":\r\n0\r\n\r\n";
	size_t n = strlen(raw);
	memcpy(out, raw, n < cap ? n : cap);
	return n < cap ? n : 0;
}

/* Send a request on a new connection and read the answer to its close; the
 * answer (NUL-terminated) in buf, false when none came in ANSWER_MS. */
static bool ask(const char *req, size_t len, char *buf, size_t cap)
{
	int fd = dial();
	buf[0] = '\0';
	if (fd < 0 || send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	size_t got = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) { /* libFuzzer's -timeout is a SIGALRM a second: EINTR is no answer */
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = ANSWER_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
		                         (now.tv_nsec - t0.tv_nsec) / 1000000);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == cap - 1)
			break;
	}
	close(fd);
	buf[got] = '\0';
	return !strncmp(buf, "HTTP/1.1 ", 9);
}

static void new_session(void)
{
	char req[1024], buf[8192];
	size_t n = canned(0, req, sizeof req);
	if (!ask(req, n, buf, sizeof buf))
		abort();
	const char *h = strcasestr(buf, "mcp-session-id: ");
	if (!h)
		abort();
	snprintf(sid, sizeof sid, "%.32s", h + 16);
}

static void start_server(void)
{
	unsetenv("DISPLAY");
	unsetenv("WAYLAND_DISPLAY");
	setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/ksr-fuzz", 1);
	setenv("AT_SPI_BUS_ADDRESS", "unix:path=/nonexistent/ksr-fuzz", 1);
	ksr_err err = {0};
	ksr_mcp_opts o = {0};
	ksr_mcp *m = ksr_mcp_create(&o, &err);
	pthread_t t;
	if (!m || pthread_create(&t, NULL, serve, m) != 0)
		abort();
	pthread_mutex_lock(&port_lock);
	while (!port)
		pthread_cond_wait(&port_cond, &port_lock);
	pthread_mutex_unlock(&port_lock);
	new_session();
}

typedef struct conn {
	int fd;
	char out[16384];
	size_t len;
} conn;

static void conn_close(conn *c, bool reset)
{
	if (c->fd >= 0) {
		struct linger l = {.l_onoff = 1, .l_linger = 0};
		if (reset)
			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
		close(c->fd);
	}
	c->fd = -1;
	c->len = 0;
}

static void conn_flush(conn *c)
{
	if (c->fd < 0)
		c->fd = dial();
	if (c->fd >= 0 && c->len)
		(void)send(c->fd, c->out, c->len, MSG_NOSIGNAL | MSG_DONTWAIT);
	c->len = 0;
}

static void conn_drain(conn *c)
{
	char buf[65536];
	while (c->fd >= 0 && recv(c->fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
		;
}

static void run_script(const uint8_t *d, size_t size)
{
	conn cs[N_CONNS];
	for (int i = 0; i < N_CONNS; i++)
		cs[i] = (conn){.fd = -1};
	size_t i = 0;
	for (int ops = 0; ops < MAX_OPS && i < size; ops++) {
		uint8_t op = d[i++];
		conn *c = &cs[op & 3];
		uint8_t arg = i < size ? d[i] : 0;
		switch ((op >> 2) % 6) {
		case 0: /* a canned request */
			i++;
			c->len += canned(arg, c->out + c->len, sizeof c->out - c->len);
			break;
		case 1: { /* raw bytes */
			i++;
			size_t n = arg % 64;
			if (n > size - i)
				n = size - i;
			if (n > sizeof c->out - c->len)
				n = sizeof c->out - c->len;
			memcpy(c->out + c->len, d + i, n);
			c->len += n;
			i += n;
			break;
		}
		case 2:
			conn_flush(c);
			break;
		case 3:
			i++;
			conn_close(c, arg & 1);
			break;
		case 4:
			conn_drain(c);
			break;
		default:
			if (c->fd >= 0)
				shutdown(c->fd, SHUT_WR);
		}
	}
	for (int k = 0; k < N_CONNS; k++)
		conn_close(&cs[k], false);
}

/* The server still answers, on a new connection. */
static void check_alive(void)
{
	char req[1024], buf[8192];
	size_t n = canned(1, req, sizeof req);
	if (!ask(req, n, buf, sizeof buf)) {
		int e = errno;
		fprintf(stderr,
		        "fuzz_mcp_http: no answer to a ping after the script (%s; got %.200s)\n",
		        strerror(e), buf);
		abort();
	}
	if (strstr(buf, " 404 ")) /* the script ended or evicted the session */
		new_session();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!port)
		start_server();
	run_script(data, size);
	check_alive();

	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	char *field[N_FIELDS], *p = text;
	for (int i = 0; i < N_FIELDS; i++) {
		field[i] = p;
		char *nl = strchr(p, '\n');
		if (nl) {
			*nl = '\0';
			p = nl + 1;
		} else {
			p += strlen(p);
		}
	}
	check_addr(field[0]);
	(void)ksr_mcp_http_host_is_loopback(field[1]);
	check_origin(field[2]);
	check_bearer(field[3], field[4]);
	check_accept(field[5]);
	free(text);
	return 0;
}
