/* Images: 8-bit RGB pixels, PNG read/write with libpng (fast settings for
 * screenshots), and what the report needs of them. */
#ifndef KSR_IMAGE_H
#define KSR_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksr/error.h"

typedef struct ksr_image {
	int w, h;
	uint8_t *rgb; /* w * h * 3 bytes, rows top to bottom */
} ksr_image;

ksr_image *ksr_image_new(int w, int h); /* zeroed */
void ksr_image_free(ksr_image *img);    /* NULL-safe */

/* PNG into memory (caller frees *buf). Level 1, no filter: screenshots are
 * written on the hot path, size matters less than time. */
int ksr_image_encode_png(const ksr_image *img, unsigned char **buf, size_t *len, ksr_err *err);
/* The same for w x h RGB rows that row(ctx, y, scratch) supplies: a pointer
 * to row y's w * 3 bytes, its own or written into scratch (w * 3 bytes). It
 * is called from two threads at once (the halves of the image, each with its
 * own scratch, rows in order within each), so it must not share state it
 * writes. For a source that is not an image (a screen grab). */
typedef const uint8_t *(*ksr_png_row_fn)(void *ctx, int y, uint8_t *scratch);
int ksr_image_encode_png_rows(int w, int h, ksr_png_row_fn row, void *ctx, unsigned char **buf,
                              size_t *len, ksr_err *err);
ksr_image *ksr_image_decode_png(const void *data, size_t len, ksr_err *err);
ksr_image *ksr_image_read_png(const char *path, ksr_err *err);

/* Baseline comparison. A pixel differs when any channel differs by
 * more than channel_threshold (anti-aliasing noise is not drift); pixels in a
 * mask rectangle (fractions fx, fy, fw, fh of the image) are not compared. */
typedef struct ksr_diff_opts {
	int channel_threshold; /* 0..255; 0 = exact */
	const double (*mask)[4];
	size_t n_mask;
	bool want_diff; /* produce a diff image: differing pixels red over a faded copy of b */
} ksr_diff_opts;

typedef struct ksr_diff_result {
	bool size_mismatch;  /* a and b differ in size: nothing compared */
	long long compared;  /* pixels outside the masks */
	long long differing; /* of those, pixels that differ */
	double fraction;     /* differing / compared (1.0 on a size mismatch) */
	ksr_image *diff;     /* when want_diff and sizes match; caller frees */
} ksr_diff_result;

int ksr_image_diff(const ksr_image *a, const ksr_image *b, const ksr_diff_opts *o,
                   ksr_diff_result *r, ksr_err *err);

/* Draw a visible marker (a ring and cross-hair) centred on (x, y), clipped. */
void ksr_image_mark(ksr_image *img, int x, int y);

/* Downscaling for models (image_scale.c): the size with the long edge
 * at most max_edge (aspect kept, rounded; max_edge <= 0: unchanged), and a new
 * image of that size by area averaging (a copy when no scaling is needed). */
void ksr_image_fit_size(int w, int h, int max_edge, int *ow, int *oh);
ksr_image *ksr_image_downscale(const ksr_image *src, int max_edge, ksr_err *err);

#endif
