/* The run context: the bottom of src/run. What every stage, executor and
 * diagnosis step shares (the run's state, recording events, failures and
 * concerns, waits that ended, screenshots, window look-ups, stopping what the
 * run started). Nothing here calls up into the other run folders. */
#ifndef KSR_RUN_CONTEXT_H
#define KSR_RUN_CONTEXT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>

#include "ksr/deadline.h"
#include "ksr/event.h"
#include "ksr/evidence.h"
#include "ksr/image.h"
#include "ksr/proc.h"
#include "ksr/strbuf.h"
#include "ksr/run.h"
#include "ksr/scenario.h"
#include "ksr/session.h"
#include "ksr/verdict.h"
#include "ksr/x11.h"

/* What the plan stage ended with; the goal-loop stage reads it. */
typedef enum ksr_plan_state {
	KSR_PLAN_NONE,        /* no plan:, or not replayed yet */
	KSR_PLAN_COMPLETED,   /* every step ran and every post: held */
	KSR_PLAN_HANDED_OVER, /* a post: did not hold; the goal loop takes over */
	KSR_PLAN_FAILED,      /* a step failed (recorded) */
} ksr_plan_state;

/* A tool started by a spawn step (desktop mode, exec_desktop.c). */
typedef struct ksr_tool {
	char *as;             /* the spawn's as: name, or NULL */
	int pid;              /* the launch shell; also the tool's process group */
	int line;             /* the spawn step's line */
	bool reaped, stopped; /* stopped: a kill step (or the end of the run) ended it */
	int status;           /* waitpid status once reaped */
	unsigned long window; /* the window its spawn step waited for */
	int window_pid;       /* that window's _NET_WM_PID (0: unknown) */
	bool watched;         /* its pidfd is in every wait (alive.c) */
	int watch_fd;
	struct ksr_x11_watch *window_watch; /* its window's DestroyNotify, in every wait */
	char *window_res_name;              /* its window's WM_CLASS instance (a11y name hint) */
	char *desktop_entry;                /* spawn: {desktop_entry:}: the file it came from */
	/* The per-tool looks once its spawn settled (exec_desktop.c): the probe's
	 * status ("ok", "unavailable", "app-not-found", "no-answer", "skipped") and
	 * whether its window painted. */
	char probe[16];
	bool looked;
} ksr_tool;

/* The X server sees a dying client's connection close a moment before its
 * pidfd turns readable: a window gone is looked at again after this. */
#define KSR_WINDOW_GRACE_MS 500

/* The app's process as read while it lived (relaunch.c): who started it, when,
 * and a pidfd that tells how it ended, so that its end can be told apart: a
 * launcher restarting it (followed, `app.relaunched`) or a crash (held for
 * diagnosis). Times are clock ticks since boot, as /proc gives a start time. */
typedef struct ksr_app_life {
	int pid;                        /* whose life this is; 0: none read yet */
	int ppid, sid;                  /* its parent (the launcher) and session */
	unsigned long long start_ticks; /* when it started */
	unsigned long long seen_ticks;  /* when it was last seen alive */
	bool has_fd;                    /* pidfd open, for its exit status */
	int pidfd;
	int relaunches;      /* launcher restarts followed in this run */
	int first_pid;       /* the instance the first restart replaced */
	char first_exit[96]; /* how that one ended */
} ksr_app_life;

typedef struct ksr_run ksr_run;

struct ksr_run {
	const ksr_run_opts *opts;
	ksr_scenario *sc;
	ksr_events *ev;
	ksr_evidence *out;
	ksr_session *session;
	ksr_x11 *x;
	struct ksr_page *page; /* the page rung's connection (browser-attach), or NULL */
	struct ksr_cdp *cdp;   /* page's CDP connection when it speaks CDP (borrowed), or NULL */
	char run_id[40];

	ksr_deadline hard;  /* the run deadline */
	ksr_deadline work;  /* hard minus the reserve for diagnosis and report */
	ksr_deadline stage; /* the current stage's limit (never after work) */

	/* The app. */
	int launched_pid; /* 0: the run launched nothing (also the process group) */
	/* What tells the launch's processes from others (origin.c): its start,
	 * and the top-level windows there before it (those with no
	 * _NET_WM_PID are not the app's). */
	unsigned long long launch_start_ticks;
	unsigned long *windows_before_launch;
	size_t n_windows_before_launch;
	bool launch_reaped;
	int launch_status; /* waitpid status once reaped */
	int app_pid;       /* the process tied to the window, 0 if unknown */
	ksr_app_life life; /* app_pid's launcher and end (relaunch.c) */
	bool have_window;
	ksr_window window; /* the app's window as last seen */

	bool failed; /* a failure signal has been recorded */
	ksr_outcome failure_outcome;
	int next_shot;                /* NN of the next NN-step.png */
	int64_t atspi_last_action_ms; /* when click_element last acted (GTK4 spacing) */
	/* The accessibility connection readiness keeps from step to step
	 * (exec_atspi.c, ksr_run_atspi_kept); atspi_none: it could not be had. */
	struct ksr_run_atspi *atspi_kept;
	bool atspi_none;
	int atspi_none_pid;        /* the process atspi_none is about */
	ksr_plan_state plan_state; /* set by the plan stage */

	/* A crash held until diagnosis tells crash from crash loop (diagnose.c);
	 * the updater window settle already reported (dialogs.c). */
	struct ksr_diag *diag;
	unsigned long updater_reported;
	/* Windows the first look raised a dialog concern for: the final
	 * checks' look does not raise it again (dialogs.c). */
	unsigned long dialogs_reported[16];
	size_t n_dialogs_reported;
	ksr_tool *tools; /* desktop mode: spawned tools, in spawn order */
	size_t n_tools;
	/* Desktop mode: the as: name rung 2 acts on now (a step's or a check's
	 * tool:; NULL: the newest running tool), see ksr_tools_a11y. */
	const char *a11y_tool;

	/* The watchdog (watchdog.c) writes the report itself when the main thread
	 * is stuck past the deadline (a hung X server, a call that ignores signals). */
	struct ksr_watchdog *watchdog;
	pthread_mutex_t lock;      /* held while an event is recorded */
	const char *current_stage; /* for the watchdog's reason */

	/* Alive (alive.c): after settle the app's pidfd is in every wait; where
	 * the run is (for "4.1 s into step 2, line 9"); what ended it. */
	bool app_watched;
	int app_watch_fd;
	/* Its window on a connection of its own (ksr_x11_watch): destroyed
	 * while the process lives on without a window ends the waits too. */
	ksr_x11_watch *window_watch;
	unsigned long watched_window;
	char app_name[32];
	int64_t stage_started_ms, step_started_ms;
	int step_index, step_line;
	char lost_reason[320];
	/* Set by the stages layer: hold an app crash for diagnosis to tell a
	 * crash from a crash loop (the context cannot call up into diagnosis). */
	void (*hold_crash)(ksr_run *run, const char *reason);
	/* The run's video (video.c), recording from boot to the report; the
	 * run's clock (t_ms) at the video's time 0. */
	struct ksr_video *video;
	int64_t video_t_ms;
	/* The window manager (wm.c): its check window watched from boot on a
	 * connection of its own; where it was last seen there. */
	ksr_x11_watch *wm_watch;
	ksr_x11_wm wm;
	bool wm_lost;
	char wm_seen_at[96];
};

/* The run's video (docs/report.md#the-runs-video), when the scenario or the
 * command line asks for it: start once the display is up; stop (a last
 * frame, the chapters from the recorded stage and step starts, the file
 * finished and synced, a video and an artifact event) before the report. Stop
 * runs once, on whichever thread gets there first (the watchdog's too). */
void ksr_run_video_start(ksr_run *run);
void ksr_run_video_stop(ksr_run *run);

/* Record an event (and show it as progress). fields is consumed. */
const cJSON *ksr_run_emit(ksr_run *run, const char *event, cJSON *fields);

/* Record the failure signal that decides the verdict (the first one wins);
 * line 0 = no scenario line. The reason is one sentence; "line N: " is put in
 * front when a line is given. */
void ksr_run_fail(ksr_run *run, ksr_outcome outcome, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ksr_run_fail_setup(ksr_run *run, ksr_outcome outcome, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
void ksr_run_concern(ksr_run *run, ksr_concern code, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* What a wait that did not get its event means: cancelled -> interrupted, the
 * run's working deadline passed -> deadline; otherwise false (the stage's own
 * limit passed, and the caller names its outcome). Records the failure. */
bool ksr_run_wait_ended_run(ksr_run *run, ksr_wait w, int line, const char *what);

/* The app and the tools watched in every wait (alive.c). watch_app after
 * settle; watch_tool once a spawned tool's window is there; unwatch before
 * the run stops one itself (a kill step, the end of the run). */
void ksr_run_watch_app(ksr_run *run);
/* The app's window was replaced (a pattern matched a new one): watch that. */
void ksr_run_rewatch_window(ksr_run *run);
void ksr_run_watch_tool(ksr_run *run, ksr_tool *t);
void ksr_run_unwatch_tool(ksr_run *run, ksr_tool *t);
void ksr_run_unwatch_all(ksr_run *run);
/* A watch fired (the app or a tool died): record it (the app's crash held
 * through hold_crash, a tool's as `crashed`), stop watching, and return true.
 * false when nothing died. Every wait that ended cancelled, and every failure
 * recorded, looks here first. */
bool ksr_run_alive_check(ksr_run *run);

/* Launcher restarts (relaunch.c, docs/scenario.md#launcher-restarts). */
/* The app (app_pid) is alive now: note when, and the first time for this pid
 * read its parent, session and start time and keep a pidfd for its exit. */
void ksr_run_app_seen_alive(ksr_run *run);
/* How the app (app_pid, now gone) ended, as a wait status: its own when the
 * runtime launched it or the kernel keeps it (pidfd, Linux 6.15), else false. */
bool ksr_run_app_exit_status(ksr_run *run, int *status);
/* The app is gone: when it did not die by a signal, this run has followed no
 * restart yet, and within a few seconds a new instance matching process: /
 * process_cmdline: with the same parent or session comes up (with a window
 * matching, as the app wait wants), it becomes the app (app_pid, window, the
 * alive watch) and `app.relaunched` is recorded: true. Bounded, polls; safe
 * inside a guard check (no cancellable wait). */
bool ksr_run_follow_relaunch(ksr_run *run);
/* The instances there now: pids matching process:/process_cmdline: on the
 * run's display, or with neither pattern, the ids of windows matching
 * window:/window_class: (*out: caller frees). */
size_t ksr_run_app_instances(ksr_run *run, bool by_window, unsigned long **out);
/* pid (matching the app, there when the app was found gone) is a new instance:
 * it started after the app was last seen alive, or after the app started and
 * from the app's own parent. *after_ms: its start, from the app's last sight. */
bool ksr_run_instance_is_new(const ksr_run *run, int pid, int64_t *after_ms);
/* "exited with status 81", "was killed by SIGSEGV (signal 11)" (alive.c). */
void ksr_run_describe_status(int status, bool via_shell, char *buf, size_t len);
/* The `window` object of an `app` event: id, title, class, type, geometry. */
cJSON *ksr_run_window_fields(const ksr_window *w);
/* The app was replaced by a relaunch: move the alive watch to the new pid. */
void ksr_run_rewatch_app(ksr_run *run);

/* The app is the one this run started (origin.c,
 * docs/scenario.md#the-app-is-the-one-this-run-started). With launch:,
 * only the launch's processes count as the app: its descendants, processes
 * started after it carrying the run's tag, and processes started after it
 * whose environment tells nothing (written over, not ours to read); without
 * launch: (the app attached) any. */
typedef struct ksr_run_stale {
	int pid;                /* the first instance passed over (0: none) */
	char name[64];          /* its program's name */
	ksr_proc_origin origin; /* OLDER or OTHER; GONE: a window with no pid */
	unsigned long window;   /* its window, when a window matched (0: a process) */
	char title[128];
} ksr_run_stale;
/* Before the launch: the windows there now. After it: when it started. */
void ksr_run_note_windows_before_launch(ksr_run *run);
void ksr_run_note_launch_started(ksr_run *run);
ksr_proc_origin ksr_run_proc_origin(const ksr_run *run, int pid);
/* Keep in l the processes that may be the app this run launched; the first
 * passed over into *stale (NULL: not kept) unless one is there already. */
void ksr_run_keep_launched(const ksr_run *run, ksr_proc_list *l, ksr_run_stale *stale);
/* w may be the launched app's window: its _NET_WM_PID counts as the launch's,
 * or it has none and was not on the display before the launch. When not, it
 * goes into *stale (NULL: not kept) unless one is there already. */
bool ksr_run_window_may_be_launchs(const ksr_run *run, const ksr_window *w, ksr_run_stale *stale);
/* "; an xterm (pid 812) older than this run is on the display; it is not the
 * app this run launched" (nothing when s holds none). */
void ksr_run_stale_describe(const ksr_run_stale *s, ksr_strbuf *b);
/* End of run: stop the processes carrying the run's tag that outlived the
 * launch's process group (left it: setsid -f, a daemon); a `cleanup` event
 * names them. */
void ksr_run_stop_tagged(ksr_run *run);

/* The window manager (wm.c, docs/report.md#events): at boot, which one
 * manages the display (a `session` event) and its check window watched; at
 * every step's and stage's end (where: "the end of step 2, line 9"), whether
 * it went away: a `session` event `wm-lost` and a `wm-lost` concern, once. */
void ksr_run_wm_watch_start(ksr_run *run);
void ksr_run_wm_check(ksr_run *run, const char *where, int line);
void ksr_run_wm_watch_stop(ksr_run *run);

/* Capture the screen at its size now; a change of size since the last look is
 * recorded first as a `screen` event (from, to). NULL with err when it fails. */
ksr_image *ksr_run_capture(ksr_run *run, ksr_err *err);
/* The screen straight into a PNG (caller frees *png), no RGB copy held. */
int ksr_run_capture_png(ksr_run *run, unsigned char **png, size_t *len, ksr_err *err);
/* Record a `screen` event when the screen changed size since the last look. */
void ksr_run_note_screen(ksr_run *run);
/* Save a screenshot of the screen as OUT/name and record it as an artifact;
 * -1 with err (why it is missing) when it could not be taken or written. */
int ksr_run_screenshot(ksr_run *run, const char *name, const char *description, ksr_err *err);
/* Save an image as OUT/name (PNG) and record it as a screenshot artifact. */
int ksr_run_save_image(ksr_run *run, const ksr_image *img, const char *name,
                       const char *description);

/* What the run started (apps.c): the window steps act on in desktop mode
 * when they name none (the most recently spawned tool not killed; 0: none,
 * act on the screen); stopping the app's process group unless keep_running:,
 * and every spawned tool still running (frees the table). */
unsigned long ksr_tools_current_window(const ksr_run *run);
/* Desktop mode: the tool a step's accessibility action or check acts on:
 * the one run->a11y_tool names (whether or not it still runs: a step naming a
 * killed tool is told so), else the most recently spawned one not killed that
 * has its window. NULL: none. */
const ksr_tool *ksr_tools_a11y(const ksr_run *run);
/* The process a tool's accessibility tree is found by: its window's
 * _NET_WM_PID, else its launch shell. */
int ksr_tool_a11y_pid(const ksr_tool *t);
/* The output log of the tool at index i of run->tools (spawn order):
 * spawn-NN.log in OUT, NN from 01. */
void ksr_tool_log_name(size_t i, char *buf, size_t len);
/* A log in OUT (launch.log, or tool t's spawn-NN.log) longer than the cap
 * (ksr_proc_log_cap) was cut: a launch_log event ({name, cut_at_bytes, as,
 * pid}) says so, for report.json's launch.log_cut_at_bytes or the tool's
 * tools[] row and report.md. Call it once the log's writer has ended. */
void ksr_run_note_log_cut(ksr_run *run, const char *name, const ksr_tool *t);
void ksr_run_stop_app(ksr_run *run);

/* A window's colour count says it has not painted yet: one colour covers it
 * but for a stray pixel (the settle stage's paint wait, and each spawned
 * tool's in desktop mode). */
bool ksr_run_colours_blank(const ksr_x11_colours *c);

/* Emit a stage.end row (stages and diagnosis). */
void ksr_run_emit_stage_end(ksr_run *run, const char *name, const char *status, const char *why,
                            int64_t started_ms);

/* Mark this thread as holding run->lock (ksr_run_emit then does not take it):
 * the watchdog, writing the report itself. */
void ksr_run_hold_lock(bool held);

/* Windows matching pattern (NULL: any) on title, and class (NULL: any). */
bool ksr_run_find_window(ksr_run *run, const ksr_pattern *title, const ksr_pattern *klass,
                         ksr_window *found);

/* Free the strings of a window copied by ksr_run_find_window (not the struct). */
void ksr_run_window_release(ksr_window *w);
/* w's title matches title and its WM_CLASS (instance or class) klass; a NULL
 * pattern matches anything. The one window match of window:/window_class:. */
bool ksr_run_window_matches(const ksr_pattern *title, const ksr_pattern *klass,
                            const ksr_window *w);
/* *dst = *src with dst's own copies of the strings (release with the above). */
void ksr_run_window_copy(ksr_window *dst, const ksr_window *src);

#endif
