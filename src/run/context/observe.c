/* What the stages and executors ask of the screen: screenshots into the
 * evidence folder and window look-ups. */
#include "run/context/context.h"

#include <stdlib.h>
#include <string.h>

static cJSON *size_obj(int w, int h)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "w", w);
	cJSON_AddNumberToObject(o, "h", h);
	return o;
}

void ksr_run_note_screen(ksr_run *run)
{
	int ow, oh, nw, nh;
	if (!run->x)
		return;
	ksr_x11_screen_refresh(run->x);
	if (!ksr_x11_screen_change(run->x, &ow, &oh, &nw, &nh))
		return;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddItemToObject(f, "from", size_obj(ow, oh));
	cJSON_AddItemToObject(f, "to", size_obj(nw, nh));
	ksr_run_emit(run, "screen", f);
}

ksr_image *ksr_run_capture(ksr_run *run, ksr_err *err)
{
	if (!run->x) {
		ksr_err_set(err, "no X display");
		return NULL;
	}
	ksr_image *img = ksr_x11_capture(run->x, 0, err);
	ksr_run_note_screen(run);
	return img;
}

/* Straight from the screen into a PNG: no RGB copy of the screen is held. */
int ksr_run_capture_png(ksr_run *run, unsigned char **png, size_t *len, ksr_err *err)
{
	if (!run->x)
		return ksr_err_set(err, "no X display");
	int rc = ksr_x11_capture_png(run->x, 0, png, len, err);
	ksr_run_note_screen(run);
	return rc;
}

static void record_artifact(ksr_run *run, const char *name, const char *kind, const char *what)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", name);
	cJSON_AddStringToObject(a, "kind", kind);
	cJSON_AddStringToObject(a, "description", what);
	ksr_run_emit(run, "artifact", a);
}

static int screenshot_keep(ksr_run *run, const char *name, const char *description,
                           unsigned char **png_out, size_t *len_out, ksr_err *err)
{
	unsigned char *png = NULL;
	size_t len = 0;
	int rc = ksr_run_capture_png(run, &png, &len, err);
	if (rc == 0)
		rc = ksr_evidence_write(run->out, name, png, len, err);
	if (rc == 0)
		record_artifact(run, name, "screenshot", description);
	if (rc == 0 && png_out) {
		*png_out = png;
		*len_out = len;
	} else {
		free(png);
	}
	return rc;
}

int ksr_run_save_image(ksr_run *run, const ksr_image *img, const char *name,
                       const char *description)
{
	ksr_err err = {0};
	unsigned char *png = NULL;
	size_t len = 0;
	int rc = ksr_image_encode_png(img, &png, &len, &err);
	if (rc == 0)
		rc = ksr_evidence_write(run->out, name, png, len, &err);
	if (rc == 0)
		record_artifact(run, name, "screenshot", description);
	free(png);
	return rc;
}

int ksr_run_screenshot(ksr_run *run, const char *name, const char *description, ksr_err *err)
{
	return screenshot_keep(run, name, description, NULL, NULL, err);
}

bool ksr_run_window_matches(const ksr_pattern *title, const ksr_pattern *klass, const ksr_window *w)
{
	if (title && !ksr_pattern_match(title, w->title))
		return false;
	return !klass || ksr_pattern_match(klass, w->res_name) ||
	       ksr_pattern_match(klass, w->res_class);
}

void ksr_run_window_copy(ksr_window *dst, const ksr_window *src)
{
	*dst = *src;
	dst->title = ksr_xstrdup(src->title);
	dst->res_name = ksr_xstrdup(src->res_name);
	dst->res_class = ksr_xstrdup(src->res_class);
}

bool ksr_run_find_window(ksr_run *run, const ksr_pattern *title, const ksr_pattern *klass,
                         ksr_window *found)
{
	ksr_window_list wins = {0};
	ksr_err err = {0};
	bool hit = false;
	if (!run->x || ksr_x11_list_windows(run->x, &wins, &err) < 0)
		return false;
	for (size_t i = 0; i < wins.len && !hit; i++) {
		const ksr_window *w = &wins.items[i];
		if (!ksr_run_window_matches(title, klass, w))
			continue;
		hit = true;
		if (found)
			ksr_run_window_copy(found, w);
	}
	ksr_window_list_clear(&wins);
	return hit;
}

void ksr_run_window_release(ksr_window *w)
{
	free(w->title);
	free(w->res_name);
	free(w->res_class);
	w->title = w->res_name = w->res_class = NULL;
}

/* Blank: one colour covers the window's client area but for at most 1 pixel
 * in BLANK_ONE_IN and at most BLANK_MAX_OTHER pixels. An unpainted window is
 * its background pixel alone, exactly one colour (Blender's grey before it
 * draws, measured: 100.00%); the allowance is for a stray pixel, no more. It is
 * that strict because a painted window can be very nearly flat: an 80x24
 * xterm showing only its prompt "$ " differs from its background in 1 pixel
 * in 1560, with only its cursor in 1 in 1960 (measured), and must not be
 * called blank; the absolute bound keeps a large window's small mark (a
 * maximised terminal's cursor, some 80 pixels) from hiding under the share.
 * A wrong blank costs paint_timeout_s and a false concern; a near-flat window
 * missed costs only what the run cost before. A count of distinct colours
 * cannot tell: that xterm has two. */
#define BLANK_ONE_IN    5000
#define BLANK_MAX_OTHER 64

bool ksr_run_colours_blank(const ksr_x11_colours *c)
{
	long long other = c->pixels - c->dominant;
	return c->pixels > 0 && other <= BLANK_MAX_OTHER && other * BLANK_ONE_IN <= c->pixels;
}
