/* Key chord parsing: xdotool-compatible names to X keysyms. XStringToKeysym
 * reads Xlib's static keysym table and needs no display connection. */
#include "ksr/keys.h"

#include "ksr/error.h"

#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names people write that XStringToKeysym does not know, or knows only with
 * X's capitalisation. Matched case-insensitively; also the did-you-mean list. */
static const struct {
	const char *name;
	unsigned long sym;
} aliases[] = {
        {"ctrl", XK_Control_L},
        {"control", XK_Control_L},
        {"shift", XK_Shift_L},
        {"alt", XK_Alt_L},
        {"super", XK_Super_L},
        {"win", XK_Super_L},
        {"meta", XK_Super_L},
        {"altgr", XK_ISO_Level3_Shift},
        {"return", XK_Return},
        {"enter", XK_Return},
        {"escape", XK_Escape},
        {"esc", XK_Escape},
        {"tab", XK_Tab},
        {"backspace", XK_BackSpace},
        {"delete", XK_Delete},
        {"del", XK_Delete},
        {"insert", XK_Insert},
        {"ins", XK_Insert},
        {"home", XK_Home},
        {"end", XK_End},
        {"page_up", XK_Page_Up},
        {"pageup", XK_Page_Up},
        {"pgup", XK_Page_Up},
        {"prior", XK_Prior},
        {"page_down", XK_Page_Down},
        {"pagedown", XK_Page_Down},
        {"pgdn", XK_Page_Down},
        {"pgdown", XK_Page_Down},
        {"next", XK_Next},
        {"up", XK_Up},
        {"down", XK_Down},
        {"left", XK_Left},
        {"right", XK_Right},
        {"space", XK_space},
        {"menu", XK_Menu},
        {"print", XK_Print},
        {"capslock", XK_Caps_Lock},
        {"caps_lock", XK_Caps_Lock},
        {"numlock", XK_Num_Lock},
        {"pause", XK_Pause},
        {"plus", XK_plus},
        {"minus", XK_minus},
};

#define N_ALIASES (sizeof aliases / sizeof aliases[0])

int ksr_keys_utf8_next(const char **s, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)*s;
	if (!*p)
		return 0;
	int len = p[0] < 0x80             ? 1
	          : (p[0] & 0xe0) == 0xc0 ? 2
	          : (p[0] & 0xf0) == 0xe0 ? 3
	          : (p[0] & 0xf8) == 0xf0 ? 4
	                                  : 0;
	if (!len)
		return -1;
	uint32_t c = len == 1 ? p[0] : p[0] & (0x7f >> len);
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (p[i] & 0x3f);
	}
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*cp = c;
	*s += len;
	return 1;
}

unsigned long ksr_keys_from_codepoint(uint32_t cp)
{
	switch (cp) {
	case '\n':
	case '\r':
		return XK_Return;
	case '\t':
		return XK_Tab;
	case '\b':
		return XK_BackSpace;
	case 0x1b:
		return XK_Escape;
	default:
		break;
	}
	if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff))
		return cp;
	if (cp < 0xa0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return 0x01000000UL + cp;
}

/* "f4" -> F4 (X spells function keys with a capital F). */
static unsigned long function_key(const char *name)
{
	if ((name[0] != 'f' && name[0] != 'F') || !name[1])
		return 0;
	char *end = NULL;
	long n = strtol(name + 1, &end, 10);
	if (*end || n < 1 || n > 35 || name[1] == '0')
		return 0;
	return XK_F1 + (unsigned long)(n - 1);
}

/* A single character: its own keysym, whatever XStringToKeysym thinks of it
 * (it maps "1" and "a" but not "/" or "é"). */
static unsigned long single_char(const char *name)
{
	const char *p = name;
	uint32_t cp = 0;
	if (ksr_keys_utf8_next(&p, &cp) != 1 || *p)
		return 0;
	return ksr_keys_from_codepoint(cp);
}

/* X names with the first letter changed in case ("backspace" is an alias, but
 * "Kp_enter" or "eacute"/"Eacute" should resolve as the author meant). */
static unsigned long keysym_name(const char *name)
{
	KeySym ks = XStringToKeysym(name);
	if (ks != NoSymbol)
		return ks;
	char *tmp = strdup(name);
	if (!tmp)
		return 0;
	for (char *p = tmp; *p; p++)
		if (*p >= 'a' && *p <= 'z' && (p == tmp || p[-1] == '_'))
			*p = (char)(*p - 'a' + 'A');
	ks = XStringToKeysym(tmp);
	free(tmp);
	return ks;
}

unsigned long ksr_keys_lookup(const char *name)
{
	if (!name || !*name)
		return 0;
	unsigned long ks = single_char(name);
	if (ks)
		return ks;
	for (size_t i = 0; i < N_ALIASES; i++)
		if (strcasecmp(name, aliases[i].name) == 0)
			return aliases[i].sym;
	ks = function_key(name);
	if (ks)
		return ks;
	return keysym_name(name);
}

static const char *suggest(const char *bad)
{
	static const char *const extra[] = {"Return",   "BackSpace", "Escape", "Delete",
	                                    "Page_Up",  "Page_Down", "space",  "Tab",
	                                    "KP_Enter", "Super_L",   "Alt_L",  "Control_L",
	                                    "Shift_L",  "Insert",    "Home",   "End"};
	/* X's own spelling first: "Retrun" should suggest "Return", not "return". */
	const char *best = NULL;
	size_t best_d = 3;
	for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
		size_t d = ksr_edit_distance(extra[i], bad, true);
		if (d < best_d) {
			best_d = d;
			best = extra[i];
		}
	}
	for (size_t i = 0; i < N_ALIASES; i++) {
		size_t d = ksr_edit_distance(aliases[i].name, bad, true);
		if (d < best_d) {
			best_d = d;
			best = aliases[i].name;
		}
	}
	/* One or two edits on a very short name is a different key, not a typo. */
	if (best && best_d * 2 > strlen(bad))
		return NULL;
	return best;
}

static int bad_key(const char *name, size_t len, const char *chord, size_t clen, ksr_err *err)
{
	char *n = strndup(name, len);
	const char *hint = n ? suggest(n) : NULL;
	if (len == 0)
		ksr_err_set(err, "empty key name in '%.*s'", (int)clen, chord);
	else if (hint)
		ksr_err_set(err, "unknown key '%s' in '%.*s' (did you mean '%s'?)", n, (int)clen,
		            chord, hint);
	else
		ksr_err_set(err, "unknown key '%s' in '%.*s'", n, (int)clen, chord);
	free(n);
	return -1;
}

/* One chord, chord[0..clen). A '+' right after a separator (or at the start) is
 * the plus key itself, so "ctrl++" and "+" work. */
static int parse_chord(const char *chord, size_t clen, ksr_chord *out, ksr_err *err)
{
	size_t i = 0;
	out->n = 0;
	while (i <= clen) {
		size_t start = i;
		if (i < clen && chord[i] == '+')
			i++; /* the plus key */
		while (i < clen && chord[i] != '+')
			i++;
		size_t len = i - start;
		char name[64];
		if (len == 0 || len >= sizeof name)
			return bad_key(chord + start, len, chord, clen, err);
		memcpy(name, chord + start, len);
		name[len] = '\0';
		unsigned long ks = ksr_keys_lookup(name);
		if (!ks)
			return bad_key(name, len, chord, clen, err);
		if (out->n == KSR_CHORD_MAX)
			return ksr_err_set(err, "too many keys in '%.*s' (at most %d)", (int)clen,
			                   chord, KSR_CHORD_MAX);
		out->keysyms[out->n++] = ks;
		if (i == clen)
			break;
		i++; /* the separator */
		if (i == clen)
			return bad_key(chord + i, 0, chord, clen, err);
	}
	return 0;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int ksr_keys_parse(const char *chords, ksr_chord **out, size_t *n, ksr_err *err)
{
	*out = NULL;
	*n = 0;
	if (!chords)
		return ksr_err_set(err, "no keys given");
	size_t cap = 0, len = 0;
	ksr_chord *list = NULL;
	const char *p = chords;
	for (;;) {
		while (is_space(*p))
			p++;
		if (!*p)
			break;
		const char *start = p;
		while (*p && !is_space(*p))
			p++;
		if (len == cap) {
			cap = cap ? cap * 2 : 4;
			list = ksr_xrealloc(list, cap * sizeof *list);
		}
		if (parse_chord(start, (size_t)(p - start), &list[len], err) < 0) {
			free(list);
			return -1;
		}
		len++;
	}
	if (len == 0) {
		free(list);
		return ksr_err_set(err, "no keys given");
	}
	*out = list;
	*n = len;
	return 0;
}

void ksr_keys_free(ksr_chord *c)
{
	free(c);
}
