/* Secrets: values that never appear in any output, replaced by "[secret NAME]".
 * The process keeps one table: the scenario's `secrets: [VAR, ...]`, the names
 * in KASM_RUNTIME_SECRETS=VAR,... and, always, the runtime's own credentials
 * (every KASM_RUNTIME_*_API_KEY, KASM_RUNTIME_MCP_TOKEN: from 8 characters on).
 * The event recorder
 * (ksr_events_emit) redacts every string of every event, so the trace, the
 * reports built from it, JUnit, --json, the progress lines and MCP results
 * carry the replacement; messages printed outside the events go through
 * ksr_redact too (docs/scenario.md, "Secrets"). Thread-safe. */
#ifndef KSR_REDACT_H
#define KSR_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* A value shorter than this is refused: it would redact ordinary text. */
#define KSR_SECRET_MIN_LEN 4

/* Add NAME's value (a copy). false when it is too short (nothing added); an
 * empty or NULL value, or one already known, is a no-op (true). */
bool ksr_redact_add(const char *name, const char *value);

/* Add the runtime's credentials and KASM_RUNTIME_SECRETS's names from the
 * environment (once per process; a short value there is skipped). */
void ksr_redact_from_env(void);

/* entry ("NAME=value" or NAME, n its name's length) names one of the runtime's
 * own credentials: KASM_RUNTIME_*_API_KEY or KASM_RUNTIME_MCP_TOKEN. */
bool ksr_redact_is_credential(const char *entry, size_t n);

/* s with every secret replaced (a new string), or NULL when s has none. */
char *ksr_redact(const char *s);

/* Every string value in the tree, in place (keys are the runtime's own). */
void ksr_redact_json(cJSON *o);

/* For the tests: forget every secret. */
void ksr_redact_clear(void);

#endif
