/* ksr-findcheck: the find-mode walk (what click_element and the state checks
 * use) against its oracle, on a running app. For every name in a full walk of
 * the app that ksr_atspi_tree_find picks a node for, the find-mode walk must
 * pick the same node (same path), whether it answered from the app's cache
 * (only the match and its ancestors) or walked; again with the node's toolkit
 * role name as the role asked, where it differs from the standard one (GTK 4's
 * "button": an alias the cache does not give). tests/integration/test_atspi.py
 * runs it on a GTK 3, a GTK 4 and a Qt 5 app.
 *
 *   ksr-findcheck PID       needs the app's DBUS_SESSION_BUS_ADDRESS (or AT_SPI_BUS_ADDRESS)
 *   ksr-findcheck --tree PID [MAX_NODES]
 *
 * Prints one line per mismatch, then "checked N names: M mismatches, C from
 * the cache"; exit 0 when there was no mismatch, 1 otherwise, 2 on error.
 * With --tree: one full walk (bounded to MAX_NODES nodes when given), a line
 * per node in the walk's order (its
 * object path, its parent's, "-" for the application), then "calls N,
 * children from the cache K"; the
 * test compares it with tests/helpers/atspi_children.py's walk by
 * GetChildren alone. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"

typedef struct tally {
	int tried, bad, cached;
} tally;

/* Find mode for node i's name (and role, NULL: any); compare its pick with
 * the full tree's finder's. */
static void check_name(ksr_atspi *a, const ksr_atspi_app *app, const ksr_atspi_tree *full, size_t i,
                       const char *role, tally *n)
{
	ksr_name_match m = {.text = full->nodes[i].name};
	if (ksr_atspi_tree_find(full, &m, role) != (int)i)
		return; /* another node is first with that role */
	ksr_atspi_walk_opts wo = {.find_name = &m, .find_role = role};
	ksr_atspi_tree t = {0};
	ksr_err err = {0};
	int k = ksr_atspi_walk(a, app, &wo, ksr_deadline_in_ms(10000), &t, &err) == 0
	                ? ksr_atspi_tree_find(&t, &m, role)
	                : -1;
	char *want = ksr_atspi_node_path(full, i);
	char *got = k >= 0 ? ksr_atspi_node_path(&t, (size_t)k) : NULL;
	n->tried++;
	n->cached += t.found_in_cache;
	if (!got || strcmp(want, got) != 0) {
		printf("mismatch: %s%s%s -> %s (%zu nodes, %s)\n", want, role ? " as " : "",
		       role ? role : "", got ? got : "none", t.len,
		       k < 0 && err.msg[0] ? err.msg
		       : t.found_in_cache  ? "from the cache"
		                           : "walked");
		n->bad++;
	}
	free(want);
	free(got);
	ksr_atspi_tree_clear(&t);
}

/* The app, once it has joined the bus (a GTK 4 app may join after its
 * window maps): by the bus's signals, 20 s at most. */
static int find_app(ksr_atspi *a, int pid, ksr_atspi_app *app, ksr_err *err)
{
	ksr_deadline until = ksr_deadline_in_ms(20000);
	const char *by = NULL;
	ksr_atspi_watch_apps(a);
	for (;;) {
		int rc = ksr_atspi_find_app(a, pid, NULL, until, app, &by, err);
		if (rc == 0 || !ksr_atspi_await_app(a, rc, until))
			return rc;
	}
}

static void print_tree(const ksr_atspi_tree *t)
{
	for (size_t i = 0; i < t->len; i++) {
		int p = t->nodes[i].parent;
		printf("%s %s\n", t->nodes[i].path, p < 0 ? "-" : t->nodes[p].path);
	}
	printf("calls %d, children from the cache %d\n", t->calls, t->kids_cached);
}

int main(int argc, char **argv)
{
	bool tree = (argc == 3 || argc == 4) && strcmp(argv[1], "--tree") == 0;
	if (argc != 2 && !tree) {
		fprintf(stderr, "usage: ksr-findcheck PID | --tree PID [MAX_NODES]\n");
		return 2;
	}
	int pid = atoi(argv[tree ? 2 : 1]), rc = 2;
	ksr_atspi_walk_opts bound = {.max_nodes = argc == 4 ? atoi(argv[3]) : 0};
	ksr_atspi *a = NULL;
	ksr_atspi_app app = {0};
	ksr_atspi_tree full = {0};
	ksr_err err = {0};
	ksr_atspi_opts o = {.app_pid = pid};
	if (ksr_atspi_open(&o, ksr_deadline_in_ms(5000), &a, &err) < 0 ||
	    find_app(a, pid, &app, &err) < 0 ||
	    ksr_atspi_walk(a, &app, &bound, ksr_deadline_in_ms(10000), &full, &err) < 0) {
		fprintf(stderr, "ksr-findcheck: %s\n", err.msg);
		goto out;
	}
	if (tree) {
		print_tree(&full);
		bool cut_as_asked = bound.max_nodes && full.cut_by && !strcmp(full.cut_by, "nodes");
		rc = (full.truncated && !cut_as_asked) || full.unanswered ? 1 : 0;
		goto out;
	}
	/* A GTK 4 app builds some of its accessible objects when first asked:
	 * its tree after the first walk is not the one before (seen: gnome-
	 * calculator's history view gains a name). The oracle is a second walk. */
	ksr_atspi_tree_clear(&full);
	if (ksr_atspi_walk(a, &app, NULL, ksr_deadline_in_ms(10000), &full, &err) < 0) {
		fprintf(stderr, "ksr-findcheck: %s\n", err.msg);
		goto out;
	}
	tally n = {0};
	for (size_t i = 1; i < full.len; i++) {
		const ksr_atspi_node *nd = &full.nodes[i];
		if (!nd->name || !*nd->name)
			continue;
		check_name(a, &app, &full, i, NULL, &n);
		if (nd->toolkit_role && !ksr_atspi_role_equal(nd->toolkit_role, nd->role))
			check_name(a, &app, &full, i, nd->toolkit_role, &n);
	}
	printf("checked %d names: %d mismatches, %d from the cache\n", n.tried, n.bad, n.cached);
	rc = n.bad ? 1 : 0;
out:
	ksr_atspi_tree_clear(&full);
	ksr_atspi_app_clear(&app);
	ksr_atspi_close(a);
	return rc;
}
