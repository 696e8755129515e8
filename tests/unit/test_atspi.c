/* The accessibility backend's pure parts: state words, role comparison, the
 * bus address from an environment block. (Walks and actions are tested
 * against real apps in tests/integration/test_atspi.py.) */
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "tap.h"

static void states(void)
{
	ok(ksr_atspi_state_index("checked") == 4, "checked is AT-SPI state 4");
	ok(ksr_atspi_state_index("Pressed") == 20, "state words ignore case");
	ok(ksr_atspi_state_index("multi_line") == ksr_atspi_state_index("multi line"),
	   "'_' reads as a space");
	ok(ksr_atspi_state_index("bogus") < 0, "an unknown word is -1");
	ok(ksr_atspi_state_index(NULL) < 0, "NULL is -1");
	const char *const *names = ksr_atspi_state_names();
	int n = 0, round = 1;
	for (; names[n]; n++)
		round &= strcmp(ksr_atspi_state_name(ksr_atspi_state_index(names[n])), names[n]) ==
		         0;
	ok(n > 30 && round, "every listed state name maps to an index and back (%d)", n);
}

static void roles(void)
{
	ok(ksr_atspi_role_equal("push_button", "push button"), "role: '_' as space");
	ok(ksr_atspi_role_equal("Check-Box", "check box"), "role: case and '-'");
	ok(!ksr_atspi_role_equal("button", "push button"), "role: no prefix match");
	ok(!ksr_atspi_role_equal(NULL, "label"), "role: NULL");
}

static void environ_block(void)
{
	const char block[] = "HOME=/root\0DBUS_SESSION_BUS_ADDRESS=unix:path=/x/bus\0DISPLAY=:1\0";
	char *v = ksr_atspi_environ_lookup(block, sizeof block - 1, "DBUS_SESSION_BUS_ADDRESS");
	ok(v && strcmp(v, "unix:path=/x/bus") == 0, "finds the address");
	free(v);
	v = ksr_atspi_environ_lookup(block, sizeof block - 1, "DISPLAY");
	ok(v && strcmp(v, ":1") == 0, "finds the last entry");
	free(v);
	ok(ksr_atspi_environ_lookup(block, sizeof block - 1, "DISP") == NULL, "no prefix match");
	const char cut[] = "A=1\0DBUS_SESSION_BUS_ADDRESS=unix:pa";
	v = ksr_atspi_environ_lookup(cut, sizeof cut - 1, "DBUS_SESSION_BUS_ADDRESS");
	ok(v && strcmp(v, "unix:pa") == 0, "an unterminated last entry stays in bounds");
	free(v);
}

/* The showing rule: showing; in a GTK 4 tree (visible_is_showing) visible too;
 * the finder prefers a showing match over an earlier hidden one. */
static void showing_rule(void)
{
	uint64_t showing = 1ull << ksr_atspi_state_index("showing");
	uint64_t visible = 1ull << ksr_atspi_state_index("visible");
	ksr_atspi_node n[] = {
	        {.role = "application", .name = "app", .parent = -1},
	        {.role = "menu item", .name = "Save", .states = visible},
	        {.role = "push button", .name = "Save", .states = visible | showing},
	};
	ksr_atspi_tree t = {.nodes = n, .len = 3};
	ok(!ksr_atspi_tree_showing(&t, 1), "visible alone is not showing");
	ok(ksr_atspi_tree_showing(&t, 2), "showing is showing");
	ok(!ksr_atspi_tree_showing(&t, 9), "an index past the tree is not showing");
	ksr_name_match m = {.text = "Save"};
	is_int(ksr_atspi_tree_find(&t, &m, NULL), 2, "the showing Save is found first");
	is_int(ksr_atspi_tree_find(&t, &m, "menu item"), 1, "a hidden match is still found");
	t.visible_is_showing = true;
	ok(ksr_atspi_tree_showing(&t, 1), "GTK 4: visible stands for showing");
	is_int(ksr_atspi_tree_find(&t, &m, NULL), 1, "GTK 4: the first visible Save");
	n[1].states = 0;
	ok(!ksr_atspi_tree_showing(&t, 1), "GTK 4: neither state is hidden");
}

static void str_is(char *got, const char *want, const char *what)
{
	ok(want ? got && strcmp(got, want) == 0 : got == NULL, "%s: '%s'", what,
	   got ? got : "(null)");
	free(got);
}

/* Role names a scenario may write: the standard names and GTK 4's own. */
static void role_names(void)
{
	ok(ksr_atspi_role_known("push button") && ksr_atspi_role_known("Push_Button"),
	   "the standard name, written any way the matcher reads");
	ok(ksr_atspi_role_known("button") && ksr_atspi_role_known("text box"),
	   "GTK 4's names are aliases");
	ok(!ksr_atspi_role_known("pushbutton") && !ksr_atspi_role_known(NULL), "a typo is not");
	str_is(ksr_atspi_role_canonical(43), "push button", "role 43");
	str_is(ksr_atspi_role_canonical(0), NULL, "role 0 (invalid) has no name");
	size_t n, canon;
	ksr_atspi_role_names(&n, &canon);
	ok(canon > 100 && n > canon, "%zu standard names, %zu with the aliases", canon, n);
}

/* Names as people read them, and exact before normalised. */
static void names(void)
{
	str_is(ksr_atspi_name_display("  Save      "), "Save", "trimmed");
	str_is(ksr_atspi_name_display("Paper\t \n Mode\xc2\xa0"), "Paper Mode", "runs collapsed");
	ksr_atspi_node n[] = {
	        {.role = "application", .name = "app", .parent = -1},
	        {.role = "menu item", .name = "Save      "},
	        {.role = "push button", .name = "Save", .toolkit_role = "button"},
	};
	ksr_atspi_tree t = {.nodes = n, .len = 3};
	ksr_name_match m = {.text = "Save"};
	is_int(ksr_atspi_node_match_kind(&n[1], &m, NULL), 1, "padded name: normalised match");
	is_int(ksr_atspi_tree_find(&t, &m, NULL), 2, "the exact name wins");
	is_int(ksr_atspi_tree_find(&t, &m, "menu item"), 1, "the padded one by its role");
	is_int(ksr_atspi_tree_find(&t, &m, "button"), 2, "the toolkit's role is an alias");
}

static void near_misses(void)
{
	ksr_atspi_node n[] = {
	        {.role = "application", .name = "app", .parent = -1},
	        {.role = "check menu item", .name = "Paper Mode"},
	        {.role = "menu item", .name = "Paper Size"},
	        {.role = "push button", .name = "Quit"},
	};
	ksr_atspi_tree t = {.nodes = n, .len = 4};
	ksr_name_match m = {.text = "Paper mode"};
	char buf[256];
	ksr_atspi_near_miss_text(&t, &m, NULL, buf, sizeof buf);
	ok(!strcmp(buf, "; closest: \"Paper Mode\" (check menu item), \"Paper Size\" (menu item)"),
	   "closest first, far ones left out: %s", buf);
	ksr_name_match q = {.text = "Quit"};
	ksr_atspi_near_miss_text(&t, &q, "menu item", buf, sizeof buf);
	ok(!strcmp(buf, "; closest: \"Quit\" (push button)"), "same name, other role: %s", buf);
	ksr_name_match z = {.text = "Zzzzzzzz"};
	ksr_atspi_near_miss_text(&t, &z, NULL, buf, sizeof buf);
	ok(buf[0] == 0, "nothing close: nothing listed");
}

static void shortcuts(void)
{
	str_is(ksr_atspi_shortcut_chord("s;<Alt>f:s;<Primary>s"), "ctrl+s", "ATK's third field");
	str_is(ksr_atspi_shortcut_chord("a;<Alt>f:a;<Primary><Shift>s"), "ctrl+shift+s",
	       "GTK mods");
	str_is(ksr_atspi_shortcut_chord("<Alt>c"), "alt+c", "a button's mnemonic");
	str_is(ksr_atspi_shortcut_chord("Ctrl+Shift+S"), "ctrl+shift+s", "Qt's form");
	str_is(ksr_atspi_shortcut_chord("F3"), "F3", "a function key alone");
	str_is(ksr_atspi_shortcut_chord("Ctrl++"), "ctrl++", "the plus key");
	str_is(ksr_atspi_shortcut_chord("<Alt>p;;"), NULL, "no shortcut field");
	str_is(ksr_atspi_shortcut_chord("s"), NULL, "a typed letter is no shortcut");
	str_is(ksr_atspi_shortcut_chord("Ctrl+K, Ctrl+C"), NULL, "a two-chord sequence");
	str_is(ksr_atspi_shortcut_chord("<Hyper>x"), NULL, "an unknown modifier");
}

/* Locators on a tree (no label: asks the app nothing): reading order is depth
 * first, in: looks at ancestors, nth counts showing matches in reading order. */
static void locators(void)
{
	uint64_t shown = 1ull << ksr_atspi_state_index("showing");
	ksr_atspi_node n[] = {
	        {.role = "application", .name = "app", .parent = -1},
	        {.role = "frame", .name = "Main", .parent = 0, .states = shown},
	        {.role = "panel", .name = "", .parent = 1, .states = shown},
	        {.role = "scroll pane", .name = "", .parent = 1, .states = shown},
	        {.role = "text", .name = "", .parent = 2, .states = shown}, /* first in order */
	        {.role = "text", .name = "", .parent = 3, .states = shown}, /* the log */
	        {.role = "text", .name = "", .parent = 2, .states = 0},     /* hidden */
	};
	ksr_atspi_tree t = {.nodes = n, .len = 7};
	int *order = ksr_atspi_reading_order(&t);
	int want[] = {0, 1, 2, 4, 6, 3, 5};
	bool same = true;
	for (int i = 0; i < 7; i++)
		same = same && order[i] == want[i];
	ok(same, "reading order: depth first, children in index order");
	free(order);
	ksr_name_match none = {0};
	ksr_atspi_locator l = {.name = &none, .role = "text", .label = &none, .in_name = &none};
	ksr_atspi_located f;
	ksr_atspi_locate(NULL, NULL, &t, &l, ksr_deadline_in_ms(100), &f);
	is_int(f.index, 4, "role alone: the first showing text in reading order");
	is_int(f.matches, 2, "two showing texts fit");
	is_int(f.hidden, 1, "the hidden one is counted apart");
	l.nth = 2;
	ksr_atspi_locate(NULL, NULL, &t, &l, ksr_deadline_in_ms(100), &f);
	is_int(f.index, 5, "nth 2: the second in reading order");
	l.nth = 3;
	ksr_atspi_locate(NULL, NULL, &t, &l, ksr_deadline_in_ms(100), &f);
	is_int(f.index, -1, "nth past the matches: none");
	l.nth = 0;
	l.in = true;
	l.in_role = "scroll pane";
	ksr_atspi_locate(NULL, NULL, &t, &l, ksr_deadline_in_ms(100), &f);
	is_int(f.index, 5, "in: {role: scroll pane}: the log");
	is_int(f.matches, 1, "and only it");
	ksr_name_match main_name = {.text = "Main"};
	l.in_role = NULL;
	l.in_name = &main_name;
	l.hidden_ok = true;
	ksr_atspi_locate(NULL, NULL, &t, &l, ksr_deadline_in_ms(100), &f);
	is_int(f.matches, 3, "in: Main with hidden_ok: all three");
	char *text = ksr_atspi_locator_text(&l);
	str_is(text, "role \"text\", in \"Main\"", "the locator as a reason names it");
}

int main(void)
{
	locators();
	role_names();
	names();
	near_misses();
	shortcuts();
	states();
	showing_rule();
	roles();
	environ_block();
	return tap_done();
}
