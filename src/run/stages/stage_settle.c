/* Settle: the app is given settle_s to come up; its death ends it. Then its
 * window must have painted (docs/scenario.md#painted-before-judged): a window
 * still one flat colour is waited for, on its repaints (DAMAGE), until it is
 * painted and quiet, at most paint_timeout_s more; still blank then, a
 * `not-rendered` concern. The stage's limit is settle_s + paint_timeout_s;
 * settle_s has its own deadline inside it, so the paint wait gets what is
 * left: paint_timeout_s. */
#include "run/stages/stage.h"
#include "run/stages/app.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"
#include "run/diagnosis/diagnose.h"
#include "run/diagnosis/dialogs.h"

/* Blank: ksr_run_colours_blank (src/run/context/observe.c). */
/* Painted and quiet: no repaint for this long after the paint was seen. */
#define PAINT_QUIET_MS 500
/* Sparse: at most this many colours. A window that sparse and still repainting
 * when settle_s ends is being drawn (a toolkit laying out its panels before
 * their content: Blender on a loaded machine showed 5 flat colours at the
 * first look and its interface seconds later); it is waited for until quiet.
 * Sparse alone says nothing (an xterm with its prompt has two colours), so a
 * sparse window that is quiet costs nothing. */
#define SPARSE_COLOURS 16
/* At most one count per this, however often a blank window repaints itself
 * (a toolkit clearing it each frame): each count is a grab of the window. */
#define PAINT_RECHECK_MS 200
/* A repaint's time comes from the server's clock mapped onto ours: one that
 * started just after a count may be dated a little before it. Repaints this
 * close before a count are taken as after it (at worst one count more). */
#define PAINT_CLOCK_SLACK_MS 50

/* ---- settle ------------------------------------------------------------- */

static double settle_limit(const ksr_run *run)
{
	return run->sc->settle_s + run->sc->paint_timeout_s;
}

/* settle_s; its death ends it. */
static ksr_stage_status settle_wait(ksr_run *run)
{
	ksr_deadline settled = ksr_deadline_min(
	        run->stage, ksr_deadline_in_ms((int64_t)(run->sc->settle_s * 1000)));
	int pidfd_pid = run->app_pid;
	int pidfd = pidfd_pid > 0 ? ksr_proc_pidfd(pidfd_pid) : -1;
	ksr_stage_status st = KSR_STAGE_OK;
	for (;;) {
		if (!ksr_app_alive(run)) {
			ksr_app_record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
			break;
		}
		ksr_app_pidfd_follow(run, &pidfd, &pidfd_pid); /* a relaunch was followed */
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick = ksr_deadline_min(settled, ksr_deadline_in_ms(PROC_RESCAN_MS));
		ksr_wait w = ksr_wait_fds(&p, pidfd >= 0 ? 1 : 0, tick);
		if (w == KSR_WAIT_READY || (w == KSR_WAIT_TIMEOUT && !ksr_deadline_passed(settled)))
			continue;
		if (ksr_run_wait_ended_run(run, w, 0, "settle")) {
			st = KSR_STAGE_FAILED;
			break;
		}
		if (!ksr_app_alive(run)) {
			ksr_app_record_crash(run, "during settle");
			st = KSR_STAGE_FAILED;
		}
		break;
	}
	if (pidfd >= 0)
		close(pidfd);
	return st;
}

/* ---- painted before judged --------------------------------------------- */

typedef struct paint_state {
	ksr_x11_colours first; /* at the end of settle_s */
	ksr_x11_colours last;  /* at the last count */
	bool blank_at_settle, painted, gone;
	bool drawing_at_settle;   /* sparse and repainted within PAINT_QUIET_MS of its end */
	bool lost;                /* the X connection went: nothing more is known (no concern) */
	int64_t start_ms;         /* the end of settle_s */
	int64_t painted_after_ms; /* from then to the first count that was not blank */
	int64_t quiet_after_ms;   /* to painted and quiet (the paint's repaints over) */
} paint_state;

static bool count(ksr_run *run, ksr_x11_colours *c)
{
	ksr_err err = {0};
	return ksr_x11_window_colours(run->x, run->window.id, c, &err) == 0;
}

/* A wait of the paint wait ended without what it waited for: the app died,
 * the run was cancelled or its deadline passed (recorded: the stage fails),
 * or the paint wait's own limit passed (false). */
static bool ended_run(ksr_run *run, ksr_wait w)
{
	return (w == KSR_WAIT_CANCELLED || w == KSR_WAIT_TIMEOUT) &&
	       ksr_run_wait_ended_run(run, w, 0, "settle (waiting for the window to paint)");
}

/* The next repaint after looked_ms, or a poll at PAINT_RECHECK_MS without
 * DAMAGE; never two counts closer than PAINT_RECHECK_MS. */
static ksr_wait next_repaint(ksr_run *run, bool damage, int64_t looked_ms)
{
	ksr_deadline spaced =
	        ksr_deadline_min(run->stage, (ksr_deadline){.at_ms = looked_ms + PAINT_RECHECK_MS});
	if (ksr_sleep_until(spaced) == KSR_WAIT_CANCELLED) /* the app's death ends it too */
		return KSR_WAIT_CANCELLED;
	if (ksr_deadline_passed(run->stage))
		return KSR_WAIT_TIMEOUT;
	if (!damage)
		return KSR_WAIT_READY;
	return ksr_x11_damage_wait(run->x, run->window.id, looked_ms - PAINT_CLOCK_SLACK_MS,
	                           run->stage);
}

/* Wait (its repaints) until the blank window has painted, then until it is
 * quiet; run->stage bounds both. FAILED when the run ended meanwhile. */
static ksr_stage_status wait_painted(ksr_run *run, paint_state *p, bool damage, int64_t looked_ms)
{
	for (;;) {
		ksr_wait w = next_repaint(run, damage, looked_ms);
		if (ended_run(run, w))
			return KSR_STAGE_FAILED;
		if (w != KSR_WAIT_READY) {
			p->lost = w == KSR_WAIT_ERROR; /* else paint_timeout_s passed */
			return KSR_STAGE_OK;
		}
		looked_ms = ksr_now_ms();
		if (!count(run, &p->last)) {
			p->gone = true; /* unmapped or destroyed: the later stages look */
			return KSR_STAGE_OK;
		}
		if (!ksr_run_colours_blank(&p->last))
			break;
	}
	p->painted = true;
	p->painted_after_ms = looked_ms - p->start_ms;
	unsigned long win = run->window.id;
	ksr_x11_quiet q = {.quiet_ms = PAINT_QUIET_MS, .since_ms = looked_ms};
	int64_t waited = 0;
	ksr_wait w = damage ? ksr_x11_quiet_wait(run->x, &win, 1, &q, run->stage, &waited)
	                    : KSR_WAIT_READY;
	if (ended_run(run, w))
		return KSR_STAGE_FAILED; /* still repainting at the limit is painted all the same */
	p->quiet_after_ms = ksr_now_ms() - p->start_ms;
	return KSR_STAGE_OK;
}

/* A sparse window still repainting when settle_s ended: wait until it is
 * quiet (run->stage bounds it: still repainting then, it is judged as it is),
 * then count it again. FAILED when the run ended meanwhile. */
static ksr_stage_status wait_drawn(ksr_run *run, paint_state *p, int64_t looked_ms)
{
	unsigned long win = run->window.id;
	ksr_x11_quiet q = {.quiet_ms = PAINT_QUIET_MS, .since_ms = looked_ms};
	int64_t waited = 0;
	ksr_wait w = ksr_x11_quiet_wait(run->x, &win, 1, &q, run->stage, &waited);
	if (ended_run(run, w))
		return KSR_STAGE_FAILED;
	p->lost = w == KSR_WAIT_ERROR;
	p->quiet_after_ms = ksr_now_ms() - p->start_ms;
	if (!p->lost && !count(run, &p->last))
		p->gone = true;
	return KSR_STAGE_OK;
}

static bool still_drawing(ksr_run *run, const ksr_x11_colours *c, bool damage, int64_t looked_ms)
{
	return damage && c->distinct <= SPARSE_COLOURS &&
	       ksr_x11_damaged_since(run->x, run->window.id, looked_ms - PAINT_QUIET_MS) == 1;
}

static void colour_hex(const ksr_x11_colours *c, char buf[8])
{
	snprintf(buf, 8, "#%06lx", c->rgb & 0xffffff);
}

static double dominant_pct(const ksr_x11_colours *c)
{
	return c->pixels ? 100.0 * (double)c->dominant / (double)c->pixels : 0;
}

/* The `paint` event: what the window was at the end of settle_s and, when it
 * was blank, what the wait for its paint saw. */
static void emit_paint(ksr_run *run, const paint_state *p)
{
	char id[24], hex[8];
	snprintf(id, sizeof id, "0x%lx", run->window.id);
	colour_hex(&p->first, hex);
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "window", id);
	cJSON_AddStringToObject(f, "title", run->window.title ? run->window.title : "");
	cJSON_AddBoolToObject(f, "blank_at_settle", p->blank_at_settle);
	cJSON_AddNumberToObject(f, "colours", p->first.distinct);
	cJSON_AddStringToObject(f, "colour", hex);
	cJSON_AddNumberToObject(f, "colour_share", dominant_pct(&p->first) / 100.0);
	if (p->blank_at_settle) {
		cJSON_AddBoolToObject(f, "painted", p->painted);
		if (p->painted) {
			cJSON_AddNumberToObject(f, "painted_after_ms", (double)p->painted_after_ms);
			cJSON_AddNumberToObject(f, "quiet_after_ms", (double)p->quiet_after_ms);
			cJSON_AddNumberToObject(f, "colours_painted", p->last.distinct);
		} else {
			cJSON_AddNullToObject(f, "painted_after_ms");
		}
		cJSON_AddNumberToObject(f, "waited_ms", (double)(ksr_now_ms() - p->start_ms));
		cJSON_AddBoolToObject(f, "window_gone", p->gone);
	} else if (p->drawing_at_settle) {
		cJSON_AddBoolToObject(f, "drawing_at_settle", true);
		cJSON_AddNumberToObject(f, "quiet_after_ms", (double)p->quiet_after_ms);
		cJSON_AddNumberToObject(f, "colours_drawn", p->last.distinct);
		cJSON_AddBoolToObject(f, "window_gone", p->gone);
	}
	ksr_run_emit(run, "paint", f);
}

static void concern_not_rendered(ksr_run *run, const paint_state *p)
{
	char hex[8];
	colour_hex(&p->last, hex);
	ksr_run_concern(run, KSR_CONCERN_NOT_RENDERED, 0,
	                "the window \"%s\" (0x%lx) was still one flat colour (%s, %.2f%% of its "
	                "%lld pixels) %g s after settle_s (paint_timeout_s): the app did not "
	                "render",
	                run->window.title ? run->window.title : "", run->window.id, hex,
	                dominant_pct(&p->last), p->last.pixels, run->sc->paint_timeout_s);
}

/* Count the window's colours at the end of settle_s; blank, wait for its
 * paint. Nothing to look at (no window, not on the screen): nothing done. */
static ksr_stage_status painted_before_judged(ksr_run *run, paint_state *p)
{
	*p = (paint_state){.start_ms = ksr_now_ms()};
	if (!run->have_window || !run->window.id || !run->x)
		return KSR_STAGE_OK;
	/* Tracked since settle began (track_repaints); again here in case the
	 * window changed: a paint after the count shows as a repaint. */
	ksr_err err = {0};
	bool damage = ksr_x11_damage_available(run->x) &&
	              ksr_x11_damage_track(run->x, run->window.id, &err) == 0;
	int64_t looked = ksr_now_ms();
	if (!count(run, &p->first))
		return KSR_STAGE_OK;
	p->last = p->first;
	p->blank_at_settle = ksr_run_colours_blank(&p->first);
	ksr_stage_status st = KSR_STAGE_OK;
	if (p->blank_at_settle) {
		st = wait_painted(run, p, damage, looked);
	} else if (still_drawing(run, &p->first, damage, looked)) {
		p->drawing_at_settle = true;
		st = wait_drawn(run, p, looked);
	}
	emit_paint(run, p);
	if (st == KSR_STAGE_OK && p->blank_at_settle && !p->painted && !p->gone && !p->lost)
		concern_not_rendered(run, p);
	return st;
}

/* The stage row's note: how long the paint took, when it was waited for. */
static void paint_note(const ksr_run *run, const paint_state *p, char *note, size_t len)
{
	size_t n = strlen(note);
	if (p->drawing_at_settle && n < len) {
		snprintf(note + n, len - n,
		         "; its window (%d colours) was still being drawn when settle_s ended: "
		         "quiet "
		         "%.1f s later, %d colours",
		         p->first.distinct, (double)p->quiet_after_ms / 1000.0, p->last.distinct);
		return;
	}
	if (!p->blank_at_settle || n >= len)
		return;
	if (p->painted)
		snprintf(note + n, len - n,
		         "; its window was one flat colour when settle_s ended and painted "
		         "%.1f s later (quiet after %.1f s)",
		         (double)p->painted_after_ms / 1000.0, (double)p->quiet_after_ms / 1000.0);
	else if (p->gone || p->lost)
		snprintf(note + n, len - n,
		         "; its window was one flat colour when settle_s ended and %s before it "
		         "painted",
		         p->gone ? "went away" : "the X display connection was lost");
	else
		snprintf(note + n, len - n,
		         "; its window stayed one flat colour for paint_timeout_s (%g s) more: not "
		         "rendered",
		         run->sc->paint_timeout_s);
}

/* The window's repaints are counted from the start of settle_s, so that its
 * end can tell a sparse window still being drawn from one at rest. */
static void track_repaints(ksr_run *run)
{
	ksr_err err = {0};
	if (run->have_window && run->window.id && run->x && ksr_x11_damage_available(run->x))
		(void)ksr_x11_damage_track(run->x, run->window.id, &err); /* else: not told */
}

static ksr_stage_status stage_settle(ksr_run *run, char *note, size_t len)
{
	track_repaints(run);
	ksr_stage_status st = settle_wait(run);
	if (st != KSR_STAGE_OK)
		return st;
	ksr_dialogs_after_settle(run);
	/* From here on its death ends every wait, the paint wait's too. */
	ksr_run_watch_app(run);
	paint_state p;
	st = painted_before_judged(run, &p);
	if (st != KSR_STAGE_OK)
		return st;
	snprintf(note, len, "settled %g s; the app is alive", run->sc->settle_s);
	paint_note(run, &p, note, len);
	return st;
}

const ksr_stage_def ksr_stage_settle = {
        .name = "settle", .limit_s = settle_limit, .run = stage_settle};
