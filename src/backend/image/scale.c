/* Downscaling a screenshot for a model: the long edge at most max_edge, by
 * area averaging (a box filter over every source pixel a target pixel
 * covers), so thin text and 1-pixel lines fade instead of vanishing as they
 * would under nearest-neighbour sampling. */
#include "ksr/image.h"

#include <string.h>

void ksr_image_fit_size(int w, int h, int max_edge, int *ow, int *oh)
{
	int lng = w > h ? w : h;
	if (max_edge <= 0 || lng <= max_edge) {
		*ow = w, *oh = h;
		return;
	}
	/* Rounded, at least one pixel. */
	*ow = (int)(((long long)w * max_edge * 2 + lng) / (2LL * lng));
	*oh = (int)(((long long)h * max_edge * 2 + lng) / (2LL * lng));
	*ow = *ow < 1 ? 1 : *ow;
	*oh = *oh < 1 ? 1 : *oh;
}

/* Sum the source rows [y0, y1) of columns [x0, x1) into out[3]. */
static void box_sum(const ksr_image *src, int x0, int x1, int y0, int y1, unsigned long out[3])
{
	out[0] = out[1] = out[2] = 0;
	for (int y = y0; y < y1; y++) {
		const uint8_t *p = src->rgb + ((size_t)y * src->w + x0) * 3;
		for (int x = x0; x < x1; x++, p += 3) {
			out[0] += p[0];
			out[1] += p[1];
			out[2] += p[2];
		}
	}
}

static void scale_row(const ksr_image *src, ksr_image *dst, int ty)
{
	int y0 = (int)((long long)ty * src->h / dst->h);
	int y1 = (int)((long long)(ty + 1) * src->h / dst->h);
	y1 = y1 > y0 ? y1 : y0 + 1;
	uint8_t *o = dst->rgb + (size_t)ty * dst->w * 3;
	for (int tx = 0; tx < dst->w; tx++, o += 3) {
		int x0 = (int)((long long)tx * src->w / dst->w);
		int x1 = (int)((long long)(tx + 1) * src->w / dst->w);
		x1 = x1 > x0 ? x1 : x0 + 1;
		unsigned long s[3], n = (unsigned long)(x1 - x0) * (unsigned long)(y1 - y0);
		box_sum(src, x0, x1, y0, y1, s);
		for (int c = 0; c < 3; c++)
			o[c] = (uint8_t)((s[c] + n / 2) / n);
	}
}

ksr_image *ksr_image_downscale(const ksr_image *src, int max_edge, ksr_err *err)
{
	if (!src || src->w <= 0 || src->h <= 0 || !src->rgb) {
		ksr_err_set(err, "no image to scale");
		return NULL;
	}
	int w, h;
	ksr_image_fit_size(src->w, src->h, max_edge, &w, &h);
	ksr_image *dst = ksr_image_new(w, h);
	if (!dst) {
		ksr_err_set(err, "cannot allocate a %dx%d image", w, h);
		return NULL;
	}
	if (w == src->w && h == src->h) {
		memcpy(dst->rgb, src->rgb, (size_t)w * h * 3);
		return dst;
	}
	for (int y = 0; y < h; y++)
		scale_row(src, dst, y);
	return dst;
}
