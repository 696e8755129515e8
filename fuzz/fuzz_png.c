/* libFuzzer target for PNG baselines (ksr_image_decode_png): a baseline file
 * comes from the scenario's folder, written by anyone. Any bytes decode to an
 * image of the size the header says, or fail with an error. */
#include <stdint.h>
#include <stdlib.h>

#include "ksr/image.h"

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
	ksr_image_free(img);
	return 0;
}
