/* Did the input do anything? The runner starts an effect watch just before
 * an input step acts (its windows' repaints tracked, the focus and the time
 * noted) and reads what arrived once the step has settled: no wait of its
 * own, the settle wait is the bound. A step without checks whose input
 * changed nothing is a no-effect concern (expect_effect: false allows it). */
#include "run/actions/exec.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ksr/verdict.h"

#define EFFECT_BOUND_MS 1000 /* the settle bound (evidence.c SETTLE_MAX_MS) */
#define EFFECT_SLICE_MS 50   /* the other window and the focus are looked at this often */

/* Which process the app is: the run's app, or in desktop mode the tool the
 * step acts on (its window's pid, and its launch shell's process group). */
static void app_process(ksr_run *run, ksr_effect_watch *w)
{
	const ksr_tool *t = run->sc->desktop ? ksr_tools_a11y(run) : NULL;
	if (t) {
		w->pid = ksr_tool_a11y_pid(t);
		w->pgid = t->pid;
		w->wins[2] = t->window;
	} else {
		w->pid = run->app_pid;
	}
}

/* One of the app's top-level windows: one watched, one of its process (or
 * process group), one transient for a watched one, or one made by the
 * same X client as a watched one. */
static bool apps_window(ksr_run *run, const ksr_effect_watch *w, const ksr_window *win)
{
	for (size_t i = 0; i < sizeof w->wins / sizeof w->wins[0]; i++)
		if (w->wins[i] && (win->id == w->wins[i] || win->transient_for == w->wins[i] ||
		                   ksr_x11_same_client(run->x, win->id, w->wins[i])))
			return true;
	if (win->pid <= 0)
		return false;
	return win->pid == w->pid || (w->pgid > 0 && getpgid(win->pid) == w->pgid);
}

static uint64_t title_hash(const char *t)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)(t ? t : ""); *p; p++)
		h = (h ^ *p) * 1099511628211ULL;
	return h;
}

/* The app's windows now, into ws (at most KSR_EFFECT_WINDOWS); *full when
 * there were more. false when they could not be listed. */
static bool app_windows(ksr_run *run, const ksr_effect_watch *w, struct ksr_effect_window *ws,
                        size_t *n, bool *full)
{
	ksr_window_list l = {0};
	ksr_err err = {0};
	*n = 0, *full = false;
	if (ksr_x11_list_windows(run->x, &l, &err) < 0)
		return false;
	for (size_t i = 0; i < l.len; i++) {
		if (!apps_window(run, w, &l.items[i]))
			continue;
		if (*n == KSR_EFFECT_WINDOWS) {
			*full = true;
			break;
		}
		ws[(*n)++] =
		        (struct ksr_effect_window){l.items[i].id, title_hash(l.items[i].title)};
	}
	ksr_window_list_clear(&l);
	return true;
}

void ksr_effect_begin(ksr_run *run, const ksr_step *step, unsigned long window, ksr_effect_watch *w)
{
	memset(w, 0, sizeof *w);
	if (!(step->info->modifiers & KSR_MOD_EFFECT) || !run->x || !ksr_x11_alive(run->x))
		return;
	w->on = true;
	w->wins[0] = window;
	w->wins[1] = run->have_window && run->window.id != window ? run->window.id : 0;
	app_process(run, w);
	ksr_err err = {0};
	for (size_t i = 0; i < 2; i++)
		if (w->wins[i] && ksr_x11_damage_track(run->x, w->wins[i], &err) == 0)
			w->damage = true;
	/* The repaints the server did before the act, counted after a round
	 * trip: a higher count later is a repaint after it. Counted, not dated:
	 * the server's clock is mapped onto ours within half a round trip and
	 * its coarse tick, and a repaint a few ms after the act could be dated
	 * before it (a CI run's space key was judged to have changed nothing). */
	for (size_t i = 0; i < 2; i++)
		w->repaints[i] = w->wins[i] ? ksr_x11_damage_count(run->x, w->wins[i]) : -1;
	w->focus = ksr_x11_input_focus(run->x);
	if (!app_windows(run, w, w->before, &w->n_before, &w->before_full))
		w->before_full = true; /* unknown: only the changes' own windows tell */
	w->since_ms = ksr_now_ms();
}

static bool had_window(const ksr_effect_watch *w, const struct ksr_effect_window *now)
{
	for (size_t i = 0; i < w->n_before; i++)
		if (w->before[i].id == now->id && w->before[i].title == now->title)
			return true;
	return false;
}

/* A window of the app's came, went or was retitled since the act: the
 * display's changes (anyone's: another client mapping a window is not the
 * app's effect) read for the app's own client, then its windows listed
 * again and compared. Only looked at when something changed on the
 * display since the act. */
static bool app_window_changed(ksr_run *run, const ksr_effect_watch *w)
{
	if (ksr_x11_last_change_ms(run->x) <= w->since_ms)
		return false;
	if (ksr_x11_client_changed_since(run->x, w->wins, sizeof w->wins / sizeof w->wins[0],
	                                 w->since_ms) == 1)
		return true;
	struct ksr_effect_window now[KSR_EFFECT_WINDOWS];
	size_t n = 0;
	bool full = false;
	if (!app_windows(run, w, now, &n, &full))
		return false;
	if (!full && !w->before_full && n != w->n_before)
		return true;
	for (size_t i = 0; i < n; i++)
		if (!had_window(w, &now[i]))
			return true;
	return false;
}

/* The focus moved from or to one of the app's windows (by X client). */
static bool app_focus_changed(ksr_run *run, const ksr_effect_watch *w)
{
	unsigned long now = ksr_x11_input_focus(run->x);
	if (now == w->focus)
		return false;
	for (size_t i = 0; i < sizeof w->wins / sizeof w->wins[0]; i++)
		if (w->wins[i] && (ksr_x11_same_client(run->x, now, w->wins[i]) ||
		                   ksr_x11_same_client(run->x, w->focus, w->wins[i])))
			return true;
	return false;
}

/* What the watch saw, "+"-joined in a fixed order, or "none"; "unknown"
 * when nothing was seen and repaints could not be watched. */
static void effect_words(ksr_run *run, const ksr_effect_watch *w, const ksr_step_result *res,
                         char *out, size_t len)
{
	bool repaint = false;
	for (size_t i = 0; i < 2; i++)
		repaint = repaint || (w->repaints[i] >= 0 &&
		                      ksr_x11_damage_count(run->x, w->wins[i]) > w->repaints[i]);
	bool focus = app_focus_changed(run, w);
	bool window = app_window_changed(run, w);
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
