/* The accessibility probe: list the app's controls (role, name, states,
 * actions, screen extents) into atspi.json and a bounded summary into the
 * report's `accessibility` section. Recorded for reference only: it never
 * decides the verdict, and no bus means "unavailable" (stage skipped with the
 * reason), not a failure. */
#include "run/stages/stage.h"
#include "ksr/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "run/actions/exec_atspi.h"

#define PROBE_LIMIT_S   15
#define PROBE_WALK_MS   10000
#define PROBE_MAX_NODES 5000
#define PROBE_APPEAR_MS 5000
#define SUMMARY_MAX     60 /* controls listed in report.json; atspi.json has them all */

static const char *probe_skip(const ksr_run *run)
{
	if (!run->sc->atspi)
		return "atspi: false in the scenario";
	if (run->sc->desktop)
		return "desktop mode: there is no app to probe";
	return NULL;
}

static double probe_limit(const ksr_run *run)
{
	(void)run;
	return PROBE_LIMIT_S;
}

/* A control worth naming in the summary: one a scenario could act on or check. */
static bool interesting(const ksr_atspi_node *n)
{
	return n->n_actions > 0 || (n->name && *n->name && n->has_extents);
}

static cJSON *tree_doc(const ksr_run_atspi *t, const ksr_atspi_tree *tree)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *bus = cJSON_AddObjectToObject(doc, "bus");
	cJSON_AddStringToObject(bus, "address", ksr_atspi_address(t->a));
	cJSON_AddStringToObject(bus, "source", ksr_atspi_source_name(ksr_atspi_bus_source(t->a)));
	cJSON *app = cJSON_AddObjectToObject(doc, "app");
	cJSON_AddNumberToObject(app, "pid", t->app.pid);
	cJSON_AddStringToObject(app, "name", t->app.name ? t->app.name : "");
	cJSON_AddStringToObject(app, "bus_name", t->app.bus);
	cJSON_AddStringToObject(app, "toolkit", t->app.toolkit ? t->app.toolkit : "");
	cJSON_AddStringToObject(app, "found_by", t->found_by);
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < tree->len; i++) {
		cJSON *n = ksr_atspi_node_json(tree, i);
		cJSON_AddNumberToObject(n, "depth", tree->nodes[i].depth);
		cJSON_AddNumberToObject(n, "parent", tree->nodes[i].parent);
		cJSON_AddItemToArray(nodes, n);
	}
	return doc;
}

static void add_walk_fields(cJSON *o, const ksr_atspi_tree *tree)
{
	cJSON_AddNumberToObject(o, "nodes", (double)tree->len);
	cJSON_AddNumberToObject(o, "walk_ms", (double)tree->ms);
	cJSON_AddBoolToObject(o, "truncated", tree->truncated);
	if (tree->cut_by)
		cJSON_AddStringToObject(o, "cut_by", tree->cut_by);
	else
		cJSON_AddNullToObject(o, "cut_by");
	cJSON_AddNumberToObject(o, "unanswered", tree->unanswered);
}

static void emit_summary(ksr_run *run, const ksr_run_atspi *t, const ksr_atspi_tree *tree)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "status", "ok");
	cJSON_AddStringToObject(e, "bus_source", ksr_atspi_source_name(ksr_atspi_bus_source(t->a)));
	cJSON *app = cJSON_AddObjectToObject(e, "app");
	cJSON_AddNumberToObject(app, "pid", t->app.pid);
	cJSON_AddStringToObject(app, "name", t->app.name ? t->app.name : "");
	cJSON_AddStringToObject(app, "toolkit", t->app.toolkit ? t->app.toolkit : "");
	cJSON_AddStringToObject(app, "found_by", t->found_by);
	add_walk_fields(e, tree);
	cJSON *controls = cJSON_AddArrayToObject(e, "controls");
	int listed = 0;
	for (size_t i = 1; i < tree->len && listed < SUMMARY_MAX; i++) {
		if (!interesting(&tree->nodes[i]))
			continue;
		cJSON *c = ksr_atspi_node_json(tree, i);
		cJSON_DeleteItemFromObjectCaseSensitive(c, "path");
		cJSON_AddItemToArray(controls, c);
		listed++;
	}
	cJSON_AddStringToObject(e, "artifact", "atspi.json");
	ksr_run_emit(run, "accessibility", e);
}

static void emit_unavailable(ksr_run *run, const char *status, const char *reason)
{
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "status", status);
	cJSON_AddStringToObject(e, "reason", reason);
	ksr_run_emit(run, "accessibility", e);
}

static int write_tree(ksr_run *run, const ksr_run_atspi *t, const ksr_atspi_tree *tree)
{
	cJSON *doc = tree_doc(t, tree);
	add_walk_fields(cJSON_AddObjectToObject(doc, "walk"), tree);
	char *text = ksr_json_print(doc, true);
	cJSON_Delete(doc);
	ksr_err err = {0};
	int rc = ksr_evidence_write_text(run->out, "atspi.json", text, strlen(text), &err);
	free(text);
	if (rc < 0)
		return rc;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", "atspi.json");
	cJSON_AddStringToObject(a, "kind", "json");
	cJSON_AddStringToObject(a, "description", "the app's accessibility tree (probe)");
	ksr_run_emit(run, "artifact", a);
	return 0;
}

/* An app may register on the bus a little after its window maps (GTK4 waits
 * for the registry): it is looked for again each time the bus says an app
 * joined, for a few seconds, before it is called absent; an app whose process
 * has no bridge mapped (xterm, a GTK 2 app without the module) is looked at
 * once, and the reason then opens with that cause (ksr_atspi_bridge_cause). */
static int open_app(ksr_run *run, ksr_run_atspi *t, ksr_err *err, bool *no_bridge)
{
	ksr_atspi_bridge b;
	*no_bridge = ksr_atspi_bridge_of(run->app_pid, &b) == 0 && !b.loaded;
	ksr_deadline appear = ksr_deadline_in_ms(*no_bridge ? 0 : PROBE_APPEAR_MS);
	return ksr_run_atspi_open_until(run, run->stage, appear, t, err);
}

/* How long ago this run published the accessibility bus on the X root (its
 * boot wait's a11y_bus event), -1 when it did not. */
static int64_t published_ago_ms(const ksr_run *run)
{
	const cJSON *e;
	cJSON_ArrayForEach(e, ksr_events_all(run->ev))
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "event");
		if (cJSON_IsString(name) && strcmp(name->valuestring, "a11y_bus") == 0 &&
		    cJSON_GetObjectItemCaseSensitive(e, "published"))
			return ksr_events_elapsed_ms(run->ev) -
			       (int64_t)cJSON_GetNumberValue(
			               cJSON_GetObjectItemCaseSensitive(e, "t_ms"));
	}
	return -1;
}

/* A cause the backend cannot see: a Qt app that started before this run
 * published the bus on the root (it reads the property only as it starts),
 * as the image's own start of its app does when it runs beside the runtime. */
static void qt_started_before(const ksr_run *run, char *out, size_t cap)
{
	ksr_atspi_bridge b;
	int64_t ago = published_ago_ms(run);
	out[0] = '\0';
	if (ago < 0 || ksr_atspi_bridge_of(run->app_pid, &b) < 0 || !ksr_atspi_bridge_is_qt(&b) ||
	    b.qt_always_on || b.age_ms <= ago)
		return;
	snprintf(out, cap,
	         "the app (pid %d) is a %s app that started %.1f s before this run published "
	         "the accessibility bus on the X root (AT_SPI_BUS), which Qt reads only as it "
	         "starts: restart it, or publish the bus in the session before the app starts "
	         "(docs/kasm-image.md); ",
	         run->app_pid, b.toolkit, (double)(b.age_ms - ago) / 1000.0);
}

static ksr_stage_status stage_probe(ksr_run *run, char *note, size_t len)
{
	ksr_run_atspi t;
	ksr_err err = {0};
	const char *why_none = run->session ? ksr_session_a11y_error(run->session) : NULL;
	bool no_bridge = false;
	if (open_app(run, &t, &err, &no_bridge) < 0) {
		if (ksr_cancelled() &&
		    ksr_run_wait_ended_run(run, KSR_WAIT_CANCELLED, 0, "accessibility-probe"))
			return KSR_STAGE_FAILED; /* recorded: interrupted (or the app died) */
		char cause[400] = "";
		if (!t.no_bus)
			qt_started_before(run, cause, sizeof cause);
		snprintf(note, len, "%s%s%s%s", t.no_bus ? "accessibility unavailable: " : "",
		         cause, why_none && t.no_bus ? why_none : err.msg,
		         no_bridge && !t.no_bus ? " (looked once)" : "");
		emit_unavailable(run, t.no_bus ? "unavailable" : "app-not-found", note);
		return KSR_STAGE_SKIPPED;
	}
	ksr_atspi_tree tree = {0};
	ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(PROBE_WALK_MS));
	ksr_stage_status st = KSR_STAGE_OK;
	if (ksr_run_atspi_walk(run, &t, PROBE_MAX_NODES, d, &tree, &err) < 0) {
		snprintf(note, len, "%s", err.msg);
		if (ksr_cancelled() &&
		    ksr_run_wait_ended_run(run, KSR_WAIT_CANCELLED, 0, "accessibility-probe"))
			st = KSR_STAGE_FAILED;
		emit_unavailable(run, "no-answer", err.msg);
	} else {
		write_tree(run, &t, &tree);
		emit_summary(run, &t, &tree);
		snprintf(note, len, "%zu nodes of %s (pid %d) in %lld ms%s%s", tree.len,
		         t.app.name ? t.app.name : "the app", t.app.pid, (long long)tree.ms,
		         tree.truncated ? ", cut by " : "", tree.truncated ? tree.cut_by : "");
	}
	ksr_atspi_tree_clear(&tree);
	ksr_run_atspi_release(&t);
	return st;
}

const ksr_stage_def ksr_stage_probe = {
        .name = "accessibility-probe",
        .limit_s = probe_limit,
        .skip = probe_skip,
        .run = stage_probe,
};
