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
/* Sparse: at most this many colours. A window that sparse whose app is still at
 * work when settle_s ends is being drawn (a toolkit laying out its panels
 * before their content: Blender on a loaded machine showed 5 flat colours at
 * the first look and its interface seconds later); it is waited for until it
 * is drawn or the app rests. At work: the window repainted within
 * PAINT_QUIET_MS of the end, or the app used BUSY_CORE_SHARE of a core over
 * its last BUSY_SAMPLE_MS (Blender computes its interface for seconds at a
 * full core and repaints nothing meanwhile; an idle app uses next to none).
 * Sparse alone says nothing (an xterm with its prompt has two colours), so a
 * sparse window whose app rests costs nothing. */
#define SPARSE_COLOURS  16
#define BUSY_SAMPLE_MS  400
#define BUSY_CORE_SHARE 0.25
/* At most one count per this, however often a blank window repaints itself
 * (a toolkit clearing it each frame): each count is a grab of the window. */
#define PAINT_RECHECK_MS 200
/* A repaint's time comes from the server's clock mapped onto ours: one that
 * started just after a count may be dated a little before it. Repaints this
 * close before a count are taken as after it (at worst one count more). */
#define PAINT_CLOCK_SLACK_MS 50

/* ---- the app at work ---------------------------------------------------- */

/* The app's CPU time at a moment, to tell later whether it worked since. */
typedef struct cpu_mark {
	int pid; /* 0: not taken */
	int64_t at_ms;
	unsigned long long ticks;
} cpu_mark;

static void cpu_mark_take(cpu_mark *m, int pid)
{
	ksr_proc_stat st;
	*m = (cpu_mark){0};
	if (pid > 0 && ksr_proc_read_stat(pid, &st))
		*m = (cpu_mark){.pid = pid, .at_ms = ksr_now_ms(), .ticks = st.cpu_ticks};
}

/* The share of a core pid used since the mark; 0 when not known (no mark,
 * another process now, gone, or too short a span to tell). */
static double cpu_share_since(const cpu_mark *m, int pid)
{
	ksr_proc_stat st;
	int64_t span_ms = ksr_now_ms() - m->at_ms;
	if (!m->pid || m->pid != pid || span_ms < 100 || !ksr_proc_read_stat(pid, &st) ||
	    st.cpu_ticks < m->ticks)
		return 0;
	double ticks_per_s = (double)sysconf(_SC_CLK_TCK);
	return (double)(st.cpu_ticks - m->ticks) / ticks_per_s / ((double)span_ms / 1000.0);
}

/* ---- settle ------------------------------------------------------------- */

static double settle_limit(const ksr_run *run)
{
	return run->sc->settle_s + run->sc->paint_timeout_s;
}

/* settle_s; its death ends it. The app's CPU time is marked BUSY_SAMPLE_MS
 * before the end (at the start when settle_s is shorter). */
static ksr_stage_status settle_wait(ksr_run *run, cpu_mark *work)
{
	ksr_deadline settled = ksr_deadline_min(
	        run->stage, ksr_deadline_in_ms((int64_t)(run->sc->settle_s * 1000)));
	ksr_deadline mark_due = {.at_ms = settled.at_ms - BUSY_SAMPLE_MS};
	*work = (cpu_mark){0};
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
		if (!work->pid && ksr_deadline_passed(mark_due))
			cpu_mark_take(work, run->app_pid);
		struct pollfd p = {.fd = pidfd, .events = POLLIN};
		ksr_deadline tick = ksr_deadline_min(settled, ksr_deadline_in_ms(PROC_RESCAN_MS));
		if (!work->pid)
			tick = ksr_deadline_min(tick, mark_due);
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
	bool drawing_at_settle;   /* sparse and its app at work at its end */
	double busy_at_settle;    /* the app's share of a core over its last BUSY_SAMPLE_MS */
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

/* The window repainted since since_ms (false without DAMAGE). */
static bool repainted_since(ksr_run *run, bool damage, int64_t since_ms)
{
	return damage && ksr_x11_damaged_since(run->x, run->window.id, since_ms) == 1;
}

/* A sparse window whose app was at work when settle_s ended: counted again
 * every PAINT_RECHECK_MS until it is no longer sparse (drawn) or its app
 * rests (no repaint and no work over the last count's span), then waited for
 * until quiet. run->stage bounds it all: still at work then, it is judged as
 * it is. FAILED when the run ended meanwhile. */
static ksr_stage_status wait_drawn(ksr_run *run, paint_state *p, bool damage, int64_t looked_ms)
{
	cpu_mark work;
	for (;;) {
		cpu_mark_take(&work, run->app_pid);
		ksr_deadline next = {.at_ms = looked_ms + PAINT_RECHECK_MS};
		ksr_wait w = ksr_sleep_until(ksr_deadline_min(run->stage, next));
		if (w != KSR_WAIT_CANCELLED) /* the sleep's end, or the stage's */
			w = ksr_deadline_passed(run->stage) ? KSR_WAIT_TIMEOUT : KSR_WAIT_READY;
		if (ended_run(run, w))
			return KSR_STAGE_FAILED;
		if (w != KSR_WAIT_READY)
			break; /* paint_timeout_s passed: judged as it is */
		int64_t span_from = looked_ms;
		looked_ms = ksr_now_ms();
		if (!count(run, &p->last)) {
			p->gone = true;
			return KSR_STAGE_OK;
		}
		if (p->last.distinct > SPARSE_COLOURS)
			break;
		if (!repainted_since(run, damage, span_from - PAINT_CLOCK_SLACK_MS) &&
		    cpu_share_since(&work, run->app_pid) < BUSY_CORE_SHARE)
			break;
	}
	unsigned long win = run->window.id;
	ksr_x11_quiet q = {.quiet_ms = PAINT_QUIET_MS, .since_ms = looked_ms};
	int64_t waited = 0;
	ksr_wait w = damage ? ksr_x11_quiet_wait(run->x, &win, 1, &q, run->stage, &waited)
	                    : KSR_WAIT_READY;
	if (ended_run(run, w))
		return KSR_STAGE_FAILED;
	p->lost = w == KSR_WAIT_ERROR;
	p->quiet_after_ms = ksr_now_ms() - p->start_ms;
	if (!p->lost && !count(run, &p->last))
		p->gone = true;
	return KSR_STAGE_OK;
}

/* Sparse, and its app at work: repainting it lately, or busy on the CPU. */
static bool still_drawing(ksr_run *run, paint_state *p, bool damage, int64_t looked_ms,
                          const cpu_mark *work)
{
	if (p->first.distinct > SPARSE_COLOURS)
		return false;
	p->busy_at_settle = cpu_share_since(work, run->app_pid);
	return repainted_since(run, damage, looked_ms - PAINT_QUIET_MS) ||
	       p->busy_at_settle >= BUSY_CORE_SHARE;
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
		cJSON_AddNumberToObject(f, "busy_at_settle", p->busy_at_settle);
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
static ksr_stage_status painted_before_judged(ksr_run *run, paint_state *p, const cpu_mark *work)
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
	} else if (still_drawing(run, p, damage, looked, work)) {
		p->drawing_at_settle = true;
		st = wait_drawn(run, p, damage, looked);
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
		         "; its window (%d colours) was still being drawn when settle_s ended "
		         "(the app at %.0f%% of a core): quiet %.1f s later, %d colours",
		         p->first.distinct, 100.0 * p->busy_at_settle,
		         (double)p->quiet_after_ms / 1000.0, p->last.distinct);
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
	cpu_mark work;
	ksr_stage_status st = settle_wait(run, &work);
	if (st != KSR_STAGE_OK)
		return st;
	ksr_dialogs_after_settle(run);
	/* From here on its death ends every wait, the paint wait's too. */
	ksr_run_watch_app(run);
	paint_state p;
	st = painted_before_judged(run, &p, &work);
	if (st != KSR_STAGE_OK)
		return st;
	snprintf(note, len, "settled %g s; the app is alive", run->sc->settle_s);
	paint_note(run, &p, note, len);
	return st;
}

const ksr_stage_def ksr_stage_settle = {
        .name = "settle", .limit_s = settle_limit, .run = stage_settle};
