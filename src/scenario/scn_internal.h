/* Private to the scenario loader: a small YAML tree with positions, and the
 * typed readers the loader files share. Not a public header: nothing outside
 * src/scenario/ includes it. */
#ifndef KSR_SCN_INTERNAL_H
#define KSR_SCN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ksr/error.h"
#include "ksr/scenario.h"

/* Caps that keep a hostile or broken file from costing much (docs/scenario.md). */
#define SCN_MAX_BYTES (1024 * 1024)
/* All the scenario's values together after ${VAR} expansion (docs/scenario.md,
 * "Limits"): a large variable used many times is refused while expanding. */
#define SCN_MAX_EXPANDED_BYTES (4 * 1024 * 1024)
#define SCN_MAX_NODES          50000
#define SCN_MAX_DEPTH          64

typedef enum sn_kind { SN_NULL, SN_SCALAR, SN_SEQ, SN_MAP } sn_kind;

typedef struct snode snode;
struct snode {
	sn_kind kind;
	int line, col;
	char *str;    /* scalar: the text after ${VAR} expansion */
	bool plain;   /* an untagged plain scalar: may be a number, a bool or null */
	bool bad;     /* an error was already reported here: readers stay quiet */
	snode **kids; /* seq: items; map: key0, value0, key1, value1, ... */
	size_t n;     /* seq: items; map: pairs */
};

static inline snode *sn_key(const snode *m, size_t i)
{
	return m->kids[2 * i];
}

static inline snode *sn_val(const snode *m, size_t i)
{
	return m->kids[2 * i + 1];
}

/* yaml_tree.c: parse text into a tree; NULL after a fatal error (syntax, caps).
 * Non-fatal errors (duplicates, aliases, unset variables) are added to errs
 * and the tree is still returned so that later checks report theirs too. */
snode *scn_parse_yaml(const char *text, size_t len, ksr_errlist *errs);
void scn_tree_free(snode *n);

/* vars.c: ${VAR} and ${VAR:-default}. Returns a new string, or NULL with err set. */
/* in with ${VAR} expanded; NULL with err set on a bad form, an unset variable
 * or (with *over set) when the result would take more than *budget bytes, which
 * is decremented by the result's length on success. */
char *scn_expand_vars(const char *in, size_t *budget, bool *over, ksr_err *err);

/* read.c: the loader's shared state and typed readers. Each reader reports
 * its own error at the node and returns false; a node already marked bad
 * fails quietly. */
typedef struct scn_ctx {
	ksr_errlist *errs;
	ksr_scenario *s;
	char **spawn_as; /* `as` names of spawn steps so far, for kill */
	int *spawn_line;
	size_t n_spawn_as;
} scn_ctx;

void scn_err(scn_ctx *c, const snode *at, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
const char *scn_kind_word(const snode *n);
bool scn_is_null(const snode *n);
bool scn_str(scn_ctx *c, const snode *n, const char *what, bool nonempty, char **out);
bool scn_num(scn_ctx *c, const snode *n, const char *what, double min, double max, double *out);
bool scn_int(scn_ctx *c, const snode *n, const char *what, int min, int max, int *out);
bool scn_bool(scn_ctx *c, const snode *n, const char *what, bool *out);
bool scn_pattern(scn_ctx *c, const snode *n, const char *what, ksr_pattern **out);
/* A page element reference (a CSS selector, text=..., a cdp_targets name):
 * non-empty, and a text= form spelled as the page's finder reads it. */
bool scn_page_ref(scn_ctx *c, const snode *n, const char *what, char **out);
bool scn_name(scn_ctx *c, const snode *n, const char *what, ksr_name_match *out);
bool scn_is_map(scn_ctx *c, const snode *n, const char *what);
bool scn_is_seq(scn_ctx *c, const snode *n, const char *what);
bool scn_fraction_pair(scn_ctx *c, const snode *n, const char *what, double *fx, double *fy);

/* role: an accessibility role name (ksr_atspi_role_known), with a suggestion. */
bool scn_role(scn_ctx *c, const snode *n, const char *what, char **out);
/* A state word (ksr_atspi_state_index), reported at `at` with a suggestion. */
bool scn_state_word(scn_ctx *c, const snode *at, const char *what, const char *word);

/* Look up key in a mapping (NULL when absent). */
const snode *scn_get(const snode *map, const char *key);
/* Report every key of map not in allowed (NULL-terminated) with a suggestion;
 * returns the number of unknown keys. what names the mapping in messages. */
size_t scn_check_keys(scn_ctx *c, const snode *map, const char *const *allowed, const char *what);
/* The closest candidate within a small edit distance, or NULL. */
const char *scn_suggest(const char *word, const char *const *cands, size_t n);
/* " (did you mean 'x'?)" or "", into buf. */
const char *scn_did_you_mean(char *buf, size_t len, const char *word, const char *const *cands,
                             size_t n);

/* loader.c: the keys of each sub-mapping, NULL-terminated (also served by
 * ksr_scenario_mapping_keys for the docs test). */
extern const char *const scn_keys_declared[]; /* targets: NAME: {at, window} */
extern const char *const scn_keys_cdp[];
extern const char *const scn_keys_goal_budget[];
extern const char *const scn_keys_spawn[];
extern const char *const scn_keys_selector_text[];
extern const char *const scn_keys_hover[];
extern const char *const scn_keys_drag[]; /* drag: {from, to} */
extern const char *const scn_keys_state[];
extern const char *const scn_keys_page[];
extern const char *const scn_keys_text[];
extern const char *const scn_keys_target[];
extern const char *const scn_keys_locator[]; /* an element: {name, role, label, in, nth} */
extern const char *const scn_keys_in[];      /* in: {name, role} */

/* loader_checks.c */
bool scn_check_parse(scn_ctx *c, const snode *n, ksr_check *out);
bool scn_check_list(scn_ctx *c, const snode *n, const char *what, ksr_check **items, size_t *len);
bool scn_state_parse(scn_ctx *c, const snode *n, const char *what, ksr_check *out);
void scn_check_init(ksr_check *ck, const ksr_check_info *info, const snode *at);
void scn_check_clear(ksr_check *ck);
/* Locators (docs/scenario.md#locators): label:, in: and nth: of the mapping n,
 * those it has; false after an error (reported at the key's value). */
bool scn_locator_keys(scn_ctx *c, const snode *n, const char *what, ksr_locator *out);
/* Whether a locator mapping says anything that finds a control. */
bool scn_locator_finds(const ksr_name_match *name, const char *role, const ksr_locator *loc);
void scn_locator_clear(ksr_locator *loc);
/* An element's value: a name (exact or /regex/), or {name?, role?, label?, in?, nth?}. */
bool scn_element_parse(scn_ctx *c, const snode *n, const char *what, ksr_name_match *name,
                       char **role, ksr_locator *loc);

/* loader_steps.c */
bool scn_step_list(scn_ctx *c, const snode *n, bool plan, ksr_step_list *out);
void scn_step_clear(ksr_step *st);
/* A target: value, shared with targets: entries. */
bool scn_target_window(scn_ctx *c, const snode *n, ksr_pattern **out);

#endif
