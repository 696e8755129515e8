/* Landmarks: the showing nodes that name a part of an app's window (its
 * frames and dialogs, alerts, headings, landmarks, named panels), read with
 * one bounded walk (walk.c). A first-run screen or a restore-session prompt
 * drawn inside the main window (Thunderbird's account setup, a Qt app's
 * welcome page) has no window title of its own; its heading or its panel's
 * name is what says what it is. */
#include "backend/atspi/priv.h"

#include <atspi/atspi-constants.h>
#include <stdlib.h>
#include <string.h>

/* Roles whose name says what a part of a window is. "document web" is a
 * browser page, named by its title; a plain label is not read (a main
 * window's labels are its content: "Sign in" beside a field is not a
 * first-run screen). */
static const char *const landmark_roles[] = {
        "frame",    "window", "dialog", "alert",    "notification", "heading",
        "landmark", "form",   "panel",  "info bar", "document web", NULL,
};

bool ksr_atspi_landmark_role(const char *role)
{
	for (size_t i = 0; role && landmark_roles[i]; i++)
		if (ksr_atspi_role_equal(landmark_roles[i], role))
			return true;
	return false;
}

/* The top-level node i is in (depth 1: the app's frames and dialogs). */
static const ksr_atspi_node *top_level_of(const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	while (n->depth > 1 && n->parent >= 0)
		n = &t->nodes[n->parent];
	return n->depth == 1 ? n : NULL;
}

/* The selected tab of a notebook names the page on screen: Inkscape's
 * first start shows a dialog (titled by its version) whose selected tab is
 * "Quick Setup". The other tabs are only labels for pages not shown. */
static bool is_selected_tab(const ksr_atspi_node *n)
{
	return ksr_atspi_role_equal("page tab", n->role) &&
	       (n->states & (1ull << ATSPI_STATE_SELECTED));
}

static bool is_landmark(const ksr_atspi_tree *t, size_t i)
{
	const ksr_atspi_node *n = &t->nodes[i];
	return n->depth > 0 && n->name && *n->name &&
	       (ksr_atspi_landmark_role(n->role) || is_selected_tab(n)) &&
	       ksr_atspi_tree_showing(t, i);
}

static void keep(ksr_atspi_landmarks *l, const ksr_atspi_tree *t, size_t i, size_t *cap)
{
	const ksr_atspi_node *n = &t->nodes[i];
	char *name = ksr_atspi_name_display(n->name);
	if (!name || !*name) {
		free(name);
		return;
	}
	if (l->len == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		l->items = ksr_xrealloc(l->items, *cap * sizeof *l->items);
	}
	const ksr_atspi_node *top = top_level_of(t, i);
	l->items[l->len++] = (ksr_atspi_landmark){
	        .role = ksr_xstrdup(n->role),
	        .name = name,
	        .path = ksr_atspi_node_path(t, i),
	        .window = top && top->name ? ksr_atspi_name_display(top->name) : NULL,
	        .depth = n->depth,
	};
}

int ksr_atspi_landmarks_read(ksr_atspi *a, const ksr_atspi_app *app, int max_nodes, ksr_deadline d,
                             ksr_atspi_landmarks *out, ksr_err *err)
{
	*out = (ksr_atspi_landmarks){0};
	ksr_atspi_walk_opts o = {.max_nodes = max_nodes, .names_only = true};
	ksr_atspi_tree t = {0};
	if (ksr_atspi_walk(a, app, &o, d, &t, err) < 0)
		return -1;
	size_t cap = 0;
	for (size_t i = 1; i < t.len; i++)
		if (is_landmark(&t, i))
			keep(out, &t, i, &cap);
	out->nodes = t.len;
	out->cut_by = t.truncated ? (t.cut_by ? t.cut_by : "time") : NULL;
	out->ms = t.ms;
	ksr_atspi_tree_clear(&t);
	return 0;
}

void ksr_atspi_landmarks_clear(ksr_atspi_landmarks *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->len; i++) {
		free(l->items[i].role);
		free(l->items[i].name);
		free(l->items[i].path);
		free(l->items[i].window);
	}
	free(l->items);
	*l = (ksr_atspi_landmarks){0};
}
