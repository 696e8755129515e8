/* The recorder's model: the steps seen so far, each with what was seen and
 * what changed after it; shared by record.c (events), record_steps.c (what
 * changed) and record_yaml.c (writing). */
#ifndef KSR_RECORD_PRIV_H
#define KSR_RECORD_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "ksr/atspi.h"
#include "ksr/record.h"
#include "ksr/scenario.h"
#include "ksr/session.h"
#include "ksr/strbuf.h"
#include "ksr/x11.h"
#include "ksr/x11_record.h"

typedef struct rec_check {
	const ksr_check_info *kind; /* window, no_window, file: its row of the vocabulary */
	char *value;                /* pattern or path */
	char *comment;
} rec_check;

typedef struct rec_step {
	const ksr_step_info *kind; /* its row of the vocabulary; NULL: a comment only (an
	                              unplaced event) */
	char *value;               /* its value, a string; NULL for a click point */
	bool secret;               /* type: value is ${RECORDED_SECRET_N}, to be expanded */
	bool point;                /* click, double_click, right_click: fx, fy */
	double fx, fy;
	bool drag;           /* drag: from fx, fy to tx, ty */
	double tx, ty;       /* fractions of the same window */
	char *role;          /* click_element */
	char *target_window; /* a pattern: the step acts on (or in) that window */
	char *expect_state;  /* "NAME STATE" */
	int timeout_s;       /* 0: the default */
	char *comment;       /* what was seen */
	char **notes;        /* more comments, after the step (what changed) */
	size_t n_notes;
	rec_check *checks;
	size_t n_checks;
	/* A click_element's control: its states are read again at the next step. */
	char *ctl_path, *ctl_name;
	char *role_seen; /* its role (a declared click in a dialog has no role:) */
	uint64_t ctl_states;
	/* A click's place, kept for a double click. */
	int px, py, button;
	unsigned long time_ms;
	unsigned long window; /* the X window acted on */
} rec_step;

typedef struct rec {
	const ksr_record_opts *o;
	ksr_session *session;
	ksr_x11 *x;
	ksr_atspi *a; /* NULL: no accessibility bus (declared clicks only) */
	ksr_atspi_app app;
	bool have_app;
	char *a11y_error;
	int launched_pid;
	char *launch_log;       /* the launch's output, for its last lines (NULL: none) */
	int app_pid;            /* _NET_WM_PID of the app driven; 0 until known */
	unsigned long main_win; /* its first window */
	char *main_title;       /* as it was when first seen */
	char *start_title;      /* as it was at the first input, when that differs */
	ksr_x11_record *xr;
	int ino_fd;
	char **ino_dirs; /* by watch descriptor */
	int n_ino;
	unsigned long stop_sym;
	unsigned stop_mods;
	bool key_down[256];  /* non-modifier keys whose press was seen */
	unsigned chord_mods; /* modifiers held since the last other key's press */
	rec_step *steps;
	size_t n, cap;
	/* The run of typed characters being gathered (the last step, a type). */
	bool typing;
	bool typing_secret;
	ksr_window_list seen; /* the windows at the last step's start */
	bool pressed;         /* a button is down: where */
	ksr_rec_event press;
	ksr_window press_win; /* the app's window under the press (id 0: none), as it was */
	rec_step pending;     /* the click being resolved at the press */
	bool pending_placed;
	char *last_role; /* the role of the control under the last click */
	int secrets;
	char **files; /* written files seen (for the launch's rm -f) */
	size_t n_files;
	int unplaced;
	char *display;
	struct ksr_page *page; /* the browser's page (CDP or BiDi), once asked (record_cdp.c) */
	int cdp_port;
	int cdp_attempts;   /* connects to a port that did not answer */
	bool cdp_tried;     /* no more connects: no port, or CONNECT_TRIES failed */
	bool page_watching; /* the page reports its presses (ksr_page_watch_presses) */
} rec;

/* record.c: a line to the user (stderr through the front end) */
void rec_say(const rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* record_steps.c */
rec_step *rec_add(rec *r);
void rec_step_clear(rec_step *s);
void rec_note(rec_step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rec_unplaced(rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rec_add_check(rec_step *s, ksr_check_kind kind, const char *value, const char *comment);
/* Make s a step of this kind. */
void rec_set_kind(rec_step *s, ksr_step_kind kind);
/* s (NULL-safe) is a step of this kind. */
bool rec_is(const rec_step *s, ksr_step_kind kind);
/* The last step ends: checks for what changed since it began. */
void rec_boundary(rec *r, bool can_ask);
/* A PCRE2 pattern matching exactly this title (metacharacters escaped). */
char *rec_exact_pattern(const char *title);
void rec_files(rec *r);

/* record_cdp.c: a left click on a page element as page_click: 1; a click
 * the page cannot name for sure, to be recorded at its point: -1 (s has a
 * note saying why); else 0 */
int rec_cdp_click(rec *r, const ksr_window *w, const ksr_rec_event *e, rec_step *s);
void rec_cdp_close(rec *r);

/* record_yaml.c */
char *rec_yaml_text(const rec *r, const char *launch, const char *process, const char *stopped_by);

#endif
