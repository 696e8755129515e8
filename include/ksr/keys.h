/* Key chords ("ctrl+s alt+F4 Return") and characters as X keysyms. Pure: no
 * display is needed, so the scenario loader can reject a bad chord at load time
 * with the same parser the X11 input backend uses at run time. */
#ifndef KSR_KEYS_H
#define KSR_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "ksr/error.h"

#define KSR_CHORD_MAX 8

/* One chord: the keys in the order written (modifiers first, the key last).
 * They are pressed in this order and released in reverse. */
typedef struct ksr_chord {
	unsigned long keysyms[KSR_CHORD_MAX];
	int n;
} ksr_chord;

/* Parse space-separated chords, '+' between the keys of one chord. Names are
 * xdotool's: ctrl/control, shift, alt, super/win/meta (Super_L), altgr, Return/Enter,
 * Escape/esc, Tab, BackSpace, Delete/del, Home, End, Page_Up/pgup, Page_Down/pgdn,
 * Up/Down/Left/Right, space, F1..F35, any XStringToKeysym name, and single
 * characters ('a', 'A', '/', 'é', '+'). "ctrl++" is Control+plus. On error *out is
 * NULL and err names the bad key and, when one is close, a suggestion. */
int ksr_keys_parse(const char *chords, ksr_chord **out, size_t *n, ksr_err *err);
void ksr_keys_free(ksr_chord *c); /* NULL-safe */

/* One key name (as in a chord) to a keysym; 0 when unknown. */
unsigned long ksr_keys_lookup(const char *name);

/* The keysym that types Unicode code point cp: Latin-1 keysyms for U+0020..U+007E
 * and U+00A0..U+00FF, Return for '\n' and '\r', Tab, BackSpace and Escape for
 * their controls, else the Unicode keysym 0x01000000 + cp. 0 for other control
 * characters, surrogates and values beyond U+10FFFF. */
unsigned long ksr_keys_from_codepoint(uint32_t cp);

/* Decode one UTF-8 character at *s and advance *s. Returns 1, 0 at the end of
 * the string, -1 on a malformed or overlong sequence (*s is not advanced). */
int ksr_keys_utf8_next(const char **s, uint32_t *cp);

#endif
