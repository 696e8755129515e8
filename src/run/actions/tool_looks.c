/* Desktop mode: what a run does for its app, done for each spawned tool once
 * its spawn has its window (docs/acting.md#desktop-mode): settle_s, the
 * painted rule (a window still one flat colour is waited for up to
 * paint_timeout_s, else a `not-rendered` concern naming the tool), the
 * accessibility probe of the tool (atspi-tool-NN.json and a summary), and the
 * first look's dialog rules on the tool's windows (an error dialog fails the
 * run, a first-run prompt is a concern). A `tool` event records it all for
 * the report's app section. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/atspi.h"
#include "ksr/json.h"
#include "run/actions/exec.h"
#include "run/actions/exec_atspi.h"
#include "run/diagnosis/dialogs.h"

#define TOOL_APPEAR_MS    5000  /* a tool may join the bus a little after its window */
#define TOOL_WALK_MS      10000 /* as the probe stage's walk */
#define TOOL_MAX_NODES    5000
#define TOOL_LANDMARKS_MS 3000
#define PAINT_RECHECK_MS  200 /* at most one colour count per this */
#define SUMMARY_MAX       30  /* controls named in the tool event; the file has all */

/* The looks' own limit: never past the run's working deadline. */
static ksr_deadline within(const ksr_run *run, int64_t ms)
{
	return ksr_deadline_min(run->work, ksr_deadline_in_ms(ms));
}

/* settle_s, as the settle stage gives the app: the tool's death ends it (its
 * watch is a guard of every wait). false: the run ended meanwhile. */
static bool tool_settle(ksr_run *run, const ksr_step *step)
{
	ksr_wait w = ksr_sleep_until(within(run, (int64_t)(run->sc->settle_s * 1000)));
	if (w != KSR_WAIT_CANCELLED && !ksr_deadline_passed(run->work))
		return true;
	ksr_run_wait_ended_run(run, w == KSR_WAIT_CANCELLED ? w : KSR_WAIT_TIMEOUT, step->pos.line,
	                       "spawn (settling)");
	return false;
}

/* The painted rule: "painted", "painted-late", "not-rendered", or "unknown"
 * (no window to count: unmapped, off screen). */
static const char *tool_paint(ksr_run *run, const ksr_tool *t, const ksr_window *w)
{
	ksr_x11_colours c = {0};
	ksr_err err = {0};
	bool damage = ksr_x11_damage_available(run->x) &&
	              ksr_x11_damage_track(run->x, t->window, &err) == 0;
	if (ksr_x11_window_colours(run->x, t->window, &c, &err) < 0)
		return "unknown";
	if (!ksr_run_colours_blank(&c))
		return "painted";
	ksr_deadline d = within(run, (int64_t)(run->sc->paint_timeout_s * 1000));
	for (int64_t looked = ksr_now_ms();;) {
		ksr_deadline spaced =
		        ksr_deadline_min(d, (ksr_deadline){looked + PAINT_RECHECK_MS});
		ksr_wait wt = ksr_sleep_until(spaced);
		if (wt == KSR_WAIT_READY || wt == KSR_WAIT_TIMEOUT)
			wt = ksr_deadline_passed(d) ? KSR_WAIT_TIMEOUT
			     : damage ? ksr_x11_damage_wait(run->x, t->window, looked - 50, d)
			              : KSR_WAIT_READY;
		if (wt == KSR_WAIT_CANCELLED || wt == KSR_WAIT_ERROR)
			return "unknown"; /* the run's own waits say what ended it */
		looked = ksr_now_ms();
		if (ksr_x11_window_colours(run->x, t->window, &c, &err) < 0)
			return "unknown";
		if (!ksr_run_colours_blank(&c))
			return "painted-late";
		if (wt == KSR_WAIT_TIMEOUT || ksr_deadline_passed(d))
			break;
	}
	ksr_run_concern(run, KSR_CONCERN_NOT_RENDERED, t->line,
	                "the tool '%s' (pid %d): its window \"%s\" (0x%lx) was still one flat "
	                "colour %g s after settle_s (paint_timeout_s): it did not render",
	                t->as ? t->as : "?", t->pid, w->title ? w->title : "", t->window,
	                run->sc->paint_timeout_s);
	return "not-rendered";
}

static int write_tree(ksr_run *run, const ksr_tool *t, const ksr_run_atspi *a,
                      const ksr_atspi_tree *tree, char *name, size_t len)
{
	snprintf(name, len, "atspi-tool-%02zu.json", (size_t)(t - run->tools) + 1);
	cJSON *doc = cJSON_CreateObject();
	cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
	cJSON_AddStringToObject(tool, "as", t->as ? t->as : "");
	cJSON_AddNumberToObject(tool, "pid", a->app.pid);
	cJSON_AddStringToObject(tool, "name", a->app.name ? a->app.name : "");
	cJSON_AddStringToObject(tool, "toolkit", a->app.toolkit ? a->app.toolkit : "");
	cJSON *nodes = cJSON_AddArrayToObject(doc, "nodes");
	for (size_t i = 0; i < tree->len; i++) {
		cJSON *n = ksr_atspi_node_json(tree, i);
		cJSON_AddNumberToObject(n, "depth", tree->nodes[i].depth);
		cJSON_AddNumberToObject(n, "parent", tree->nodes[i].parent);
		cJSON_AddItemToArray(nodes, n);
	}
	char *text = ksr_json_print(doc, true);
	cJSON_Delete(doc);
	ksr_err err = {0};
	int rc = ksr_evidence_write_text(run->out, name, text, strlen(text), &err);
	free(text);
	if (rc < 0)
		return rc;
	cJSON *art = cJSON_CreateObject();
	cJSON_AddStringToObject(art, "name", name);
	cJSON_AddStringToObject(art, "kind", "json");
	cJSON_AddStringToObject(art, "description", "a spawned tool's accessibility tree (probe)");
	ksr_run_emit(run, "artifact", art);
	return 0;
}

static void summary(cJSON *probe, const ksr_run_atspi *a, const ksr_atspi_tree *tree)
{
	cJSON_AddNumberToObject(probe, "pid", a->app.pid);
	cJSON_AddStringToObject(probe, "name", a->app.name ? a->app.name : "");
	cJSON_AddStringToObject(probe, "toolkit", a->app.toolkit ? a->app.toolkit : "");
	cJSON_AddStringToObject(probe, "found_by", a->found_by ? a->found_by : "");
	cJSON_AddNumberToObject(probe, "nodes", (double)tree->len);
	cJSON_AddNumberToObject(probe, "walk_ms", (double)tree->ms);
	cJSON_AddBoolToObject(probe, "truncated", tree->truncated);
	cJSON *controls = cJSON_AddArrayToObject(probe, "controls");
	int listed = 0;
	for (size_t i = 1; i < tree->len && listed < SUMMARY_MAX; i++) {
		const ksr_atspi_node *n = &tree->nodes[i];
		if (n->n_actions == 0 && !(n->name && *n->name && n->has_extents))
			continue;
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "role", n->role ? n->role : "");
		char *dn =
		        ksr_atspi_name_display(n->name); /* tidied, as every report prints names */
		cJSON_AddStringToObject(c, "name", dn ? dn : "");
		free(dn);
		cJSON_AddItemToArray(controls, c);
		listed++;
	}
}

/* A tool that may still join the bus is waited for; one whose process has
 * no bridge mapped (xterm) is looked for once, as the probe stage does. */
static ksr_deadline appear_until(const ksr_tool *t)
{
	ksr_atspi_bridge b;
	bool none = ksr_atspi_bridge_of(ksr_tool_a11y_pid(t), &b) == 0 && !b.loaded;
	return ksr_deadline_in_ms(none ? 0 : TOOL_APPEAR_MS);
}

/* The probe, for this tool; its landmarks on the same connection for the
 * dialog rules (*have_marks). Records the status in t->probe. */
static void tool_probe(ksr_run *run, ksr_tool *t, cJSON *probe, ksr_atspi_landmarks *lm,
                       bool *have_marks)
{
	ksr_run_atspi a;
	ksr_err err = {0};
	*have_marks = false;
	if (!run->sc->atspi) {
		snprintf(t->probe, sizeof t->probe, "skipped");
		cJSON_AddStringToObject(probe, "reason", "atspi: false in the scenario");
	} else if (ksr_run_atspi_open_until(run, within(run, TOOL_WALK_MS), appear_until(t), &a,
	                                    &err) < 0) {
		snprintf(t->probe, sizeof t->probe, "%s",
		         a.no_bus ? "unavailable" : "app-not-found");
		cJSON_AddStringToObject(probe, "reason", err.msg);
	} else {
		ksr_atspi_tree tree = {0};
		if (ksr_run_atspi_walk(run, &a, TOOL_MAX_NODES, within(run, TOOL_WALK_MS), &tree,
		                       &err) < 0) {
			snprintf(t->probe, sizeof t->probe, "no-answer");
			cJSON_AddStringToObject(probe, "reason", err.msg);
		} else {
			char name[40];
			snprintf(t->probe, sizeof t->probe, "ok");
			summary(probe, &a, &tree);
			if (write_tree(run, t, &a, &tree, name, sizeof name) == 0)
				cJSON_AddStringToObject(probe, "artifact", name);
			*have_marks = ksr_atspi_landmarks_read(a.a, &a.app, TOOL_MAX_NODES,
			                                       within(run, TOOL_LANDMARKS_MS), lm,
			                                       &err) == 0;
		}
		ksr_atspi_tree_clear(&tree);
		ksr_run_atspi_release(&a);
	}
	cJSON_AddStringToObject(probe, "status", t->probe);
}

static cJSON *tool_event(const ksr_run *run, const ksr_tool *t, const ksr_window *w,
                         const char *command)
{
	char id[32];
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "as", t->as ? t->as : "");
	cJSON_AddNumberToObject(e, "pid", t->pid);
	ksr_tool_log_name((size_t)(t - run->tools), id, sizeof id);
	cJSON_AddStringToObject(e, "log", id);
	cJSON_AddNumberToObject(e, "line", t->line);
	cJSON_AddStringToObject(e, "command", command ? command : "");
	if (t->desktop_entry)
		cJSON_AddStringToObject(e, "desktop_entry", t->desktop_entry);
	snprintf(id, sizeof id, "0x%lx", w->id);
	cJSON *win = cJSON_AddObjectToObject(e, "window");
	cJSON_AddStringToObject(win, "id", id);
	cJSON_AddStringToObject(win, "title", w->title ? w->title : "");
	cJSON_AddStringToObject(win, "class", w->res_class ? w->res_class : "");
	cJSON_AddNumberToObject(win, "pid", w->pid);
	return e;
}

void ksr_tool_looks(ksr_run *run, const ksr_step *step, ksr_tool *t, const ksr_window *w,
                    const char *command, ksr_step_result *res)
{
	const char *was = run->a11y_tool;
	run->a11y_tool = t->as; /* NULL: the newest tool, this one */
	cJSON *e = tool_event(run, t, w, command);
	if (tool_settle(run, step)) {
		cJSON_AddStringToObject(e, "paint", tool_paint(run, t, w));
		cJSON *probe = cJSON_AddObjectToObject(e, "probe");
		ksr_atspi_landmarks lm = {0};
		bool have_marks = false;
		if (!ksr_cancelled())
			tool_probe(run, t, probe, &lm, &have_marks);
		char note[200] = "";
		if (!ksr_cancelled() &&
		    !ksr_dialogs_tool_look(run, t, have_marks ? &lm : NULL, note, sizeof note))
			snprintf(res->reason, sizeof res->reason, "%s", note);
		cJSON_AddStringToObject(e, "dialogs", note);
		ksr_atspi_landmarks_clear(&lm);
		t->looked = true;
	}
	ksr_run_emit(run, "tool", e);
	if (t->probe[0])
		cJSON_AddStringToObject(
		        cJSON_GetObjectItemCaseSensitive(ksr_step_extra(res), "tool"), "probe",
		        t->probe);
	run->a11y_tool = was;
}
