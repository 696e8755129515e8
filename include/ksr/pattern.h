/* PCRE2 patterns, compiled once at load time. Searched anywhere in the subject
 * unless anchored; UTF-8 and Unicode properties on. */
#ifndef KSR_PATTERN_H
#define KSR_PATTERN_H

#include <stdbool.h>

#include "ksr/error.h"

typedef struct ksr_pattern ksr_pattern;

/* NULL on a bad pattern, with err naming the offset and PCRE2's reason. */
ksr_pattern *ksr_pattern_compile(const char *source, ksr_err *err);
bool ksr_pattern_match(const ksr_pattern *p, const char *subject); /* NULL subject: false */
const char *ksr_pattern_source(const ksr_pattern *p);
void ksr_pattern_free(ksr_pattern *p); /* NULL-safe */

/* Accessibility names: exact text, or a pattern when written `/like this/`. */
typedef struct ksr_name_match {
	char *text;      /* exact name, or the pattern's source */
	ksr_pattern *re; /* NULL: exact comparison */
} ksr_name_match;

int ksr_name_match_parse(ksr_name_match *m, const char *written, ksr_err *err);
bool ksr_name_match_test(const ksr_name_match *m, const char *name);
void ksr_name_match_clear(ksr_name_match *m);

#endif
