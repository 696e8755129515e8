/* The pure parts of the Streamable HTTP transport: listen addresses, the
 * loopback tests behind the Host/Origin checks, the bearer token, Accept. */
#include <string.h>

#include "ksr/mcp_http.h"
#include "tap.h"

static void addresses(void)
{
	ksr_mcp_http_addr a;
	ksr_err err = {0};
	ok(ksr_mcp_http_parse_addr("127.0.0.1:8765", &a, &err) == 0, "v4 loopback parses");
	is_str(a.host, "127.0.0.1", "host");
	is_int(a.port, 8765, "port");
	ok(a.loopback && !a.ipv6, "127.0.0.1 is loopback v4");
	ok(ksr_mcp_http_parse_addr(":0", &a, &err) == 0 && a.loopback && a.port == 0,
	   ":PORT binds loopback");
	is_str(a.host, "127.0.0.1", ":PORT host");
	ok(ksr_mcp_http_parse_addr("[::1]:9", &a, &err) == 0 && a.ipv6 && a.loopback, "[::1]");
	ok(ksr_mcp_http_parse_addr("localhost:1", &a, &err) == 0 && a.loopback, "localhost");
	ok(ksr_mcp_http_parse_addr("0.0.0.0:80", &a, &err) == 0 && !a.loopback, "0.0.0.0 is not");
	ok(ksr_mcp_http_parse_addr("10.1.2.3:80", &a, &err) == 0 && !a.loopback, "10.x is not");
	const char *bad[] = {"",       "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
	                     "::1:80", "[::1:80",   "host:8o",    NULL};
	for (int i = 0; bad[i]; i++)
		ok(ksr_mcp_http_parse_addr(bad[i], &a, &err) < 0 && strstr(err.msg, "HOST:PORT"),
		   "'%s' is refused with a message", bad[i]);
	ok(ksr_mcp_http_parse_addr(NULL, &a, &err) < 0, "NULL is refused");
}

static void hosts_and_origins(void)
{
	const char *yes[] = {"localhost", "LOCALHOST:80", "127.0.0.1", "127.9.9.9:1",
	                     "[::1]",     "[::1]:8080",   NULL};
	for (int i = 0; yes[i]; i++)
		ok(ksr_mcp_http_host_is_loopback(yes[i]), "Host %s is loopback", yes[i]);
	const char *no[] = {"evil.example.com",
	                    "localhost.evil.com",
	                    "128.0.0.1",
	                    "[::2]",
	                    "127.0.0.1:x",
	                    "",
	                    "::1",
	                    NULL};
	for (int i = 0; no[i]; i++)
		ok(!ksr_mcp_http_host_is_loopback(no[i]), "Host '%s' is not", no[i]);
	ok(!ksr_mcp_http_host_is_loopback(NULL), "NULL Host is not");
	const char *oyes[] = {"http://localhost", "http://127.0.0.1:3000", "https://[::1]:1",
	                      "http://localhost/", NULL};
	for (int i = 0; oyes[i]; i++)
		ok(ksr_mcp_http_origin_is_loopback(oyes[i]), "Origin %s is loopback", oyes[i]);
	const char *ono[] = {"null",
	                     "http://evil.example.com",
	                     "file://",
	                     "localhost",
	                     "http://localhost@evil.com",
	                     "http://localhost.evil.com",
	                     "http://127.0.0.1/path",
	                     "ws://localhost",
	                     NULL};
	for (int i = 0; ono[i]; i++)
		ok(!ksr_mcp_http_origin_is_loopback(ono[i]), "Origin '%s' is not", ono[i]);
}

static void tokens_and_accept(void)
{
	ok(ksr_mcp_http_bearer_ok("Bearer s3cret", "s3cret"), "right token");
	ok(ksr_mcp_http_bearer_ok("bearer  s3cret ", "s3cret"), "scheme case, spaces");
	const char *no[] = {
	        "Bearer s3cre", "Bearer s3cret2", "Bearer ", "Basic s3cret", "s3cret", "", NULL};
	for (int i = 0; no[i]; i++)
		ok(!ksr_mcp_http_bearer_ok(no[i], "s3cret"), "'%s' is refused", no[i]);
	ok(!ksr_mcp_http_bearer_ok(NULL, "s3cret"), "no header is refused");
	ok(!ksr_mcp_http_bearer_ok("Bearer ", ""), "an empty token never matches");
	ok(ksr_mcp_http_accepts("application/json, text/event-stream", "text/event-stream"),
	   "both listed");
	ok(ksr_mcp_http_accepts("text/*;q=0.5", "text/event-stream"), "text/*");
	ok(ksr_mcp_http_accepts("*/*", "application/json"), "*/*");
	ok(ksr_mcp_http_accepts(NULL, "application/json"), "no Accept admits all");
	ok(!ksr_mcp_http_accepts("application/json", "text/event-stream"), "json only: no SSE");
	ok(!ksr_mcp_http_accepts("text/html", "application/json"), "html only: no json");
	ok(!ksr_mcp_http_accepts("application/jsonx", "application/json"), "no prefix match");
}

int main(void)
{
	addresses();
	hosts_and_origins();
	tokens_and_accept();
	return tap_done();
}
