/* Images: 8-bit RGB pixels, PNG read/write with libpng (fast settings for
 * screenshots), and what the report needs of them. */
#ifndef KSR_IMAGE_H
#define KSR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ksr/error.h"

typedef struct ksr_image {
	int w, h;
	uint8_t *rgb; /* w * h * 3 bytes, rows top to bottom */
} ksr_image;

ksr_image *ksr_image_new(int w, int h); /* zeroed */
void ksr_image_free(ksr_image *img);    /* NULL-safe */

/* PNG into memory (caller frees *buf). Level 1 + SUB filter: screenshots are
 * written on the hot path, size matters less than time. */
int ksr_image_encode_png(const ksr_image *img, unsigned char **buf, size_t *len, ksr_err *err);
ksr_image *ksr_image_decode_png(const void *data, size_t len, ksr_err *err);
ksr_image *ksr_image_read_png(const char *path, ksr_err *err);

#endif
