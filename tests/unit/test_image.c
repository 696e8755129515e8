/* PNG round trip and hostile input: errors are values, never a crash. */
#include "ksr/image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"

static ksr_image *pattern(int w, int h)
{
	ksr_image *img = ksr_image_new(w, h);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			unsigned char *p = img->rgb + ((size_t)y * w + x) * 3;
			p[0] = (unsigned char)(x * 7);
			p[1] = (unsigned char)(y * 13);
			p[2] = (unsigned char)((x ^ y) & 0xff);
		}
	return img;
}

static void test_round_trip(void)
{
	ksr_err err = {0};
	ksr_image *img = pattern(97, 31);
	unsigned char *buf = NULL;
	size_t len = 0;
	is_int(ksr_image_encode_png(img, &buf, &len, &err), 0, "encode");
	ok(len > 8 && buf && memcmp(buf, "\x89PNG", 4) == 0, "PNG signature (%zu bytes)", len);
	ksr_image *back = ksr_image_decode_png(buf, len, &err);
	ok(back != NULL, "decode: %s", err.msg);
	if (back) {
		is_int(back->w, 97, "width");
		is_int(back->h, 31, "height");
		ok(memcmp(back->rgb, img->rgb, (size_t)97 * 31 * 3) == 0, "pixels identical");
	}
	char path[] = "/tmp/ksr-test-image-XXXXXX";
	int fd = mkstemp(path);
	ok(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "write temp file");
	close(fd);
	ksr_image *from_file = ksr_image_read_png(path, &err);
	ok(from_file && from_file->w == 97, "read from file: %s", err.msg);
	unlink(path);
	ksr_image_free(from_file);
	ksr_image_free(back);
	ksr_image_free(img);
	free(buf);
}

static void test_garbage(void)
{
	ksr_err err = {0};
	const char junk[] = "this is not a PNG at all, just bytes";
	ok(ksr_image_decode_png(junk, sizeof junk, &err) == NULL, "garbage rejected");
	ok(strstr(err.msg, "PNG") != NULL, "message: %s", err.msg);

	/* A real PNG, truncated and then corrupted in the middle of its data. */
	ksr_image *img = pattern(64, 64);
	unsigned char *buf = NULL;
	size_t len = 0;
	ksr_image_encode_png(img, &buf, &len, &err);
	ksr_err_clear(&err);
	ok(ksr_image_decode_png(buf, len / 2, &err) == NULL, "truncated rejected: %s", err.msg);
	for (size_t i = 40; i < len - 12; i += 3)
		buf[i] ^= 0x5a;
	ksr_err_clear(&err);
	ok(ksr_image_decode_png(buf, len, &err) == NULL, "corrupted rejected: %s", err.msg);
	free(buf);
	ksr_image_free(img);

	ksr_err_clear(&err);
	ok(ksr_image_read_png("/nonexistent/x.png", &err) == NULL, "missing file: %s", err.msg);
	ok(ksr_image_decode_png(NULL, 0, NULL) == NULL, "NULL input, NULL err");
	ksr_image_free(NULL);
}

/* Other PNG flavours (palette, gray, 16-bit, alpha) come back as 8-bit RGB;
 * ImageMagick-free: write them with libpng's simplified API. */
#include <png.h>
static void test_flavours(void)
{
	png_image pi;
	memset(&pi, 0, sizeof pi);
	pi.version = PNG_IMAGE_VERSION;
	pi.width = 4;
	pi.height = 2;
	pi.format = PNG_FORMAT_LINEAR_Y_ALPHA; /* 16-bit gray + alpha */
	png_uint_16 px[4 * 2 * 2];
	for (int i = 0; i < 8; i++) {
		px[i * 2] = 65535;
		px[i * 2 + 1] = 65535;
	}
	png_alloc_size_t len = 0;
	ok(png_image_write_get_memory_size(pi, len, 0, px, 0, NULL), "size 16-bit GA");
	void *mem = malloc(len);
	ok(png_image_write_to_memory(&pi, mem, &len, 0, px, 0, NULL), "write 16-bit GA");
	ksr_err err = {0};
	ksr_image *img = ksr_image_decode_png(mem, len, &err);
	ok(img && img->w == 4 && img->h == 2, "decode 16-bit gray+alpha: %s", err.msg);
	if (img)
		ok(img->rgb[0] == 255 && img->rgb[1] == 255 && img->rgb[2] == 255, "white pixel");
	ksr_image_free(img);
	free(mem);
}

int main(void)
{
	test_round_trip();
	test_garbage();
	test_flavours();
	return tap_done();
}
