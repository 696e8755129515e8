/* Text from outside (window titles, process names) is not always valid UTF-8:
 * a Latin-1 title, a client writing raw bytes into _NET_WM_NAME. PCRE2 in UTF
 * mode refuses such a subject, and JSON must carry valid UTF-8, so where such
 * text enters the runtime its invalid bytes are repaired losslessly: each
 * becomes the four characters `\xNN` (its hex value), so "Error\xff" still
 * reads "Error" and the byte it had is still said. */
#ifndef KSR_UTF8_H
#define KSR_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s (NUL-terminated) is well-formed UTF-8: no stray continuation
 * bytes, no cut sequences, no overlong forms, no surrogates, nothing past
 * U+10FFFF (what PCRE2 and JSON parsers accept). NULL: true. */
bool ksr_utf8_valid(const char *s);

/* A newly allocated copy of s with every byte that is not part of a
 * well-formed sequence written as `\xNN` (lowercase hex); a valid s is
 * copied unchanged. NULL: NULL. */
char *ksr_utf8_repair(const char *s);

/* The length of the well-formed sequence at s (1 to 4), or 0 when the byte
 * at s does not start one; s[0] must not be NUL. */
size_t ksr_utf8_seq_len(const unsigned char *s);

/* Text from outside on a terminal (stderr) or in one line of a log: a new
 * copy of s on one line that no terminal acts on. Invalid bytes are repaired
 * as above (`\xNN`); newline, return and tab become `\n`, `\r`, `\t`, the
 * other C0 controls (ESC too) and DEL `\xNN`, the C1 controls U+0080..U+009F
 * `\u00NN`. Everything else, backslashes included, is copied as it is.
 * NULL: NULL. */
char *ksr_utf8_escape_controls(const char *s);

/* Whether ksr_utf8_escape_controls would change s (a control or an invalid
 * byte in it). NULL: false. */
bool ksr_utf8_has_controls(const char *s);

#endif
