/* The pure parts of the Streamable HTTP transport: the listen address, the
 * loopback tests behind the Host/Origin checks, the bearer token, Accept, the
 * 2026-07-28 mirrored header values. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ksr/mcp_http.h"

/* 127.0.0.0/8, ::1 and the name localhost (RFC 6761 keeps it loopback). */
static bool name_is_loopback(const char *h, size_t n)
{
	char buf[64];
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, h, n);
	buf[n] = '\0';
	if (!strcasecmp(buf, "localhost"))
		return true;
	struct in_addr a4;
	if (inet_pton(AF_INET, buf, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	struct in6_addr a6;
	return inet_pton(AF_INET6, buf, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

static bool parse_port(const char *s, int *port)
{
	if (!*s || strlen(s) > 5)
		return false;
	for (const char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	*port = atoi(s);
	return *port <= 65535;
}

/* Split "host:port" / "[v6]:port" into its parts; the port may be absent. */
static bool split_host(const char *s, const char **h, size_t *hn, const char **port)
{
	*port = NULL;
	if (*s == '[') {
		const char *close = strchr(s, ']');
		if (!close || (close[1] && close[1] != ':'))
			return false;
		*h = s + 1, *hn = (size_t)(close - s - 1);
		if (close[1] == ':')
			*port = close + 2;
		return true;
	}
	const char *colon = strrchr(s, ':');
	if (colon && strchr(s, ':') != colon)
		return false; /* a bare IPv6 address must be bracketed */
	*h = s, *hn = colon ? (size_t)(colon - s) : strlen(s);
	if (colon)
		*port = colon + 1;
	return true;
}

int ksr_mcp_http_parse_addr(const char *s, ksr_mcp_http_addr *a, ksr_err *err)
{
	memset(a, 0, sizeof *a);
	const char *h, *port;
	size_t hn;
	if (!s || !split_host(s, &h, &hn, &port) || !port || !parse_port(port, &a->port))
		return ksr_err_set(err, "--http wants HOST:PORT (e.g. 127.0.0.1:8765), not '%s'",
		                   s ? s : "");
	if (hn >= sizeof a->host)
		return ksr_err_set(err, "--http: host name too long");
	if (hn == 0) /* ":PORT": loopback, the safe default */
		snprintf(a->host, sizeof a->host, "127.0.0.1");
	else
		memcpy(a->host, h, hn);
	struct in6_addr a6;
	a->ipv6 = inet_pton(AF_INET6, a->host, &a6) == 1;
	a->loopback = name_is_loopback(a->host, strlen(a->host));
	return 0;
}

bool ksr_mcp_http_host_is_loopback(const char *host)
{
	const char *h, *port;
	size_t hn;
	int p;
	if (!host || !split_host(host, &h, &hn, &port))
		return false;
	if (port && !parse_port(port, &p))
		return false;
	return name_is_loopback(h, hn);
}

bool ksr_mcp_http_origin_is_loopback(const char *origin)
{
	if (!origin)
		return false;
	const char *rest;
	if (!strncasecmp(origin, "http://", 7))
		rest = origin + 7;
	else if (!strncasecmp(origin, "https://", 8))
		rest = origin + 8;
	else
		return false; /* "null", file://, garbage */
	size_t n = strlen(rest);
	if (n && rest[n - 1] == '/')
		n--; /* an origin has no path, but tolerate the trailing slash */
	char buf[300];
	if (n >= sizeof buf || memchr(rest, '/', n) || memchr(rest, '@', n))
		return false;
	memcpy(buf, rest, n);
	buf[n] = '\0';
	return ksr_mcp_http_host_is_loopback(buf);
}

bool ksr_mcp_http_bearer_ok(const char *authorization, const char *token)
{
	if (!authorization || !token || !*token || strncasecmp(authorization, "Bearer ", 7))
		return false;
	const char *got = authorization + 7;
	while (*got == ' ')
		got++;
	size_t gn = strlen(got), tn = strlen(token);
	while (gn && got[gn - 1] == ' ')
		gn--;
	/* Compare every byte whatever the first difference, so the time taken does
	 * not tell a guesser how much of the token was right. */
	unsigned diff = gn != tn;
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned)(unsigned char)token[i] ^ (unsigned char)(i < gn ? got[i] : 0);
	return diff == 0;
}

/* One media range of an Accept list, parameters (";q=...") dropped. */
static bool range_admits(const char *r, size_t n, const char *type)
{
	while (n && (*r == ' ' || *r == '\t'))
		r++, n--;
	const char *semi = memchr(r, ';', n);
	if (semi)
		n = (size_t)(semi - r);
	while (n && (r[n - 1] == ' ' || r[n - 1] == '\t'))
		n--;
	if (n == 3 && !strncmp(r, "*/*", 3))
		return true;
	const char *slash = strchr(type, '/');
	size_t major = slash ? (size_t)(slash - type) : strlen(type);
	if (n == major + 2 && !strncasecmp(r, type, major + 1) && r[major + 1] == '*')
		return true;
	return n == strlen(type) && !strncasecmp(r, type, n);
}

bool ksr_mcp_http_accepts(const char *accept, const char *type)
{
	if (!accept || !*accept)
		return true;
	const char *p = accept;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (range_admits(p, n, type))
			return true;
		if (!comma)
			return false;
		p = comma + 1;
	}
}

static int b64_digit(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 with '=' padding; false on anything else. */
static bool b64_decode(const char *s, size_t len, char *out, size_t n)
{
	if (len % 4)
		return false;
	size_t o = 0;
	for (size_t i = 0; i < len; i += 4) {
		int d[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)s[i + k];
			bool last = i + 4 == len;
			d[k] = c == '=' && last && k >= 2 ? (pad++, 0) : b64_digit(c);
			if (d[k] < 0 || (pad && c != '='))
				return false;
		}
		unsigned v = (unsigned)d[0] << 18 | (unsigned)d[1] << 12 | (unsigned)d[2] << 6 |
		             (unsigned)d[3];
		for (int k = 0; k < 3 - pad; k++) {
			if (o + 1 >= n)
				return false;
			out[o++] = (char)(v >> (16 - 8 * k) & 0xff);
		}
	}
	out[o] = '\0';
	return strlen(out) == o; /* a NUL inside is not a name */
}

bool ksr_mcp_http_header_value(const char *v, char *out, size_t n)
{
	size_t len = v ? strlen(v) : 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 && v[i] != '\t')
			return false;
	static const char pre[] = "=?base64?", post[] = "?=";
	size_t np = sizeof pre - 1, nq = sizeof post - 1;
	if (len >= np + nq && !strncmp(v, pre, np) && !strcmp(v + len - nq, post))
		return b64_decode(v + np, len - np - nq, out, n);
	if (len >= n)
		return false;
	memcpy(out, v ? v : "", len);
	out[len] = '\0';
	return true;
}
