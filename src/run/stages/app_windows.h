/* What the app wait says about windows that are not the app's (pure
 * functions, tests/unit/test_app_windows.c): how close a title came to the
 * scenario's window: pattern, and titles quoted as data for a reason. */
#ifndef KSR_RUN_STAGES_APP_WINDOWS_H
#define KSR_RUN_STAGES_APP_WINDOWS_H

#include <stddef.h>

#include "ksr/pattern.h"
#include "ksr/strbuf.h"

typedef enum ksr_near_miss {
	KSR_NEAR_NONE,
	KSR_NEAR_CASE,       /* matches once case is ignored */
	KSR_NEAR_SPACE,      /* matches once surrounding whitespace is trimmed */
	KSR_NEAR_CASE_SPACE, /* both at once */
	KSR_NEAR_CLOSE,      /* the pattern's text is a few edits away, or one starts the other */
} ksr_near_miss;

/* How title missed want (KSR_NEAR_NONE also when it matches, or is empty). */
ksr_near_miss ksr_title_near_miss(const ksr_pattern *want, const char *title);
/* The mark a reason puts on a near miss: "case", "whitespace", "case and
 * whitespace", "close title"; "" for KSR_NEAR_NONE. */
const char *ksr_near_miss_mark(ksr_near_miss k);

/* s as data in a reason: in double quotes, '"' and '\' escaped with '\',
 * control characters as \xNN, cut after max bytes (at a character boundary)
 * with "..." inside the quotes. NULL reads as "". */
void ksr_quote_title(ksr_strbuf *b, const char *s, size_t max);

#endif
