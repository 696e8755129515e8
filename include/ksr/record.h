/* Record a scenario by demonstration: watch a person (or a script, or an
 * agent) drive an app through the X server's RECORD extension and write the
 * steps at the highest rung each action allows, with checks for what changed
 * (docs/recording.md). */
#ifndef KSR_RECORD_H
#define KSR_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"

typedef struct ksr_record_opts {
	bool xvfb;            /* a private session (Xvfb, D-Bus, AT-SPI, openbox) */
	int xvfb_w, xvfb_h;   /* default 1280x720 */
	const char *launch;   /* sh -c; its window is waited for, it is stopped at the end */
	const char *stop_key; /* the chord that stops; NULL: ctrl+alt+F12 */
	const char *const *watch_dirs; /* folders whose written files become file: checks */
	size_t n_watch_dirs;
	int timeout_s;    /* stop after this long; 0: only when told */
	const char *name; /* the scenario's name; NULL: "recorded" */
	/* Progress for a person (recording began, on which display; stopped). */
	void (*on_message)(void *ud, const char *message);
	void *ud;
} ksr_record_opts;

typedef struct ksr_record_result {
	char *yaml;             /* the scenario (malloc'd) */
	int steps;              /* how many steps it holds */
	int unplaced;           /* events written as comments only */
	const char *stopped_by; /* "hotkey", "signal", "timeout" or "display" */
	/* The written scenario did not load (a recorder bug): the loader's first
	 * message; the YAML is still returned. */
	char invalid[512];
} ksr_record_result;

/* Record until the stop chord, SIGINT/SIGTERM (taken as "finish now"), the
 * timeout, or the display going. 0 with *out set, -1 with err when recording
 * could not start (no display, no RECORD extension, the launch failed). */
int ksr_record(const ksr_record_opts *o, ksr_record_result *out, ksr_err *err);
void ksr_record_result_clear(ksr_record_result *r); /* NULL-safe */

#endif
