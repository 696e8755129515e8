/* What the ready phase waits for over accessibility, where the app is on the
 * bus: the control a pointer action reaches, or the default button Return
 * activates, sensitive and showing. A change of its state repaints the
 * window, so each repaint (DAMAGE) is the moment to ask again. */
#include "ksr/keys.h"
#include "run/actions/exec_atspi.h"
#include "run/actions/target.h"

static void record_control(cJSON *rd, const ksr_atspi_control *c, bool sensitive, bool showing)
{
	cJSON_DeleteItemFromObjectCaseSensitive(rd, "control");
	cJSON *o = cJSON_AddObjectToObject(rd, "control");
	cJSON_AddStringToObject(o, "name", c->name ? c->name : "");
	cJSON_AddStringToObject(o, "role", c->role ? c->role : "");
	cJSON_AddBoolToObject(o, "sensitive", sensitive);
	cJSON_AddBoolToObject(o, "showing", showing);
}

static void control_never(const ksr_step *step, const ksr_atspi_control *c, bool sensitive,
                          ksr_step_result *res)
{
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "not ready: the %s \"%.100s\" under the point stayed %s for %g s",
	              c->role && *c->role ? c->role : "control", c->name ? c->name : "",
	              !sensitive ? "insensitive" : "not showing",
	              ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
}

/* Where the app is on the accessibility bus, the control a pointer action
 * at the point would reach is sensitive and showing: a dialog's button that
 * is enabled only once a field has text is waited for. A change of its
 * state repaints the window, so each repaint is the moment to ask again;
 * no control there (or no bus) claims nothing. */
bool ksr_ready_control(ksr_run *run, const ksr_step *step, const ksr_window *w, int px, int py,
                       ksr_deadline d, cJSON *rd, ksr_step_result *res)
{
	if (!run->sc->atspi || ksr_step_quiet_ms(run, step) <= 0 || !w->title)
		return true;
	ksr_run_atspi *t = ksr_run_atspi_kept(run, d);
	if (!t)
		return true;
	bool window_coords = ksr_atspi_app_window_coords(&t->app);
	ksr_atspi_at at = {.x = px,
	                   .y = py,
	                   .window_title = w->title,
	                   .window_coords = window_coords,
	                   .origin_x = w->x,
	                   .origin_y = w->y};
	for (;;) {
		int64_t asked = ksr_now_ms();
		ksr_atspi_control c = {0};
		ksr_err err = {0};
		if (ksr_atspi_control_at(t->a, &t->app, &at, d, &c, &err) <= 0)
			return true; /* nothing there to wait for (an unanswered call claims
			                nothing) */
		bool sensitive, showing;
		bool ok = ksr_atspi_control_ready(&c, window_coords, &sensitive, &showing);
		record_control(rd, &c, sensitive, showing);
		if (ok) {
			ksr_atspi_control_clear(&c);
			return true;
		}
		ksr_wait wt = ksr_x11_damage_wait(run->x, w->id, asked, d);
		if (wt != KSR_WAIT_READY && !ksr_ready_wait_failed(run, step, wt, res))
			control_never(step, &c, sensitive, res);
		ksr_atspi_control_clear(&c);
		if (wt != KSR_WAIT_READY)
			return ksr_ready_never(rd, "control");
	}
}

/* A key step that presses Return (or Enter) with no modifier activates the
 * window's default button: a dialog's Save that is greyed while the folder
 * a typed path names loads takes nothing. The chords are the step's, parsed
 * when it was made. */
static bool presses_return(const ksr_step *step)
{
	if (step->info->kind != KSR_KIND_KEY)
		return false;
	unsigned long ret = ksr_keys_lookup("Return"), enter = ksr_keys_lookup("KP_Enter");
	for (size_t i = 0; i < step->n_chords; i++) {
		const ksr_chord *c = &step->chords[i];
		if (c->n == 1 && (c->keysyms[0] == ret || c->keysyms[0] == enter))
			return true;
	}
	return false;
}

static void default_never(const ksr_step *step, const ksr_atspi_control *c, bool sensitive,
                          ksr_step_result *res)
{
	ksr_step_fail(res, KSR_STEP_FAILED, KSR_OUTCOME_STEP_FAILED,
	              "not ready: the window's default %s \"%.100s\" (what Return activates) "
	              "stayed %s for %g s",
	              c->role && *c->role ? c->role : "control", c->name ? c->name : "",
	              !sensitive ? "insensitive" : "not showing",
	              ksr_ready_bound_s(step, READY_DEFAULT_S * 1000));
}

/* Where the app is on the accessibility bus, Return into a dialog waits until
 * its default button is sensitive (one walk of the app's tree: dialogs only), asked again on each
 * repaint as a pointer action's control is; a window with none claims nothing. */
bool ksr_ready_default(ksr_run *run, const ksr_step *step, const ksr_window *w, ksr_deadline d,
                       cJSON *rd, ksr_step_result *res)
{
	if (!run->sc->atspi || ksr_step_quiet_ms(run, step) <= 0 || !w->title || !w->is_dialog ||
	    !presses_return(step))
		return true; /* a main window's Return (a new line) has no default to wait for */
	ksr_run_atspi *t = ksr_run_atspi_kept(run, d);
	ksr_atspi_control c = {0};
	ksr_err err = {0};
	if (!t || ksr_atspi_default_control(t->a, &t->app, w->title, d, &c, &err) <= 0)
		return true;
	bool window_coords = ksr_atspi_app_window_coords(&t->app);
	bool ok = true;
	for (;;) {
		int64_t asked = ksr_now_ms();
		bool sensitive, showing;
		if (ksr_atspi_control_ready(&c, window_coords, &sensitive, &showing)) {
			record_control(rd, &c, sensitive, showing);
			break;
		}
		record_control(rd, &c, sensitive, showing);
		ksr_wait wt = ksr_x11_damage_wait(run->x, w->id, asked, d);
		if (wt != KSR_WAIT_READY) {
			if (!ksr_ready_wait_failed(run, step, wt, res))
				default_never(step, &c, sensitive, res);
			ok = ksr_ready_never(rd, "default control");
			break;
		}
		if (ksr_atspi_control_refresh(t->a, &t->app, &c, d, &err) < 0)
			break; /* an unanswered call claims nothing */
	}
	cJSON_AddBoolToObject(cJSON_GetObjectItemCaseSensitive(rd, "control"), "default", true);
	ksr_atspi_control_clear(&c);
	return ok;
}
