/* The app wait's near misses (a title that missed window: by case,
 * surrounding whitespace, or a few letters) and titles quoted as data in
 * its reasons. */
/* A private header of the library (src/ is not on the tests' include path). */
#include "../../src/run/stages/app_windows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

typedef struct row {
	const char *pattern, *title;
	ksr_near_miss want;
} row;

static const row rows[] = {
        /* RetroArch's window against Kasm's window name */
        {"retroarch", "RetroArch  ", KSR_NEAR_CASE},
        {"^retroarch$", "RetroArch", KSR_NEAR_CASE},
        {"^RetroArch$", "RetroArch  ", KSR_NEAR_SPACE},
        {"^RetroArch$", "\xc2\xa0RetroArch", KSR_NEAR_SPACE},
        {"^retroarch$", "RetroArch  ", KSR_NEAR_CASE_SPACE},
        /* close titles */
        {"^Mousepad$", "Mousepd", KSR_NEAR_CLOSE},
        {"^LibreOffice$", "LibreOffice Writer", KSR_NEAR_CLOSE},
        {"^qBittorrent v4\\.5$", "qBittorrent", KSR_NEAR_CLOSE},
        {"^Telegram Desktop$", "Telegram Deskt0p", KSR_NEAR_CLOSE},
        /* not near */
        {"retroarch", "retroarch", KSR_NEAR_NONE}, /* it matches */
        {"^Firefox$", "Legal notice", KSR_NEAR_NONE},
        {"^Firefox$", "", KSR_NEAR_NONE},
        {"^Fi$", "Fo", KSR_NEAR_NONE},                 /* too short to tell */
        {"^(Writer|Calc)$", "Impress", KSR_NEAR_NONE}, /* no plain text to compare */
        {"^Mousepad$", "Terminal", KSR_NEAR_NONE},
};

static void test_near_misses(void)
{
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		ksr_err err = {0};
		ksr_pattern *p = ksr_pattern_compile(rows[i].pattern, &err);
		ksr_near_miss got = ksr_title_near_miss(p, rows[i].title);
		char what[160];
		snprintf(what, sizeof what, "%s vs \"%s\": %s", rows[i].pattern, rows[i].title,
		         ksr_near_miss_mark(got));
		is_int(got, rows[i].want, what);
		ksr_pattern_free(p);
	}
	is_int(ksr_title_near_miss(NULL, "x"), KSR_NEAR_NONE, "no pattern: nothing to miss");
	is_str(ksr_near_miss_mark(KSR_NEAR_CASE), "case", "mark: case");
	is_str(ksr_near_miss_mark(KSR_NEAR_CASE_SPACE), "case and whitespace", "mark: both");
	is_str(ksr_near_miss_mark(KSR_NEAR_NONE), "", "no mark");
}

static char *quoted(const char *s, size_t max)
{
	ksr_strbuf b = {0};
	ksr_quote_title(&b, s, max);
	return ksr_strbuf_take(&b);
}

static void test_quoting(void)
{
	struct {
		const char *in;
		size_t max;
		const char *want;
	} q[] = {
	        {"RetroArch  ", 60, "\"RetroArch  \""},
	        {"say \"hi\" \\o/", 60, "\"say \\\"hi\\\" \\\\o/\""},
	        {"line\nbreak\x1b[31m", 60, "\"line\\x0abreak\\x1b[31m\""},
	        {"abcdefgh", 4, "\"abcd...\""},
	        {"h\xc3\xa9llo", 2, "\"h...\""}, /* never cut inside a character */
	        {NULL, 10, "\"\""},
	};
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		char *got = quoted(q[i].in, q[i].max);
		char what[32];
		snprintf(what, sizeof what, "quoted %zu", i);
		is_str(got, q[i].want, what);
		free(got);
	}
}

int main(void)
{
	test_near_misses();
	test_quoting();
	return tap_done();
}
