/* PCRE2 patterns and accessibility-name matches. */
#include <stdlib.h>
#include <string.h>

#include "ksr/pattern.h"
#include "ksr/utf8.h"
#include "tap.h"

static bool matches(const char *re, const char *subject)
{
	ksr_pattern *p = ksr_pattern_compile(re, NULL);
	bool m = p && ksr_pattern_match(p, subject);
	ksr_pattern_free(p);
	return m;
}

static void search(void)
{
	ok(matches("Mousepad", "Untitled 1 - Mousepad"), "searched anywhere");
	ok(!matches("^Mousepad", "Untitled 1 - Mousepad"), "anchored at the start");
	ok(matches("Mousepad$", "Untitled 1 - Mousepad"), "anchored at the end");
	ok(!matches("Mousepad$", "Mousepad Preferences"), "end anchor refuses");
	ok(matches("(?i)error|crash", "Application CRASHED"), "(?i) and alternation");
	ok(!matches("error", "ERROR"), "case-sensitive by default");
	ok(matches("(?i)ÉDITEUR", "éditeur de texte"), "(?i) folds non-ASCII letters");
	ok(matches("^\\w+$", "Rechner"), "\\w on ASCII");
	ok(matches("^\\w+$", "Блокнот"), "\\w follows Unicode (UCP)");
	ok(matches("^.{3}$", "日本語"), ". is a character, not a byte (UTF)");
	ok(matches("Caf", "Caf\xe9 - Latin-1 title"), "an invalid UTF-8 subject still matches");
	ok(!matches("z", "Caf\xe9"), "and still fails to match when it should");
	ok(matches("\\\\xe9", "Caf\xe9"), "the bad byte is matched as its repair, the text \\xe9");
	ksr_pattern *p = ksr_pattern_compile("^a$", NULL);
	ok(!ksr_pattern_match(p, NULL), "NULL subject does not match");
	ok(!ksr_pattern_match(NULL, "a"), "NULL pattern does not match");
	is_str(ksr_pattern_source(p), "^a$", "source kept");
	ksr_pattern_free(p);
	ksr_pattern_free(NULL);
}

static void errors(void)
{
	ksr_err err = {0};
	ok(ksr_pattern_compile("(abc", &err) == NULL, "unclosed group refused");
	is_str(err.msg, "missing closing parenthesis at offset 4", "PCRE2's message and offset");
	ok(ksr_pattern_compile("a{2,1}", &err) == NULL, "bad quantifier refused");
	ok(strstr(err.msg, "at offset 5") != NULL, "offset of the bad quantifier (%s)", err.msg);
	ok(ksr_pattern_compile("\xff", &err) == NULL, "invalid UTF-8 pattern refused");
}

static void names(void)
{
	ksr_name_match m;
	ksr_err err = {0};
	is_int(ksr_name_match_parse(&m, "Save As", &err), 0, "exact name parses");
	ok(!m.re && ksr_name_match_test(&m, "Save As"), "exact match");
	ok(!ksr_name_match_test(&m, "Save As..."), "exact means whole");
	ok(!ksr_name_match_test(&m, "save as"), "exact means case too");
	ksr_name_match_clear(&m);
	is_int(ksr_name_match_parse(&m, "/^Save( As)?/", &err), 0, "/regex/ parses");
	ok(m.re && !strcmp(m.text, "^Save( As)?"), "the pattern's source without slashes");
	ok(ksr_name_match_test(&m, "Save As...") && !ksr_name_match_test(&m, "Autosave"),
	   "regex match");
	ksr_name_match_clear(&m);
	is_int(ksr_name_match_parse(&m, "/", &err), 0, "a lone slash is an exact name");
	ok(!m.re && ksr_name_match_test(&m, "/"), "lone slash matches itself");
	ksr_name_match_clear(&m);
	is_int(ksr_name_match_parse(&m, "/(/", &err), -1, "bad /regex/ refused");
	ok(strstr(err.msg, "missing closing parenthesis") != NULL, "with PCRE2's reason");
	is_int(ksr_name_match_parse(&m, "", &err), -1, "empty name refused");
	ok(!ksr_name_match_test(NULL, "a"), "NULL match is false");
	ksr_name_match_clear(&m);
}

static void repaired_is(const char *in, const char *want, const char *what)
{
	char *got = ksr_utf8_repair(in);
	is_str(got, want, what);
	ok(ksr_utf8_valid(got), "%s: the repair is valid UTF-8", what);
	free(got);
}

/* Lossless repair of invalid UTF-8 (titles from hostile clients). */
static void utf8(void)
{
	ok(ksr_utf8_valid("plain ASCII") && ksr_utf8_valid("日本語 — Блокнот 😀"), "valid text");
	ok(ksr_utf8_valid(NULL) && ksr_utf8_valid(""), "NULL and empty are valid");
	ok(!ksr_utf8_valid("Error \xff\xfe"), "0xff, 0xfe are never UTF-8");
	ok(!ksr_utf8_valid("\xc0\xaf"), "an overlong form is refused");
	ok(!ksr_utf8_valid("\xed\xa0\x80"), "a surrogate is refused");
	ok(!ksr_utf8_valid("\xf4\x90\x80\x80"), "past U+10FFFF is refused");
	ok(!ksr_utf8_valid("\xe6\x97"), "a cut sequence is refused");
	repaired_is("Error \xff\xfe", "Error \\xff\\xfe", "stray bytes become \\xNN");
	repaired_is("Caf\xe9", "Caf\\xe9", "a Latin-1 byte");
	repaired_is("\xe6\x97 x", "\\xe6\\x97 x", "a cut sequence, byte by byte");
	repaired_is("日本\x80語", "日本\\x80語", "valid neighbours kept");
	repaired_is("ok — fine", "ok — fine", "valid text copied unchanged");
	ok(ksr_utf8_repair(NULL) == NULL, "NULL stays NULL");
	/* The error pattern's word survives the repair ("Error\xff" still says Error). */
	ok(matches("(?i)\\berrors?\\b", "Error\xff"), "\\b after a word before a bad byte");
	ok(matches("^Error \\\\xff\\\\xfe$", "Error \xff\xfe"), "matched as repaired, losslessly");
}

int main(void)
{
	utf8();
	search();
	errors();
	names();
	return tap_done();
}
