/* ksr_image_diff: threshold, masks as fractions, counts, the diff image, a
 * size mismatch, bad arguments; and a slow per-pixel reference over random
 * images and masks that the fast (block-skipping) pass must agree with. */
#include "ksr/image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static uint8_t *px(ksr_image *img, int x, int y)
{
	return img->rgb + ((size_t)y * img->w + x) * 3;
}

static ksr_image *flat(int w, int h, uint8_t v)
{
	ksr_image *img = ksr_image_new(w, h);
	memset(img->rgb, v, (size_t)w * h * 3);
	return img;
}

static ksr_image *copy(const ksr_image *src)
{
	ksr_image *img = ksr_image_new(src->w, src->h);
	memcpy(img->rgb, src->rgb, (size_t)src->w * src->h * 3);
	return img;
}

static void test_identical_and_threshold(void)
{
	ksr_err err = {0};
	ksr_image *a = flat(40, 30, 100), *b = copy(a);
	ksr_diff_opts o = {.channel_threshold = 24};
	ksr_diff_result r;
	is_int(ksr_image_diff(a, b, &o, &r, &err), 0, "identical: ok");
	is_int(r.compared, 1200, "identical: every pixel compared");
	is_int(r.differing, 0, "identical: none differ");
	ok(r.fraction == 0.0 && !r.size_mismatch && !r.diff,
	   "identical: fraction 0, no diff image");

	px(b, 3, 4)[1] = 124; /* +24: noise, at the threshold */
	px(b, 9, 9)[2] = 76;  /* -24 */
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 0, "a change of exactly the threshold is noise");
	px(b, 5, 5)[0] = 125; /* +25 */
	px(b, 6, 5)[2] = 75;  /* -25 */
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 2, "a change above the threshold, up or down, differs");
	ok(r.fraction > 0.00166 && r.fraction < 0.00167, "fraction 2/1200 (%g)", r.fraction);
	o.channel_threshold = 0;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 4, "threshold 0: exact comparison");
	o.channel_threshold = 300;
	px(b, 0, 0)[0] = 255;
	px(b, 1, 0)[0] = 0;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 0, "a threshold above 255 is clamped: nothing differs");
	ksr_image_free(a);
	ksr_image_free(b);
}

static void test_masks(void)
{
	ksr_err err = {0};
	ksr_image *a = flat(100, 50, 0), *b = flat(100, 50, 0);
	/* A changing clock in the bottom-right corner: 10x5 pixels. */
	for (int y = 45; y < 50; y++)
		for (int x = 90; x < 100; x++)
			px(b, x, y)[0] = 255;
	const double mask[][4] = {{0.9, 0.9, 0.1, 0.1}};
	ksr_diff_opts o = {.channel_threshold = 24};
	ksr_diff_result r;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 50, "no mask: the clock differs");
	o.mask = mask;
	o.n_mask = 1;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.differing, 0, "masked: nothing differs");
	is_int(r.compared, 5000 - 50, "masked pixels are not compared");

	/* Rounding outwards: 0.333 of 100 starts at pixel 33 and 0.333+0.333
	 * ends after pixel 66 (ceil). Overlapping masks count once. */
	const double two[][4] = {{0.333, 0.0, 0.333, 1.0}, {0.5, 0.0, 0.25, 0.5}};
	o.mask = two;
	o.n_mask = 2;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.compared, 5000 - 34 * 50 - 8 * 25, "overlapping masks: the union is skipped");

	const double all[][4] = {{0, 0, 1, 1}};
	o.mask = all;
	o.n_mask = 1;
	ksr_image_diff(a, b, &o, &r, &err);
	ok(r.compared == 0 && r.fraction == 0.0, "a mask over everything: nothing compared, 0");

	const double odd[][4] = {{0.5, 0.5, 0.0, 0.3}, {-1, -1, 0.5, 0.5}, {0.95, 0.95, 2, 2}};
	o.mask = odd;
	o.n_mask = 3;
	ksr_image_diff(a, b, &o, &r, &err);
	is_int(r.compared, 5000 - 0 - 0 - 5 * 3,
	       "empty, negative and overhanging masks are clipped");
	ksr_image_free(a);
	ksr_image_free(b);
}

static void test_diff_image(void)
{
	ksr_err err = {0};
	ksr_image *a = flat(16, 8, 200), *b = copy(a);
	px(b, 10, 3)[1] = 0;
	const double mask[][4] = {{0, 0, 0.25, 1}};
	ksr_diff_opts o = {.channel_threshold = 24, .mask = mask, .n_mask = 1, .want_diff = true};
	ksr_diff_result r;
	is_int(ksr_image_diff(a, b, &o, &r, &err), 0, "diff image: ok");
	ok(r.diff && r.diff->w == 16 && r.diff->h == 8, "diff image has the images' size");
	if (r.diff) {
		uint8_t *red = px(r.diff, 10, 3), *same = px(r.diff, 11, 3);
		ok(red[0] == 255 && red[1] == 0 && red[2] == 0, "the differing pixel is red");
		ok(!(same[0] == 255 && same[1] == 0 && same[2] == 0), "a same pixel is not red");
		ok(same[0] >= 191, "a same pixel is faded towards white (%d)", same[0]);
		uint8_t *m = px(r.diff, 1, 1);
		ok(m[2] > m[0], "a masked pixel is tinted (%d,%d,%d)", m[0], m[1], m[2]);
	}
	ksr_image_free(r.diff);
	ksr_image_free(a);
	ksr_image_free(b);
}

/* Both images as PNGs read row by row: r from ksr_image_diff_rows. */
static int diff_as_pngs(const ksr_image *a, const ksr_image *b, const ksr_diff_opts *o,
                        ksr_diff_result *r, unsigned char **diff_png, size_t *diff_len)
{
	ksr_err err = {0};
	unsigned char *pa = NULL, *pb = NULL;
	size_t la = 0, lb = 0;
	ksr_image_encode_png(a, &pa, &la, &err);
	ksr_image_encode_png(b, &pb, &lb, &err);
	ksr_png_rows *ra = ksr_png_rows_open(pa, la, &err), *rb = ksr_png_rows_open(pb, lb, &err);
	int rc = ksr_image_diff_rows(ra, rb, o, r, diff_png, diff_len, &err);
	ksr_png_rows_close(ra);
	ksr_png_rows_close(rb);
	free(pa);
	free(pb);
	return rc;
}

/* The streamed diff image is the in-memory one, pixel for pixel (whose
 * colours test_diff_image pins), and holds the same counts. */
static void test_streamed_diff_image(void)
{
	ksr_err err = {0};
	ksr_image *a = flat(300, 41, 90), *b = copy(a);
	for (int x = 0; x < 300; x += 7)
		px(b, x, x % 41)[2] = 250;
	const double mask[][4] = {{0.5, 0.2, 0.3, 0.5}};
	ksr_diff_opts o = {.channel_threshold = 24, .mask = mask, .n_mask = 1, .want_diff = true};
	ksr_diff_result mem, rows;
	ksr_image_diff(a, b, &o, &mem, &err);
	unsigned char *png = NULL;
	size_t len = 0;
	is_int(diff_as_pngs(a, b, &o, &rows, &png, &len), 0, "streamed diff: ok");
	ok(rows.differing == mem.differing && rows.compared == mem.compared && !rows.diff,
	   "streamed diff: %lld/%lld as in memory %lld/%lld, no image held", rows.differing,
	   rows.compared, mem.differing, mem.compared);
	ksr_image *dec = png ? ksr_image_decode_png(png, len, &err) : NULL;
	ok(dec && mem.diff && dec->w == 300 && dec->h == 41 &&
	           memcmp(dec->rgb, mem.diff->rgb, (size_t)300 * 41 * 3) == 0,
	   "the streamed diff PNG decodes to the in-memory diff image");
	ksr_image_free(dec);
	ksr_image_free(mem.diff);
	free(png);
	/* A truncated file: an error naming libpng's cause, not a count of the rows read. */
	unsigned char *pa = NULL;
	size_t la = 0;
	ksr_image_encode_png(a, &pa, &la, &err);
	ksr_png_rows *ra = ksr_png_rows_open(pa, la / 2, &err);
	ksr_png_rows *rb = ksr_png_rows_open(pa, la, &err);
	ok(ra && rb, "a truncated PNG's header still reads");
	ksr_err e2 = {0};
	is_int(ksr_image_diff_rows(ra, rb, &o, &rows, NULL, NULL, &e2), -1,
	       "truncated rows: an error");
	ok(strstr(e2.msg, "truncated") != NULL, "truncated rows: says so (%s)", e2.msg);
	ksr_png_rows_close(ra);
	ksr_png_rows_close(rb);
	ok(!ksr_png_rows_open("not a png", 9, &e2), "not a PNG: refused (%s)", e2.msg);
	free(pa);
	ksr_image_free(a);
	ksr_image_free(b);
}

static void test_mismatch_and_errors(void)
{
	ksr_err err = {0};
	ksr_image *a = flat(10, 10, 0), *b = flat(10, 11, 0);
	ksr_diff_opts o = {.want_diff = true};
	ksr_diff_result r;
	is_int(ksr_image_diff(a, b, &o, &r, &err), 0, "size mismatch is a result, not an error");
	ok(r.size_mismatch && r.fraction == 1.0 && r.compared == 0 && !r.diff,
	   "size mismatch: flagged, fraction 1, nothing compared, no diff image");
	is_int(ksr_image_diff(NULL, b, &o, &r, &err), -1, "NULL image: error");
	ok(err.msg[0] != 0, "NULL image: message (%s)", err.msg);
	is_int(ksr_image_diff(a, b, &o, NULL, &err), -1, "NULL result: error");
	ksr_diff_opts bad = {.n_mask = 2};
	is_int(ksr_image_diff(a, a, &bad, &r, &err), -1, "masks counted but absent: error");
	is_int(ksr_image_diff(a, a, NULL, &r, &err), 0, "NULL options: exact comparison");
	is_int(r.differing, 0, "NULL options: identical");
	ksr_image_free(a);
	ksr_image_free(b);
}

/* The reference: every pixel against every mask, no shortcut. Fractions
 * become pixels the same way (outwards); test_masks pins that rounding. */
static bool in_mask(const double m[4], int x, int y, int w, int h)
{
	int x0 = (int)floor(m[0] * w), x1 = (int)ceil((m[0] + m[2]) * w);
	int y0 = (int)floor(m[1] * h), y1 = (int)ceil((m[1] + m[3]) * h);
	return x >= x0 && x < x1 && y >= y0 && y < y1;
}

static long long slow_diff(const ksr_image *a, const ksr_image *b, const double (*mask)[4],
                           size_t n, int t, long long *compared)
{
	long long d = 0;
	*compared = 0;
	for (int y = 0; y < a->h; y++)
		for (int x = 0; x < a->w; x++) {
			bool masked = false;
			for (size_t i = 0; i < n; i++)
				masked |= in_mask(mask[i], x, y, a->w, a->h);
			if (masked)
				continue;
			(*compared)++;
			const uint8_t *p = a->rgb + ((size_t)y * a->w + x) * 3;
			const uint8_t *q = b->rgb + ((size_t)y * a->w + x) * 3;
			for (int c = 0; c < 3; c++)
				if (abs(p[c] - q[c]) > t) {
					d++;
					break;
				}
		}
	return d;
}

static void test_against_reference(void)
{
	ksr_err err = {0};
	srand(12345);
	int agree = 0, runs = 40;
	for (int run = 0; run < runs; run++) {
		int w = 1 + rand() % 70, h = 1 + rand() % 40;
		ksr_image *a = ksr_image_new(w, h);
		for (size_t i = 0; i < (size_t)w * h * 3; i++)
			a->rgb[i] = (uint8_t)(rand() % 256);
		ksr_image *b = copy(a);
		int changes = rand() % (w * h + 1);
		for (int i = 0; i < changes; i++)
			b->rgb[rand() % (w * h * 3)] = (uint8_t)(rand() % 256);
		double mask[3][4];
		size_t n = (size_t)(rand() % 4);
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 4; k++)
				mask[i][k] = (rand() % 1000) / 1000.0 * (k < 2 ? 1.0 : 0.6);
		int t = rand() % 64;
		ksr_diff_opts o = {.channel_threshold = t, .mask = mask, .n_mask = n};
		ksr_diff_result r;
		long long cmp = 0, want = slow_diff(a, b, mask, n, t, &cmp);
		ksr_image_diff(a, b, &o, &r, &err);
		ksr_diff_result rr;
		diff_as_pngs(a, b, &o, &rr, NULL, NULL);
		if (r.differing == want && r.compared == cmp && rr.differing == want &&
		    rr.compared == cmp)
			agree++;
		else
			ok(0,
			   "run %d (%dx%d, %zu masks, t=%d): %lld/%lld, streamed %lld/%lld vs "
			   "reference %lld/%lld",
			   run, w, h, n, t, r.differing, r.compared, rr.differing, rr.compared,
			   want, cmp);
		ksr_image_free(a);
		ksr_image_free(b);
	}
	is_int(agree, runs, "fast pass and the streamed one agree with the per-pixel reference");
}

int main(void)
{
	test_identical_and_threshold();
	test_masks();
	test_diff_image();
	test_mismatch_and_errors();
	test_streamed_diff_image();
	test_against_reference();
	return tap_done();
}
