/* First look (docs/scenario.md): the screenshot after settle, captured once and
 * encoded once; dialogs on every top-level window, and the landmarks inside
 * the app's windows where it is on the accessibility bus; the baseline
 * comparison. */
#include "run/stages/stage.h"
#include "run/actions/runner.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/actions/exec_atspi.h"
#include "run/diagnosis/dialogs.h"
#include "run/vision/judge.h"

/* A pixel differs from the baseline when a channel moves by more than this.
 * 24 of 255 (9.4%) is about pixelmatch's default (0.1 in YIQ): above the
 * noise of font anti-aliasing and hinting, gradient dithering and scaled
 * images (typically 1-16 levels), below the gap between distinct UI colours
 * (a selection, a button state, text on its background: 30 and more). */
#define BASELINE_CHANNEL_THRESHOLD 24

/* The landmarks' walk (first-run screens drawn inside a window): bounded so
 * that a slow or absent bus costs the first look at most this, and never
 * the run. The nodes nearest the windows come first (breadth first), and a
 * welcome page's heading is near the top. */
#define LANDMARKS_MS        4000
#define LANDMARKS_MAX_NODES 3000

typedef struct shot {
	ksr_image *img;
	unsigned char *png;
	size_t len;
} shot;

static void record_artifact(ksr_run *run, const char *name, const char *kind, const char *what)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", name);
	cJSON_AddStringToObject(a, "kind", kind);
	cJSON_AddStringToObject(a, "description", what);
	ksr_run_emit(run, "artifact", a);
}

static int write_artifact(ksr_run *run, const char *name, const char *kind, const char *what,
                          const unsigned char *data, size_t len)
{
	ksr_err err = {0};
	if (ksr_evidence_write(run->out, name, data, len, &err) < 0)
		return -1;
	record_artifact(run, name, kind, what);
	return 0;
}

/* Capture and write 00-first-look.png, keeping the PNG bytes (for the
 * baseline files). The screen goes straight into the PNG; its pixels are
 * decoded from it only when a comparison or the judge needs them (the same
 * pixels as the file, and no RGB copy of the screen in a run without). */
static int take_shot(ksr_run *run, shot *s, ksr_err *err)
{
	if (ksr_run_capture_png(run, &s->png, &s->len, err) < 0)
		return -1;
	return write_artifact(run, "00-first-look.png", "screenshot", "the screen after settle",
	                      s->png, s->len);
}

static const ksr_image *shot_pixels(shot *s)
{
	ksr_err err = {0};
	if (!s->img && s->png)
		s->img = ksr_image_decode_png(s->png, s->len, &err);
	return s->img;
}

/* The judge is configured (or misconfigured, which it reports itself). */
static bool judge_wanted(void)
{
	ksr_model_config cfg;
	char why[400];
	int rc = ksr_judge_config(KSR_MODEL_JUDGE, &cfg, why, sizeof why);
	explicit_bzero(cfg.api_key, sizeof cfg.api_key);
	return rc > 0;
}

/* --update-baseline: the first-look screenshot becomes the scenario's baseline. */
static void update_baseline(ksr_run *run, const shot *s, char *note, size_t note_len)
{
	const char *path = run->sc->baseline;
	if (!path) {
		snprintf(note, note_len,
		         "--update-baseline given but the scenario has no baseline:");
		return;
	}
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(s->png, 1, s->len, f) == s->len;
	if (f && fclose(f) != 0)
		ok = false;
	snprintf(note, note_len, ok ? "baseline %s updated" : "baseline %s could not be written",
	         path);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "path", path);
	cJSON_AddBoolToObject(b, "written", ok);
	ksr_run_emit(run, "baseline.update", b);
}

static void write_candidate(ksr_run *run, const shot *s, const char *why, char *note, size_t len)
{
	write_artifact(run, "baseline-candidate.png", "baseline-candidate", why, s->png, s->len);
	snprintf(note, len, "%s; baseline-candidate.png written", why);
}

typedef struct dims {
	int w, h;
} dims;

static void emit_comparison(ksr_run *run, const ksr_diff_result *r, dims base)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "path", run->sc->baseline);
	cJSON_AddNumberToObject(f, "tolerance", run->sc->baseline_tolerance);
	cJSON_AddNumberToObject(f, "channel_threshold", BASELINE_CHANNEL_THRESHOLD);
	cJSON_AddNumberToObject(f, "masks", (double)run->sc->n_baseline_mask);
	cJSON_AddBoolToObject(f, "size_mismatch", r->size_mismatch);
	cJSON_AddNumberToObject(f, "baseline_w", base.w);
	cJSON_AddNumberToObject(f, "baseline_h", base.h);
	cJSON_AddNumberToObject(f, "compared", (double)r->compared);
	cJSON_AddNumberToObject(f, "differing", (double)r->differing);
	cJSON_AddNumberToObject(f, "fraction", r->fraction);
	ksr_run_emit(run, "baseline", f);
}

/* The comparison again, this time encoding the diff image as its rows are
 * made (no frame held): only when there is drift to show. */
static void write_diff(ksr_run *run, const shot *s, const ksr_diff_opts *o)
{
	ksr_err err = {0};
	ksr_png_rows *base = ksr_png_rows_open_file(run->sc->baseline, &err);
	ksr_png_rows *now = base ? ksr_png_rows_open(s->png, s->len, &err) : NULL;
	ksr_diff_result r = {0};
	unsigned char *png = NULL;
	size_t len = 0;
	if (now && ksr_image_diff_rows(base, now, o, &r, &png, &len, &err) == 0 && png)
		write_artifact(run, "first-look-diff.png", "diff",
		               "pixels that differ from the baseline, in red", png, len);
	free(png);
	ksr_png_rows_close(now);
	ksr_png_rows_close(base);
}

/* Drift or a size mismatch is a concern carrying the figure. */
static void judge_drift(ksr_run *run, const shot *s, const ksr_diff_opts *o, dims base, dims now,
                        const ksr_diff_result *r, char *note, size_t len)
{
	const ksr_scenario *sc = run->sc;
	if (r->size_mismatch) {
		ksr_run_concern(run, KSR_CONCERN_BASELINE_DRIFT, 0,
		                "the screen is %dx%d but the baseline %s is %dx%d", now.w, now.h,
		                sc->baseline, base.w, base.h);
		snprintf(note, len, "baseline size mismatch");
		return;
	}
	double pct = r->fraction * 100.0, tol = sc->baseline_tolerance * 100.0;
	if (r->fraction > sc->baseline_tolerance) {
		write_diff(run, s, o);
		ksr_run_concern(run, KSR_CONCERN_BASELINE_DRIFT, 0,
		                "%.2f%% of pixels differ from the baseline %s (tolerance %g%%)",
		                pct, sc->baseline, tol);
		snprintf(note, len, "baseline drift %.2f%% (tolerance %g%%)", pct, tol);
		return;
	}
	snprintf(note, len, "baseline matches: %.2f%% of pixels differ (tolerance %g%%)", pct, tol);
}

/* A baseline path that exists but is not a readable PNG (a Git LFS pointer, a
 * truncated file) is the setup's fault, not the app's: test-error, so that a
 * broken baseline is never mistaken for drift nor silently skipped. */
static void compare_baseline(ksr_run *run, shot *s, char *note, size_t len)
{
	const ksr_scenario *sc = run->sc;
	if (!sc->baseline) {
		write_candidate(run, s, "the scenario has no baseline:", note, len);
		return;
	}
	struct stat st;
	if (stat(sc->baseline, &st) < 0 && errno == ENOENT) {
		write_candidate(run, s, "no baseline file yet", note, len);
		return;
	}
	/* Both screens row by row, as they are decoded: no frame is held (the
	 * screenshot is kept as its PNG). */
	ksr_err err = {0};
	ksr_png_rows *base = ksr_png_rows_open_file(sc->baseline, &err);
	ksr_png_rows *now = base ? ksr_png_rows_open(s->png, s->len, &err) : NULL;
	ksr_diff_opts o = {.channel_threshold = BASELINE_CHANNEL_THRESHOLD,
	                   .mask = (const double(*)[4])sc->baseline_mask,
	                   .n_mask = sc->n_baseline_mask};
	ksr_diff_result r = {0};
	dims bd = {0}, nd = {0};
	if (now) {
		ksr_png_rows_size(base, &bd.w, &bd.h);
		ksr_png_rows_size(now, &nd.w, &nd.h);
	}
	if (!now || ksr_image_diff_rows(base, now, &o, &r, NULL, NULL, &err) < 0) {
		ksr_run_fail_setup(run, KSR_OUTCOME_INVALID_SCENARIO, 0,
		                   "the baseline %s is not a readable PNG (%s); fix it or write it "
		                   "again with run --update-baseline",
		                   sc->baseline, err.msg);
		snprintf(note, len, "baseline unreadable");
	} else {
		emit_comparison(run, &r, bd);
		judge_drift(run, s, &o, bd, nd, &r, note, len);
	}
	ksr_png_rows_close(now);
	ksr_png_rows_close(base);
}

static const char *landmarks_skip(const ksr_run *run)
{
	if (!run->sc->atspi)
		return "atspi: false";
	if (run->sc->desktop)
		return "desktop mode";
	if (run->app_pid <= 0 && !run->have_window)
		return "no app";
	return NULL;
}

/* The app's showing dialogs, alerts, headings and landmarks, where it is on
 * the bus: false (with why in note) when it is not or did not answer in
 * time, which is recorded and never fails the run. The run's kept
 * connection is reused when there is one; else one is opened for this look
 * and closed, so that a bus absent now is asked again by a later step. */
static bool read_landmarks(ksr_run *run, ksr_atspi_landmarks *lm, char *note, size_t len)
{
	const char *skip = landmarks_skip(run);
	if (skip) {
		snprintf(note, len, "landmarks not read (%s)", skip);
		return false;
	}
	ksr_deadline d = ksr_deadline_min(run->stage, ksr_deadline_in_ms(LANDMARKS_MS));
	ksr_err err = {0};
	ksr_run_atspi own = {0}, *t = run->atspi_kept;
	if (!t && ksr_run_atspi_open(run, d, &own, &err) == 0)
		t = &own;
	/* The probe's row says in full why the app is not on the bus. */
	const char *why = !t && own.no_bus ? "no accessibility bus"
	                  : !t             ? "the app is not on the accessibility bus"
	                                   : NULL;
	int rc = t ? ksr_atspi_landmarks_read(t->a, &t->app, LANDMARKS_MAX_NODES, d, lm, &err) : -1;
	if (t == &own)
		ksr_run_atspi_release(&own);
	if (rc < 0) {
		snprintf(note, len, "landmarks not read (%s)", why ? why : err.msg);
		return false;
	}
	snprintf(note, len, "%zu landmark%s of %zu accessible nodes in %lld ms%s%s", lm->len,
	         lm->len == 1 ? "" : "s", lm->nodes, (long long)lm->ms,
	         lm->cut_by ? ", cut by " : "", lm->cut_by ? lm->cut_by : "");
	return true;
}

static ksr_stage_status stage_first_look(ksr_run *run, char *note, size_t len)
{
	shot s = {0};
	ksr_err err = {0};
	ksr_stage_status st = KSR_STAGE_OK;
	/* Blockers first: once a person cleared one, the first look
	 * sees the app, not the login dialog they closed. */
	if (!ksr_blockers_check(run, "first-look"))
		return KSR_STAGE_FAILED;
	if (take_shot(run, &s, &err) < 0 && !ksr_x11_alive(run->x)) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
		             "the X display connection was lost before the first look");
		st = KSR_STAGE_FAILED;
		goto cleanup;
	}
	char dialogs[160] = "", base[256] = "", marks[200] = "";
	ksr_atspi_landmarks lm = {0};
	bool have_marks = read_landmarks(run, &lm, marks, sizeof marks);
	/* Dialogs first: an error dialog is the failure that should decide. */
	if (!ksr_dialogs_first_look(run, have_marks ? &lm : NULL, dialogs, sizeof dialogs))
		st = KSR_STAGE_FAILED;
	ksr_atspi_landmarks_clear(&lm);
	if (!s.png)
		snprintf(base, sizeof base, "baseline not compared");
	else if (run->opts->update_baseline)
		update_baseline(run, &s, base, sizeof base);
	else
		compare_baseline(run, &s, base, sizeof base);
	/* The model's judgement last, only when nothing has failed yet. */
	char judged[96] = "";
	if (s.png && !run->failed)
		ksr_judge_first_look(run, judge_wanted() ? shot_pixels(&s) : NULL, judged,
		                     sizeof judged);
	if (run->failed)
		st = KSR_STAGE_FAILED;
	if (s.png)
		snprintf(note, len, "screenshot 00-first-look.png; %s; %s; %s", dialogs, marks,
		         base);
	else
		snprintf(note, len, "no screenshot (%s); %s; %s; %s", err.msg, dialogs, marks,
		         base);
	if (judged[0] && strlen(note) + 2 < len)
		snprintf(note + strlen(note), len - strlen(note), "; %s", judged);
cleanup:
	ksr_image_free(s.img);
	free(s.png);
	return st;
}

const ksr_stage_def ksr_stage_first_look = {.name = "first-look", .run = stage_first_look};
