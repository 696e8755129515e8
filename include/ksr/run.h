/* The staged run (docs/architecture.md): the one entry point the `run` front end calls.
 * Everything below it (stages, steps, backends, evidence) is reached from here. */
#ifndef KSR_RUN_H
#define KSR_RUN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "ksr/session.h"

typedef struct ksr_run_opts {
	const char *scenario_path;
	const char *out_dir;   /* KASM_RUNTIME_OUT, default ./ksr-out */
	bool xvfb;             /* private Xvfb + window manager for the run */
	const char *xvfb_size; /* "WxH", default 1280x720 */
	/* The private display's X server and window manager (--display-server,
	 * --wm; the front end sets xvfb with either). */
	ksr_server_kind display_server;
	ksr_wm_kind wm;
	bool private_home; /* --private-home: a private HOME and XDG folders (ksr_session_opts) */
	int deadline_s;    /* default 600 */
	bool update_baseline;
	bool video;    /* record the run's video as in the scenario's video: true */
	int video_fps; /* at most this many video frames a second; 0: 10 */
	/* Each recorded event, for the front end's progress display. May be NULL. */
	void (*on_event)(void *ud, const cJSON *event);
	void *on_event_ud;
	/* The rendered report when the run ends, for --json. May be NULL. */
	void (*on_report)(void *ud, const cJSON *report);
	void *on_report_ud;
	/* Messages a person must see even without evidence (OUT unwritable...). */
	void (*on_message)(void *ud, const char *message);
	void *on_message_ud;
	/* inspect --after (docs/cli.md#inspect): steps_only runs the steps: (those
	 * that start at or before line steps_until_line when it is > 0) and skips
	 * plan: and goal:; on_stages_done is then called once the stages are over,
	 * with the app and the display still up (before diagnosis and teardown).
	 * May be NULL. */
	bool steps_only;
	int steps_until_line;
	void (*on_stages_done)(void *ud);
	void *on_stages_done_ud;
} ksr_run_opts;

/* Run the scenario; returns the exit code (0 pass / pass-with-concerns,
 * 1 app-failed, 2 test-error). DONE is written last on every path where OUT is
 * writable. */
int ksr_run_scenario(const ksr_run_opts *opts);

#endif
