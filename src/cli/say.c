/* One line on stderr for a person (cli.h): whatever the message carries (a
 * scenario key, a path, an error from a window or a page) is redacted and
 * its control characters are written out, so it stays one line that no
 * terminal acts on. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ksr/error.h"
#include "ksr/redact.h"
#include "ksr/utf8.h"

void cli_say(const char *prefix, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg) {
		fputs("kasm-session-runtime: out of memory\n", stderr);
		return;
	}
	char *r = ksr_redact(msg);
	char *e = ksr_utf8_escape_controls(r ? r : msg);
	fprintf(stderr, "%s%s\n", prefix ? prefix : "", e);
	free(e);
	free(r);
	free(msg);
}

static int stdout_failed(const char *prefix, const char *what, int e)
{
	cli_say(prefix, "could not write %s to stdout: %s", what, strerror(e ? e : EIO));
	clearerr(stdout);
	return -1;
}

int cli_stdout_check(const char *prefix, const char *what)
{
	int earlier = errno; /* the failed write's, when it was the last call */
	if (fflush(stdout) != 0)
		return stdout_failed(prefix, what, errno);
	return ferror(stdout) ? stdout_failed(prefix, what, earlier) : 0;
}

int cli_stdout_put(const char *prefix, const char *what, const char *text)
{
	if (fputs(text ? text : "null", stdout) < 0 || putchar('\n') < 0 || fflush(stdout) != 0)
		return stdout_failed(prefix, what, errno);
	return 0;
}
