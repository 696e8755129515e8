/* A parsed step or check written back as YAML: the loader's inverse. The
 * value is written by the row's shape (ksr/vocabulary.def), one writer per
 * shape, never by the kind's name, so a new row of an existing shape is
 * written without a line here. Loading what these write gives back a step or
 * check equal to the one written (tests/unit/test_vocabulary_roundtrip.c),
 * with one exception: an exact accessibility name that looks like /a
 * pattern/ has no exact form in the language and is written as the pattern
 * that matches exactly it. Every string is a double-quoted scalar the loader
 * reads back as it was, `${` included (docs/scenario.md). */
#ifndef KSR_SCENARIO_YAML_H
#define KSR_SCENARIO_YAML_H

#include <stddef.h>

#include "ksr/scenario.h"
#include "ksr/strbuf.h"

/* s as a YAML double-quoted scalar: YAML's escapes (line breaks, controls,
 * NEL/LS/PS, a byte that is not UTF-8 as U+FFFD), and each `${` that the
 * loader's ${VAR} expansion would take written ${KSR_RECORD_DOLLAR:-$}{. */
void ksr_yaml_quote(ksr_strbuf *b, const char *s);
char *ksr_yaml_scalar(const char *s); /* the same, as a string to free */

/* A PCRE2 pattern that matches exactly text (anchored, metacharacters escaped). */
char *ksr_yaml_exact_pattern(const char *text);

/* A step's action value in flow style ("ctrl+s" quoted, [0.25, 0.5],
 * {from: ..., to: ...}); NULL when the row's shape is not a step's. */
char *ksr_step_value_yaml(const ksr_step *st);
/* A check's value in flow style ("NAME STATE" or {name, role, state}, ...);
 * NULL when the row's shape is not a check's. */
char *ksr_check_value_yaml(const ksr_check *c);

/* A check as one item of a block list: `kind: VALUE`, or a flow mapping
 * {kind: VALUE, timeout_s: N} when its timeout is not the default. */
char *ksr_check_yaml(const ksr_check *c);

/* A step as the entries of its mapping, `key: VALUE` each (flow style, one
 * line each): the action first, then its modifiers (target:, role:, expect:,
 * checks:, timeout_s:, state:, hidden_ok:, ready_quiet_ms:, post:). expect:'s
 * own screen check is written as expect: alone; expect_state: is written as
 * the state check it became (in checks:, where the loader puts it).
 * Returns the array (free with ksr_yaml_lines_free) and its length in *n. */
char **ksr_step_yaml(const ksr_step *st, size_t *n);
void ksr_yaml_lines_free(char **lines, size_t n);

#endif
