/* screen.capture, screen.ground, window.list, window.focus, and the display
 * connection and screenshot-space mapping the input tools share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/model.h"
#include "ksr/pattern.h"
#include "mcp/mcp_priv.h"

#define DEFAULT_EDGE  1280
#define MAX_IMAGE_B64 (10u * 1024u * 1024u - 64u * 1024u) /* clients drop messages over 10 MiB */

int mcp_need_x11(ksr_mcp *m, mcp_result *r)
{
	if (m->x && ksr_x11_alive(m->x))
		return 0;
	ksr_x11_close(m->x);
	m->x = NULL;
	ksr_err e = {0};
	ksr_wait w = ksr_x11_open_wait(m->opts.display, ksr_deadline_in_ms(5000), &m->x, &e);
	if (w == KSR_WAIT_READY)
		return 0;
	mcp_fail(r, "no X display: %s", w == KSR_WAIT_ERROR ? e.msg : ksr_wait_name(w));
	return -1;
}

int mcp_to_screen(ksr_mcp *m, double sx, double sy, int *px, int *py, mcp_result *r)
{
	int sw, sh;
	ksr_x11_screen_size(m->x, &sw, &sh);
	mcp_view v = m->view.have ? m->view : (mcp_view){0, 0, sw, sh, 1.0, false};
	if (sx < 0 || sy < 0 || sx >= v.w || sy >= v.h) {
		mcp_fail(r, "(%g, %g) is outside the screenshot (%dx%d)", sx, sy, v.w, v.h);
		return -1;
	}
	*px = v.origin_x + (int)floor(sx / v.scale);
	*py = v.origin_y + (int)floor(sy / v.scale);
	if (*px >= sw)
		*px = sw - 1;
	if (*py >= sh)
		*py = sh - 1;
	return 0;
}

static char *base64(const unsigned char *d, size_t n)
{
	static const char tab[] =
	        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = ksr_xmalloc(4 * ((n + 2) / 3) + 1), *o = out;
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) |
		             (i + 2 < n ? d[i + 2] : 0);
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static ksr_image *crop(const ksr_image *src, int x, int y, int w, int h)
{
	ksr_image *c = ksr_image_new(w, h);
	for (int row = 0; row < h; row++)
		memcpy(c->rgb + (size_t)row * w * 3,
		       src->rgb + ((size_t)(y + row) * src->w + x) * 3, (size_t)w * 3);
	return c;
}

/* A window by id or title pattern: its id and client-area origin. */
static int find_window(ksr_mcp *m, long id, const char *title, ksr_window *out, mcp_result *r)
{
	ksr_err e = {0};
	ksr_pattern *re = title ? ksr_pattern_compile(title, &e) : NULL;
	if (title && !re)
		return mcp_fail(r, "bad title pattern: %s", e.msg), -1;
	ksr_window_list l = {0};
	int rc = -1;
	if (ksr_x11_list_windows(m->x, &l, &e) < 0) {
		mcp_fail(r, "listing windows: %s", e.msg);
		goto cleanup;
	}
	for (size_t i = l.len; i-- > 0 && rc < 0;) { /* newest first */
		ksr_window *w = &l.items[i];
		if ((id && (long)w->id == id) || (re && ksr_pattern_match(re, w->title))) {
			*out = *w;
			out->title = ksr_xstrdup(w->title ? w->title : "");
			out->res_name = out->res_class = NULL;
			rc = 0;
		}
	}
	if (rc < 0 && title)
		mcp_fail(r, "no window titled /%s/", title);
	else if (rc < 0)
		mcp_fail(r, "no window with id %ld", id);
cleanup:
	ksr_window_list_clear(&l);
	ksr_pattern_free(re);
	return rc;
}

/* The region argument (in the last screenshot's space) in screen pixels. */
static int region_rect(ksr_mcp *m, const cJSON *reg, int *x, int *y, int *w, int *h, mcp_result *r)
{
	double rx = mcp_arg_num(reg, "x", 0), ry = mcp_arg_num(reg, "y", 0);
	double rw = mcp_arg_num(reg, "width", 1), rh = mcp_arg_num(reg, "height", 1);
	int x2, y2;
	if (mcp_to_screen(m, rx, ry, x, y, r) < 0)
		return -1;
	double s = m->view.have ? m->view.scale : 1.0;
	x2 = *x + (int)ceil(rw / s), y2 = *y + (int)ceil(rh / s);
	int sw, sh;
	ksr_x11_screen_size(m->x, &sw, &sh);
	*w = (x2 > sw ? sw : x2) - *x;
	*h = (y2 > sh ? sh : y2) - *y;
	return 0;
}

typedef struct shot {
	ksr_image *img; /* screen pixels */
	int origin_x, origin_y;
} shot;

static int take(ksr_mcp *m, const cJSON *a, shot *s, mcp_result *r)
{
	ksr_err e = {0};
	const cJSON *reg = cJSON_GetObjectItemCaseSensitive(a, "region");
	long wid = mcp_arg_int(a, "window_id", 0);
	const char *title = mcp_arg_str(a, "window");
	if (wid || title) {
		ksr_window w = {0};
		if (find_window(m, wid, title, &w, r) < 0)
			return -1;
		free(w.title);
		s->img = ksr_x11_capture(m->x, w.id, &e);
		s->origin_x = w.x, s->origin_y = w.y;
	} else {
		s->img = ksr_x11_capture(m->x, 0, &e);
	}
	if (!s->img)
		return mcp_fail(r, "capture failed: %s", e.msg), -1;
	if (!reg)
		return 0;
	int x, y, w, h;
	if (region_rect(m, reg, &x, &y, &w, &h, r) < 0)
		return -1;
	x -= s->origin_x, y -= s->origin_y;
	if (x < 0 || y < 0 || w < 1 || h < 1 || x + w > s->img->w || y + h > s->img->h)
		return mcp_fail(r, "the region is outside the captured image"), -1;
	ksr_image *c = crop(s->img, x, y, w, h);
	ksr_image_free(s->img);
	s->img = c;
	s->origin_x += x, s->origin_y += y;
	return 0;
}

/* Downscale to max_edge, encode; shrink further in the rare case a noisy
 * screen's PNG would not fit a client's message limit. */
static int encode(const ksr_image *img, int max_edge, ksr_image **sent, char **b64, size_t *png_len,
                  mcp_result *r)
{
	ksr_err e = {0};
	for (int edge = max_edge; edge >= 64; edge = edge * 3 / 4) {
		ksr_image *small = ksr_image_downscale(img, edge, &e);
		unsigned char *png = NULL;
		if (!small || ksr_image_encode_png(small, &png, png_len, &e) < 0) {
			ksr_image_free(small);
			return mcp_fail(r, "encoding the screenshot: %s", e.msg), -1;
		}
		if (4 * ((*png_len + 2) / 3) < MAX_IMAGE_B64) {
			*b64 = base64(png, *png_len);
			free(png);
			*sent = small;
			return 0;
		}
		free(png);
		ksr_image_free(small);
	}
	return mcp_fail(r, "the screenshot does not fit in 10 MiB"), -1;
}

static void add_image(mcp_result *r, char *b64)
{
	if (!r->content)
		r->content = cJSON_CreateArray();
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "image");
	cJSON_AddItemToObject(b, "data", cJSON_CreateString(b64));
	cJSON_AddStringToObject(b, "mimeType", "image/png");
	cJSON_AddItemToArray(r->content, b);
	free(b64);
}

int mcp_tool_capture(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0)
		return 0;
	shot s = {0};
	if (take(m, a, &s, r) < 0)
		return 0;
	int src_w = s.img->w, src_h = s.img->h;
	int edge = mcp_arg_bool(a, "zoom", false) ? (src_w > src_h ? src_w : src_h)
	                                          : mcp_arg_int(a, "max_edge", DEFAULT_EDGE);
	ksr_image *sent = NULL;
	char *b64 = NULL;
	size_t png_len = 0;
	if (encode(s.img, edge, &sent, &b64, &png_len, r) == 0) {
		m->view = (mcp_view){
		        s.origin_x, s.origin_y, sent->w, sent->h, (double)sent->w / src_w, true};
		int sw, sh;
		ksr_x11_screen_size(m->x, &sw, &sh);
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "width", sent->w);
		cJSON_AddNumberToObject(o, "height", sent->h);
		cJSON_AddNumberToObject(o, "scale", m->view.scale);
		cJSON_AddNumberToObject(o, "origin_x", s.origin_x);
		cJSON_AddNumberToObject(o, "origin_y", s.origin_y);
		cJSON_AddNumberToObject(o, "screen_width", sw);
		cJSON_AddNumberToObject(o, "screen_height", sh);
		cJSON_AddNumberToObject(o, "png_bytes", (double)png_len);
		add_image(r, b64);
		mcp_structured(r, o);
	}
	ksr_image_free(sent);
	ksr_image_free(s.img);
	return 0;
}

static void ground_answer(ksr_mcp *m, const ksr_model_image *img, int sx, int sy, mcp_result *r)
{
	m->view = (mcp_view){0, 0, img->w, img->h, (double)img->w / img->screen_w, true};
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "found", true);
	cJSON_AddNumberToObject(o, "x", floor(sx * m->view.scale));
	cJSON_AddNumberToObject(o, "y", floor(sy * m->view.scale));
	cJSON_AddNumberToObject(o, "scale", m->view.scale);
	cJSON_AddNumberToObject(o, "screen_x", sx);
	cJSON_AddNumberToObject(o, "screen_y", sy);
	mcp_structured(r, o);
}

int mcp_tool_ground(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	ksr_model_config cfg;
	ksr_err e = {0};
	int rc = ksr_model_config_load(KSR_MODEL_GROUNDER, NULL, NULL, &cfg, &e);
	if (rc <= 0)
		return mcp_fail(r, "%s",
		                rc < 0 ? e.msg : "no model configured (KASM_RUNTIME_MODEL)");
	if (mcp_need_x11(m, r) < 0)
		return 0;
	ksr_image *screen = ksr_x11_capture(m->x, 0, &e);
	ksr_model_image img = {0};
	if (!screen || ksr_model_image_prepare(screen, KSR_MODEL_MAX_EDGE, &img, &e) < 0) {
		ksr_image_free(screen);
		return mcp_fail(r, "capture failed: %s", e.msg);
	}
	ksr_image_free(screen);
	int ix, iy, sx, sy;
	ksr_model_usage u = {0};
	ksr_model_answer ans = ksr_model_ground(&cfg, &img, mcp_arg_str(a, "description"),
	                                        ksr_deadline_in_ms(60000), &ix, &iy, &sx, &sy, &u);
	if (ans == KSR_MODEL_YES) {
		ground_answer(m, &img, sx, sy, r);
	} else if (ans == KSR_MODEL_NO) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddBoolToObject(o, "found", false);
		mcp_structured(r, o);
	} else {
		mcp_fail(r, "the model gave no usable answer: %s", u.error);
	}
	ksr_model_image_clear(&img);
	return 0;
}

int mcp_tool_window_list(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	(void)a;
	if (mcp_need_x11(m, r) < 0)
		return 0;
	ksr_window_list l = {0};
	ksr_err e = {0};
	if (ksr_x11_list_windows(m->x, &l, &e) < 0)
		return mcp_fail(r, "listing windows: %s", e.msg);
	cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "windows");
	for (size_t i = 0; i < l.len; i++) {
		const ksr_window *w = &l.items[i];
		cJSON *j = cJSON_CreateObject();
		cJSON_AddNumberToObject(j, "id", (double)w->id);
		cJSON_AddStringToObject(j, "title", w->title ? w->title : "");
		cJSON_AddStringToObject(j, "class", w->res_class ? w->res_class : "");
		cJSON_AddNumberToObject(j, "pid", w->pid);
		cJSON_AddNumberToObject(j, "x", w->x);
		cJSON_AddNumberToObject(j, "y", w->y);
		cJSON_AddNumberToObject(j, "width", w->w);
		cJSON_AddNumberToObject(j, "height", w->h);
		cJSON_AddBoolToObject(j, "dialog", w->is_dialog);
		cJSON_AddItemToArray(arr, j);
	}
	ksr_window_list_clear(&l);
	return mcp_structured(r, o);
}

int mcp_tool_window_focus(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	long id = mcp_arg_int(a, "id", 0);
	const char *title = mcp_arg_str(a, "title");
	if (!id && !title)
		return mcp_fail(r, "give id or title");
	if (mcp_need_x11(m, r) < 0)
		return 0;
	ksr_window w = {0};
	if (find_window(m, id, title, &w, r) < 0)
		return 0;
	ksr_err e = {0};
	if (ksr_x11_activate(m->x, w.id, ksr_deadline_in_ms(3000), &e) < 0) {
		mcp_fail(r, "focusing window %lu: %s", w.id, e.msg);
	} else {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "id", (double)w.id);
		cJSON_AddStringToObject(o, "title", w.title);
		mcp_structured(r, o);
	}
	free(w.title);
	return 0;
}
