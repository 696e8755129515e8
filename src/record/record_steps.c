/* The recorded steps and what changed after each: windows that came (a
 * wait_window step), went (no_window) or changed their title (window:), the
 * clicked control's states (expect_state), files written under the watched
 * folders (file:). Each step's changes are read when the next one begins,
 * when the app has had the time a person takes to act again. */
#include "record/record_priv.h"

#include "ksr/scenario_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#define CALL_MS 2000 /* one accessibility question while recording */

rec_step *rec_add(rec *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 32;
		r->steps = ksr_xrealloc(r->steps, r->cap * sizeof *r->steps);
	}
	rec_step *s = &r->steps[r->n++];
	memset(s, 0, sizeof *s);
	return s;
}

void rec_step_clear(rec_step *s)
{
	if (!s)
		return;
	free(s->value);
	free(s->role);
	free(s->target_window);
	free(s->expect_state);
	free(s->comment);
	for (size_t i = 0; i < s->n_notes; i++)
		free(s->notes[i]);
	free(s->notes);
	for (size_t i = 0; i < s->n_checks; i++) {
		free(s->checks[i].value);
		free(s->checks[i].comment);
	}
	free(s->checks);
	free(s->ctl_path);
	free(s->ctl_name);
	free(s->role_seen);
	memset(s, 0, sizeof *s);
}

static char *vformat(const char *fmt, va_list ap)
{
	char *out = NULL;
	if (vasprintf(&out, fmt, ap) < 0)
		abort();
	return out;
}

void rec_note(rec_step *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	s->notes = ksr_xrealloc(s->notes, (s->n_notes + 1) * sizeof *s->notes);
	s->notes[s->n_notes++] = vformat(fmt, ap);
	va_end(ap);
}

/* An event the recorder cannot place: a comment where the step would be,
 * never a silent step. */
void rec_unplaced(rec *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *text = vformat(fmt, ap);
	va_end(ap);
	r->typing = false;
	rec_step *s = rec_add(r);
	if (asprintf(&s->comment, "not placed: %s", text) < 0)
		abort();
	free(text);
	r->unplaced++;
}

void rec_add_check(rec_step *s, ksr_check_kind kind, const char *value, const char *comment)
{
	const ksr_check_info *row = ksr_check_kind_info(kind);
	for (size_t i = 0; i < s->n_checks; i++)
		if (s->checks[i].kind == row && !strcmp(s->checks[i].value, value))
			return;
	s->checks = ksr_xrealloc(s->checks, (s->n_checks + 1) * sizeof *s->checks);
	s->checks[s->n_checks++] = (rec_check){.kind = row,
	                                       .value = ksr_xstrdup(value),
	                                       .comment = comment ? ksr_xstrdup(comment) : NULL};
}

void rec_set_kind(rec_step *s, ksr_step_kind kind)
{
	s->kind = ksr_step_kind_info(kind);
}

bool rec_is(const rec_step *s, ksr_step_kind kind)
{
	return s && s->kind && s->kind->kind == kind;
}

char *rec_exact_pattern(const char *title)
{
	return ksr_yaml_exact_pattern(title);
}

/* The newest step that acts (comments do not take checks). */
static rec_step *last_action(rec *r)
{
	for (size_t i = r->n; i-- > 0;)
		if (r->steps[i].kind)
			return &r->steps[i];
	return NULL;
}

static const ksr_window *by_id(const ksr_window_list *l, unsigned long id)
{
	for (size_t i = 0; i < l->len; i++)
		if (l->items[i].id == id)
			return &l->items[i];
	return NULL;
}

static bool title_shown(const ksr_window_list *l, const char *title)
{
	for (size_t i = 0; i < l->len; i++)
		if (l->items[i].title && title && !strcmp(l->items[i].title, title))
			return true;
	return false;
}

static bool apps(const rec *r, const ksr_window *w)
{
	return r->app_pid > 0 && w->pid == r->app_pid;
}

/* A check on the last step, or a note at the top when there is none yet. */
static void check_or_note(rec *r, ksr_check_kind kind, const char *title, const char *comment)
{
	rec_step *s = last_action(r);
	char *pat = rec_exact_pattern(title);
	if (s)
		rec_add_check(s, kind, pat, comment);
	free(pat);
}

static void windows_changed(rec *r, const ksr_window_list *now)
{
	char buf[600];
	for (size_t i = 0; i < r->seen.len; i++) {
		const ksr_window *was = &r->seen.items[i], *is = by_id(now, was->id);
		if (!apps(r, was) || !was->title || !*was->title)
			continue;
		if (is && is->title && *is->title && strcmp(is->title, was->title) != 0) {
			snprintf(buf, sizeof buf, "the title changed from \"%s\" to \"%s\"",
			         was->title, is->title);
			check_or_note(r, KSR_CHECK_KIND_WINDOW, is->title, buf);
		} else if (!is && !title_shown(now, was->title)) {
			snprintf(buf, sizeof buf, "the window \"%s\" went", was->title);
			check_or_note(r, KSR_CHECK_KIND_NO_WINDOW, was->title, buf);
		}
	}
	for (size_t i = 0; i < now->len; i++) {
		const ksr_window *w = &now->items[i];
		if (by_id(&r->seen, w->id) || !w->title || !*w->title)
			continue;
		if (!apps(r, w)) {
			rec_step *s = last_action(r);
			if (s)
				rec_note(s,
				         "another app's window came: \"%s\" (pid %d), not waited "
				         "for",
				         w->title, w->pid);
			continue;
		}
		r->typing = false;
		rec_step *s = rec_add(r);
		rec_set_kind(s, KSR_KIND_WAIT_WINDOW);
		s->value = rec_exact_pattern(w->title);
		s->timeout_s = 15;
		if (asprintf(&s->comment, "a new %s came: \"%s\" at %d,%d %dx%d",
		             w->is_dialog ? "dialog" : "window", w->title, w->x, w->y, w->w,
		             w->h) < 0)
			abort();
	}
}

/* The states a click changes that a check can name. */
static const char *const watched_states[] = {"checked", "selected", "pressed", "expanded"};

/* A click on one of these flips its checked (or selected) state. The states
 * read at the press may already be those after it (the app handles the
 * release while we ask), so for these the state after the step is written
 * whether or not the press saw it change. */
static bool toggles(const char *role)
{
	static const char *const roles[] = {"check box",       "toggle button",   "radio button",
	                                    "check menu item", "radio menu item", "page tab",
	                                    "switch"};
	for (size_t i = 0; role && i < sizeof roles / sizeof *roles; i++)
		if (ksr_atspi_role_equal(roles[i], role))
			return true;
	return false;
}

static void state_seen(rec_step *s, const char *shown, const char *state, bool was, bool is)
{
	if (is && !s->expect_state && shown && *shown && !strstr(shown, "${")) {
		char *disp = ksr_atspi_name_display(shown);
		if (asprintf(&s->expect_state, "%s %s", disp, state) < 0)
			abort();
		free(disp);
	} else if (!is) {
		rec_note(s, "after the click \"%s\" is not %s%s (a check cannot say \"not %s\")",
		         shown ? shown : "", state, was ? " any more" : "", state);
	}
}

static void control_changed(rec *r, rec_step *s)
{
	if (!s || !s->ctl_path || !r->a || !r->have_app)
		return;
	uint64_t now = 0;
	char *name = NULL;
	ksr_err err = {0};
	char *path = s->ctl_path;
	s->ctl_path = NULL; /* asked once */
	if (ksr_atspi_node_states(r->a, &r->app, path, ksr_deadline_in_ms(CALL_MS), &now, &name,
	                          &err) < 0) {
		rec_note(s, "the control's states could not be read after the click: %s", err.msg);
		free(path);
		return;
	}
	const char *shown = name && *name ? name : s->ctl_name;
	bool flips = toggles(s->role_seen);
	for (size_t i = 0; i < sizeof watched_states / sizeof *watched_states; i++) {
		int bit = ksr_atspi_state_index(watched_states[i]);
		if (bit < 0)
			continue;
		bool was = s->ctl_states >> bit & 1, is = now >> bit & 1;
		bool flip_state = flips && (!strcmp(watched_states[i], "checked") ||
		                            (!strcmp(watched_states[i], "selected") &&
		                             ksr_atspi_role_equal("page tab", s->role_seen)));
		if (was != is || (flip_state && (is || was)))
			state_seen(s, shown, watched_states[i], was, is);
		else if (flip_state && !is && !was)
			state_seen(s, shown, watched_states[i], false, false);
	}
	free(name);
	free(path);
}

void rec_files(rec *r)
{
	if (r->ino_fd < 0)
		return;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t len;
	while ((len = read(r->ino_fd, buf, sizeof buf)) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const void *)p;
			p += sizeof *ev + ev->len;
			if (!ev->len || ev->wd < 0 || ev->wd >= r->n_ino || !r->ino_dirs[ev->wd])
				continue;
			const char *nm = ev->name;
			size_t nl = strlen(nm);
			/* a toolkit's temporary (".goutputstream-X", "file~") is renamed away */
			if (nm[0] == '.' || (nl && nm[nl - 1] == '~'))
				continue;
			char *path = NULL;
			if (asprintf(&path, "%s/%s", r->ino_dirs[ev->wd], nm) < 0)
				abort();
			rec_step *s = last_action(r);
			if (s)
				rec_add_check(s, KSR_CHECK_KIND_FILE, path,
				              "a file was written under a watched folder");
			bool known = false;
			for (size_t i = 0; i < r->n_files; i++)
				known = known || !strcmp(r->files[i], path);
			if (!known) {
				r->files =
				        ksr_xrealloc(r->files, (r->n_files + 1) * sizeof *r->files);
				r->files[r->n_files++] = path;
			} else {
				free(path);
			}
		}
	}
}

void rec_boundary(rec *r, bool can_ask)
{
	r->typing = false;
	rec_files(r);
	rec_step *last = last_action(r);
	if (can_ask)
		control_changed(r, last);
	ksr_window_list now = {0};
	ksr_err err = {0};
	if (ksr_x11_list_windows(r->x, &now, &err) < 0)
		return;
	windows_changed(r, &now);
	ksr_window_list_clear(&r->seen);
	r->seen = now;
}
