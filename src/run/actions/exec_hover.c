/* hover: move the pointer onto a target and leave it there, so tooltips and
 * hover menus open; no button is pressed. The target is a point of the window
 * (a declared target, fractions, center: the runner resolved the pixel), an
 * accessibility control (its extents' centre) or a page element (CDP moves
 * the page's mouse after the click's actionability checks). */
#include "run/actions/exec.h"

#include "run/actions/exec_atspi.h"

static void pointer_to(ksr_run *run, int px, int py, ksr_step_result *res)
{
	ksr_err err = {0};
	res->has_pixel = true;
	res->px = px, res->py = py;
	if (ksr_x11_pointer_move(run->x, px, py, &err) < 0) {
		bool lost = !run->x || !ksr_x11_alive(run->x);
		ksr_step_fail(res, KSR_STEP_ERROR,
		              lost ? KSR_OUTCOME_NO_DISPLAY : KSR_OUTCOME_BACKEND_UNAVAILABLE,
		              "the pointer could not be moved: %.400s", err.msg);
		return;
	}
	res->acted = true;
}

void ksr_exec_hover(ksr_run *run, const ksr_step *step, const ksr_step_target *t,
                    ksr_step_result *res)
{
	int px, py;
	switch (step->hover.via) {
	case KSR_HOVER_POINT:
		pointer_to(run, t->px, t->py, res);
		return;
	case KSR_HOVER_ELEMENT:
		res->rung = "element";
		if (ksr_atspi_step_point(run, step, &px, &py, res) &&
		    ksr_step_ready_at(run, step, run->have_window ? run->window.id : 0, px, py,
		                      res))
			pointer_to(run, px, py, res);
		return;
	case KSR_HOVER_PAGE:
		ksr_cdp_step_hover(run, step, res);
		return;
	}
}
