/* The grounding cache file: JSON {"version": 1, "entries": [{description,
 * window {x, y, w, h}, point {x, y}, fingerprint (128 hex digits)}]}, one
 * entry per description. A small grey patch rather than an exact hash: the
 * pointer hovering a button, or anti-aliasing, must not miss; another window
 * or control there must. */
#include "run/vision/grounding_cache.h"
#include "ksr/json.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FP_MAX_AVG 10.0 /* mean grey difference (0..255) still "the same place" */
#define FILE_MAX   (1 << 20)

char *ksr_gcache_path(const ksr_scenario *sc)
{
	const char *v = getenv("KASM_RUNTIME_GROUNDING_CACHE");
	if (v && *v)
		return strcmp(v, "off") && strcmp(v, "0") ? ksr_xasprintf("%s", v) : NULL;
	if (!sc || !sc->dir)
		return NULL;
	return ksr_xasprintf("%s/.ksr-grounding-cache.json", sc->dir);
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void ksr_gcache_fingerprint(const ksr_image *img, int x, int y, int radius,
                            uint8_t fp[KSR_GCACHE_FP_CELLS])
{
	memset(fp, 0, KSR_GCACHE_FP_CELLS);
	if (!img || img->w <= 0 || img->h <= 0 || radius <= 0)
		return;
	int side = 2 * radius;
	for (int cy = 0; cy < 8; cy++)
		for (int cx = 0; cx < 8; cx++) {
			long sum = 0, n = 0;
			for (int py = cy * side / 8; py < (cy + 1) * side / 8; py++)
				for (int px = cx * side / 8; px < (cx + 1) * side / 8; px++) {
					int ix = clampi(x - radius + px, 0, img->w - 1);
					int iy = clampi(y - radius + py, 0, img->h - 1);
					const uint8_t *p =
					        img->rgb + ((size_t)iy * img->w + ix) * 3;
					sum += (p[0] * 30 + p[1] * 59 + p[2] * 11) / 100;
					n++;
				}
			fp[cy * 8 + cx] = (uint8_t)(n ? sum / n : 0);
		}
}

double ksr_gcache_fp_distance(const uint8_t a[KSR_GCACHE_FP_CELLS],
                              const uint8_t b[KSR_GCACHE_FP_CELLS])
{
	long sum = 0;
	for (int i = 0; i < KSR_GCACHE_FP_CELLS; i++)
		sum += abs((int)a[i] - (int)b[i]);
	return (double)sum / KSR_GCACHE_FP_CELLS;
}

static void fp_hex(const uint8_t fp[KSR_GCACHE_FP_CELLS], char out[2 * KSR_GCACHE_FP_CELLS + 1])
{
	for (int i = 0; i < KSR_GCACHE_FP_CELLS; i++)
		snprintf(out + 2 * i, 3, "%02x", fp[i]);
}

static bool fp_parse(const char *hex, uint8_t fp[KSR_GCACHE_FP_CELLS])
{
	if (!hex || strlen(hex) != 2 * KSR_GCACHE_FP_CELLS)
		return false;
	for (int i = 0; i < KSR_GCACHE_FP_CELLS; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return false;
		fp[i] = (uint8_t)v;
	}
	return true;
}

/* The file's document; a missing file is an empty one. NULL: unreadable. */
static cJSON *load(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return errno == ENOENT ? cJSON_Parse("{\"version\":1,\"entries\":[]}") : NULL;
	char *buf = ksr_xmalloc(FILE_MAX + 1);
	size_t n = fread(buf, 1, FILE_MAX, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *doc = cJSON_Parse(buf);
	free(buf);
	if (!cJSON_IsArray(cJSON_GetObjectItem(doc, "entries"))) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

static cJSON *find_entry(const cJSON *doc, const char *description, int *index)
{
	int i = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(doc, "entries"))
	{
		const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(e, "description"));
		if (d && !strcmp(d, description)) {
			if (index)
				*index = i;
			return (cJSON *)e;
		}
		i++;
	}
	return NULL;
}

static int num(const cJSON *o, const char *k)
{
	return (int)cJSON_GetNumberValue(cJSON_GetObjectItem(o, k));
}

static bool same_geom(const cJSON *w, const ksr_gcache_geom *g)
{
	return w && num(w, "x") == g->x && num(w, "y") == g->y && num(w, "w") == g->w &&
	       num(w, "h") == g->h;
}

static int decide(const cJSON *e, const ksr_gcache_geom *g, const ksr_image *screen, int *sx,
                  int *sy, char *why, size_t len)
{
	const cJSON *w = cJSON_GetObjectItem(e, "window"), *p = cJSON_GetObjectItem(e, "point");
	uint8_t want[KSR_GCACHE_FP_CELLS], now[KSR_GCACHE_FP_CELLS];
	if (!same_geom(w, g)) {
		snprintf(why, len,
		         "the window was %dx%d at (%d, %d) when grounded and is %dx%d at (%d, %d) "
		         "now",
		         num(w, "w"), num(w, "h"), num(w, "x"), num(w, "y"), g->w, g->h, g->x,
		         g->y);
		return 0;
	}
	if (!p || !fp_parse(cJSON_GetStringValue(cJSON_GetObjectItem(e, "fingerprint")), want)) {
		snprintf(why, len, "the entry is incomplete");
		return 0;
	}
	ksr_gcache_fingerprint(screen, num(p, "x"), num(p, "y"), KSR_GCACHE_RADIUS, now);
	double dist = ksr_gcache_fp_distance(want, now);
	if (dist > FP_MAX_AVG) {
		snprintf(why, len, "the screen around (%d, %d) changed (fingerprint distance %.1f)",
		         num(p, "x"), num(p, "y"), dist);
		return 0;
	}
	*sx = num(p, "x"), *sy = num(p, "y");
	snprintf(why, len, "same window geometry, fingerprint distance %.1f", dist);
	return 1;
}

int ksr_gcache_lookup(const char *path, const char *description, const ksr_gcache_geom *g,
                      const ksr_image *screen, int *sx, int *sy, char *why, size_t len)
{
	cJSON *doc = load(path);
	if (!doc) {
		snprintf(why, len, "%s is not a grounding cache", path);
		return -1;
	}
	const cJSON *e = find_entry(doc, description, NULL);
	int rc = 0;
	if (!e)
		snprintf(why, len, "no entry for this description");
	else
		rc = decide(e, g, screen, sx, sy, why, len);
	cJSON_Delete(doc);
	return rc;
}

static cJSON *make_entry(const char *description, const ksr_gcache_geom *g,
                         const uint8_t fp[KSR_GCACHE_FP_CELLS], int sx, int sy)
{
	char hex[2 * KSR_GCACHE_FP_CELLS + 1];
	fp_hex(fp, hex);
	cJSON *e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "description", description);
	cJSON *w = cJSON_AddObjectToObject(e, "window");
	cJSON_AddNumberToObject(w, "x", g->x);
	cJSON_AddNumberToObject(w, "y", g->y);
	cJSON_AddNumberToObject(w, "w", g->w);
	cJSON_AddNumberToObject(w, "h", g->h);
	cJSON *p = cJSON_AddObjectToObject(e, "point");
	cJSON_AddNumberToObject(p, "x", sx);
	cJSON_AddNumberToObject(p, "y", sy);
	cJSON_AddStringToObject(e, "fingerprint", hex);
	return e;
}

static int write_whole(const char *path, const char *text, ksr_err *err)
{
	char *tmp = ksr_xasprintf("%s.tmp.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "wb");
	int rc = -1;
	if (!f) {
		ksr_err_set(err, "%s: %s", tmp, strerror(errno));
		goto cleanup;
	}
	bool ok = fputs(text, f) >= 0;
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) < 0) {
		ksr_err_set(err, "%s: %s", path, strerror(errno));
		unlink(tmp);
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(tmp);
	return rc;
}

int ksr_gcache_store(const char *path, const char *description, const ksr_gcache_geom *g,
                     const uint8_t fp[KSR_GCACHE_FP_CELLS], int sx, int sy, ksr_err *err)
{
	cJSON *doc = load(path);
	if (!doc)
		doc = cJSON_Parse("{\"version\":1,\"entries\":[]}"); /* rewrite a broken file */
	int at = -1;
	cJSON *entries = cJSON_GetObjectItem(doc, "entries");
	if (find_entry(doc, description, &at))
		cJSON_DeleteItemFromArray(entries, at);
	cJSON_AddItemToArray(entries, make_entry(description, g, fp, sx, sy));
	char *text = ksr_json_print(doc, true);
	int rc = write_whole(path, text, err);
	free(text);
	cJSON_Delete(doc);
	return rc;
}
