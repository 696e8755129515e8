/* One line on stderr for a person (cli.h): whatever the message carries (a
 * scenario key, a path, an error from a window or a page) is redacted and
 * its control characters are written out, so it stays one line that no
 * terminal acts on. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
