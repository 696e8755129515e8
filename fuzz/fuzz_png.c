/* libFuzzer target for PNG baselines: a baseline file comes from the
 * scenario's folder, written by anyone. Any bytes decode to an image of the
 * size the header says, or fail with an error; read row by row
 * (ksr_png_rows, as the baseline compare reads it), every row of a file that
 * decodes whole is readable and the same as the whole decode's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/image.h"

/* Row by row: rows of w * 3 bytes, or an error with a message. */
static void read_rows(const uint8_t *data, size_t size, const ksr_image *whole)
{
	ksr_err err = {0};
	ksr_png_rows *r = ksr_png_rows_open(data, size, &err);
	if (!r) {
		if (!err.msg[0] || whole)
			abort(); /* silent, or refused what decodes whole */
		return;
	}
	int w = 0, h = 0;
	ksr_png_rows_size(r, &w, &h);
	if (w <= 0 || h <= 0 || (whole && (w != whole->w || h != whole->h)))
		abort();
	for (int y = 0; y < h; y++) {
		const uint8_t *row = ksr_png_rows_next(r, &err);
		if (!row) {
			if (!err.msg[0] || whole)
				abort();
			break;
		}
		volatile uint8_t last = row[(size_t)w * 3 - 1]; /* a short row shows under ASan */
		(void)last;
		if (whole && memcmp(row, whole->rgb + (size_t)y * w * 3, (size_t)w * 3) != 0)
			abort();
	}
	ksr_png_rows_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ksr_err err = {0};
	ksr_image *img = ksr_image_decode_png(data, size, &err);
	if (img) {
		if (img->w <= 0 || img->h <= 0)
			abort();
		/* Touch the last pixel: a short buffer shows up under ASan. */
		volatile uint8_t last = img->rgb[(size_t)img->w * img->h * 3 - 1];
		(void)last;
	} else if (!err.msg[0]) {
		abort();
	}
	read_rows(data, size, img);
	ksr_image_free(img);
	return 0;
}
