/* PCRE2 patterns and accessibility-name matches (docs/scenario.md). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "ksr/pattern.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/utf8.h"

struct ksr_pattern {
	pcre2_code *code;
	char *source;
};

ksr_pattern *ksr_pattern_compile(const char *source, ksr_err *err)
{
	int code;
	PCRE2_SIZE off;
	if (!source)
		return ksr_err_set(err, "no pattern"), NULL;
	/* UCP so that \w, \b and (?i) follow Unicode: titles are often not ASCII. */
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)source, PCRE2_ZERO_TERMINATED,
	                               PCRE2_UTF | PCRE2_UCP, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[256];
		if (pcre2_get_error_message(code, msg, sizeof msg) < 0)
			strcpy((char *)msg, "unknown error");
		ksr_err_set(err, "%s at offset %zu", (const char *)msg, (size_t)off);
		return NULL;
	}
	ksr_pattern *p = ksr_xcalloc(1, sizeof *p);
	p->code = re;
	p->source = ksr_xstrdup(source);
	return p;
}

static int match_once(const ksr_pattern *p, const char *subject)
{
	/* Match data per call: patterns are shared read-only between threads. */
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->code, NULL);
	if (!md)
		return PCRE2_ERROR_NOMEMORY;
	int rc = pcre2_match(p->code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	return rc;
}

bool ksr_pattern_match(const ksr_pattern *p, const char *subject)
{
	if (!p || !subject)
		return false;
	int rc = match_once(p, subject);
	if (rc <= PCRE2_ERROR_UTF8_ERR1 && rc >= PCRE2_ERROR_UTF8_ERR21) {
		/* Not valid UTF-8 (a Latin-1 title, raw bytes in a process name):
		 * PCRE2 refuses it in UTF mode, so it is matched as repaired, each
		 * bad byte as `\xNN`: "Error\xff" still holds the word "Error". */
		char *clean = ksr_utf8_repair(subject);
		rc = match_once(p, clean);
		free(clean);
	}
	return rc >= 0;
}

const char *ksr_pattern_source(const ksr_pattern *p)
{
	return p ? p->source : NULL;
}

void ksr_pattern_free(ksr_pattern *p)
{
	if (!p)
		return;
	pcre2_code_free(p->code);
	free(p->source);
	free(p);
}

int ksr_name_match_parse(ksr_name_match *m, const char *written, ksr_err *err)
{
	memset(m, 0, sizeof *m);
	if (!written || !*written)
		return ksr_err_set(err, "empty name");
	size_t n = strlen(written);
	if (n >= 3 && written[0] == '/' && written[n - 1] == '/') {
		char *src = ksr_xstrndup(written + 1, n - 2);
		m->re = ksr_pattern_compile(src, err);
		if (!m->re) {
			free(src);
			return -1;
		}
		m->text = src;
		return 0;
	}
	m->text = ksr_xstrdup(written);
	return 0;
}

bool ksr_name_match_test(const ksr_name_match *m, const char *name)
{
	if (!m || !m->text || !name)
		return false;
	if (m->re)
		return ksr_pattern_match(m->re, name);
	return strcmp(m->text, name) == 0;
}

void ksr_name_match_clear(ksr_name_match *m)
{
	if (!m)
		return;
	free(m->text);
	ksr_pattern_free(m->re);
	memset(m, 0, sizeof *m);
}
