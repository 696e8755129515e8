/* The key chord parser (no display): names, aliases, single characters, the
 * plus key, errors with a did-you-mean, and the UTF-8/keysym helpers. */
#include "ksr/keys.h"

#include <X11/keysym.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* Parse text, expect n_want chords; the first chord's keysyms must be want[]. */
static void parses(const char *text, size_t n_want, const unsigned long *want, int n_keys)
{
	ksr_chord *c = NULL;
	size_t n = 0;
	ksr_err err = {0};
	int rc = ksr_keys_parse(text, &c, &n, &err);
	ok(rc == 0, "'%s' parses: %s", text, err.msg);
	if (rc < 0)
		return;
	is_int((long long)n, (long long)n_want, "chord count");
	bool same = c[0].n == n_keys;
	for (int i = 0; same && i < n_keys; i++)
		same = c[0].keysyms[i] == want[i];
	ok(same, "'%s': keysyms of the first chord (n=%d, first 0x%lx)", text, c[0].n,
	   c[0].keysyms[0]);
	ksr_keys_free(c);
}

static void rejects(const char *text, const char *msg_part)
{
	ksr_chord *c = (ksr_chord *)1;
	size_t n = 99;
	ksr_err err = {0};
	ok(ksr_keys_parse(text, &c, &n, &err) < 0 && c == NULL && n == 0, "'%s' is rejected", text);
	ok(strstr(err.msg, msg_part) != NULL, "message '%s' contains '%s'", err.msg, msg_part);
}

static void test_names(void)
{
	parses("ctrl+s", 1, (unsigned long[]){XK_Control_L, XK_s}, 2);
	parses("control+S", 1, (unsigned long[]){XK_Control_L, XK_S}, 2);
	parses("ctrl+shift+t", 1, (unsigned long[]){XK_Control_L, XK_Shift_L, XK_t}, 3);
	parses("alt+F4", 1, (unsigned long[]){XK_Alt_L, XK_F4}, 2);
	parses("alt+f4", 1, (unsigned long[]){XK_Alt_L, XK_F4}, 2);
	parses("super", 1, (unsigned long[]){XK_Super_L}, 1);
	parses("win+e", 1, (unsigned long[]){XK_Super_L, XK_e}, 2);
	parses("meta", 1, (unsigned long[]){XK_Super_L}, 1);
	parses("Return", 1, (unsigned long[]){XK_Return}, 1);
	parses("Enter", 1, (unsigned long[]){XK_Return}, 1);
	parses("RETURN", 1, (unsigned long[]){XK_Return}, 1);
	parses("esc", 1, (unsigned long[]){XK_Escape}, 1);
	parses("Escape", 1, (unsigned long[]){XK_Escape}, 1);
	parses("BackSpace", 1, (unsigned long[]){XK_BackSpace}, 1);
	parses("backspace", 1, (unsigned long[]){XK_BackSpace}, 1);
	parses("del", 1, (unsigned long[]){XK_Delete}, 1);
	parses("pgup", 1, (unsigned long[]){XK_Page_Up}, 1);
	parses("Page_Down", 1, (unsigned long[]){XK_Page_Down}, 1);
	parses("Home End Up Down Left Right space Tab", 8, (unsigned long[]){XK_Home}, 1);
	parses("KP_Enter", 1, (unsigned long[]){XK_KP_Enter}, 1);
	parses("XF86AudioMute", 1, (unsigned long[]){0x1008ff12}, 1);
	parses("eacute", 1, (unsigned long[]){XK_eacute}, 1);
}

static void test_characters(void)
{
	parses("a", 1, (unsigned long[]){XK_a}, 1);
	parses("A", 1, (unsigned long[]){XK_A}, 1);
	parses("1", 1, (unsigned long[]){XK_1}, 1);
	parses("/", 1, (unsigned long[]){XK_slash}, 1);
	parses("ctrl+/", 1, (unsigned long[]){XK_Control_L, XK_slash}, 2);
	parses("\xc3\xa9", 1, (unsigned long[]){XK_eacute}, 1);     /* é */
	parses("\xe2\x82\xac", 1, (unsigned long[]){0x10020ac}, 1); /* € */
	parses("ctrl++", 1, (unsigned long[]){XK_Control_L, XK_plus}, 2);
	parses("+", 1, (unsigned long[]){XK_plus}, 1);
	parses("  ctrl+a \t x  ", 2, (unsigned long[]){XK_Control_L, XK_a}, 2);
}

static void test_errors(void)
{
	rejects("ctrll+s", "unknown key 'ctrll' in 'ctrll+s' (did you mean 'ctrl'?)");
	rejects("ctrl+s Retrun", "unknown key 'Retrun' in 'Retrun' (did you mean 'Return'?)");
	rejects("shfit+a", "did you mean 'shift'?");
	rejects("ctrl+", "empty key name in 'ctrl+'");
	rejects("ctrl+zzzzqqq", "unknown key 'zzzzqqq' in 'ctrl+zzzzqqq'");
	rejects("xy", "unknown key 'xy'");
	rejects("", "no keys given");
	rejects("   ", "no keys given");
	rejects("a+b+c+d+e+f+g+h+i", "too many keys");
	ksr_err err = {0};
	ksr_chord *c = NULL;
	size_t n = 0;
	ok(ksr_keys_parse("zzzzqqq", &c, &n, &err) < 0 && !strstr(err.msg, "did you mean"),
	   "no suggestion when nothing is close: %s", err.msg);
	ok(ksr_keys_parse(NULL, &c, &n, &err) < 0, "NULL is rejected");
	ksr_keys_free(NULL);
}

static void test_helpers(void)
{
	const char *s = "a\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80";
	uint32_t cp[4] = {0};
	for (int i = 0; i < 4; i++)
		ksr_keys_utf8_next(&s, &cp[i]);
	ok(cp[0] == 'a' && cp[1] == 0xe9 && cp[2] == 0x65e5 && cp[3] == 0x1f600,
	   "UTF-8 decoding: %x %x %x %x", cp[0], cp[1], cp[2], cp[3]);
	ok(ksr_keys_utf8_next(&s, &cp[0]) == 0, "end of string");
	const char *bad = "\xc0\xaf"; /* overlong '/' */
	ok(ksr_keys_utf8_next(&bad, &cp[0]) < 0, "overlong sequence rejected");
	const char *trunc = "\xe6\x97";
	ok(ksr_keys_utf8_next(&trunc, &cp[0]) < 0, "truncated sequence rejected");
	ok(ksr_keys_from_codepoint('\n') == XK_Return, "newline is Return");
	ok(ksr_keys_from_codepoint('\t') == XK_Tab, "tab is Tab");
	ok(ksr_keys_from_codepoint(0xdf) == XK_ssharp, "ß is ssharp");
	ok(ksr_keys_from_codepoint(0x65e5) == 0x10065e5, "日 is a Unicode keysym");
	ok(ksr_keys_from_codepoint(0x01) == 0, "other controls are not typeable");
	ok(ksr_keys_lookup("nosuchkey") == 0, "lookup of an unknown name is 0");
}

int main(void)
{
	test_names();
	test_characters();
	test_errors();
	test_helpers();
	return tap_done();
}
