/* Did the input do anything? The runner starts an effect watch just before
 * an input step acts (its windows' repaints tracked, the focus and the time
 * noted) and reads what arrived once the step has settled: no wait of its
 * own, the settle wait is the bound. A step without checks whose input
 * changed nothing is a no-effect concern (expect_effect: false allows it). */
#include "run/actions/exec.h"

#include <stdio.h>
#include <string.h>

#include "ksr/verdict.h"

#define EFFECT_BOUND_MS 1000 /* the settle bound (evidence.c SETTLE_MAX_MS) */
#define EFFECT_SLICE_MS 50   /* the other window and the focus are looked at this often */

void ksr_effect_begin(ksr_run *run, const ksr_step *step, unsigned long window, ksr_effect_watch *w)
{
	memset(w, 0, sizeof *w);
	if (!(step->info->modifiers & KSR_MOD_EFFECT) || !run->x || !ksr_x11_alive(run->x))
		return;
	w->on = true;
	w->wins[0] = window;
	w->wins[1] = run->have_window && run->window.id != window ? run->window.id : 0;
	ksr_err err = {0};
	for (size_t i = 0; i < 2; i++)
		if (w->wins[i] && ksr_x11_damage_track(run->x, w->wins[i], &err) == 0)
			w->damage = true;
	/* A window tracked for the first time counts as damaged now, and a
	 * repaint the server already did is read by this round trip: the
	 * watch counts from after both. */
	for (size_t i = 0; i < 2; i++)
		if (w->wins[i])
			(void)ksr_x11_damaged_since(run->x, w->wins[i], 0);
	w->focus = ksr_x11_input_focus(run->x);
	w->since_ms = ksr_now_ms();
}

/* What the watch saw, "+"-joined in a fixed order, or "none"; "unknown"
 * when nothing was seen and repaints could not be watched. */
static void effect_words(ksr_run *run, const ksr_effect_watch *w, const ksr_step_result *res,
                         char *out, size_t len)
{
	bool repaint = false;
	for (size_t i = 0; i < 2; i++)
		repaint = repaint || (w->wins[i] &&
		                      ksr_x11_damaged_since(run->x, w->wins[i], w->since_ms) == 1);
	bool focus = ksr_x11_input_focus(run->x) != w->focus;
	bool window = ksr_x11_last_change_ms(run->x) > w->since_ms;
	const cJSON *sc =
	        res->extra ? cJSON_GetObjectItemCaseSensitive(res->extra, "state_change") : NULL;
	bool state = cJSON_IsString(sc) && !strcmp(sc->valuestring, "confirmed");
	out[0] = '\0';
	const struct {
		bool seen;
		const char *word;
	} seen[] = {
	        {repaint, "repaint"}, {focus, "focus"}, {window, "window"}, {state, "a11y-state"}};
	for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
		if (seen[i].seen)
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "+" : "",
			         seen[i].word);
	if (!out[0])
		snprintf(out, len, "%s", w->damage ? "none" : "unknown");
}

/* Nothing seen when the settle wait ended: an app busy with the input (a
 * file chooser looking at a typed path) can stay quiet past the quiet
 * interval and repaint later. Wait for a first repaint, at most until the
 * settle bound counted from the input; a step that did change something
 * never comes here, and one that did not costs at most that bound. */
static void wait_late_effect(ksr_run *run, const ksr_effect_watch *w, const ksr_step_result *res,
                             char *words, size_t len)
{
	ksr_deadline bound =
	        ksr_deadline_min(run->work, (ksr_deadline){w->since_ms + EFFECT_BOUND_MS});
	while (!strcmp(words, "none") && !ksr_deadline_passed(bound) && !ksr_cancelled()) {
		ksr_deadline slice = ksr_deadline_min(bound, ksr_deadline_in_ms(EFFECT_SLICE_MS));
		unsigned long win = w->wins[0] ? w->wins[0] : w->wins[1];
		if (ksr_x11_damage_wait(run->x, win, w->since_ms, slice) == KSR_WAIT_ERROR)
			return;
		effect_words(run, w, res, words, len);
	}
}

void ksr_effect_end(ksr_run *run, const ksr_step *step, const ksr_effect_watch *w,
                    ksr_step_result *res)
{
	if (!w->on || !res->acted || !ksr_x11_alive(run->x))
		return;
	char words[64];
	effect_words(run, w, res, words, sizeof words);
	if (!strcmp(words, "none"))
		wait_late_effect(run, w, res, words, sizeof words);
	cJSON_AddStringToObject(ksr_step_extra(res), "effect", words);
	if (strcmp(words, "none") || step->n_checks || step->n_post || step->no_effect_ok)
		return;
	const char *what = step->text ? step->text : step->name.text;
	ksr_run_concern(run, KSR_CONCERN_NO_EFFECT, step->pos.line,
	                "%s%s%.200s (line %d) changed nothing in the app", step->info->name,
	                what ? " " : "", what ? what : "", step->pos.line);
}
