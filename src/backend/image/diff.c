/* Baseline comparison: one pass over both images, row by row, comparing only
 * the spans of each row that no mask covers. Screens are mostly identical
 * from one run to the next, so a span is walked eight pixels (24 bytes) at a
 * time with memcmp, and only a block that differs is looked at pixel by pixel.
 * No allocation depends on the pixel count except the optional diff image;
 * ksr_image_diff_rows compares two PNGs as they are decoded, holding a row of
 * each, and streams the diff image into its PNG. */
#include "ksr/image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A mask rectangle in pixels, half-open: [x0, x1) x [y0, y1). */
typedef struct px_rect {
	int x0, x1, y0, y1;
} px_rect;

typedef struct span {
	int x0, x1;
} span;

/* Fractions to pixels, rounding outwards: a pixel the mask only partly covers
 * is ignored too, since the author meant "this region", not "these pixels". */
static int frac_floor(double f, int n)
{
	if (!(f > 0.0))
		return 0; /* also NaN */
	if (f >= 1.0)
		return n;
	return (int)floor(f * n);
}

static int frac_ceil(double f, int n)
{
	if (!(f > 0.0))
		return 0;
	if (f >= 1.0)
		return n;
	int v = (int)ceil(f * n);
	return v > n ? n : v;
}

static size_t masks_to_px(const ksr_diff_opts *o, int w, int h, px_rect *out)
{
	size_t n = 0;
	for (size_t i = 0; i < o->n_mask; i++) {
		const double *m = o->mask[i];
		px_rect r = {frac_floor(m[0], w), frac_ceil(m[0] + m[2], w), frac_floor(m[1], h),
		             frac_ceil(m[1] + m[3], h)};
		if (r.x0 < r.x1 && r.y0 < r.y1)
			out[n++] = r;
	}
	return n;
}

/* The spans of row y that no mask covers, left to right. `tmp` holds the
 * masked intervals of the row (at most n_rects); `out` at most n_rects + 1. */
static size_t row_spans(const px_rect *rects, size_t n_rects, int y, int w, span *tmp, span *out)
{
	size_t n = 0;
	for (size_t i = 0; i < n_rects; i++) {
		if (y < rects[i].y0 || y >= rects[i].y1)
			continue;
		span s = {rects[i].x0, rects[i].x1};
		size_t j = n++;
		while (j > 0 && tmp[j - 1].x0 > s.x0) { /* insertion sort: a handful of masks */
			tmp[j] = tmp[j - 1];
			j--;
		}
		tmp[j] = s;
	}
	size_t k = 0;
	int x = 0;
	for (size_t i = 0; i < n; i++) {
		if (tmp[i].x0 > x)
			out[k++] = (span){x, tmp[i].x0};
		if (tmp[i].x1 > x)
			x = tmp[i].x1;
	}
	if (x < w)
		out[k++] = (span){x, w};
	return k;
}

/* |d| > t without a branch: d + t lands outside [0, 2t] exactly when |d| > t. */
static inline int chan_differs(int d, unsigned t)
{
	return (unsigned)(d + (int)t) > 2 * t;
}

static inline int px_differs(const uint8_t *a, const uint8_t *b, unsigned t)
{
	return chan_differs(a[0] - b[0], t) | chan_differs(a[1] - b[1], t) |
	       chan_differs(a[2] - b[2], t);
}

static inline void paint_red(uint8_t *p)
{
	p[0] = 255;
	p[1] = 0;
	p[2] = 0;
}

/* Count (and paint, when out is set) the differing pixels of n pixels. */
static long long diff_run(const uint8_t *a, const uint8_t *b, int n, unsigned t, uint8_t *out)
{
	long long count = 0;
	int i = 0;
	while (i < n) {
		int blk = n - i < 8 ? n - i : 8;
		size_t off = (size_t)i * 3;
		if (blk == 8 && memcmp(a + off, b + off, 24) == 0) {
			i += 8;
			continue;
		}
		for (int k = 0; k < blk; k++, off += 3) {
			int d = px_differs(a + off, b + off, t);
			count += d;
			if (d && out)
				paint_red(out + off);
		}
		i += blk;
	}
	return count;
}

/* The diff image's background: the new image (b) as a pale grey of eight
 * levels, so red marks stand out, windows and text stay recognisable, and the
 * image compresses fast (few distinct values: deflate finds long matches). */
static void fade_row(const uint8_t *src, uint8_t *dst, int w)
{
	for (int x = 0; x < w; x++, src += 3, dst += 3) {
		unsigned luma = (77u * src[0] + 150u * src[1] + 29u * src[2]) >> 8;
		uint8_t v = (uint8_t)(199 + (luma >> 5) * 8);
		dst[0] = dst[1] = dst[2] = v;
	}
}

/* Masked pixels are tinted grey-blue in the diff image: the reader sees what
 * was not compared. */
static void tint_masked(uint8_t *row, int x0, int x1)
{
	for (int x = x0; x < x1; x++) {
		uint8_t *p = row + (size_t)x * 3;
		p[0] = (uint8_t)(p[0] / 2 + 40);
		p[1] = (uint8_t)(p[1] / 2 + 60);
		p[2] = (uint8_t)(p[2] / 2 + 100);
	}
}

static void tint_gaps(uint8_t *row, const span *s, size_t n, int w)
{
	int x = 0;
	for (size_t i = 0; i < n; i++) {
		tint_masked(row, x, s[i].x0);
		x = s[i].x1;
	}
	tint_masked(row, x, w);
}

/* One comparison's fixed parts, and the rows' spans (scratch). */
typedef struct diff_pass {
	px_rect *rects;
	size_t n_rects;
	span *tmp, *spans;
	unsigned t;
	int w;
	ksr_diff_result *r;
} diff_pass;

static void pass_start(diff_pass *p, const ksr_diff_opts *o, int w, int h, ksr_diff_result *r)
{
	p->rects = ksr_xcalloc(o->n_mask + 1, sizeof *p->rects);
	p->n_rects = masks_to_px(o, w, h, p->rects);
	p->tmp = ksr_xcalloc(p->n_rects + 1, sizeof *p->tmp);
	p->spans = ksr_xcalloc(p->n_rects + 1, sizeof *p->spans);
	p->t = (unsigned)(o->channel_threshold < 0     ? 0
	                  : o->channel_threshold > 255 ? 255
	                                               : o->channel_threshold);
	p->w = w;
	p->r = r;
}

static void pass_end(diff_pass *p)
{
	free(p->rects);
	free(p->tmp);
	free(p->spans);
	ksr_diff_result *r = p->r;
	r->fraction = r->compared ? (double)r->differing / (double)r->compared : 0.0;
}

/* Row y of both images; rd (NULL: none) gets the diff image's row. */
static void diff_row(diff_pass *p, int y, const uint8_t *ra, const uint8_t *rb, uint8_t *rd)
{
	size_t ns = row_spans(p->rects, p->n_rects, y, p->w, p->tmp, p->spans);
	if (rd) {
		fade_row(rb, rd, p->w);
		tint_gaps(rd, p->spans, ns, p->w);
	}
	for (size_t i = 0; i < ns; i++) {
		size_t off = (size_t)p->spans[i].x0 * 3;
		int n = p->spans[i].x1 - p->spans[i].x0;
		p->r->compared += n;
		p->r->differing += diff_run(ra + off, rb + off, n, p->t, rd ? rd + off : NULL);
	}
}

static bool has_pixels(const ksr_image *img)
{
	return img && img->w >= 0 && img->h >= 0 && (img->rgb || img->w == 0 || img->h == 0);
}

/* What both entry points check first: 1 to compare, 0 when done (a size
 * mismatch, every pixel counted as differing), -1 on a bad call. */
static int diff_begin(int aw, int ah, int bw, int bh, const ksr_diff_opts **o, ksr_diff_result *r,
                      ksr_err *err)
{
	static const ksr_diff_opts none = {0};
	if (!*o)
		*o = &none;
	if ((*o)->n_mask && !(*o)->mask)
		return ksr_err_set(err, "image diff: %zu masks but no mask array", (*o)->n_mask);
	if (aw != bw || ah != bh) {
		r->size_mismatch = true;
		r->fraction = 1.0;
		return 0;
	}
	return 1;
}

int ksr_image_diff(const ksr_image *a, const ksr_image *b, const ksr_diff_opts *o,
                   ksr_diff_result *r, ksr_err *err)
{
	if (!r)
		return ksr_err_set(err, "image diff: no result");
	memset(r, 0, sizeof *r);
	if (!has_pixels(a) || !has_pixels(b))
		return ksr_err_set(err, "image diff: missing image");
	int go = diff_begin(a->w, a->h, b->w, b->h, &o, r, err);
	if (go <= 0)
		return go;
	diff_pass p;
	pass_start(&p, o, a->w, a->h, r);
	if (o->want_diff)
		r->diff = ksr_image_new(a->w, a->h);
	size_t stride = (size_t)a->w * 3;
	for (int y = 0; y < a->h; y++)
		diff_row(&p, y, a->rgb + (size_t)y * stride, b->rgb + (size_t)y * stride,
		         r->diff ? r->diff->rgb + (size_t)y * stride : NULL);
	pass_end(&p);
	return 0;
}

/* ---- two PNGs, row by row ---- */

typedef struct stream_pass {
	diff_pass p;
	ksr_png_rows *a, *b;
	ksr_err err; /* the first row that could not be read */
	bool failed;
} stream_pass;

/* Row y of the diff image (the encoder asks in order), or of the count alone
 * (scratch NULL). A row that cannot be read ends the comparison: the rest is
 * left grey and the error returned. */
static const uint8_t *stream_row(void *ctx, int y, uint8_t *scratch)
{
	stream_pass *s = ctx;
	const uint8_t *ra = s->failed ? NULL : ksr_png_rows_next(s->a, &s->err);
	const uint8_t *rb = ra ? ksr_png_rows_next(s->b, &s->err) : NULL;
	if (!rb) {
		s->failed = true;
		if (scratch)
			memset(scratch, 128, (size_t)s->p.w * 3);
		return scratch;
	}
	diff_row(&s->p, y, ra, rb, scratch);
	return scratch;
}

int ksr_image_diff_rows(ksr_png_rows *a, ksr_png_rows *b, const ksr_diff_opts *o,
                        ksr_diff_result *r, unsigned char **diff_png, size_t *diff_len,
                        ksr_err *err)
{
	if (!r || !a || !b)
		return ksr_err_set(err, "image diff: missing image");
	memset(r, 0, sizeof *r);
	int aw, ah, bw, bh;
	ksr_png_rows_size(a, &aw, &ah);
	ksr_png_rows_size(b, &bw, &bh);
	int go = diff_begin(aw, ah, bw, bh, &o, r, err);
	if (go <= 0)
		return go;
	stream_pass s = {.a = a, .b = b};
	pass_start(&s.p, o, aw, ah, r);
	int rc = 0;
	if (diff_png) {
		rc = ksr_image_encode_png_in_order(aw, ah, stream_row, &s, diff_png, diff_len, err);
	} else {
		for (int y = 0; y < ah && !s.failed; y++)
			stream_row(&s, y, NULL);
	}
	pass_end(&s.p);
	if (rc == 0 && s.failed) {
		if (diff_png) {
			free(*diff_png);
			*diff_png = NULL;
		}
		rc = ksr_err_set(err, "image diff: %s", s.err.msg);
	}
	return rc;
}
