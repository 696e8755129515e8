/* PCRE2 patterns and accessibility-name matches. */
#include <string.h>

#include "ksr/pattern.h"
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
	ok(!matches("x", "Caf\xe9"), "and still fails to match when it should");
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

int main(void)
{
	search();
	errors();
	names();
	return tap_done();
}
