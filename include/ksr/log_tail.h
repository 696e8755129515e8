/* The end of a log file as text (core): diagnosis's tails and signatures,
 * the last lines of an app that exited before its window. */
#ifndef KSR_LOG_TAIL_H
#define KSR_LOG_TAIL_H

#include <stdbool.h>
#include <stddef.h>

/* The last max bytes of a regular file (a FIFO or device must not block the
 * caller): NUL-terminated, *len bytes, *whole when it is the whole file; NULL
 * with *errnum set when it cannot be read. The caller frees it. */
char *ksr_log_read_tail(const char *path, size_t max, size_t *len, bool *whole, int *errnum);
/* Text fit for JSON and a person: from a line start (unless whole), control
 * characters but newline and tab and invalid UTF-8 shown as '?'. In place. */
char *ksr_log_clean_text(char *buf, size_t len, bool whole);
/* The last lines of a log for a reason: whole lines from the last max bytes,
 * blank ones dropped, joined by " | ", cleaned as above. The caller frees it;
 * NULL when the file cannot be read or holds no text. Still data: quote it
 * (ksr_strbuf_add_quoted). */
char *ksr_log_last_lines(const char *path, size_t max);

#endif
