/* Reading what models answer (pure functions, unit-tested and fit for a
 * fuzzer): the JSON object inside whatever text came back, the protocol
 * envelopes, yes/no, and locations in the five coordinate conventions. Models
 * wrap JSON in code fences, prose and <think> blocks whatever the prompt says,
 * so nothing here assumes the text is only JSON. */
#include "ksr/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define OVERSHOOT 0.10 /* beyond this fraction outside the range, a location is wrong */

/* Where the object starting at s ends (one past its '}'), or NULL. */
static const char *balanced_end(const char *s)
{
	int depth = 0;
	bool in_str = false;
	for (const char *p = s; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = false;
			continue;
		}
		if (*p == '"')
			in_str = true;
		else if (*p == '{')
			depth++;
		else if (*p == '}' && --depth == 0)
			return p + 1;
	}
	return NULL;
}

/* A copy of text without <think>...</think> blocks; an unclosed <think>
 * drops the rest, a lone </think> (servers that strip the opening tag) drops
 * everything before it. */
static char *drop_think(const char *text)
{
	const char *lone = strstr(text, "</think>");
	const char *open = strstr(text, "<think>");
	if (lone && (!open || lone < open))
		text = lone + strlen("</think>");
	char *out = ksr_xstrdup(text), *p;
	while ((p = strstr(out, "<think>")) != NULL) {
		char *close = strstr(p, "</think>");
		if (!close) {
			*p = '\0';
			break;
		}
		memmove(p, close + 8, strlen(close + 8) + 1);
	}
	return out;
}

cJSON *ksr_model_extract_json(const char *text)
{
	if (!text)
		return NULL;
	char *t = drop_think(text);
	cJSON *found = NULL;
	for (const char *p = strchr(t, '{'); p && !found; p = strchr(p + 1, '{')) {
		const char *end = balanced_end(p);
		if (!end)
			continue;
		cJSON *j = cJSON_ParseWithLength(p, (size_t)(end - p));
		if (cJSON_IsObject(j))
			found = j;
		else
			cJSON_Delete(j);
	}
	free(t);
	return found;
}

/* OpenAI: choices[0].message.content, a string or an array of text parts. */
static cJSON *openai_answer(const cJSON *root, ksr_err *err)
{
	const cJSON *ch = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "choices"), 0);
	const cJSON *msg = cJSON_GetObjectItem(ch, "message");
	const cJSON *content = cJSON_GetObjectItem(msg, "content");
	if (cJSON_IsString(content))
		return ksr_model_extract_json(content->valuestring);
	const cJSON *part;
	cJSON_ArrayForEach(part, content)
	{
		const cJSON *t = cJSON_GetObjectItem(part, "text");
		cJSON *j = cJSON_IsString(t) ? ksr_model_extract_json(t->valuestring) : NULL;
		if (j)
			return j;
	}
	if (cJSON_IsString(cJSON_GetObjectItem(msg, "refusal")))
		ksr_err_set(err, "the model refused to answer");
	return NULL;
}

/* Anthropic: the forced tool's input, else a text block. */
static cJSON *anthropic_answer(const cJSON *root)
{
	const cJSON *block;
	cJSON_ArrayForEach(block, cJSON_GetObjectItem(root, "content"))
	{
		const cJSON *type = cJSON_GetObjectItem(block, "type");
		const cJSON *input = cJSON_GetObjectItem(block, "input");
		if (cJSON_IsString(type) && !strcmp(type->valuestring, "tool_use") &&
		    cJSON_IsObject(input))
			return cJSON_Duplicate(input, true);
	}
	cJSON_ArrayForEach(block, cJSON_GetObjectItem(root, "content"))
	{
		const cJSON *t = cJSON_GetObjectItem(block, "text");
		cJSON *j = cJSON_IsString(t) ? ksr_model_extract_json(t->valuestring) : NULL;
		if (j)
			return j;
	}
	return NULL;
}

static cJSON *ollama_answer(const cJSON *root)
{
	const cJSON *c = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "message"), "content");
	return cJSON_IsString(c) ? ksr_model_extract_json(c->valuestring) : NULL;
}

cJSON *ksr_model_parse_response(ksr_model_api api, const char *body, ksr_err *err)
{
	cJSON *root = body ? cJSON_Parse(body) : NULL;
	if (!cJSON_IsObject(root)) {
		cJSON_Delete(root);
		ksr_err_set(err, "the response body is not a JSON object");
		return NULL;
	}
	ksr_err_clear(err);
	cJSON *a = api == KSR_MODEL_API_ANTHROPIC ? anthropic_answer(root)
	           : api == KSR_MODEL_API_OLLAMA  ? ollama_answer(root)
	                                          : openai_answer(root, err);
	if (!a && !(err && err->msg[0]))
		ksr_err_set(err, "the answer holds no JSON object");
	cJSON_Delete(root);
	return a;
}

ksr_model_answer ksr_model_parse_yes_no(const cJSON *v)
{
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v) ? KSR_MODEL_YES : KSR_MODEL_NO;
	if (!cJSON_IsString(v))
		return KSR_MODEL_INCONCLUSIVE;
	const char *s = v->valuestring;
	if (!strcasecmp(s, "yes") || !strcasecmp(s, "true"))
		return KSR_MODEL_YES;
	if (!strcasecmp(s, "no") || !strcasecmp(s, "false"))
		return KSR_MODEL_NO;
	return KSR_MODEL_INCONCLUSIVE;
}

/* ---- locations -------------------------------------------------------------- */

void ksr_model_smart_resize(int w, int h, int *rw, int *rh)
{
	const double f = 28, min_px = 56.0 * 56, max_px = 12845056;
	double hb = fmax(f, round(h / f) * f), wb = fmax(f, round(w / f) * f);
	if (hb * wb > max_px) {
		double beta = sqrt((double)h * w / max_px);
		hb = fmax(f, floor(h / beta / f) * f);
		wb = fmax(f, floor(w / beta / f) * f);
	} else if (hb * wb < min_px) {
		double beta = sqrt(min_px / ((double)h * w));
		hb = ceil(h * beta / f) * f;
		wb = ceil(w * beta / f) * f;
	}
	*rw = (int)wb, *rh = (int)hb;
}

/* The model's coordinate space: (x, y) there times (sx, sy) = image pixels. */
static void space(ksr_model_coords c, int w, int h, double *sx, double *sy, double *mx, double *my)
{
	int rw = w, rh = h;
	switch (c) {
	case KSR_COORDS_SMART_RESIZE:
		ksr_model_smart_resize(w, h, &rw, &rh);
		*mx = rw, *my = rh;
		break;
	case KSR_COORDS_NORM1000:
	case KSR_COORDS_NORM1000_YX:
		*mx = *my = 1000;
		break;
	case KSR_COORDS_NORM1:
		*mx = *my = 1;
		break;
	default:
		*mx = w, *my = h;
	}
	*sx = w / *mx, *sy = h / *my;
}

static bool numbers(const cJSON *a, int n, double *out)
{
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
		return false;
	for (int i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetArrayItem(a, i);
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
			return false;
		out[i] = v->valuedouble;
	}
	return true;
}

static const cJSON *first_of(const cJSON *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItem(o, *keys);
		if (v && !cJSON_IsNull(v))
			return v;
	}
	return NULL;
}

/* The point in model space: named x/y (taken as named), a 2-array or a box
 * (arrays y first for norm1000-yx). */
static bool model_point(const cJSON *a, ksr_model_coords c, double *x, double *y)
{
	static const char *const pts[] = {"point", "coordinate", "coordinates", "click", NULL};
	static const char *const boxes[] = {"bbox_2d", "bbox", "box", "box_2d", NULL};
	const cJSON *vx = cJSON_GetObjectItem(a, "x"), *vy = cJSON_GetObjectItem(a, "y");
	bool yx = c == KSR_COORDS_NORM1000_YX;
	double v[4];
	if (cJSON_IsNumber(vx) && cJSON_IsNumber(vy)) {
		*x = vx->valuedouble, *y = vy->valuedouble;
		return isfinite(*x) && isfinite(*y);
	}
	if (numbers(first_of(a, pts), 2, v)) {
		*x = v[yx ? 1 : 0], *y = v[yx ? 0 : 1];
		return true;
	}
	if (numbers(first_of(a, boxes), 4, v) || numbers(first_of(a, pts), 4, v)) {
		*x = (v[yx ? 1 : 0] + v[yx ? 3 : 2]) / 2;
		*y = (v[yx ? 0 : 1] + v[yx ? 2 : 3]) / 2;
		return true;
	}
	return false;
}

/* Clamp a model-space value into [0, max); -1 when it is far outside. */
static int to_pixel(double v, double max, double scale, int limit)
{
	if (v < -OVERSHOOT * max || v > (1 + OVERSHOOT) * max)
		return -1;
	long p = lround(floor(v * scale));
	return (int)(p < 0 ? 0 : p >= limit ? limit - 1 : p);
}

int ksr_model_parse_location(const cJSON *answer, ksr_model_coords c, int w, int h, int *px,
                             int *py)
{
	if (!cJSON_IsObject(answer) || w <= 0 || h <= 0)
		return -1;
	const cJSON *found = cJSON_GetObjectItem(answer, "found");
	if (ksr_model_parse_yes_no(found) == KSR_MODEL_NO)
		return 0;
	double x, y, sx, sy, mx, my;
	if (!model_point(answer, c, &x, &y))
		return -1;
	space(c, w, h, &sx, &sy, &mx, &my);
	int ix = to_pixel(x, mx, sx, w), iy = to_pixel(y, my, sy, h);
	if (ix < 0 || iy < 0)
		return -1;
	*px = ix, *py = iy;
	return 1;
}

void ksr_model_to_screen(const ksr_model_image *img, int ix, int iy, int *sx, int *sy)
{
	/* Pixel centres map to pixel centres. */
	long x = lround(((double)ix + 0.5) * img->screen_w / img->w - 0.5);
	long y = lround(((double)iy + 0.5) * img->screen_h / img->h - 0.5);
	*sx = (int)(x < 0 ? 0 : x >= img->screen_w ? img->screen_w - 1 : x);
	*sy = (int)(y < 0 ? 0 : y >= img->screen_h ? img->screen_h - 1 : y);
}
