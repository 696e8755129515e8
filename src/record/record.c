/* record: set up (a private session, the launch, the accessibility bus, the
 * RECORD stream, inotify), turn each input event into a step at the highest
 * rung it allows (a page element over CDP, record_cdp.c; a control; a
 * declared point), and write the scenario when told to stop. Each event is
 * placed as it arrives: the window under the pointer and the control there
 * are asked at once, before the app has reacted much to a click. */
#include "record/record_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "ksr/keys.h"
#include "ksr/atspi.h"
#include "ksr/proc.h"
#include "ksr/scenario.h"
#include "ksr/strbuf.h"

#define SETUP_MS          60000
#define CALL_MS           2000
#define DRAG_PX           8   /* a press and release further apart is a drag */
#define DOUBLE_MS         400 /* two clicks this close in time and place: a double click */
#define DOUBLE_PX         4
#define DEFAULT_STOP      "ctrl+alt+F12"
#define STOP_GRACE_MS     2000
#define LAUNCH_TICK_MS    100  /* how soon a launch that ended is noticed */
#define HANDOVER_GRACE_MS 2000 /* an exit 0: a process it handed over to may still map */

void rec_say(const rec *r, const char *fmt, ...)
{
	if (!r->o->on_message)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	r->o->on_message(r->o->ud, buf);
}

/* ---- the app driven ---- */

/* d bounds the app's first answer too: at setup, a busy app (just started)
 * gets what is left of setup's time; at a click, one call's. */
static void find_atspi_app_until(rec *r, ksr_deadline d)
{
	if (!r->a || r->have_app || r->app_pid <= 0)
		return;
	const char *found_by = NULL;
	ksr_err err = {0};
	r->have_app = ksr_atspi_find_app(r->a, r->app_pid, NULL, d, &r->app, &found_by, &err) == 0;
}

static void find_atspi_app(rec *r)
{
	find_atspi_app_until(r, ksr_deadline_in_ms(CALL_MS));
}

static void adopt(rec *r, const ksr_window *w)
{
	if (r->app_pid > 0 || w->pid <= 0)
		return;
	r->app_pid = w->pid;
	r->main_win = w->id;
	r->main_title = ksr_xstrdup(w->title ? w->title : "");
	find_atspi_app(r);
}

/* The window keys went to, from the windows seen at the last step. One not
 * seen then (a dialog that came) ends the last step first: the boundary
 * writes its wait_window and takes the windows as they are now. */
static const ksr_window *find_window(rec *r, unsigned long id)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < r->seen.len; i++)
			if (r->seen.items[i].id == id)
				return &r->seen.items[i];
		if (pass == 0)
			rec_boundary(r, true);
	}
	return NULL;
}

/* ---- clicks ---- */

static bool is_text_role(const char *role)
{
	static const char *const roles[] = {"text",     "password text", "entry",   "document text",
	                                    "terminal", "spin button",   "editbar", "paragraph"};
	for (size_t i = 0; role && i < sizeof roles / sizeof *roles; i++)
		if (ksr_atspi_role_equal(roles[i], role))
			return true;
	return false;
}

/* The top-level client window under the point (another is not over it there). */
static const ksr_window *window_at(rec *r, ksr_window_list *l, int px, int py)
{
	ksr_err err = {0};
	if (ksr_x11_list_windows(r->x, l, &err) < 0)
		return NULL;
	for (size_t i = 0; i < l->len; i++) {
		const ksr_window *w = &l->items[i];
		unsigned long by = 0;
		if (px >= w->x && py >= w->y && px < w->x + w->w && py < w->y + w->h &&
		    ksr_x11_point_covered(r->x, w->id, px, py, &by) == 0)
			return w;
	}
	return NULL;
}

static const char *button_word(int b)
{
	return b == 3 ? "right click" : b == 2 ? "middle click" : "click";
}

/* click_element NAME (role: ROLE) finds the control that was clicked: the
 * replay's own finder (showing first, then tree order) on a walk of the
 * app now picks that very node. A name shared with another control (the
 * widget factory's many "checkbutton"s) would act on the wrong one. */
static bool names_it(rec *r, const ksr_atspi_control *c, const char *shown)
{
	ksr_name_match m = {.text = ksr_xstrdup(shown)};
	ksr_atspi_walk_opts wo = {.find_name = &m, .find_role = c->role};
	ksr_atspi_tree t = {0};
	ksr_err err = {0};
	bool same = false;
	if (ksr_atspi_walk(r->a, &r->app, &wo, ksr_deadline_in_ms(CALL_MS), &t, &err) == 0) {
		int i = ksr_atspi_tree_find(&t, &m, c->role);
		same = i >= 0 && t.nodes[i].path && !strcmp(t.nodes[i].path, c->path);
		ksr_atspi_tree_clear(&t);
	}
	ksr_name_match_clear(&m);
	return same;
}

/* The control a click at the point reaches, as click_element: 1, or 0 when
 * it is not one a step can name (no name, not showing, a text field, a name
 * that finds another control). */
static int element_click(rec *r, const ksr_window *w, const ksr_rec_event *e, rec_step *s)
{
	free(r->last_role);
	r->last_role = NULL;
	find_atspi_app(r);
	if (!r->a || !r->have_app || !w->title)
		return 0;
	bool wc = ksr_atspi_app_window_coords(&r->app);
	ksr_atspi_at at = {.x = e->x,
	                   .y = e->y,
	                   .window_title = w->title,
	                   .window_coords = wc,
	                   .origin_x = w->x,
	                   .origin_y = w->y};
	ksr_atspi_control c = {0};
	ksr_err err = {0};
	if (ksr_atspi_control_at(r->a, &r->app, &at, ksr_deadline_in_ms(CALL_MS), &c, &err) <= 0)
		return 0;
	r->last_role = c.role ? ksr_xstrdup(c.role) : NULL;
	bool sensitive = false, showing = false;
	bool ready = ksr_atspi_control_ready(&c, wc, &sensitive, &showing);
	char *name = ksr_atspi_name_display(c.name);
	int placed = 0;
	bool nameable = e->detail == 1 && ready && name && *name && c.role && c.path &&
	                !is_text_role(c.role);
	bool unique = nameable && names_it(r, &c, name);
	/* A dialog's controls are clicked with the pointer, as the person did:
	 * GTK's file chooser was seen to ignore an accessibility Click on Save
	 * right after the name was typed (the focus never left the name field),
	 * never a pointer click. Its states are still checked after the step. */
	bool in_dialog = w->id != r->main_win && w->is_dialog;
	if (unique) {
		s->ctl_path = c.path ? ksr_xstrdup(c.path) : NULL;
		s->ctl_name = ksr_xstrdup(c.name ? c.name : "");
		s->ctl_states = c.states;
		s->role_seen = ksr_xstrdup(c.role);
	}
	if (unique && !in_dialog) {
		rec_set_kind(s, KSR_KIND_CLICK_ELEMENT);
		s->value = ksr_xstrdup(name);
		s->role = ksr_xstrdup(c.role);
		placed = 1;
	}
	if (asprintf(&s->comment, "a %s at %d,%d on %s \"%s\" in \"%s\"%s", button_word(e->detail),
	             e->x, e->y, c.role ? c.role : "control", name ? name : "", w->title,
	             placed     ? ""
	             : unique   ? " (in a dialog: a declared point of it, the pointer's "
	                          "click as the person's)"
	             : !ready   ? " (not sensitive or not showing: a declared point)"
	             : !*name   ? " (it has no name: a declared point)"
	             : nameable ? " (another control has its name and role, which "
	                          "click_element would find first: a declared point)"
	                        : " (a declared point)") < 0)
		abort();
	free(name);
	ksr_atspi_control_clear(&c);
	return placed;
}

static void declared_click(rec *r, const ksr_window *w, const ksr_rec_event *e, rec_step *s)
{
	rec_set_kind(s, e->detail == 3 ? KSR_KIND_RIGHT_CLICK : KSR_KIND_CLICK);
	s->point = true;
	s->fx = w->w > 0 ? (double)(e->x - w->x) / w->w : 0.5;
	s->fy = w->h > 0 ? (double)(e->y - w->y) / w->h : 0.5;
	if (w->id != r->main_win)
		s->target_window = rec_exact_pattern(w->title);
	if (!s->comment && asprintf(&s->comment, "a %s at %d,%d in \"%s\"%s: a declared point",
	                            button_word(e->detail), e->x, e->y, w->title ? w->title : "",
	                            w->is_dialog ? " (dialog)" : "") < 0)
		abort();
}

static void keep_press_window(rec *r, const ksr_window *w)
{
	free(r->press_win.title);
	memset(&r->press_win, 0, sizeof r->press_win);
	if (!w)
		return;
	r->press_win = (ksr_window){.id = w->id, .x = w->x, .y = w->y, .w = w->w, .h = w->h};
	r->press_win.title = ksr_xstrdup(w->title ? w->title : "");
	r->press_win.is_dialog = w->is_dialog;
}

/* At the press: what was under the pointer, into r->pending. */
static void on_press(rec *r, const ksr_rec_event *e)
{
	rec_boundary(r, true);
	r->pressed = true;
	r->press = *e;
	rec_step_clear(&r->pending);
	r->pending_placed = false;
	ksr_window_list l = {0};
	const ksr_window *w = window_at(r, &l, e->x, e->y);
	if (w)
		adopt(r, w);
	keep_press_window(r, w && w->pid == r->app_pid ? w : NULL);
	if (!w) {
		if (asprintf(&r->pending.comment, "a %s at %d,%d on the desktop (no window there)",
		             button_word(e->detail), e->x, e->y) < 0)
			abort();
	} else if (w->pid != r->app_pid) {
		if (asprintf(&r->pending.comment, "a %s at %d,%d in \"%s\" (pid %d, another app)",
		             button_word(e->detail), e->x, e->y, w->title ? w->title : "",
		             w->pid) < 0)
			abort();
	} else {
		r->pending_placed = true;
		int page = rec_cdp_click(r, w, e, &r->pending);
		if (page > 0) {
			/* a page element: rung 0 */
		} else if (page < 0) {
			declared_click(r, w, e, &r->pending); /* the page changed: its point */
		} else if (e->detail == 2 || !element_click(r, w, e, &r->pending)) {
			if (e->detail == 2) {
				if (asprintf(&r->pending.comment,
				             "a middle click at %d,%d in \"%s\": no step presses "
				             "the "
				             "middle button",
				             e->x, e->y, w->title ? w->title : "") < 0)
					abort();
				r->pending_placed = false;
			} else {
				declared_click(r, w, e, &r->pending);
			}
		}
		r->pending.window = w->id;
	}
	r->pending.px = e->x;
	r->pending.py = e->y;
	r->pending.button = e->detail;
	r->pending.time_ms = e->time_ms;
	ksr_window_list_clear(&l);
}

static bool doubles(const rec *r, const rec_step *p)
{
	if (!r->n)
		return false;
	const rec_step *s = &r->steps[r->n - 1];
	return (rec_is(s, KSR_KIND_CLICK) || rec_is(s, KSR_KIND_CLICK_ELEMENT)) && s->button == 1 &&
	       p->button == 1 && s->window == p->window && abs(s->px - p->px) <= DOUBLE_PX &&
	       abs(s->py - p->py) <= DOUBLE_PX && p->time_ms - s->time_ms <= DOUBLE_MS;
}

static void to_double(rec *r, const rec_step *p)
{
	rec_step *s = &r->steps[r->n - 1];
	rec_set_kind(s, KSR_KIND_DOUBLE_CLICK);
	if (!s->point) { /* a control's click: the point's fraction instead */
		free(s->value);
		free(s->role);
		s->value = s->role = NULL;
		free(s->ctl_path);
		s->ctl_path = NULL;
		s->point = true;
		s->fx = p->fx;
		s->fy = p->fy;
		s->target_window = p->target_window ? ksr_xstrdup(p->target_window) : NULL;
	}
	s->time_ms = p->time_ms;
}

static bool inside(const ksr_window *w, int x, int y)
{
	return x >= w->x && y >= w->y && x < w->x + w->w && y < w->y + w->h;
}

/* A press, the pointer moved further than DRAG_PX, the release: a drag
 * step when both ends are in the app's window the press was in (its
 * geometry at the press), else a comment. */
static void on_drag(rec *r, const ksr_rec_event *e)
{
	const ksr_window *w = &r->press_win;
	const rec_step *p = &r->pending;
	if (r->press.detail != 1 || !w->id || !inside(w, e->x, e->y) || w->w <= 0 || w->h <= 0) {
		rec_unplaced(r, "a drag from %d,%d to %d,%d (%s)%s", r->press.x, r->press.y, e->x,
		             e->y, p->comment ? p->comment : "",
		             r->press.detail != 1 ? ": a drag step holds button 1"
		             : !w->id             ? ""
		                                  : ": it ended outside the window it began in");
		return;
	}
	rec_step *s = rec_add(r);
	rec_set_kind(s, KSR_KIND_DRAG);
	s->drag = true;
	s->fx = (double)(r->press.x - w->x) / w->w;
	s->fy = (double)(r->press.y - w->y) / w->h;
	s->tx = (double)(e->x - w->x) / w->w;
	s->ty = (double)(e->y - w->y) / w->h;
	s->window = w->id;
	s->px = r->press.x, s->py = r->press.y, s->button = 1, s->time_ms = e->time_ms;
	if (w->id != r->main_win)
		s->target_window = rec_exact_pattern(w->title);
	if (asprintf(&s->comment, "a drag from %d,%d to %d,%d in \"%s\"%s (pressed: %s)",
	             r->press.x, r->press.y, e->x, e->y, w->title, w->is_dialog ? " (dialog)" : "",
	             p->comment ? p->comment : "?") < 0)
		abort();
}

static void on_release(rec *r, const ksr_rec_event *e)
{
	if (!r->pressed || e->detail != r->press.detail)
		return;
	r->pressed = false;
	rec_step *p = &r->pending;
	int dx = abs(e->x - r->press.x), dy = abs(e->y - r->press.y);
	if (dx > DRAG_PX || dy > DRAG_PX) {
		on_drag(r, e);
	} else if (!r->pending_placed) {
		rec_unplaced(r, "%s", p->comment ? p->comment : "an input event");
	} else if (p->point && doubles(r, p)) {
		to_double(r, p);
	} else if (!p->point && doubles(r, p)) {
		/* the control's second click: its fraction for the double click */
		ksr_window_list l = {0};
		const ksr_window *w = window_at(r, &l, p->px, p->py);
		rec_step tmp = {0};
		if (w) {
			declared_click(r, w, &r->press, &tmp);
			to_double(r, &tmp);
		}
		rec_step_clear(&tmp);
		ksr_window_list_clear(&l);
	} else {
		rec_step *s = rec_add(r);
		*s = *p;
		memset(p, 0, sizeof *p);
	}
	rec_step_clear(p);
}

static void on_scroll(rec *r, const ksr_rec_event *e)
{
	ksr_window_list l = {0};
	const ksr_window *w = window_at(r, &l, e->x, e->y);
	if (w)
		adopt(r, w);
	const char *dir = e->detail == 4 ? "up" : "down";
	rec_step *last = r->n ? &r->steps[r->n - 1] : NULL;
	if (w && w->pid == r->app_pid && rec_is(last, KSR_KIND_SCROLL) && last->window == w->id &&
	    last->button == e->detail) {
		last->px++;
		free(last->value);
		if (asprintf(&last->value, "%s %d", dir, last->px) < 0)
			abort();
	} else if (!w || w->pid != r->app_pid) {
		rec_unplaced(r, "a scroll %s at %d,%d %s", dir, e->x, e->y,
		             w ? "in another app's window" : "on the desktop");
	} else {
		rec_boundary(r, true);
		rec_step *s = rec_add(r);
		rec_set_kind(s, KSR_KIND_SCROLL);
		s->px = 1;
		s->button = e->detail;
		s->window = w->id;
		if (asprintf(&s->value, "%s 1", dir) < 0)
			abort();
		if (w->id != r->main_win) /* another window: at its centre */
			s->target_window = rec_exact_pattern(w->title);
		if (asprintf(&s->comment, "a scroll %s at %d,%d in \"%s\"%s", dir, e->x, e->y,
		             w->title ? w->title : "", " (replayed at the window's centre)") < 0)
			abort();
	}
	ksr_window_list_clear(&l);
}

/* ---- keys ---- */

static bool same_target(const rec_step *s, const char *target)
{
	return (!s->target_window && !target) ||
	       (s->target_window && target && !strcmp(s->target_window, target));
}

static void on_text(rec *r, const ksr_rec_event *e, const ksr_window *w)
{
	char *target = w->id != r->main_win ? rec_exact_pattern(w->title) : NULL;
	rec_step *last = r->n ? &r->steps[r->n - 1] : NULL;
	size_t vl = last && last->value ? strlen(last->value) : 0;
	/* "${" would read as a variable: the '{' starts a new type step */
	bool split = vl && last->value[vl - 1] == '$' && e->utf8[0] == '{';
	if (r->typing && rec_is(last, KSR_KIND_TYPE) && same_target(last, target) && !split) {
		if (r->typing_secret) {
			last->px++;
		} else {
			char *v = NULL;
			if (asprintf(&v, "%s%s", last->value, e->utf8) < 0)
				abort();
			free(last->value);
			last->value = v;
		}
		free(target);
		return;
	}
	if (!split)
		rec_boundary(r, true);
	rec_step *s = rec_add(r);
	rec_set_kind(s, KSR_KIND_TYPE);
	s->target_window = target;
	s->window = w->id;
	r->typing = true;
	r->typing_secret = r->last_role && ksr_atspi_role_equal("password text", r->last_role);
	if (r->typing_secret) {
		r->secrets++;
		s->px = 1;
		s->secret = true;
		if (asprintf(&s->value, "${RECORDED_SECRET_%d}", r->secrets) < 0 ||
		    asprintf(&s->comment,
		             "typed into a password field in \"%s\": not written; set "
		             "RECORDED_SECRET_%d",
		             w->title ? w->title : "", r->secrets) < 0)
			abort();
	} else {
		s->value = ksr_xstrdup(e->utf8);
		if (asprintf(&s->comment, "typed into \"%s\"", w->title ? w->title : "") < 0)
			abort();
	}
}

static char *chord_name(const ksr_rec_event *e)
{
	char buf[64];
	const char *key =
	        ksr_x11_keysym_name(e->base_keysym ? e->base_keysym : e->keysym, buf, sizeof buf);
	if (!key)
		return NULL;
	char *out = NULL;
	if (asprintf(&out, "%s%s%s%s%s", e->mods & KSR_REC_CTRL ? "ctrl+" : "",
	             e->mods & KSR_REC_ALT ? "alt+" : "", e->mods & KSR_REC_SUPER ? "super+" : "",
	             e->mods & KSR_REC_SHIFT ? "shift+" : "", key) < 0)
		abort();
	return out;
}

static void on_chord(rec *r, const ksr_rec_event *e, const ksr_window *w)
{
	char *chord = chord_name(e);
	ksr_chord *parsed = NULL;
	size_t n = 0;
	ksr_err err = {0};
	if (!chord || ksr_keys_parse(chord, &parsed, &n, &err) < 0) {
		rec_unplaced(r, "a key (keycode %d) that no chord can name", e->detail);
		free(chord);
		return;
	}
	ksr_keys_free(parsed);
	rec_boundary(r, true);
	free(r->last_role); /* the focus may move: the field typed into next is unknown */
	r->last_role = NULL;
	rec_step *s = rec_add(r);
	rec_set_kind(s, KSR_KIND_KEY);
	s->value = chord;
	s->window = w->id;
	if (w->id != r->main_win)
		s->target_window = rec_exact_pattern(w->title);
	if (asprintf(&s->comment, "%s pressed in \"%s\"", chord, w->title ? w->title : "") < 0)
		abort();
}

static void on_key(rec *r, const ksr_rec_event *e)
{
	unsigned long id = ksr_x11_active_window(r->x);
	const ksr_window *w = id ? find_window(r, id) : NULL;
	if (w)
		adopt(r, w);
	char nbuf[64];
	const char *name = ksr_x11_keysym_name(e->keysym, nbuf, sizeof nbuf);
	if (!w || w->pid != r->app_pid) {
		rec_unplaced(r, "the key %s (\"%s\") went to %s", name ? name : "?", e->utf8,
		             w ? "another app's window" : "no window of the app");
		return;
	}
	/* a copy: the step's boundary replaces the list w points into */
	ksr_window cw = {
	        .id = w->id, .pid = w->pid, .title = ksr_xstrdup(w->title ? w->title : "")};
	bool chord_mods = e->mods & (KSR_REC_CTRL | KSR_REC_ALT | KSR_REC_SUPER);
	if (e->utf8[0] && !chord_mods)
		on_text(r, e, &cw);
	else
		on_chord(r, e, &cw);
	free(cw.title);
}

#define CHORD_MASK (KSR_REC_SHIFT | KSR_REC_CTRL | KSR_REC_ALT | KSR_REC_SUPER)

/* The stop chord. Its press may never come: where the keymap binds
 * ctrl+alt+Fn to a VT switch (Xvfb's and Xorg's default), the server takes
 * the press for that action and only the release reaches clients. So a
 * release of the stop key whose press was not seen, while (or just after)
 * the chord's modifiers were held, stops too. */
static bool is_stop(rec *r, const ksr_rec_event *e)
{
	int kc = e->detail & 0xff;
	bool key = e->base_keysym == r->stop_sym || e->keysym == r->stop_sym;
	if (e->kind == KSR_REC_KEY_PRESS && !e->is_modifier) {
		bool stop = key && (e->mods & CHORD_MASK) == r->stop_mods;
		r->key_down[kc] = true;
		r->chord_mods = 0;
		return stop;
	}
	if (e->kind == KSR_REC_KEY_PRESS) {
		r->chord_mods |= e->mods | ksr_x11_keysym_modifier(e->base_keysym);
		return false;
	}
	if (e->kind != KSR_REC_KEY_RELEASE || e->is_modifier)
		return false;
	bool unseen = !r->key_down[kc];
	r->key_down[kc] = false;
	return key && unseen && ((r->chord_mods | e->mods) & CHORD_MASK) == r->stop_mods;
}

/* Until the first step the app's window may still change its title (a
 * browser's "Untitled" becomes the page's): the header's window: takes
 * both the first title and the one the first input found, as a replay may
 * see either first. */
static void start_title(rec *r, const ksr_rec_event *e)
{
	if (r->start_title || !r->main_win || r->n ||
	    (e->kind != KSR_REC_KEY_PRESS && e->kind != KSR_REC_BUTTON_PRESS) || e->is_modifier)
		return;
	ksr_window w = {.id = r->main_win};
	ksr_err err = {0};
	if (ksr_x11_window_refresh(r->x, &w, &err) == 0 && w.title && *w.title &&
	    strcmp(w.title, r->main_title)) {
		r->start_title = w.title;
		w.title = NULL;
	}
	free(w.title);
	free(w.res_name);
	free(w.res_class);
}

/* 1: the stop chord. */
static int on_event(rec *r, const ksr_rec_event *e)
{
	if (is_stop(r, e))
		return 1;
	start_title(r, e);
	switch (e->kind) {
	case KSR_REC_KEY_PRESS:
		if (!e->is_modifier)
			on_key(r, e);
		return 0;
	case KSR_REC_BUTTON_PRESS:
		if (e->detail == 4 || e->detail == 5)
			on_scroll(r, e);
		else if (e->detail <= 3 && !r->pressed)
			on_press(r, e);
		else if (e->detail > 5)
			rec_unplaced(r,
			             "a press of button %d (horizontal scrolling or a side button)",
			             e->detail);
		return 0;
	case KSR_REC_BUTTON_RELEASE:
		if (e->detail <= 3)
			on_release(r, e);
		return 0;
	default:
		return 0;
	}
}

/* ---- setup ---- */

static int parse_stop(rec *r, ksr_err *err)
{
	const char *spec = r->o->stop_key ? r->o->stop_key : DEFAULT_STOP;
	ksr_chord *c = NULL;
	size_t n = 0;
	if (ksr_keys_parse(spec, &c, &n, err) < 0)
		return -1;
	if (n != 1) {
		ksr_keys_free(c);
		return ksr_err_set(err, "--stop-key: one chord, got %zu in '%s'", n, spec);
	}
	r->stop_sym = c[0].keysyms[c[0].n - 1];
	for (int i = 0; i < c[0].n - 1; i++)
		r->stop_mods |= ksr_x11_keysym_modifier(c[0].keysyms[i]);
	ksr_keys_free(c);
	if (!r->stop_mods)
		return ksr_err_set(err,
		                   "--stop-key '%s': a chord with a modifier (ctrl, alt, "
		                   "super), or typing it would stop the recording",
		                   spec);
	return 0;
}

static bool listed(const ksr_window_list *l, unsigned long id)
{
	for (size_t i = 0; i < l->len; i++)
		if (l->items[i].id == id)
			return true;
	return false;
}

/* The launch ended with nothing of it left and no window: say how, with its
 * last output. */
static int launch_exited(rec *r, const ksr_launch_watch *lw, ksr_err *err)
{
	ksr_strbuf b = {0};
	ksr_launch_watch_describe(lw, r->o->launch, r->launch_log, &b);
	int rc = ksr_err_set(err, "no window appeared after launching '%s': the app exited: %s",
	                     r->o->launch, b.p);
	ksr_strbuf_free(&b);
	return rc;
}

static int launch(rec *r, ksr_deadline d, ksr_err *err)
{
	ksr_window_list before = {0}, now = {0};
	if (ksr_x11_list_windows(r->x, &before, err) < 0)
		return -1;
	/* Qt 5 joins the bus only where the X root names it (docs/accessibility.md). */
	ksr_atspi_publish_root(r->x, ksr_deadline_min(d, ksr_deadline_in_ms(3000)), NULL, NULL);
	r->launch_log = ksr_launch_temp_log("record");
	int rc = ksr_proc_launch(r->o->launch, r->launch_log ? r->launch_log : "/dev/null",
	                         &r->launched_pid, err);
	ksr_launch_watch lw = {.pid = rc == 0 ? r->launched_pid : 0, .start_ms = ksr_now_ms()};
	while (rc == 0 && !r->app_pid) {
		if (ksr_x11_list_windows(r->x, &now, err) < 0) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < now.len && !r->app_pid; i++)
			if (!listed(&before, now.items[i].id) && now.items[i].pid > 0)
				adopt(r, &now.items[i]);
		ksr_window_list_clear(&now);
		if (r->app_pid)
			break;
		if (ksr_launch_watch_gone(&lw, HANDOVER_GRACE_MS)) {
			r->launched_pid = 0; /* reaped: its pid may be another's now */
			rc = launch_exited(r, &lw, err);
			break;
		}
		ksr_wait w = ksr_x11_wait_change(
		        r->x, ksr_deadline_min(d, ksr_deadline_in_ms(LAUNCH_TICK_MS)));
		if (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(d))
			continue;
		if (w != KSR_WAIT_READY || ksr_deadline_passed(d))
			rc = ksr_err_set(err, "no window appeared after launching '%s' (%s)",
			                 r->o->launch,
			                 w == KSR_WAIT_READY ? "timed out" : ksr_wait_name(w));
	}
	ksr_window_list_clear(&before);
	return rc;
}

static void open_atspi(rec *r, ksr_deadline d)
{
	ksr_atspi_opts ao = {.x = r->x, .app_pid = r->app_pid};
	ksr_err err = {0};
	if (ksr_atspi_open(&ao, d, &r->a, &err) < 0) {
		r->a11y_error = ksr_xstrdup(err.msg);
		r->a = NULL;
		return;
	}
	/* a launched app joins the bus after it maps: a few tries */
	for (int i = 0; i < 10 && r->app_pid && !r->have_app && !ksr_cancelled(); i++) {
		find_atspi_app_until(r, d);
		if (!r->have_app)
			ksr_sleep_ms(300);
	}
}

static int watch_dirs(rec *r, ksr_err *err)
{
	r->ino_fd = -1;
	if (!r->o->n_watch_dirs)
		return 0;
	r->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (r->ino_fd < 0)
		return ksr_err_errno(err, "inotify_init1");
	for (size_t i = 0; i < r->o->n_watch_dirs; i++) {
		const char *dir = r->o->watch_dirs[i];
		int wd = inotify_add_watch(r->ino_fd, dir, IN_CLOSE_WRITE | IN_MOVED_TO);
		if (wd < 0)
			return ksr_err_set(err, "--watch-dir %s: %s", dir, strerror(errno));
		if (wd >= r->n_ino) {
			r->ino_dirs =
			        ksr_xrealloc(r->ino_dirs, (size_t)(wd + 1) * sizeof *r->ino_dirs);
			for (int k = r->n_ino; k <= wd; k++)
				r->ino_dirs[k] = NULL;
			r->n_ino = wd + 1;
		}
		char *abs = realpath(dir, NULL);
		free(r->ino_dirs[wd]);
		r->ino_dirs[wd] = abs ? abs : ksr_xstrdup(dir);
	}
	return 0;
}

static int setup(rec *r, ksr_err *err)
{
	ksr_deadline d = ksr_deadline_in_ms(SETUP_MS);
	if (parse_stop(r, err) < 0)
		return -1;
	if (r->o->xvfb) {
		ksr_session_opts so = {.width = r->o->xvfb_w > 0 ? r->o->xvfb_w : 1280,
		                       .height = r->o->xvfb_h > 0 ? r->o->xvfb_h : 720};
		if (ksr_session_start(&so, d, &r->session, err) < 0)
			return -1;
	}
	ksr_wait w = ksr_x11_open_wait(NULL, d, &r->x, err);
	if (w != KSR_WAIT_READY)
		return w == KSR_WAIT_ERROR ? -1
		                           : ksr_err_set(err,
		                                         "the X display did not accept a "
		                                         "connection (%s)",
		                                         ksr_wait_name(w));
	r->display = ksr_xstrdup(ksr_x11_display_name(r->x));
	if (watch_dirs(r, err) < 0)
		return -1;
	if (r->o->launch && launch(r, d, err) < 0)
		return -1;
	open_atspi(r, d);
	if (!(r->xr = ksr_x11_record_open(r->x, err)))
		return -1;
	ksr_err ignored = {0};
	ksr_x11_list_windows(r->x, &r->seen, &ignored);
	return ksr_cancelled() ? ksr_err_set(err, "cancelled while setting up") : 0;
}

/* ---- the loop ---- */

static const char *drain(rec *r, bool *stop)
{
	ksr_rec_event ev[64];
	int n;
	while ((n = ksr_x11_record_read(r->xr, ev, 64)) > 0)
		for (int i = 0; i < n; i++)
			if (on_event(r, &ev[i])) {
				*stop = true;
				return "hotkey";
			}
	return n < 0 ? "display" : NULL;
}

static const char *record_loop(rec *r)
{
	ksr_deadline d = r->o->timeout_s > 0 ? ksr_deadline_in_ms((int64_t)r->o->timeout_s * 1000)
	                                     : KSR_DEADLINE_NEVER;
	for (;;) {
		struct pollfd p[2] = {{.fd = ksr_x11_record_fd(r->xr), .events = POLLIN},
		                      {.fd = r->ino_fd, .events = POLLIN}};
		ksr_wait w = ksr_wait_fds(p, r->ino_fd >= 0 ? 2 : 1, d);
		bool stop = false;
		const char *why = NULL;
		if (w == KSR_WAIT_CANCELLED) {
			why = ksr_cancel_take_signal() ? "signal" : "cancel";
			drain(r, &stop); /* what the server sent before the signal */
			return why;
		}
		if (w == KSR_WAIT_TIMEOUT)
			return "timeout";
		if (w == KSR_WAIT_ERROR)
			return "display";
		if ((why = drain(r, &stop)))
			return why;
		if (r->ino_fd >= 0 && (p[1].revents & POLLIN))
			rec_files(r);
	}
}

/* ---- the header and the result ---- */

static char *process_pattern(const rec *r)
{
	if (r->app_pid <= 0)
		return NULL;
	ksr_proc_list l = {0};
	ksr_err err = {0};
	char *out = NULL;
	if (ksr_proc_find(NULL, NULL, &l, &err) == 0)
		for (size_t i = 0; i < l.len && !out; i++)
			if (l.items[i].pid == r->app_pid && l.items[i].name)
				out = rec_exact_pattern(l.items[i].name);
	ksr_proc_list_clear(&l);
	return out;
}

/* Without --launch, the app's command line, quoted for sh. */
static char *cmdline_launch(const rec *r)
{
	if (r->app_pid <= 0)
		return NULL;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", r->app_pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	ksr_strbuf b = {0};
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		ksr_strbuf_add(&b, i ? " '" : "'");
		for (const char *p = buf + i; *p; p++)
			ksr_strbuf_add(&b, *p == '\'' ? "'\\''" : (char[2]){*p, 0});
		ksr_strbuf_add(&b, "'");
	}
	return n ? ksr_strbuf_take(&b) : (ksr_strbuf_free(&b), NULL);
}

/* The loader reads what was written; the secrets' variables are set for it. */
static void check_loads(const rec *r, ksr_record_result *out)
{
	char name[64];
	bool *set = ksr_xcalloc((size_t)r->secrets + 1, sizeof *set);
	for (int i = 1; i <= r->secrets; i++) {
		snprintf(name, sizeof name, "RECORDED_SECRET_%d", i);
		set[i] = getenv(name) == NULL;
		if (set[i])
			setenv(name, "x", 1);
	}
	ksr_errlist errs = {0};
	ksr_scenario *sc = ksr_scenario_load_string(out->yaml, "recorded.yaml", &errs);
	if (!sc && errs.len)
		snprintf(out->invalid, sizeof out->invalid, "%d:%d: %s", errs.items[0].line,
		         errs.items[0].col, errs.items[0].msg);
	else if (!sc)
		snprintf(out->invalid, sizeof out->invalid, "the loader refused it");
	ksr_scenario_free(sc);
	ksr_errlist_free(&errs);
	for (int i = 1; i <= r->secrets; i++) {
		snprintf(name, sizeof name, "RECORDED_SECRET_%d", i);
		if (set[i])
			unsetenv(name);
	}
	free(set);
}

static void teardown(rec *r)
{
	ksr_x11_record_close(r->xr);
	if (r->ino_fd >= 0)
		close(r->ino_fd);
	for (int i = 0; i < r->n_ino; i++)
		free(r->ino_dirs[i]);
	free(r->ino_dirs);
	if (r->have_app)
		ksr_atspi_app_clear(&r->app);
	ksr_atspi_close(r->a);
	rec_cdp_close(r);
	if (r->launched_pid > 0)
		ksr_proc_stop_group(r->launched_pid, STOP_GRACE_MS);
	if (r->launch_log)
		unlink(r->launch_log);
	free(r->launch_log);
	ksr_window_list_clear(&r->seen);
	ksr_x11_close(r->x);
	ksr_session_stop(r->session);
	for (size_t i = 0; i < r->n; i++)
		rec_step_clear(&r->steps[i]);
	free(r->steps);
	rec_step_clear(&r->pending);
	for (size_t i = 0; i < r->n_files; i++)
		free(r->files[i]);
	free(r->files);
	free(r->main_title);
	free(r->start_title);
	free(r->press_win.title);
	free(r->last_role);
	free(r->a11y_error);
	free(r->display);
}

static int count_steps(const rec *r)
{
	int n = 0;
	for (size_t i = 0; i < r->n; i++)
		n += r->steps[i].kind != NULL;
	return n;
}

int ksr_record(const ksr_record_opts *o, ksr_record_result *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	rec r = {.o = o, .ino_fd = -1};
	if (setup(&r, err) < 0) {
		teardown(&r);
		return -1;
	}
	rec_say(&r, "recording on display %s%s%s%s; stop with %s or Ctrl-C (SIGINT)", r.display,
	        r.main_title ? " (the app's window \"" : "", r.main_title ? r.main_title : "",
	        r.main_title ? "\")" : "", o->stop_key ? o->stop_key : DEFAULT_STOP);
	if (r.a11y_error)
		rec_say(&r, "no accessibility bus (%s): clicks are written as declared points",
		        r.a11y_error);
	out->stopped_by = record_loop(&r);
	if (r.pressed)
		rec_unplaced(&r, "a button still held down at %d,%d when the recording stopped",
		             r.press.x, r.press.y);
	rec_boundary(&r, true);
	char *process = process_pattern(&r);
	char *launch_cmd = o->launch ? NULL : cmdline_launch(&r);
	out->yaml = rec_yaml_text(&r, o->launch ? o->launch : launch_cmd, process, out->stopped_by);
	out->steps = count_steps(&r);
	out->unplaced = r.unplaced;
	check_loads(&r, out);
	rec_say(&r, "stopped by %s: %d steps, %d events not placed", out->stopped_by, out->steps,
	        out->unplaced);
	free(process);
	free(launch_cmd);
	teardown(&r);
	return 0;
}

void ksr_record_result_clear(ksr_record_result *r)
{
	if (!r)
		return;
	free(r->yaml);
	memset(r, 0, sizeof *r);
}
