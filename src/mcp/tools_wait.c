/* The waits an agent needs instead of polling: screen.wait (a window appears
 * or goes: X events; the screen or a window stops repainting: X DAMAGE,
 * ksr_x11_quiet_wait) and a11y.find (a control with given states is in the
 * tree). Each is bounded by its timeout_s argument and ends at once on an MCP
 * cancellation (the server's ksr_cancel_request ends every backend wait). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/pattern.h"
#include "mcp/mcp_priv.h"

#define DEFAULT_WAIT_S   10.0
#define DEFAULT_FIND_S   5.0
#define DEFAULT_QUIET_MS 300
/* a11y.find looks again at the latest this long after a walk found nothing:
 * a state change inside a window sends no X event it could wait for. */
#define FIND_RECHECK_MS 250
/* A locator's one look at a walked tree (label: asks the app its relations). */
#define LOCATE_MS 8000

static ksr_deadline timeout_arg(const cJSON *a, double def_s)
{
	return ksr_deadline_in_ms((int64_t)llround(mcp_arg_num(a, "timeout_s", def_s) * 1000));
}

/* A wait that did not end READY: an isError result, or nothing to say when
 * the request was cancelled (the server sends no reply then). */
static int wait_failed(ksr_wait w, const char *what, double timeout_s, mcp_result *r)
{
	if (w == KSR_WAIT_CANCELLED)
		return mcp_fail(r, "%s: cancelled", what);
	if (w == KSR_WAIT_TIMEOUT)
		return mcp_fail(r, "%s: timed out after %g s", what, timeout_s);
	return mcp_fail(r, "%s: the X display connection was lost", what);
}

static cJSON *window_json(const ksr_window *w)
{
	cJSON *j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "id", (double)w->id);
	cJSON_AddStringToObject(j, "title", w->title ? w->title : "");
	cJSON_AddNumberToObject(j, "pid", w->pid);
	cJSON_AddNumberToObject(j, "x", w->x);
	cJSON_AddNumberToObject(j, "y", w->y);
	cJSON_AddNumberToObject(j, "width", w->w);
	cJSON_AddNumberToObject(j, "height", w->h);
	return j;
}

static cJSON *answer(const char *until, int64_t start_ms)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "until", until);
	cJSON_AddNumberToObject(o, "waited_ms", (double)(ksr_now_ms() - start_ms));
	return o;
}

/* The newest window whose title matches; *found NULL when none. -1: the list failed. */
static int match_window(ksr_mcp *m, const ksr_pattern *re, cJSON **found, ksr_err *e)
{
	ksr_window_list l = {0};
	*found = NULL;
	if (ksr_x11_list_windows(m->x, &l, e) < 0)
		return -1;
	for (size_t i = l.len; i-- > 0 && !*found;)
		if (ksr_pattern_match(re, l.items[i].title ? l.items[i].title : ""))
			*found = window_json(&l.items[i]);
	ksr_window_list_clear(&l);
	return 0;
}

/* appears / gone: look, then sleep on the X connection until a window is
 * mapped, unmapped, destroyed or retitled (events queued between the look
 * and the wait are not lost: they wait in the connection's queue). */
static void wait_presence(ksr_mcp *m, const cJSON *a, bool appear, mcp_result *r)
{
	const char *pat = mcp_arg_str(a, "window");
	if (!pat) {
		mcp_fail(r, "until %s needs window (a title pattern)", appear ? "appears" : "gone");
		return;
	}
	ksr_err e = {0};
	ksr_pattern *re = ksr_pattern_compile(pat, &e);
	if (!re) {
		mcp_fail(r, "bad window pattern: %s", e.msg);
		return;
	}
	int64_t start = ksr_now_ms();
	ksr_deadline d = timeout_arg(a, DEFAULT_WAIT_S);
	for (;;) {
		cJSON *win = NULL;
		if (match_window(m, re, &win, &e) < 0) {
			mcp_fail(r, "listing windows: %s", e.msg);
			break;
		}
		if (appear == (win != NULL)) {
			cJSON *o = answer(appear ? "appears" : "gone", start);
			if (win)
				cJSON_AddItemToObject(o, "window", win);
			mcp_structured(r, o);
			break;
		}
		cJSON_Delete(win);
		ksr_wait w =
		        ksr_deadline_passed(d) ? KSR_WAIT_TIMEOUT : ksr_x11_wait_change(m->x, d);
		if (w != KSR_WAIT_READY) {
			char what[200];
			snprintf(what, sizeof what, "no window titled /%.120s/ %s", pat,
			         appear ? "appeared" : "went away");
			wait_failed(w, what, mcp_arg_num(a, "timeout_s", DEFAULT_WAIT_S), r);
			break;
		}
	}
	ksr_pattern_free(re);
}

/* quiet: the window (by id or title) or the whole screen (the root window,
 * whose DAMAGE covers every window on it) has not repainted for quiet_ms. */
static void wait_quiet(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	unsigned long win = (unsigned long)mcp_arg_int(a, "window_id", 0);
	cJSON *found = NULL;
	const char *pat = mcp_arg_str(a, "window");
	if (!win && pat) {
		ksr_err e = {0};
		ksr_pattern *re = ksr_pattern_compile(pat, &e);
		bool compiled = re != NULL;
		int rc = re ? match_window(m, re, &found, &e) : -1;
		ksr_pattern_free(re);
		if (rc < 0 || !found) {
			if (rc < 0)
				mcp_fail(r, "%s: %s",
				         compiled ? "listing windows" : "bad window pattern",
				         e.msg);
			else
				mcp_fail(r, "no window titled /%s/ to wait on", pat);
			return;
		}
		win = (unsigned long)cJSON_GetObjectItem(found, "id")->valuedouble;
	}
	bool screen = !win;
	if (screen)
		win = ksr_x11_root_window(m->x);
	int64_t start = ksr_now_ms(), waited = 0;
	ksr_x11_quiet q = {.quiet_ms = mcp_arg_int(a, "quiet_ms", DEFAULT_QUIET_MS),
	                   .since_ms = start,
	                   .window_changes = screen};
	ksr_wait w = ksr_x11_quiet_wait(m->x, &win, 1, &q, timeout_arg(a, DEFAULT_WAIT_S), &waited);
	if (w == KSR_WAIT_READY) {
		cJSON *o = answer("quiet", start);
		if (found)
			cJSON_AddItemToObject(o, "window", found), found = NULL;
		mcp_structured(r, o);
	} else if (w == KSR_WAIT_ERROR && ksr_x11_alive(m->x)) {
		mcp_fail(r,
		         "screen.wait quiet: the X server has no DAMAGE extension, or window "
		         "0x%lx is gone",
		         win);
	} else {
		wait_failed(w,
		            screen ? "the screen did not stop changing"
		                   : "the window did not "
		                     "stop changing",
		            mcp_arg_num(a, "timeout_s", DEFAULT_WAIT_S), r);
	}
	cJSON_Delete(found);
}

int mcp_tool_screen_wait(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0)
		return 0;
	const char *until = mcp_arg_str(a, "until");
	if (!strcmp(until, "quiet"))
		wait_quiet(m, a, r);
	else
		wait_presence(m, a, !strcmp(until, "appears"), r);
	return 0;
}

/* ---- a11y.find ------------------------------------------------------------------ */

/* The required states as a mask; -1 with r's error set for an unknown word. */
static int states_arg(const cJSON *a, uint64_t *mask, mcp_result *r)
{
	*mask = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(a, "states"))
	{
		int b = cJSON_IsString(it) ? ksr_atspi_state_index(it->valuestring) : -1;
		if (b < 0)
			return mcp_fail(r, "states: %s is not an AT-SPI state",
			                cJSON_IsString(it) ? it->valuestring : "(not a string)"),
			       -1;
		*mask |= 1ull << b;
	}
	return 0;
}

/* GTK's binding is "mnemonic;sequence;shortcut" (e.g. "<Alt>s;;<Control>s");
 * other toolkits give one binding. part 0 = mnemonic, 2 = shortcut. */
static char *binding_part(const char *b, int part)
{
	if (!strchr(b, ';'))
		return part == 2 && *b ? ksr_xstrdup(b) : NULL;
	for (int i = 0; i < part && b; i++)
		b = strchr(b, ';') ? strchr(b, ';') + 1 : NULL;
	if (!b)
		return NULL;
	size_t n = strcspn(b, ";");
	return n ? ksr_xstrndup(b, n) : NULL;
}

/* An optional field: set, or left out (the outputSchema's portable form of
 * "none"; no result field is ever null). */
static void add_optional(cJSON *o, const char *k, char *v)
{
	if (v)
		cJSON_AddStringToObject(o, k, v);
	free(v);
}

/* actions with key bindings, shortcut and mnemonic (the first action's that
 * has one). */
static void add_keys(ksr_mcp *m, const ksr_atspi_app *app, const ksr_atspi_node *n, cJSON *o)
{
	ksr_atspi_keys k = {0};
	ksr_err e = {0};
	if (n->n_actions)
		ksr_atspi_action_keys(m->atspi, app, n->path, ksr_deadline_in_ms(KSR_ATSPI_CALL_MS),
		                      &k, &e);
	cJSON *arr = cJSON_AddArrayToObject(o, "actions");
	char *shortcut = NULL, *mnemonic = NULL;
	for (size_t i = 0; i < n->n_actions; i++) {
		cJSON *j = cJSON_CreateObject();
		cJSON_AddStringToObject(j, "name", n->actions[i] ? n->actions[i] : "");
		const char *b = i < k.n ? k.binding[i] : "";
		cJSON_AddStringToObject(j, "key_binding", b);
		cJSON_AddItemToArray(arr, j);
		if (!shortcut)
			shortcut = binding_part(b, 2);
		if (!mnemonic)
			mnemonic = binding_part(b, 0);
	}
	add_optional(o, "shortcut", shortcut);
	add_optional(o, "mnemonic", mnemonic);
	ksr_atspi_keys_clear(&k);
}

static void found_answer(ksr_mcp *m, const ksr_atspi_app *app, const ksr_atspi_tree *t, int i,
                         int64_t start, mcp_result *r)
{
	const ksr_atspi_node *n = &t->nodes[i];
	cJSON *o = cJSON_CreateObject();
	char *path = ksr_atspi_node_path(t, (size_t)i);
	cJSON_AddStringToObject(o, "path", path);
	free(path);
	cJSON_AddStringToObject(o, "role", n->role ? n->role : "");
	cJSON_AddStringToObject(o, "name", n->name ? n->name : "");
	cJSON_AddStringToObject(o, "description", n->description ? n->description : "");
	cJSON *st = cJSON_AddArrayToObject(o, "states");
	for (int b = 0; b < 64; b++)
		if (n->states & (1ull << b) && ksr_atspi_state_name(b))
			cJSON_AddItemToArray(st, cJSON_CreateString(ksr_atspi_state_name(b)));
	cJSON_AddBoolToObject(o, "showing", ksr_atspi_tree_showing(t, (size_t)i));
	if (n->has_extents) {
		cJSON *ex = cJSON_AddObjectToObject(o, "extents");
		cJSON_AddNumberToObject(ex, "x", n->x);
		cJSON_AddNumberToObject(ex, "y", n->y);
		cJSON_AddNumberToObject(ex, "w", n->w); /* as a11y_tree's nodes */
		cJSON_AddNumberToObject(ex, "h", n->h);
	}
	add_keys(m, app, n, o);
	cJSON_AddNumberToObject(o, "waited_ms", (double)(ksr_now_ms() - start));
	mcp_structured(r, o);
}

/* What a11y.find looks for: a name (and role), found by the find-mode walk,
 * or the scenario's locator (label, in, nth, or no name), which needs the
 * whole tree (docs/mcp.md, "Locators"). */
typedef struct find_what {
	ksr_name_match nm; /* name mode */
	mcp_locator ml;    /* locator mode */
	bool locator;
	uint64_t want; /* states that must all hold */
} find_what;

/* The control the arguments pick in a walked tree, or -1 with why said. */
static int pick(ksr_mcp *m, const cJSON *a, const find_what *f, const ksr_atspi_app *app,
                const ksr_atspi_tree *tree, char *why, size_t len)
{
	const char *role = mcp_arg_str(a, "role");
	if (!f->locator) {
		int i = ksr_atspi_tree_find(tree, &f->nm, role);
		if (i < 0)
			snprintf(why, len, "no control named %s%s%s in %s's accessibility tree",
			         f->nm.text, role ? " with role " : "", role ? role : "",
			         app->name ? app->name : "the app");
		return i;
	}
	ksr_atspi_located found;
	ksr_atspi_locate(m->atspi, app, tree, &f->ml.l, ksr_deadline_in_ms(LOCATE_MS), &found);
	if (found.matches > 0)
		return found.index;
	char *lt = ksr_atspi_locator_text(&f->ml.l);
	snprintf(why, len, "no showing control fits %s in %s's accessibility tree", lt,
	         app->name ? app->name : "the app");
	free(lt);
	return -1;
}

/* One look: 1 found (answered), 0 not yet (why set), -1 failed (r's error set). */
static int look(ksr_mcp *m, const cJSON *a, const find_what *f, int64_t start, char *why,
                size_t len, mcp_result *r)
{
	ksr_atspi_app app = {0};
	ksr_atspi_tree tree = {0};
	ksr_atspi_walk_opts wo = {.find_name = &f->nm, .find_role = mcp_arg_str(a, "role")};
	/* An app that has just mapped its window may not be on the bus yet (it
	 * registers a moment later, longer on a loaded machine): not yet, not a
	 * failure, for as long as the wait lasts. */
	mcp_result walk = {.content = cJSON_CreateArray()};
	int wr = mcp_a11y_walk(m, a, f->locator ? NULL : &wo, &app, &tree, &walk);
	const cJSON *t =
	        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(walk.content, 0), "text");
	const char *said = cJSON_IsString(t) ? t->valuestring : "the accessibility walk failed";
	if (wr == -2)
		snprintf(why, len, "%s", said);
	else if (wr < 0)
		mcp_fail(r, "%s", said);
	cJSON_Delete(walk.content);
	cJSON_Delete(walk.structured);
	if (wr < 0)
		return wr == -2 ? 0 : -1;
	int i = pick(m, a, f, &app, &tree, why, len);
	int rc = 0;
	if (i >= 0 && (tree.nodes[i].states & f->want) == f->want) {
		found_answer(m, &app, &tree, i, start, r);
		rc = 1;
	} else if (i >= 0) {
		const ksr_atspi_node *n = &tree.nodes[i];
		snprintf(why, len, "the %s \"%s\" is there but lacks a state asked for",
		         n->role ? n->role : "control", n->name ? n->name : "");
	}
	ksr_atspi_tree_clear(&tree);
	ksr_atspi_app_clear(&app);
	return rc;
}

/* The arguments as what to look for: 0, or -1 with r's error set. */
static int find_args(const cJSON *a, find_what *f, mcp_result *r)
{
	*f = (find_what){0};
	if (states_arg(a, &f->want, r) < 0)
		return -1;
	f->locator = mcp_locator_given(a) || !mcp_arg_str(a, "name");
	if (f->locator)
		return mcp_locator_args(a, &f->ml, r);
	ksr_err e = {0};
	if (ksr_name_match_parse(&f->nm, mcp_arg_str(a, "name"), &e) < 0)
		return mcp_fail(r, "bad name: %s", e.msg), -1;
	return 0;
}

int mcp_tool_a11y_find(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	find_what f;
	int64_t start = ksr_now_ms();
	double timeout_s = mcp_arg_num(a, "timeout_s", DEFAULT_FIND_S);
	ksr_deadline d = timeout_arg(a, DEFAULT_FIND_S);
	char why[400] = "";
	for (int rc = find_args(a, &f, r); rc == 0;) {
		rc = look(m, a, &f, start, why, sizeof why, r);
		if (rc != 0)
			break;
		if (ksr_deadline_passed(d)) {
			mcp_fail(r, "%s (waited %g s)", why, timeout_s);
			break;
		}
		/* A new window or dialog wakes this at once; anything else is seen
		 * at the next look. */
		ksr_deadline next = ksr_deadline_min(d, ksr_deadline_in_ms(FIND_RECHECK_MS));
		ksr_wait w = ksr_x11_wait_change(m->x, next);
		if (w == KSR_WAIT_CANCELLED || w == KSR_WAIT_ERROR) {
			wait_failed(w, why, timeout_s, r);
			break;
		}
	}
	ksr_name_match_clear(&f.nm);
	mcp_locator_clear(&f.ml);
	return 0;
}
