/* Drawing on screenshots for the report: the marker where a click landed.
 * A red ring with a white halo and a cross-hair through the exact pixel, so a
 * wrong declared fraction shows at a glance on dark, light and red screens.
 * The ring is hollow: the control under the click stays visible. */
#include "ksr/image.h"

#include <stdint.h>
#include <stdlib.h>

#define RING_R     14 /* ring radius in pixels, to the middle of its stroke */
#define RING_HALF  1  /* the red stroke is 2 * RING_HALF + 1 pixels wide */
#define HALO       1  /* white border on each side of every red stroke */
#define CROSS_LEN  (RING_R + 8)
#define CROSS_GAP  4 /* the arms start this far from the centre... */
#define CENTRE_DOT 0 /* ...but the clicked pixel itself is marked */

static const uint8_t red[3] = {255, 0, 0};
static const uint8_t white[3] = {255, 255, 255};

static void put(ksr_image *img, int x, int y, const uint8_t c[3])
{
	if (x < 0 || y < 0 || x >= img->w || y >= img->h)
		return; /* clipped: the marker may hang over the screen's edge */
	uint8_t *p = img->rgb + ((size_t)y * (size_t)img->w + (size_t)x) * 3;
	p[0] = c[0], p[1] = c[1], p[2] = c[2];
}

/* Integer distance test: |sqrt(dx²+dy²) - R| <= half, without sqrt rounding
 * surprises: (R-half-0.5)² <= d² < (R+half+0.5)². */
static int on_ring(int dx, int dy, int half)
{
	long d2 = (long)dx * dx + (long)dy * dy;
	long lo2 = 4L * d2, in = 2L * (RING_R - half) - 1, out = 2L * (RING_R + half) + 1;
	return lo2 >= (in > 0 ? in * in : 0) && lo2 < out * out;
}

static void ring(ksr_image *img, int cx, int cy, int half, const uint8_t c[3])
{
	int r = RING_R + half + 1;
	for (int dy = -r; dy <= r; dy++)
		for (int dx = -r; dx <= r; dx++)
			if (on_ring(dx, dy, half))
				put(img, cx + dx, cy + dy, c);
}

/* The cross-hair's four arms, widened by `widen` pixels on each side. */
static void cross(ksr_image *img, int cx, int cy, int widen, const uint8_t c[3])
{
	for (int k = CROSS_GAP - widen; k <= CROSS_LEN + widen; k++)
		for (int t = -widen; t <= widen; t++) {
			put(img, cx + k, cy + t, c);
			put(img, cx - k, cy + t, c);
			put(img, cx + t, cy + k, c);
			put(img, cx + t, cy - k, c);
		}
}

static void dot(ksr_image *img, int cx, int cy, int widen, const uint8_t c[3])
{
	for (int dy = -widen - CENTRE_DOT; dy <= widen + CENTRE_DOT; dy++)
		for (int dx = -widen - CENTRE_DOT; dx <= widen + CENTRE_DOT; dx++)
			put(img, cx + dx, cy + dy, c);
}

void ksr_image_mark(ksr_image *img, int x, int y)
{
	if (!img || !img->rgb || img->w <= 0 || img->h <= 0)
		return;
	/* Halo first, then the red strokes over it. */
	ring(img, x, y, RING_HALF + HALO, white);
	cross(img, x, y, HALO, white);
	dot(img, x, y, HALO, white);
	ring(img, x, y, RING_HALF, red);
	cross(img, x, y, 0, red);
	dot(img, x, y, 0, red);
}
