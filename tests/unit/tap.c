#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run, failed;

static bool report(bool cond, const char *file, int line, const char *desc)
{
	run++;
	printf("%sok %d - %s\n", cond ? "" : "not ", run, desc);
	if (!cond) {
		failed++;
		printf("#   at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
{
	char desc[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(desc, sizeof desc, fmt, ap);
	va_end(ap);
	return report(cond, file, line, desc);
}

bool tap_is_str(const char *got, const char *want, const char *file, int line, const char *what)
{
	bool same = (got && want && strcmp(got, want) == 0) || (!got && !want);
	if (!report(same, file, line, what))
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : "(null)",
		       want ? want : "(null)");
	return same;
}

bool tap_is_int(long long got, long long want, const char *file, int line, const char *what)
{
	if (!report(got == want, file, line, what))
		printf("#   got:  %lld\n#   want: %lld\n", got, want);
	return got == want;
}

static void vskip(const char *file, int line, bool strict, const char *fmt, va_list ap)
{
	char why[1024];
	vsnprintf(why, sizeof why, fmt, ap);
	const char *s = getenv("KSR_STRICT_SKIPS");
	if (strict && s && strcmp(s, "1") == 0) {
		tap_ok(false, file, line,
		       "not skipped where setup provides it (KSR_STRICT_SKIPS): %s", why);
		return;
	}
	run++;
	printf("ok %d # SKIP %s\n", run, why);
	fflush(stdout);
	const char *log = getenv("KSR_SKIP_LOG");
	FILE *f = log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "%s:%d: %s\n", file, line, why);
		fclose(f);
	}
}

void tap_skip(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vskip(file, line, false, fmt, ap);
	va_end(ap);
}

void tap_skip_unless_installable(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vskip(file, line, true, fmt, ap);
	va_end(ap);
}

int tap_done(void)
{
	printf("1..%d\n", run);
	if (failed)
		printf("# %d of %d failed\n", failed, run);
	return failed ? 1 : 0;
}
