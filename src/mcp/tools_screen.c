/* screen.capture (inline or by reference), screen.ground, window.list, window.focus, and the
 * display connection and screenshot-space mapping the input tools share. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ksr/model.h"
#include "ksr/pattern.h"
#include "mcp/mcp_priv.h"

#define DEFAULT_EDGE       1280
#define MAX_IMAGE_B64      (10u * 1024u * 1024u - 64u * 1024u) /* clients drop messages over 10 MiB */
#define DEFAULT_INLINE_MAX 1000000 /* delivery auto: base64 bytes inline at most */

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

/* ---- views as handles --------------------------------------------------------- */

/* An opaque, unguessable id: the spec's advice for an unauthenticated
 * server's handles (a bearer name). prefix: at most 7 characters. */
void mcp_handle_id(const char *prefix, char out[24])
{
	unsigned char r[8];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		memset(r, 0, sizeof r);
	int n = snprintf(out, 24, "%s-", prefix);
	for (size_t i = 0; i < sizeof r; i++)
		n += snprintf(out + n, (size_t)(24 - n), "%02x", r[i]);
}

const char *mcp_view_keep(ksr_mcp *m, mcp_view v)
{
	m->view = v;
	ksr_mcp *s = m->parent ? m->parent : m; /* a task's views outlive it */
	pthread_mutex_lock(&s->lock);
	mcp_view_slot *slot = &s->views[s->next_view++ % MCP_VIEWS]; /* the oldest goes */
	mcp_handle_id("view", slot->id);
	slot->v = v;
	memcpy(m->view_id, slot->id, sizeof m->view_id);
	pthread_mutex_unlock(&s->lock);
	return m->view_id;
}

bool mcp_view_find(ksr_mcp *m, const char *id, mcp_view *out)
{
	bool found = false;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; id && !found && i < MCP_VIEWS; i++)
		if (m->views[i].id[0] && !strcmp(m->views[i].id, id)) {
			*out = m->views[i].v;
			found = true;
		}
	pthread_mutex_unlock(&m->lock);
	return found;
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

/* The long edge to send: the tightest of zoom (none), max_edge, max_width and
 * scale; the default edge when none is given. Never larger than the source. */
static int target_edge(const cJSON *a, int src_w, int src_h)
{
	int src_edge = src_w > src_h ? src_w : src_h;
	if (mcp_arg_bool(a, "zoom", false))
		return src_edge;
	double edge = src_edge;
	bool bounded = false;
	if (cJSON_GetObjectItemCaseSensitive(a, "max_edge"))
		edge = fmin(edge, mcp_arg_int(a, "max_edge", DEFAULT_EDGE)), bounded = true;
	if (cJSON_GetObjectItemCaseSensitive(a, "max_width"))
		edge = fmin(edge, (double)mcp_arg_int(a, "max_width", src_w) * src_edge / src_w),
		bounded = true;
	if (cJSON_GetObjectItemCaseSensitive(a, "scale"))
		edge = fmin(edge, mcp_arg_num(a, "scale", 1.0) * src_edge), bounded = true;
	if (!bounded)
		edge = fmin(edge, DEFAULT_EDGE);
	return edge < 1 ? 1 : (int)floor(edge);
}

typedef struct encoded {
	ksr_image *img; /* as sent */
	unsigned char *png;
	size_t png_len;
} encoded;

static void encoded_clear(encoded *e)
{
	ksr_image_free(e->img);
	free(e->png);
	*e = (encoded){0};
}

static int encode_at(const ksr_image *img, int edge, encoded *out, mcp_result *r)
{
	ksr_err e = {0};
	out->img = ksr_image_downscale(img, edge, &e);
	if (!out->img || ksr_image_encode_png(out->img, &out->png, &out->png_len, &e) < 0) {
		encoded_clear(out);
		return mcp_fail(r, "encoding the screenshot: %s", e.msg), -1;
	}
	return 0;
}

static size_t b64_len(size_t n)
{
	return 4 * ((n + 2) / 3);
}

/* Inline: shrink further in the rare case a noisy screen's PNG would not fit a
 * client's message limit (10 MiB). */
static int encode_inline(const ksr_image *img, int edge, encoded *out, mcp_result *r)
{
	for (; edge >= 16; edge = edge * 3 / 4) {
		if (encode_at(img, edge, out, r) < 0)
			return -1;
		if (b64_len(out->png_len) < MAX_IMAGE_B64)
			return 0;
		encoded_clear(out);
	}
	return mcp_fail(r, "the screenshot does not fit in 10 MiB: ask for delivery link"), -1;
}

static void add_block(mcp_result *r, cJSON *b)
{
	if (!r->content)
		r->content = cJSON_CreateArray();
	cJSON_AddItemToArray(r->content, b);
}

static void add_image(mcp_result *r, const encoded *en)
{
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "type", "image");
	char *b64 = mcp_base64(en->png, en->png_len);
	cJSON_AddStringToObject(b, "data", b64);
	free(b64);
	cJSON_AddStringToObject(b, "mimeType", "image/png");
	add_block(r, b);
}

/* A resource_link (MCP 2025-06-18 on); a 2025-03-26 client does not know the
 * block type, so it gets the URI as text. */
static void add_link(ksr_mcp *m, mcp_result *r, const char *uri, const encoded *en)
{
	cJSON *b = cJSON_CreateObject();
	const char *name = strrchr(uri, '/') + 1;
	if (!strcmp(m->protocol, "2025-03-26")) {
		char *t = ksr_xasprintf("screenshot (PNG, %zu bytes): %s (resources/read)",
		                        en->png_len, uri);
		cJSON_AddStringToObject(b, "type", "text");
		cJSON_AddStringToObject(b, "text", t);
		free(t);
	} else {
		cJSON_AddStringToObject(b, "type", "resource_link");
		cJSON_AddStringToObject(b, "uri", uri);
		cJSON_AddStringToObject(b, "name", name);
		cJSON_AddStringToObject(b, "title", "Screenshot");
		cJSON_AddStringToObject(b, "description", "the screenshot, PNG; resources/read");
		cJSON_AddStringToObject(b, "mimeType", "image/png");
		cJSON_AddNumberToObject(b, "size", (double)en->png_len);
	}
	add_block(r, b);
}

static void capture_answer(ksr_mcp *m, const shot *s, const encoded *en, const char *uri,
                           const char *view, mcp_result *r)
{
	int sw, sh;
	ksr_x11_screen_size(m->x, &sw, &sh);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "width", en->img->w);
	cJSON_AddNumberToObject(o, "height", en->img->h);
	cJSON_AddNumberToObject(o, "scale", m->view.scale);
	cJSON_AddNumberToObject(o, "origin_x", s->origin_x);
	cJSON_AddNumberToObject(o, "origin_y", s->origin_y);
	cJSON_AddNumberToObject(o, "screen_width", sw);
	cJSON_AddNumberToObject(o, "screen_height", sh);
	cJSON_AddNumberToObject(o, "png_bytes", (double)en->png_len);
	cJSON_AddStringToObject(o, "delivery", uri ? "link" : "inline");
	if (uri)
		cJSON_AddStringToObject(o, "uri", uri);
	cJSON_AddStringToObject(o, "view", view);
	mcp_structured(r, o);
}

int mcp_tool_capture(ksr_mcp *m, const cJSON *a, mcp_result *r)
{
	if (mcp_need_x11(m, r) < 0)
		return 0;
	shot s = {0};
	if (take(m, a, &s, r) < 0)
		return 0;
	int src_w = s.img->w;
	int edge = target_edge(a, s.img->w, s.img->h);
	const char *how = mcp_arg_str(a, "delivery");
	how = how ? how : "auto";
	size_t inline_max = (size_t)mcp_arg_int(a, "inline_max_bytes", DEFAULT_INLINE_MAX);
	encoded en = {0};
	int rc = !strcmp(how, "inline") ? encode_inline(s.img, edge, &en, r)
	                                : encode_at(s.img, edge, &en, r);
	bool link =
	        !strcmp(how, "link") || (!strcmp(how, "auto") && b64_len(en.png_len) > inline_max);
	char *uri = NULL;
	if (rc == 0 && link &&
	    !(uri = mcp_evidence_write(m, "capture", "png", "image/png", en.png, en.png_len, r)))
		rc = -1;
	if (rc == 0) {
		const char *view =
		        mcp_view_keep(m, (mcp_view){s.origin_x, s.origin_y, en.img->w, en.img->h,
		                                    (double)en.img->w / src_w, true});
		if (uri)
			add_link(m, r, uri, &en);
		else
			add_image(r, &en);
		capture_answer(m, &s, &en, uri, view, r);
	}
	free(uri);
	encoded_clear(&en);
	ksr_image_free(s.img);
	return 0;
}

static void ground_answer(ksr_mcp *m, const ksr_model_image *img, int sx, int sy, mcp_result *r)
{
	const char *view = mcp_view_keep(
	        m, (mcp_view){0, 0, img->w, img->h, (double)img->w / img->screen_w, true});
	cJSON *o = cJSON_CreateObject();
	cJSON_AddBoolToObject(o, "found", true);
	cJSON_AddNumberToObject(o, "x", floor(sx * m->view.scale));
	cJSON_AddNumberToObject(o, "y", floor(sy * m->view.scale));
	cJSON_AddNumberToObject(o, "scale", m->view.scale);
	cJSON_AddNumberToObject(o, "screen_x", sx);
	cJSON_AddNumberToObject(o, "screen_y", sy);
	cJSON_AddStringToObject(o, "view", view);
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
	return mcp_structured_list(m, r, o, "windows");
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
