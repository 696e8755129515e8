/* a11y.text: a control's text or value over MCP, read through the same
 * backend calls as the scenario's text: check (ksr_atspi_node_text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_priv.h"

#define CALL_MS 8000

static bool readable(const ksr_atspi_tree *t, size_t i, const char *role)
{
	const ksr_atspi_node *n = &t->nodes[i];
	bool label = n->name && *n->name && n->role && ksr_atspi_role_equal("label", n->role);
	return ((n->ifaces & (KSR_ATSPI_IF_TEXT | KSR_ATSPI_IF_VALUE)) || label) &&
	       ksr_atspi_tree_showing(t, i) &&
	       (!role || ksr_atspi_role_equal(role, n->role) ||
	        ksr_atspi_role_equal(role, n->toolkit_role));
}

/* As the text: check picks: by name (and role), else the focused readable
 * control, else the first showing one. -1 with r's error set. */
static int text_pick(ksr_mcp *m, const ksr_atspi_app *app, const cJSON *a, const ksr_atspi_tree *t,
                     mcp_result *r)
{
	const char *role = mcp_arg_str(a, "role");
	if (mcp_locator_given(a)) {
		mcp_locator ml;
		int i = -1;
		if (mcp_locator_args(a, &ml, r) == 0) {
			ksr_atspi_located found;
			ksr_atspi_locate(m->atspi, app, t, &ml.l, ksr_deadline_in_ms(CALL_MS),
			                 &found);
			i = found.matches > 0 ? found.index : -1;
			if (i < 0) {
				char *lt = ksr_atspi_locator_text(&ml.l);
				mcp_fail(r, "no showing control fits %s (%zu nodes)", lt, t->len);
				free(lt);
			}
		}
		mcp_locator_clear(&ml);
		return i;
	}
	if (!mcp_arg_str(a, "name")) {
		int first = -1, focused = ksr_atspi_state_index("focused");
		for (size_t i = 1; i < t->len; i++) {
			if (!readable(t, i, role))
				continue;
			if ((t->nodes[i].states >> focused) & 1)
				return (int)i;
			if (first < 0)
				first = (int)i;
		}
		if (first < 0)
			mcp_fail(r, "no showing control with text or a value%s%s",
			         role ? " of role " : "", role ? role : "");
		return first;
	}
	ksr_name_match nm = {0};
	ksr_err e = {0};
	if (ksr_name_match_parse(&nm, mcp_arg_str(a, "name"), &e) < 0)
		return mcp_fail(r, "bad name: %s", e.msg), -1;
	int i = ksr_atspi_tree_find(t, &nm, role);
	if (i < 0) {
		char near[400];
		ksr_atspi_near_miss_text(t, &nm, role, near, sizeof near);
		mcp_fail(r, "no control named \"%s\"%s%s in the accessibility tree (%zu nodes)%s",
		         nm.text, role ? " with role " : "", role ? role : "", t->len, near);
	}
	ksr_name_match_clear(&nm);
	return i;
}

int mcp_tool_a11y_text(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_atspi_app app = {0};
	ksr_atspi_tree tree = {0};
	if (mcp_a11y_walk(m, a, NULL, &app, &tree, r) < 0)
		return 0;
	int i = text_pick(m, &app, a, &tree, r);
	if (i >= 0) {
		const ksr_atspi_node *n = &tree.nodes[i];
		char *text = NULL, *path = ksr_atspi_node_path(&tree, (size_t)i);
		char *name = ksr_atspi_name_display(n->name);
		const char *from = NULL;
		ksr_err e = {0};
		if (ksr_atspi_node_text(m->atspi, &app, n, ksr_deadline_in_ms(CALL_MS), &text,
		                        &from, &e) < 0) {
			mcp_fail(r, "%s \"%s\": %s", n->role ? n->role : "control",
			         name ? name : "", e.msg);
		} else {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "path", path);
			cJSON_AddStringToObject(o, "role", n->role ? n->role : "");
			cJSON_AddStringToObject(o, "name", name ? name : "");
			cJSON_AddStringToObject(o, "from", from);
			cJSON_AddStringToObject(o, "text", text);
			mcp_structured(r, o);
		}
		free(text);
		free(path);
		free(name);
	}
	ksr_atspi_tree_clear(&tree);
	ksr_atspi_app_clear(&app);
	return 0;
}
