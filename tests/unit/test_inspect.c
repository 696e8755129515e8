/* inspect's pure parts: which step reaches a control (the element rung only
 * when the runtime's own finder returns that very control, role: added when
 * the name alone finds another one first, a window fraction otherwise), the
 * window: pattern and YAML quoting, and fractions that land on the control.
 * (The whole command runs against the real test app in
 * tests/integration/test_inspect.py.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ksr/inspect.h"
#include "tap.h"

#define SHOWING (1ull << 25)

static ksr_atspi_node node(const char *role, const char *name, int parent, int x, int y, int w,
                           int h, const char *action)
{
	ksr_atspi_node n = {.role = (char *)role, .name = (char *)name, .parent = parent};
	n.depth = parent < 0 ? 0 : 2;
	n.states = SHOWING;
	if (w > 0)
		n.has_extents = true, n.x = x, n.y = y, n.w = w, n.h = h;
	if (action) {
		n.actions = calloc(2, sizeof *n.actions);
		n.actions[0] = (char *)action;
		n.n_actions = 1;
	}
	return n;
}

static char *step_text(cJSON *reach)
{
	if (!reach)
		return strdup("(null)");
	cJSON *step = cJSON_GetObjectItem(reach, "step"), *l;
	size_t len = 1;
	cJSON_ArrayForEach(l, step) len += strlen(l->valuestring) + 1;
	char *s = calloc(len, 1);
	cJSON_ArrayForEach(l, step)
	{
		if (*s)
			strcat(s, "|");
		strcat(s, l->valuestring);
	}
	return s;
}

static void check_reach(const ksr_atspi_tree *t, size_t i, const ksr_window *w, size_t nw,
                        const char *want, const char *what)
{
	cJSON *r = ksr_inspect_reach(t, i, w, nw);
	char *got = step_text(r);
	is_str(got, want, what);
	free(got);
	cJSON_Delete(r);
}

static void reach(void)
{
	ksr_window wins[2] = {
	        {.id = 1, .title = "Main", .x = 100, .y = 50, .w = 400, .h = 300},
	        {.id = 2,
	         .title = "Open (1)",
	         .x = 600,
	         .y = 50,
	         .w = 200,
	         .h = 100,
	         .is_dialog = 1},
	};
	ksr_atspi_node n[] = {
	        node("application", "app", -1, 0, 0, 0, 0, NULL),
	        node("menu item", "Save", 0, 0, 0, 0, 0, "click"),         /* 1: no extents */
	        node("push button", "Save", 0, 110, 60, 40, 20, "press"),  /* 2 */
	        node("push button", "", 0, 300, 200, 20, 20, "click"),     /* 3: unnamed */
	        node("label", "Status: ok", 0, 120, 300, 80, 10, NULL),    /* 4: label */
	        node("push button", "  ", 0, 650, 100, 20, 10, NULL),      /* 5: in the dialog */
	        node("push button", "Save", 0, 120, 100, 20, 10, "click"), /* 6: 3rd Save */
	        node("label", "/tmp/", 0, 130, 90, 20, 10, NULL), /* 7: looks like a regex */
	        node("push button", NULL, 0, 2000, 2000, 10, 10, "click"), /* 8: off every window */
	        node("label", "Hidden", 0, 130, 90, 20, 10, NULL),         /* 9: not showing */
	};
	n[1].states = 0; /* a menu item in a closed menu: its action still works */
	n[9].states = 0;
	ksr_atspi_tree t = {.nodes = n, .len = sizeof n / sizeof *n};
	check_reach(&t, 2, wins, 2, "click_element: \"Save\"",
	            "the showing Save is the one the name finds: the name alone");
	check_reach(&t, 1, wins, 2, "click_element: \"Save\"|role: menu item|hidden_ok: true",
	            "a Save of another role found first by the name: role: added; not showing: "
	            "hidden_ok: added");
	check_reach(
	        &t, 6, wins, 2, "click: 0.08 0.18",
	        "a third Save, same role as the second: a fraction, as few decimals as land on it");
	check_reach(&t, 3, wins, 2, "click: 0.53 0.53", "unnamed: the fraction at its centre");
	check_reach(&t, 4, wins, 2, "click_element: \"Status: ok\"",
	            "a label with a position: element rung (extents click)");
	check_reach(&t, 5, wins, 2, "click: 0.30 0.55|target: {window: \"^Open \\\\(1\\\\)$\"}",
	            "in a dialog: fractions of that window, named with target:");
	check_reach(&t, 7, wins, 2, "click_element: \"/^\\\\/tmp\\\\/$/\"",
	            "a name that looks like /regex/ is written as an anchored pattern");
	check_reach(&t, 8, wins, 2, "(null)", "no name, outside every window: nothing reaches it");
	check_reach(&t, 9, wins, 2, "(null)", "not showing, no action: nothing reaches it");
	cJSON *r = ksr_inspect_reach(&t, 1, wins, 2);
	ok(r && cJSON_IsTrue(cJSON_GetObjectItem(r, "hidden")), "not showing: hidden true");
	cJSON_Delete(r);
	r = ksr_inspect_reach(&t, 2, wins, 2);
	ok(r && cJSON_IsFalse(cJSON_GetObjectItem(r, "hidden")), "showing: hidden false");
	cJSON_Delete(r);
	r = ksr_inspect_reach(&t, 2, wins, 2);
	ok(r && cJSON_GetObjectItem(r, "rung")->valueint == 2 &&
	           !strcmp(cJSON_GetObjectItem(r, "backend")->valuestring, "atspi") &&
	           cJSON_GetObjectItem(r, "window")->valuedouble == 1,
	   "element rung 2, backend atspi, window 1");
	cJSON_Delete(r);
	r = ksr_inspect_reach(&t, 4, wins, 2);
	ok(r && !strcmp(cJSON_GetObjectItem(r, "backend")->valuestring, "xtest"),
	   "no click action: backend xtest");
	cJSON_Delete(r);
	ok(ksr_inspect_reach(&t, 99, wins, 2) == NULL, "an index past the tree is NULL");
	for (size_t i = 0; i < t.len; i++)
		free(n[i].actions);
}

static void fractions(void)
{
	ksr_window w = {.x = 10, .y = 20, .w = 1000, .h = 700};
	double fx, fy;
	int dec;
	ok(ksr_inspect_fraction(&w, 10, 20, 1000, 700, &fx, &fy, &dec) == 0 && fx == 0.5 &&
	           fy == 0.5 && dec == 2,
	   "the whole window: 0.50 0.50");
	ok(ksr_inspect_fraction(&w, 504, 300, 3, 3, &fx, &fy, &dec) == 0 && dec == 3,
	   "a 3-pixel control needs more decimals (%d)", dec);
	long px = 10 + lround(fx * 1000), py = 20 + lround(fy * 700);
	ok(px >= 504 && px < 507 && py >= 300 && py < 303, "and the rounded point lands on it");
	ok(ksr_inspect_fraction(&w, 0, 0, 5, 5, &fx, &fy, &dec) < 0, "outside the window: -1");
	ok(ksr_inspect_fraction(NULL, 0, 0, 5, 5, &fx, &fy, &dec) < 0, "no window: -1");
}

static void window_lines(void)
{
	struct {
		const char *title, *want;
	} cases[] = {
	        {"KSR Test App", "window: ^KSR Test App$"},
	        {"notes.txt - Mousepad", "window: ^notes\\.txt - Mousepad$"},
	        {"a (1) [x] {y} *+?|", "window: ^a \\(1\\) \\[x\\] \\{y\\} \\*\\+\\?\\|$"},
	        {"Error: disk #1", "window: \"^Error: disk #1$\""},
	        {"C:\\path", "window: ^C:\\\\path$"},
	        {"say \"hi\"", "window: \"^say \\\"hi\\\"$\""},
	        {"", "window: ^$"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *got = ksr_inspect_window_line(cases[i].title);
		is_str(got, cases[i].want, cases[i].title);
		free(got);
	}
	char *null_title = ksr_inspect_window_line(NULL);
	is_str(null_title, "window: ^$", "NULL title");
	free(null_title);
}

/* A key line a menu bar also claims as a mnemonic is withheld (issue #32):
 * the menu's binding ("<Alt>h;<Alt>h;" as GTK writes it, a bare letter) or,
 * without one, its name's first letter; only the same window's menu bar. */
static void menu_claims(void)
{
	ksr_atspi_node n[] = {
	        node("application", "app", -1, 0, 0, 0, 0, NULL),
	        node("frame", "Main", 0, 0, 0, 400, 300, NULL),
	        node("menu bar", "", 1, 0, 0, 400, 20, NULL),
	        node("menu", "Help", 2, 0, 0, 40, 20, "click"),
	        node("menu", "File", 2, 40, 0, 40, 20, "click"),
	        node("menu", "View", 2, 80, 0, 40, 20, "click"),
	        node("text", "", 1, 10, 40, 100, 20, "activate"),
	        node("dialog", "Other", 0, 0, 0, 200, 100, NULL),
	        node("text", "", 7, 10, 40, 100, 20, "activate"),
	};
	n[1].depth = n[7].depth = 1;
	n[2].depth = 2, n[6].depth = 2, n[8].depth = 2;
	for (int k = 3; k <= 5; k++)
		n[k].depth = 3;
	n[3].keybinding = (char *)"<Alt>h;<Alt>h;";
	n[4].keybinding = (char *)"f";
	ksr_atspi_tree t = {.nodes = n, .len = sizeof n / sizeof *n};
	const char *m = ksr_inspect_menu_claims(&t, 6, "alt+h");
	is_str(m ? m : "(none)", "Help", "alt+h: the Help menu's mnemonic (GTK binding)");
	m = ksr_inspect_menu_claims(&t, 6, "alt+f");
	is_str(m ? m : "(none)", "File", "alt+f: a bare-letter binding");
	m = ksr_inspect_menu_claims(&t, 6, "alt+v");
	is_str(m ? m : "(none)", "View", "alt+v: no binding, the name's first letter");
	ok(ksr_inspect_menu_claims(&t, 6, "alt+n") == NULL, "alt+n: no menu claims it");
	ok(ksr_inspect_menu_claims(&t, 6, "ctrl+h") == NULL, "ctrl+h is not a mnemonic");
	ok(ksr_inspect_menu_claims(&t, 8, "alt+h") == NULL, "another window's menu bar");
	for (int k = 0; k < 9; k++)
		free(n[k].actions);
}

int main(void)
{
	reach();
	fractions();
	window_lines();
	menu_claims();
	return tap_done();
}
