/* The click marker: visible on any background, centred on the pixel, hollow,
 * bounded, and clipped at the image's edges (ASan catches a write outside). */
#include "ksr/image.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static ksr_image *filled(int w, int h, unsigned char r, unsigned char g, unsigned char b)
{
	ksr_image *img = ksr_image_new(w, h);
	for (size_t i = 0; i < (size_t)w * (size_t)h; i++) {
		img->rgb[i * 3] = r;
		img->rgb[i * 3 + 1] = g;
		img->rgb[i * 3 + 2] = b;
	}
	return img;
}

static const unsigned char *px(const ksr_image *img, int x, int y)
{
	return img->rgb + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
}

static bool is_rgb(const ksr_image *img, int x, int y, int r, int g, int b)
{
	const unsigned char *p = px(img, x, y);
	return p[0] == r && p[1] == g && p[2] == b;
}

static bool changed(const ksr_image *a, const ksr_image *b, int x, int y)
{
	return memcmp(px(a, x, y), px(b, x, y), 3) != 0;
}

/* Bounding box and count of the pixels that differ between a and b. */
static long diff_box(const ksr_image *a, const ksr_image *b, int box[4])
{
	long n = 0;
	box[0] = a->w, box[1] = a->h, box[2] = -1, box[3] = -1;
	for (int y = 0; y < a->h; y++)
		for (int x = 0; x < a->w; x++)
			if (changed(a, b, x, y)) {
				n++;
				box[0] = x < box[0] ? x : box[0];
				box[1] = y < box[1] ? y : box[1];
				box[2] = x > box[2] ? x : box[2];
				box[3] = y > box[3] ? y : box[3];
			}
	return n;
}

static ksr_image *copy(const ksr_image *img)
{
	ksr_image *c = ksr_image_new(img->w, img->h);
	memcpy(c->rgb, img->rgb, (size_t)img->w * (size_t)img->h * 3);
	return c;
}

static void test_centred_and_bounded(void)
{
	ksr_image *before = filled(201, 151, 0, 0, 0);
	ksr_image *img = copy(before);
	ksr_image_mark(img, 100, 75);
	int box[4];
	long n = diff_box(before, img, box);
	ok(n >= 200, "the marker changes enough pixels to be seen (%ld)", n);
	ok(is_rgb(img, 100, 75, 255, 0, 0), "the clicked pixel itself is red");
	/* Symmetric about the click: the box is centred on it. */
	is_int(box[0] + box[2], 200, "box centred horizontally on x");
	is_int(box[1] + box[3], 150, "box centred vertically on y");
	ok(box[2] - box[0] >= 24 && box[2] - box[0] <= 80, "marker width %d is 24..80 px",
	   box[2] - box[0] + 1);
	ok(box[3] - box[1] >= 24 && box[3] - box[1] <= 80, "marker height %d is 24..80 px",
	   box[3] - box[1] + 1);
	/* A ring: some pixel on the diagonal (off the cross-hair) is drawn, and the
	 * diagonal close to the centre is left alone, so the control shows through. */
	bool ring = false;
	for (int d = 6; d <= 30 && !ring; d++)
		ring = is_rgb(img, 100 + d, 75 + d, 255, 0, 0);
	ok(ring, "a red ring crosses the diagonal");
	ok(!changed(before, img, 103, 78) && !changed(before, img, 97, 72),
	   "the inside of the ring near the click is untouched");
	ksr_image_free(img);
	ksr_image_free(before);
}

static bool has_rgb(const ksr_image *img, int r, int g, int b)
{
	for (int y = 0; y < img->h; y++)
		for (int x = 0; x < img->w; x++)
			if (is_rgb(img, x, y, r, g, b))
				return true;
	return false;
}

static void test_visible_on_any_background(void)
{
	ksr_image *white = filled(80, 80, 255, 255, 255);
	ksr_image_mark(white, 40, 40);
	ok(has_rgb(white, 255, 0, 0), "red strokes show on white");
	ksr_image *red = filled(80, 80, 255, 0, 0);
	ksr_image_mark(red, 40, 40);
	ok(has_rgb(red, 255, 255, 255), "a white halo shows on red");
	ksr_image_free(white);
	ksr_image_free(red);
}

static void test_clipped(void)
{
	/* Every corner and edge, and points outside: ASan fails the test on a
	 * write outside the pixels; the visible part is still drawn. */
	const int pts[][2] = {{0, 0}, {39, 0}, {0, 29}, {39, 29}, {20, 0}, {-5, 15}, {44, 15}};
	for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
		ksr_image *before = filled(40, 30, 10, 20, 30);
		ksr_image *img = copy(before);
		ksr_image_mark(img, pts[i][0], pts[i][1]);
		int box[4];
		ok(diff_box(before, img, box) > 0, "mark at (%d, %d) draws its visible part",
		   pts[i][0], pts[i][1]);
		ksr_image_free(img);
		ksr_image_free(before);
	}
	ksr_image *before = filled(40, 30, 10, 20, 30);
	ksr_image *img = copy(before);
	ksr_image_mark(img, -500, 9000);
	int box[4];
	is_int(diff_box(before, img, box), 0, "a mark far outside changes nothing");
	ksr_image *one = filled(1, 1, 0, 0, 0);
	ksr_image_mark(one, 0, 0);
	ok(is_rgb(one, 0, 0, 255, 0, 0), "a 1x1 image gets the centre pixel");
	ksr_image_mark(NULL, 1, 1); /* NULL-safe */
	ok(true, "NULL image: no crash");
	ksr_image_free(one);
	ksr_image_free(img);
	ksr_image_free(before);
}

int main(void)
{
	test_centred_and_bounded();
	test_visible_on_any_background();
	test_clipped();
	return tap_done();
}
