/* libFuzzer target for what `mcp --http` reads from a request without a
 * socket (src/mcp/http_check.c): the --http listen address, the Host and
 * Origin loopback tests (DNS rebinding, cross-site pages), the bearer token
 * and Accept. The request line and header framing are libwebsockets' own
 * (under src/backend/http/server.c).
 * The input is six newline-separated fields: listen, Host, Origin,
 * Authorization, token, Accept. Besides "no crash", the properties a
 * security check must keep are asserted. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
