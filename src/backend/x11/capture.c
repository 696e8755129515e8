/* Screen capture: XShm into one cached segment sized for the screen (removed
 * with IPC_RMID as soon as both sides are attached, so nothing outlives us;
 * made again when the screen changes size, RandR or the root's geometry),
 * falling back to XGetImage; ZPixmap converted to 8-bit RGB with the visual's
 * masks. A window's colours are counted on the grab itself (has it painted). */
#include "ksr/x11.h"
#include "backend/x11/priv.h"

#include <X11/Xutil.h>
#include <X11/extensions/Xrandr.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>

static void shm_forget(ksr_x11 *x)
{
	if (x->shm.shmaddr && x->shm.shmaddr != (char *)-1)
		shmdt(x->shm.shmaddr);
	x->shm.shmaddr = NULL;
	x->shm.shmid = -1;
	x->shm_ok = false;
}

void ksr_x11_capture_release(ksr_x11 *x)
{
	if (!x || !x->shm_ok)
		return;
	if (!x->dead) {
		XShmDetach(x->dpy, &x->shm);
		XSync(x->dpy, False);
	}
	shm_forget(x);
}

void ksr_x11_screen_resized(ksr_x11 *x, int w, int h)
{
	if (w <= 0 || h <= 0 || (w == x->sw && h == x->sh))
		return;
	if (!x->size_changed) { /* the size the last ksr_x11_screen_change reported */
		x->old_sw = x->sw;
		x->old_sh = x->sh;
	}
	x->size_changed = true;
	x->sw = w;
	x->sh = h;
	/* The segment was sized for the old screen: made again at the next grab. */
	ksr_x11_capture_release(x);
	x->shm_tried = false;
}

bool ksr_x11_randr_event(ksr_x11 *x, const XEvent *ev)
{
	if (!x->rr_event || ev->type != x->rr_event + RRScreenChangeNotify)
		return false;
	XEvent copy = *ev; /* XRRUpdateConfiguration wants it writable */
	XRRUpdateConfiguration(&copy);
	ksr_x11_screen_resized(x, DisplayWidth(x->dpy, x->screen),
	                       DisplayHeight(x->dpy, x->screen));
	return true;
}

void ksr_x11_screen_refresh(ksr_x11 *x)
{
	if (!x || x->dead)
		return;
	/* The root's geometry is the size now, whether or not the RandR event
	 * has been taken off the queue yet (one round trip). */
	Window root;
	int gx, gy;
	unsigned gw, gh, border, depth;
	if (XGetGeometry(x->dpy, x->root, &root, &gx, &gy, &gw, &gh, &border, &depth))
		ksr_x11_screen_resized(x, (int)gw, (int)gh);
}

bool ksr_x11_screen_change(ksr_x11 *x, int *old_w, int *old_h, int *new_w, int *new_h)
{
	if (!x || !x->size_changed)
		return false;
	x->size_changed = false;
	*old_w = x->old_sw;
	*old_h = x->old_sh;
	*new_w = x->sw;
	*new_h = x->sh;
	return true;
}

static size_t screen_image_size(ksr_x11 *x)
{
	Visual *vis = DefaultVisual(x->dpy, x->screen);
	int depth = DefaultDepth(x->dpy, x->screen);
	XImage *probe = XShmCreateImage(x->dpy, vis, (unsigned)depth, ZPixmap, NULL, &x->shm,
	                                (unsigned)x->sw, (unsigned)x->sh);
	if (!probe)
		return 0;
	size_t size = (size_t)probe->bytes_per_line * (size_t)probe->height;
	XDestroyImage(probe); /* the XShm destroy hook frees only the header */
	return size;
}

static bool shm_attach(ksr_x11 *x, size_t size)
{
	x->shm.shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	if (x->shm.shmid < 0)
		return false;
	x->shm.shmaddr = shmat(x->shm.shmid, NULL, 0);
	if (x->shm.shmaddr == (char *)-1) {
		shmctl(x->shm.shmid, IPC_RMID, NULL);
		shm_forget(x);
		return false;
	}
	x->shm.readOnly = False;
	unsigned long errors = ksr_x11_error_count();
	Bool ok = XShmAttach(x->dpy, &x->shm);
	XSync(x->dpy, False);
	/* Both sides are attached now (or the server refused): the segment goes
	 * away with the last detach, even if we are killed. */
	shmctl(x->shm.shmid, IPC_RMID, NULL);
	if (!ok || x->dead || ksr_x11_error_count() != errors) {
		shm_forget(x);
		return false;
	}
	x->shm_size = size;
	return true;
}

static bool shm_ready(ksr_x11 *x)
{
	if (x->shm_tried)
		return x->shm_ok;
	x->shm_tried = true;
	if (!XShmQueryExtension(x->dpy))
		return false;
	size_t size = screen_image_size(x);
	x->shm_ok = size > 0 && shm_attach(x, size);
	return x->shm_ok;
}

static XImage *grab(ksr_x11 *x, int rx, int ry, int rw, int rh)
{
	if (shm_ready(x)) {
		Visual *vis = DefaultVisual(x->dpy, x->screen);
		int depth = DefaultDepth(x->dpy, x->screen);
		XImage *img = XShmCreateImage(x->dpy, vis, (unsigned)depth, ZPixmap, x->shm.shmaddr,
		                              &x->shm, (unsigned)rw, (unsigned)rh);
		if (img && (size_t)img->bytes_per_line * (size_t)rh <= x->shm_size &&
		    XShmGetImage(x->dpy, x->root, img, rx, ry, AllPlanes))
			return img;
		if (img)
			XDestroyImage(img);
	}
	if (x->dead)
		return NULL;
	return XGetImage(x->dpy, x->root, rx, ry, (unsigned)rw, (unsigned)rh, AllPlanes, ZPixmap);
}

typedef struct channel {
	int shift, bits;
} channel;

static channel channel_of(unsigned long mask)
{
	channel c = {0, 0};
	if (!mask)
		return c;
	while (!(mask & 1)) {
		mask >>= 1;
		c.shift++;
	}
	while (mask & 1) {
		mask >>= 1;
		c.bits++;
	}
	return c;
}

static uint8_t channel_value(unsigned long pixel, channel c)
{
	if (!c.bits)
		return 0;
	unsigned long v = (pixel >> c.shift) & ((1UL << c.bits) - 1);
	if (c.bits >= 8)
		return (uint8_t)(v >> (c.bits - 8));
	return (uint8_t)((v * 255) / ((1UL << c.bits) - 1));
}

static bool host_lsb_first(void)
{
	const uint16_t one = 1;
	return *(const uint8_t *)&one == 1;
}

static bool fast_layout(const XImage *img, channel r, channel g, channel b)
{
	return img->bits_per_pixel == 32 && r.bits == 8 && g.bits == 8 && b.bits == 8 &&
	       (img->byte_order == LSBFirst) == host_lsb_first();
}

typedef struct rows_job {
	const XImage *img;
	ksr_image *out;
	channel r, g, b;
	int y0, y1;
} rows_job;

/* Row y of a fast-layout image into dst (width * 3 bytes). */
static void convert_row(const XImage *img, int y, uint8_t *dst, channel r, channel g, channel b)
{
	const uint8_t *src = (const uint8_t *)img->data + (size_t)y * img->bytes_per_line;
	for (int xx = 0; xx < img->width; xx++) {
		uint32_t p;
		memcpy(&p, src + (size_t)xx * 4, 4);
		dst[0] = (uint8_t)(p >> r.shift);
		dst[1] = (uint8_t)(p >> g.shift);
		dst[2] = (uint8_t)(p >> b.shift);
		dst += 3;
	}
}

static void *convert_rows(void *arg)
{
	const rows_job *j = arg;
	for (int yy = j->y0; yy < j->y1; yy++)
		convert_row(j->img, yy, j->out->rgb + (size_t)yy * j->img->width * 3, j->r, j->g,
		            j->b);
	return NULL;
}

/* The common case (TrueColor, 32 bpp, 8-bit channels in host byte order).
 * A full screen is two halves on two threads: the pass is bound by memory
 * (8 MB read, 6 MB written into fresh pages) and is on every step's path. */
static bool convert_fast(const XImage *img, ksr_image *out, channel r, channel g, channel b)
{
	if (!fast_layout(img, r, g, b))
		return false;
	int half = img->height >= 64 ? img->height / 2 : 0;
	rows_job top = {img, out, r, g, b, 0, half},
	         bottom = {img, out, r, g, b, half, img->height};
	pthread_t t;
	bool threaded = half > 0 && pthread_create(&t, NULL, convert_rows, &top) == 0;
	if (!threaded)
		convert_rows(&top);
	convert_rows(&bottom);
	if (threaded)
		pthread_join(t, NULL);
	return true;
}

static void convert_any(XImage *img, ksr_image *out, channel r, channel g, channel b)
{
	uint8_t *dst = out->rgb;
	for (int yy = 0; yy < img->height; yy++)
		for (int xx = 0; xx < img->width; xx++) {
			unsigned long p = XGetPixel(img, xx, yy);
			*dst++ = channel_value(p, r);
			*dst++ = channel_value(p, g);
			*dst++ = channel_value(p, b);
		}
}

static ksr_image *convert(XImage *img)
{
	ksr_image *out = ksr_image_new(img->width, img->height);
	channel r = channel_of(img->red_mask);
	channel g = channel_of(img->green_mask);
	channel b = channel_of(img->blue_mask);
	if (!convert_fast(img, out, r, g, b))
		convert_any(img, out, r, g, b);
	return out;
}

/* The area to grab: the screen, or a window's client area clipped to it. */
static int capture_rect(ksr_x11 *x, unsigned long window, int rect[4], ksr_err *err)
{
	rect[0] = rect[1] = 0;
	rect[2] = x->sw;
	rect[3] = x->sh;
	if (!window)
		return 0;
	int wx, wy, ww, wh;
	if (!ksr_x11_window_rect(x, window, &wx, &wy, &ww, &wh)) {
		if (ksr_x11_lost(x, err) < 0)
			return -1;
		return ksr_err_set(err, "window 0x%lx is gone or not mapped", window);
	}
	int x0 = wx < 0 ? 0 : wx, y0 = wy < 0 ? 0 : wy;
	int x1 = wx + ww > x->sw ? x->sw : wx + ww, y1 = wy + wh > x->sh ? x->sh : wy + wh;
	if (x1 <= x0 || y1 <= y0)
		return ksr_err_set(err, "window 0x%lx is off the screen", window);
	rect[0] = x0;
	rect[1] = y0;
	rect[2] = x1 - x0;
	rect[3] = y1 - y0;
	return 0;
}

static XImage *grab_for(ksr_x11 *x, unsigned long window, ksr_err *err)
{
	int rect[4];
	if (ksr_x11_lost(x, err) < 0)
		return NULL;
	ksr_x11_screen_refresh(x);
	if (capture_rect(x, window, rect, err) < 0)
		return NULL;
	XImage *img = grab(x, rect[0], rect[1], rect[2], rect[3]);
	if (!img && ksr_x11_lost(x, err) == 0)
		ksr_err_set(err, "cannot read the screen image of %s", x->name);
	return img;
}

ksr_image *ksr_x11_capture(ksr_x11 *x, unsigned long window, ksr_err *err)
{
	XImage *img = grab_for(x, window, err);
	if (!img)
		return NULL;
	ksr_image *out = convert(img);
	XDestroyImage(img);
	return out;
}

typedef struct grab_rows {
	const XImage *img;
	channel r, g, b;
} grab_rows;

/* ksr_png_row_fn: row y of the grab, converted into scratch. */
static const uint8_t *grab_row(void *ctx, int y, uint8_t *scratch)
{
	const grab_rows *g = ctx;
	ksr_image row = {
	        .w = g->img->width, .h = 1, .rgb = scratch - (size_t)y * g->img->width * 3};
	rows_job j = {g->img, &row, g->r, g->g, g->b, y, y + 1};
	convert_rows(&j);
	return scratch;
}

int ksr_x11_capture_png(ksr_x11 *x, unsigned long window, unsigned char **png, size_t *len,
                        ksr_err *err)
{
	*png = NULL;
	*len = 0;
	XImage *img = grab_for(x, window, err);
	if (!img)
		return -1;
	grab_rows g = {img, channel_of(img->red_mask), channel_of(img->green_mask),
	               channel_of(img->blue_mask)};
	int rc;
	if (fast_layout(img, g.r, g.g, g.b)) {
		rc = ksr_image_encode_png_rows(img->width, img->height, grab_row, &g, png, len,
		                               err);
	} else { /* another visual: the general conversion, then the encoder */
		ksr_image *rgb = convert(img);
		rc = ksr_image_encode_png(rgb, png, len, err);
		ksr_image_free(rgb);
	}
	XDestroyImage(img);
	return rc;
}

/* ---- a window's colours: has it painted ---- */

/* Distinct pixel values, up to KSR_X11_COLOURS_MAX: open addressing in twice
 * as many slots, so a probe always ends. */
typedef struct colour_set {
	uint32_t value[2 * KSR_X11_COLOURS_MAX];
	bool used[2 * KSR_X11_COLOURS_MAX];
	int n;
} colour_set;

static void colour_set_add(colour_set *s, uint32_t v)
{
	if (s->n >= KSR_X11_COLOURS_MAX)
		return;
	size_t slots = sizeof s->value / sizeof s->value[0];
	size_t i = (v * 2654435761u) % slots;
	while (s->used[i]) {
		if (s->value[i] == v)
			return;
		i = (i + 1) % slots;
	}
	s->used[i] = true;
	s->value[i] = v;
	s->n++;
}

/* Pixel (xx, yy) as its colour bits only (padding and alpha bits dropped). */
static uint32_t pixel_at(XImage *img, bool fast, unsigned long mask, int xx, int yy)
{
	if (fast) {
		uint32_t p;
		memcpy(&p, img->data + (size_t)yy * img->bytes_per_line + (size_t)xx * 4, 4);
		return p & (uint32_t)mask;
	}
	return (uint32_t)(XGetPixel(img, xx, yy) & mask);
}

/* Two passes over the grab: the majority colour by vote (Boyer-Moore: a
 * colour covering more than half the window is always the one found, and a
 * window anywhere near blank has one) with the distinct colours, then that
 * colour's exact count. */
static void count_colours(XImage *img, ksr_x11_colours *out)
{
	channel r = channel_of(img->red_mask), g = channel_of(img->green_mask),
	        b = channel_of(img->blue_mask);
	bool fast = fast_layout(img, r, g, b);
	unsigned long mask = img->red_mask | img->green_mask | img->blue_mask;
	colour_set *set = calloc(1, sizeof *set);
	uint32_t cand = 0, prev = 0;
	long long votes = 0;
	for (int yy = 0; yy < img->height; yy++)
		for (int xx = 0; xx < img->width; xx++) {
			uint32_t p = pixel_at(img, fast, mask, xx, yy);
			if (set && (p != prev || (xx == 0 && yy == 0)))
				colour_set_add(set, p);
			prev = p;
			if (votes == 0)
				cand = p;
			votes += p == cand ? 1 : -1;
		}
	long long same = 0;
	for (int yy = 0; yy < img->height; yy++)
		for (int xx = 0; xx < img->width; xx++)
			same += pixel_at(img, fast, mask, xx, yy) == cand;
	out->pixels = (long long)img->width * img->height;
	out->dominant = same;
	out->rgb = (unsigned long)channel_value(cand, r) << 16 |
	           (unsigned long)channel_value(cand, g) << 8 | channel_value(cand, b);
	out->distinct = set ? set->n : 0;
	free(set);
}

int ksr_x11_window_colours(ksr_x11 *x, unsigned long window, ksr_x11_colours *out, ksr_err *err)
{
	memset(out, 0, sizeof *out);
	if (!window)
		return ksr_err_set(err, "no window to count the colours of");
	XImage *img = grab_for(x, window, err);
	if (!img)
		return -1;
	count_colours(img, out);
	XDestroyImage(img);
	return 0;
}
