/* The one set of cJSON field accessors. Each looks a key up case-sensitively
 * and is NULL-safe: a NULL object, a missing key or a value of another type
 * gives the caller's default. */
#ifndef KSR_JSON_H
#define KSR_JSON_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* The string at key, or dflt (which may be NULL). Owned by o. */
const char *ksr_json_str(const cJSON *o, const char *key, const char *dflt);
/* The number at key, or dflt. */
double ksr_json_num(const cJSON *o, const char *key, double dflt);

/* The one way JSON text leaves the runtime (files, stdout, MCP, sockets):
 * cJSON_Print (pretty) or cJSON_PrintUnformatted, with any byte that is not
 * well-formed UTF-8 repaired as `\\xNN` inside its string, so the output
 * always parses, whatever a window, a page, a shell or a client put in.
 * A new string for free() (or cJSON_free: the runtime installs no cJSON
 * hooks); NULL when cJSON fails. */
char *ksr_json_print(const cJSON *v, bool pretty);

/* Every key and string value of o, its siblings and their children repaired
 * in place with ksr_utf8_repair (ksr/utf8.h): for trees that text renderers
 * (report.md, report.html, JUnit) read as well. */
void ksr_json_repair(cJSON *o);

#endif
