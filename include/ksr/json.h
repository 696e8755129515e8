/* The one set of cJSON field accessors. Each looks a key up case-sensitively
 * and is NULL-safe: a NULL object, a missing key or a value of another type
 * gives the caller's default. */
#ifndef KSR_JSON_H
#define KSR_JSON_H

#include <cjson/cJSON.h>

/* The string at key, or dflt (which may be NULL). Owned by o. */
const char *ksr_json_str(const cJSON *o, const char *key, const char *dflt);
/* The number at key, or dflt. */
double ksr_json_num(const cJSON *o, const char *key, double dflt);

#endif
