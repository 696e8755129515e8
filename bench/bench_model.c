/* Preparing a screenshot for a model (downscale + PNG encode, once), the
 * bytes each wire protocol carries, a tokens-equivalent image size per
 * protocol, and the client's per-call overhead against a local server.
 *   bench_model [URL [CALLS]]   (URL: a model_server.py base, e.g. http://127.0.0.1:PORT/v1)
 * bench/model.sh starts the server and times curl posting the same body. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "ksr/model.h"

#define REPS 15

/* A screen-like image: flat panels, a few bars of "text" (high-frequency
 * noise), a gradient title bar: compresses like a real desktop, not like noise. */
static ksr_image *fake_screen(int w, int h)
{
	ksr_image *img = ksr_image_new(w, h);
	unsigned seed = 7;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			uint8_t *p = img->rgb + ((size_t)y * w + x) * 3;
			int panel = (x / (w / 4) + y / (h / 3)) % 3;
			uint8_t v = (uint8_t)(panel == 0 ? 240 : panel == 1 ? 224 : 250);
			if (y < 30)
				v = (uint8_t)(60 + x * 120 / w);
			else if ((y / 14) % 5 == 1 && (x / 9) % 11 < 8) {
				seed = seed * 1103515245u + 12345u;
				v = (seed >> 16) & 1 ? 30 : v;
			}
			p[0] = p[1] = p[2] = v;
		}
	return img;
}

/* Image tokens as the providers document them. */
static long openai_tokens(int w, int h) /* high detail: fit 2048, short side 768, 512 tiles */
{
	double s = fmin(1.0, 2048.0 / fmax(w, h));
	double tw = w * s, th = h * s;
	double s2 = fmin(1.0, 768.0 / fmin(tw, th));
	tw *= s2, th *= s2;
	return 85 + 170 * (long)(ceil(tw / 512) * ceil(th / 512));
}

static long anthropic_tokens(int w, int h)
{
	return lround((double)w * h / 750.0);
}

static long qwen_tokens(int w, int h) /* vLLM/Ollama Qwen2.5-VL: one token per 28x28 */
{
	int rw, rh;
	ksr_model_smart_resize(w, h, &rw, &rh);
	return (long)(rw / 28) * (rh / 28);
}

static void prepare_rows(void)
{
	static const int sizes[][2] = {{1280, 720}, {1920, 1080}, {2560, 1440}, {3840, 2160}};
	printf("| screen | sent | downscale ms | encode ms | PNG KiB | base64 KiB | tokens: openai "
	       "| anthropic | qwen (vLLM/ollama) |\n|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		ksr_image *src = fake_screen(sizes[i][0], sizes[i][1]);
		double ds[REPS], en[REPS];
		size_t len = 0;
		int w = 0, h = 0;
		for (int r = 0; r < REPS; r++) {
			ksr_err err = {0};
			double t0 = bench_now_ms();
			ksr_image *small = ksr_image_downscale(src, KSR_MODEL_MAX_EDGE, &err);
			double t1 = bench_now_ms();
			unsigned char *png = NULL;
			ksr_image_encode_png(small, &png, &len, &err);
			en[r] = bench_now_ms() - t1, ds[r] = t1 - t0;
			w = small->w, h = small->h;
			free(png);
			ksr_image_free(small);
		}
		printf("| %dx%d | %dx%d | %.1f | %.1f | %.0f | %.0f | %ld | %ld | %ld |\n",
		       sizes[i][0], sizes[i][1], w, h, bench_median(ds, REPS),
		       bench_median(en, REPS), len / 1024.0, (len + 2) / 3 * 4 / 1024.0,
		       openai_tokens(w, h), anthropic_tokens(w, h), qwen_tokens(w, h));
		ksr_image_free(src);
	}
}

static void call_rows(const char *base, int calls)
{
	static const char *const apis[] = {"openai", "anthropic", "ollama"};
	ksr_image *src = fake_screen(1280, 720);
	ksr_model_image img;
	ksr_err err = {0};
	ksr_model_image_prepare(src, KSR_MODEL_MAX_EDGE, &img, &err);
	printf("\n| protocol | calls | median ms | min ms | max ms |\n|---|---|---|---|---|\n");
	for (int a = 0; a < 3; a++) {
		ksr_model_config cfg = {.role = KSR_MODEL_JUDGE, .api = (ksr_model_api)a};
		snprintf(cfg.model, sizeof cfg.model, "bench");
		snprintf(cfg.url, sizeof cfg.url, "%s%s", base,
		         a == 0   ? "/v1/chat/completions"
		         : a == 1 ? "/v1/messages"
		                  : "/api/chat");
		double *ms = calloc((size_t)calls, sizeof *ms);
		int good = 0;
		for (int i = 0; i < calls; i++) {
			ksr_model_usage u;
			char reason[64];
			double t0 = bench_now_ms();
			ksr_model_answer ans = ksr_model_judge(&cfg, &img, "the app is visible",
			                                       ksr_deadline_in_ms(10000), reason,
			                                       sizeof reason, &u);
			ms[i] = bench_now_ms() - t0;
			good += ans == KSR_MODEL_YES;
		}
		printf("| %s | %d/%d yes | %.2f | %.2f | %.2f |\n", apis[a], good, calls,
		       bench_median(ms, calls), bench_min(ms, calls), bench_max(ms, calls));
		free(ms);
	}
	ksr_model_image_clear(&img);
	ksr_image_free(src);
}

int main(int argc, char **argv)
{
	prepare_rows();
	if (argc > 1)
		call_rows(argv[1], argc > 2 ? atoi(argv[2]) : 50);
	return 0;
}
