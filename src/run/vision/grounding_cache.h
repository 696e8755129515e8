/* The grounding cache (docs/agentic.md): a location the grounder found for a
 * description, stored with the window geometry it was found in and a
 * fingerprint of the screen around it, so a replay can click it again without
 * a grounder call. It is reused only when the geometry is the same and the
 * fingerprint still matches the screen now; the click's expect: is asked as
 * always (assertions are never cached). */
#ifndef KSR_RUN_GROUNDING_CACHE_H
#define KSR_RUN_GROUNDING_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ksr/error.h"
#include "ksr/image.h"
#include "ksr/scenario.h"

#define KSR_GCACHE_FP_CELLS 64 /* 8 x 8 grey cells */
#define KSR_GCACHE_RADIUS   24 /* pixels each side of the point the fingerprint covers */

/* Where a geometry is read: the window the click was aimed in (or the screen). */
typedef struct ksr_gcache_geom {
	int x, y, w, h;
} ksr_gcache_geom;

/* The cache file: KASM_RUNTIME_GROUNDING_CACHE when set ("off" or "0": no
 * cache, NULL), else .ksr-grounding-cache.json beside the scenario. Free it. */
char *ksr_gcache_path(const ksr_scenario *sc);

/* Grey means of 8 x 8 cells of the square of side 2 * radius around (x, y),
 * clipped to the image. Pure. */
void ksr_gcache_fingerprint(const ksr_image *img, int x, int y, int radius,
                            uint8_t fp[KSR_GCACHE_FP_CELLS]);
/* Mean absolute difference of two fingerprints (0..255). */
double ksr_gcache_fp_distance(const uint8_t a[KSR_GCACHE_FP_CELLS],
                              const uint8_t b[KSR_GCACHE_FP_CELLS]);

/* 1 hit (*sx, *sy: the stored point), 0 miss (why says: no entry, the window
 * moved or resized, the screen around the point changed), -1 unreadable file. */
int ksr_gcache_lookup(const char *path, const char *description, const ksr_gcache_geom *g,
                      const ksr_image *screen, int *sx, int *sy, char *why, size_t len);

/* Store (or replace) the entry for description; fp is the fingerprint of the
 * screen the grounder was shown (KSR_GCACHE_RADIUS around the point). Written
 * whole (temporary file + rename). */
int ksr_gcache_store(const char *path, const char *description, const ksr_gcache_geom *g,
                     const uint8_t fp[KSR_GCACHE_FP_CELLS], int sx, int sy, ksr_err *err);

#endif
