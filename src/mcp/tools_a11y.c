/* a11y.tree/click/state: the accessibility rung (AT-SPI) through the same backend the run's
 * click_element step and state checks use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/pattern.h"
#include "mcp/mcp_priv.h"

#define CALL_MS 8000

/* The PID the arguments name: pid, else a window title's process, else the
 * newest window with a process; 0 with app set means "by name". */
static int target_pid(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	int pid = mcp_arg_int(a, "pid", 0);
	const char *title = mcp_arg_str(a, "window");
	if (pid || (mcp_arg_str(a, "app") && !title))
		return pid;
	ksr_err e = {0};
	ksr_pattern *re = title ? ksr_pattern_compile(title, &e) : NULL;
	if (title && !re)
		return mcp_fail(r, "bad window pattern: %s", e.msg), -1;
	ksr_window_list l = {0};
	if (ksr_x11_list_windows(m->x, &l, &e) < 0)
		mcp_fail(r, "listing windows: %s", e.msg);
	for (size_t i = l.len; i-- > 0 && !pid;)
		if (l.items[i].pid > 0 && (!re || ksr_pattern_match(re, l.items[i].title)))
			pid = l.items[i].pid;
	ksr_window_list_clear(&l);
	ksr_pattern_free(re);
	if (!pid && !r->is_error)
		mcp_fail(r, "no window %s%s with a process (_NET_WM_PID)", title ? "titled " : "",
		         title ? title : "");
	return pid ? pid : -1;
}

int mcp_a11y_walk(ksr_mcp *m, const cJSON *a, const ksr_atspi_walk_opts *wo, ksr_atspi_app *app,
                  ksr_atspi_tree *tree, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0)
		return -1;
	int pid = target_pid(m, a, r);
	if (pid < 0)
		return -1;
	ksr_deadline d = ksr_deadline_in_ms(CALL_MS);
	ksr_err e = {0};
	ksr_atspi_opts ao = {.x = m->x, .app_pid = pid};
	if (!m->atspi && ksr_atspi_open(&ao, d, &m->atspi, &e) < 0)
		return mcp_fail(r, "accessibility bus: %s", e.msg), -1;
	const char *by = NULL;
	if (ksr_atspi_find_app(m->atspi, pid, mcp_arg_str(a, "app"), d, app, &by, &e) < 0)
		return mcp_fail(r, "%s", e.msg), -2;
	if (ksr_atspi_walk(m->atspi, app, wo, d, tree, &e) < 0) {
		ksr_atspi_app_clear(app);
		return mcp_fail(r, "walking %s: %s", app->name ? app->name : "the app", e.msg), -1;
	}
	return 0;
}

typedef struct subtree {
	int root;      /* node index */
	int depth;     /* levels below root kept */
	int max_nodes; /* nodes kept at most */
	const char *cut_by;
	int total; /* nodes under root (root included) the walk saw */
} subtree;

/* The nodes of the subtree at s->root, breadth-first as walked (a parent
 * comes before its children), bounded by depth and count. */
static cJSON *subtree_nodes(const ksr_atspi_tree *t, subtree *s)
{
	cJSON *arr = cJSON_CreateArray();
	bool *in = ksr_xcalloc(t->len ? t->len : 1, sizeof *in);
	int kept = 0;
	for (size_t i = (size_t)s->root; i < t->len; i++) {
		const ksr_atspi_node *n = &t->nodes[i];
		in[i] = (int)i == s->root || (n->parent >= 0 && in[n->parent]);
		if (!in[i])
			continue;
		s->total++;
		if (n->depth - t->nodes[s->root].depth > s->depth) {
			s->cut_by = "depth";
			continue;
		}
		if (kept >= s->max_nodes) {
			s->cut_by = s->cut_by ? s->cut_by : "nodes";
			continue;
		}
		cJSON *node = ksr_atspi_node_json(t, i);
		/* The node JSON the inspector and the report share says "extents":
		 * null for none; MCP results leave a field with no value out. */
		if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(node, "extents")))
			cJSON_DeleteItemFromObjectCaseSensitive(node, "extents");
		cJSON_AddItemToArray(arr, node);
		kept++;
	}
	free(in);
	return arr;
}

static int tree_root(const cJSON *a, const ksr_atspi_tree *tree, mcp_result *r);

static cJSON *tree_answer(const ksr_atspi_app *app, const ksr_atspi_tree *tree, subtree *s)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "app", app->name ? app->name : "");
	cJSON_AddNumberToObject(o, "pid", app->pid);
	char *path = ksr_atspi_node_path(tree, (size_t)s->root);
	cJSON_AddStringToObject(o, "root", s->root ? path : "/");
	free(path);
	cJSON *nodes = subtree_nodes(tree, s);
	if (!s->cut_by && tree->truncated)
		s->cut_by = tree->cut_by ? tree->cut_by : "walk";
	cJSON_AddBoolToObject(o, "truncated", s->cut_by != NULL);
	if (s->cut_by)
		cJSON_AddStringToObject(o, "truncated_by", s->cut_by);
	cJSON_AddNumberToObject(o, "total", s->total);
	cJSON_AddItemToObject(o, "nodes", nodes);
	return o;
}

int mcp_tool_a11y_tree(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_atspi_app app = {0};
	ksr_atspi_tree tree = {0};
	bool sub = mcp_arg_str(a, "name") || mcp_arg_str(a, "role");
	subtree s = {.depth = mcp_arg_int(a, "depth", 32),
	             .max_nodes = mcp_arg_int(a, "max_nodes", 300)};
	/* The whole tree is walked only for a subtree (its root may be anywhere);
	 * otherwise the walk itself stops at the bounds (one node past them, so
	 * that a cut is seen). */
	ksr_atspi_walk_opts wo = {.max_nodes = sub ? 5000 : s.max_nodes + 1,
	                          .max_depth = sub || s.depth >= 31 ? 32 : s.depth + 1};
	if (mcp_a11y_walk(m, a, &wo, &app, &tree, r) < 0)
		return 0;
	s.root = sub ? tree_root(a, &tree, r) : 0;
	if (s.root >= 0)
		mcp_structured_list(m, r, tree_answer(&app, &tree, &s), "nodes");
	ksr_atspi_tree_clear(&tree);
	ksr_atspi_app_clear(&app);
	return 0;
}

/* The node nm and the role argument pick in tree; -1 with r's error set. */
static int pick_in(const cJSON *a, const ksr_name_match *nm, const ksr_atspi_tree *tree,
                   mcp_result *r)
{
	const char *role = mcp_arg_str(a, "role");
	int i = ksr_atspi_tree_find(tree, nm, role);
	if (i < 0)
		mcp_fail(r, "no control named %s%s%s in the accessibility tree (%zu nodes)",
		         nm->text, role ? " with role " : "", role ? role : "", tree->len);
	return i;
}

/* The node the name/role arguments pick in a walked tree; -1 with r's error set. */
static int pick(const cJSON *a, const ksr_atspi_tree *tree, mcp_result *r)
{
	ksr_name_match nm = {0};
	ksr_err e = {0};
	if (ksr_name_match_parse(&nm, mcp_arg_str(a, "name"), &e) < 0)
		return mcp_fail(r, "bad name: %s", e.msg), -1;
	int i = pick_in(a, &nm, tree, r);
	ksr_name_match_clear(&nm);
	return i;
}

bool mcp_locator_given(const cJSON *a)
{
	return mcp_arg_str(a, "label") || cJSON_GetObjectItemCaseSensitive(a, "in") ||
	       cJSON_GetObjectItemCaseSensitive(a, "nth");
}

static int parse_name(ksr_name_match *m, const char *written, const char *what, mcp_result *r)
{
	ksr_err e = {0};
	if (written && ksr_name_match_parse(m, written, &e) < 0)
		return mcp_fail(r, "bad %s: %s", what, e.msg), -1;
	return 0;
}

int mcp_locator_args(const cJSON *a, mcp_locator *ml, mcp_result *r)
{
	*ml = (mcp_locator){0};
	const cJSON *in = cJSON_GetObjectItemCaseSensitive(a, "in");
	ml->l = (ksr_atspi_locator){.name = &ml->name,
	                            .role = mcp_arg_str(a, "role"),
	                            .label = &ml->label,
	                            .in = in != NULL,
	                            .in_name = &ml->in_name,
	                            .in_role = cJSON_IsObject(in) ? mcp_arg_str(in, "role") : NULL,
	                            .nth = mcp_arg_int(a, "nth", 0)};
	const char *in_name = cJSON_IsString(in)   ? in->valuestring
	                      : cJSON_IsObject(in) ? mcp_arg_str(in, "name")
	                                           : NULL;
	if (parse_name(&ml->name, mcp_arg_str(a, "name"), "name", r) < 0 ||
	    parse_name(&ml->label, mcp_arg_str(a, "label"), "label", r) < 0 ||
	    parse_name(&ml->in_name, in_name, "in", r) < 0)
		return -1;
	if (ml->l.nth < 0)
		return mcp_fail(r, "nth: counts from 1"), -1;
	if (!ml->name.text && !ml->label.text && !ml->l.in && !ml->l.role)
		return mcp_fail(r, "name, label, in or role: what finds the control"), -1;
	return 0;
}

void mcp_locator_clear(mcp_locator *ml)
{
	ksr_name_match_clear(&ml->name);
	ksr_name_match_clear(&ml->label);
	ksr_name_match_clear(&ml->in_name);
}

/* label:, in:, nth: or no name: a full walk and the scenario's locator. */
static int locate(ksr_mcp *m, const cJSON *a, ksr_atspi_app *app, ksr_atspi_tree *tree,
                  mcp_result *r)
{
	mcp_locator ml;
	int i = -1;
	if (mcp_locator_args(a, &ml, r) == 0 && mcp_a11y_walk(m, a, NULL, app, tree, r) == 0) {
		ksr_atspi_located found;
		ksr_atspi_locate(m->atspi, app, tree, &ml.l, ksr_deadline_in_ms(CALL_MS), &found);
		i = found.matches > 0 ? found.index : -1;
		if (i < 0) {
			char *lt = ksr_atspi_locator_text(&ml.l);
			mcp_fail(r,
			         "no showing control fits %s in the accessibility tree (%zu nodes)",
			         lt, tree->len);
			free(lt);
		}
	}
	mcp_locator_clear(&ml);
	return i;
}

/* The control the name/role arguments pick, by the walk click_element uses
 * (find mode: it stops once the control is known, and answers from the
 * app's cache where it can tell); -1 with r's error set. */
static int find(ksr_mcp *m, const cJSON *a, ksr_atspi_app *app, ksr_atspi_tree *tree, mcp_result *r)
{
	if (mcp_locator_given(a) || !mcp_arg_str(a, "name"))
		return locate(m, a, app, tree, r);
	ksr_name_match nm = {0};
	ksr_err e = {0};
	if (ksr_name_match_parse(&nm, mcp_arg_str(a, "name"), &e) < 0)
		return mcp_fail(r, "bad name: %s", e.msg), -1;
	ksr_atspi_walk_opts wo = {.find_name = &nm, .find_role = mcp_arg_str(a, "role")};
	int i = mcp_a11y_walk(m, a, &wo, app, tree, r) < 0 ? -1 : pick_in(a, &nm, tree, r);
	ksr_name_match_clear(&nm);
	return i;
}

static int click_node(ksr_mcp *m, const ksr_atspi_app *app, const ksr_atspi_node *n, cJSON *o,
                      mcp_result *r)
{
	ksr_err e = {0};
	int act = ksr_atspi_pick_action(n);
	if (act >= 0) {
		cJSON_AddStringToObject(o, "backend", "atspi");
		cJSON_AddStringToObject(o, "action", n->actions[act]);
		if (ksr_atspi_do_action(m->atspi, app, n->path, act, ksr_deadline_in_ms(CALL_MS),
		                        &e) < 0)
			return mcp_fail(r, "the %s action failed: %s", n->actions[act], e.msg), -1;
		return 0;
	}
	if (!n->has_extents || n->w <= 0 || n->h <= 0)
		return mcp_fail(r, "the control has no click action and no screen extents"), -1;
	cJSON_AddStringToObject(o, "backend", "xtest");
	if (ksr_x11_click(m->x, n->x + n->w / 2, n->y + n->h / 2, 1, 1, &e) < 0 ||
	    ksr_x11_sync(m->x) < 0)
		return mcp_fail(r, "the XTest click failed: %s", e.msg), -1;
	return 0;
}

static int tree_root(const cJSON *a, const ksr_atspi_tree *tree, mcp_result *r)
{
	if (!mcp_arg_str(a, "name")) { /* a role alone: the first control with it */
		for (size_t i = 1; i < tree->len; i++)
			if (ksr_atspi_role_equal(mcp_arg_str(a, "role"), tree->nodes[i].role))
				return (int)i;
		return mcp_fail(r, "no control with role %s in the accessibility tree (%zu nodes)",
		                mcp_arg_str(a, "role"), tree->len),
		       -1;
	}
	return pick(a, tree, r);
}

int mcp_tool_a11y_click(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_atspi_app app = {0};
	ksr_atspi_tree tree = {0};
	int i = find(m, a, &app, &tree, r);
	if (i >= 0) {
		cJSON *o = cJSON_CreateObject();
		char *path = ksr_atspi_node_path(&tree, (size_t)i);
		cJSON_AddStringToObject(o, "path", path);
		free(path);
		if (click_node(m, &app, &tree.nodes[i], o, r) == 0)
			mcp_structured(r, o);
		else
			cJSON_Delete(o);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_atspi_app_clear(&app);
	return 0;
}

static void state_answer(const ksr_atspi_tree *tree, int i, uint64_t states, const char *name,
                         mcp_result *r)
{
	cJSON *o = cJSON_CreateObject();
	char *path = ksr_atspi_node_path(tree, (size_t)i);
	cJSON_AddStringToObject(o, "path", path);
	free(path);
	cJSON_AddStringToObject(o, "name", name ? name : "");
	cJSON *arr = cJSON_AddArrayToObject(o, "states");
	for (int b = 0; b < 64; b++)
		if (states & (1ull << b) && ksr_atspi_state_name(b))
			cJSON_AddItemToArray(arr, cJSON_CreateString(ksr_atspi_state_name(b)));
	mcp_structured(r, o);
}

int mcp_tool_a11y_state(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_atspi_app app = {0};
	ksr_atspi_tree tree = {0};
	int i = find(m, a, &app, &tree, r);
	if (i >= 0) {
		uint64_t states = tree.nodes[i].states;
		char *name = NULL;
		ksr_err e = {0};
		if (ksr_atspi_node_states(m->atspi, &app, tree.nodes[i].path,
		                          ksr_deadline_in_ms(CALL_MS), &states, &name, &e) < 0)
			mcp_fail(r, "reading states: %s", e.msg);
		else
			state_answer(&tree, i, states, name ? name : tree.nodes[i].name, r);
		free(name);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_atspi_app_clear(&app);
	return 0;
}
