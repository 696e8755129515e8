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
/* The same with rows asked once each, top to bottom, from the caller's
 * thread (one stripe, libpng): for a source read as a stream. */
int ksr_image_encode_png_in_order(int w, int h, ksr_png_row_fn row, void *ctx, unsigned char **buf,
                                  size_t *len, ksr_err *err);
ksr_image *ksr_image_decode_png(const void *data, size_t len, ksr_err *err);
ksr_image *ksr_image_read_png(const char *path, ksr_err *err);

/* A PNG decoded one 8-bit RGB row at a time, so that two screens can be
 * compared holding two rows, not two frames. _open keeps data (which must
 * outlive the reader), _open_file reads the file's bytes (compressed) and owns
 * them. An interlaced file (its rows come in passes) is decoded whole. */
typedef struct ksr_png_rows ksr_png_rows;
ksr_png_rows *ksr_png_rows_open(const void *data, size_t len, ksr_err *err);
ksr_png_rows *ksr_png_rows_open_file(const char *path, ksr_err *err);
void ksr_png_rows_size(const ksr_png_rows *r, int *w, int *h);
/* The next row (w * 3 bytes, valid until the next call), NULL on a broken
 * file or past the last row. */
const uint8_t *ksr_png_rows_next(ksr_png_rows *r, ksr_err *err);
void ksr_png_rows_close(ksr_png_rows *r); /* NULL-safe */

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
/* The same on two PNGs read row by row (fresh readers, both consumed): no
 * frame is held. o->want_diff is ignored (r->diff stays NULL); with diff_png
 * set, the diff image is encoded as its rows are made (caller frees). -1
 * with err when a row cannot be read. */
int ksr_image_diff_rows(ksr_png_rows *a, ksr_png_rows *b, const ksr_diff_opts *o,
                        ksr_diff_result *r, unsigned char **diff_png, size_t *diff_len,
                        ksr_err *err);

/* Draw a visible marker (a ring and cross-hair) centred on (x, y), clipped. */
void ksr_image_mark(ksr_image *img, int x, int y);

/* Downscaling for models (image_scale.c): the size with the long edge
 * at most max_edge (aspect kept, rounded; max_edge <= 0: unchanged), and a new
 * image of that size by area averaging (a copy when no scaling is needed). */
void ksr_image_fit_size(int w, int h, int max_edge, int *ow, int *oh);
ksr_image *ksr_image_downscale(const ksr_image *src, int max_edge, ksr_err *err);

#endif
