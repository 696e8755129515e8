/* The JSON field accessors: present values, the caller's default for a
 * missing key, a value of another type, a NULL object or key, and a
 * case-sensitive lookup. */
#include <math.h>
#include <stddef.h>

#include <stdlib.h>
#include <string.h>

#include "ksr/json.h"
#include "ksr/utf8.h"
#include "tap.h"

/* Printing repairs what is not UTF-8 (in keys too), so the text parses in any
 * strict reader; valid text, C1 controls and escapes are untouched. */
static void test_print_repairs(void)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "title", "Error \xff\xfe \xc3 caf\xc3\xa9 \x1b[2J");
	cJSON_AddStringToObject(o, "k\xfe", "v");
	for (int pretty = 0; pretty < 2; pretty++) {
		char *text = ksr_json_print(o, pretty);
		ok(text && ksr_utf8_valid(text), "the printed text is valid UTF-8 (pretty %d)",
		   pretty);
		cJSON *back = cJSON_Parse(text);
		is_str(ksr_json_str(back, "title", NULL),
		       "Error \\xff\\xfe \\xc3 caf\xc3\xa9 \x1b[2J",
		       "the bad bytes read back as \\xNN, the rest as it was");
		is_str(ksr_json_str(back, "k\\xfe", NULL), "v", "a key is repaired too");
		cJSON_Delete(back);
		free(text);
	}
	ksr_json_repair(o);
	is_str(ksr_json_str(o, "title", NULL), "Error \\xff\\xfe \\xc3 caf\xc3\xa9 \x1b[2J",
	       "the tree repaired in place");
	is_str(ksr_json_str(o, "k\\xfe", NULL), "v", "its key too");
	cJSON_Delete(o);
}

/* Text for a terminal: one line, no control acts. */
static void test_escape_controls(void)
{
	char *e = ksr_utf8_escape_controls(
	        "a\x1b]0;t\x07\nksr [ 1s] x\r\t\x7f\xc2\x9b \xff caf\xc3\xa9 \\n");
	is_str(e, "a\\x1b]0;t\\x07\\nksr [ 1s] x\\r\\t\\x7f\\u009b \\xff caf\xc3\xa9 \\n",
	       "C0, DEL, C1 and bad bytes written out; the rest as it was");
	free(e);
	ok(ksr_utf8_has_controls("x\x1b"), "ESC is a control");
	ok(ksr_utf8_has_controls("x\xc2\x85"), "NEL (C1) is a control");
	ok(ksr_utf8_has_controls("x\xff"), "a bad byte counts");
	ok(!ksr_utf8_has_controls("caf\xc3\xa9 \xc2\xa0"), "U+00A0 is not a control");
	ok(ksr_utf8_escape_controls(NULL) == NULL, "NULL: NULL");
}

int main(void)
{
	cJSON *o = cJSON_Parse("{\"s\":\"text\",\"e\":\"\",\"n\":2.5,\"z\":0,\"b\":true,"
	                       "\"nul\":null,\"arr\":[1]}");
	ok(o != NULL, "the fixture parses");

	is_str(ksr_json_str(o, "s", NULL), "text", "a string");
	is_str(ksr_json_str(o, "e", "dflt"), "", "an empty string is not the default");
	ok(ksr_json_str(o, "missing", NULL) == NULL, "missing with a NULL default is NULL");
	is_str(ksr_json_str(o, "missing", ""), "", "missing with \"\" is \"\"");
	is_str(ksr_json_str(o, "n", "dflt"), "dflt", "a number is not a string");
	is_str(ksr_json_str(o, "nul", "dflt"), "dflt", "null is not a string");
	is_str(ksr_json_str(o, "S", "dflt"), "dflt", "keys are case-sensitive");
	is_str(ksr_json_str(NULL, "s", "dflt"), "dflt", "a NULL object gives the default");
	is_str(ksr_json_str(o, NULL, "dflt"), "dflt", "a NULL key gives the default");
	is_str(ksr_json_str(cJSON_GetObjectItem(o, "arr"), "s", "dflt"), "dflt",
	       "an array has no fields");

	ok(ksr_json_num(o, "n", -1) == 2.5, "a number");
	ok(ksr_json_num(o, "z", -1) == 0, "zero is not the default");
	ok(ksr_json_num(o, "missing", 7) == 7, "missing gives the default");
	ok(ksr_json_num(o, "s", 7) == 7, "a string is not a number");
	ok(ksr_json_num(o, "b", 7) == 7, "true is not a number");
	ok(isnan(ksr_json_num(o, "missing", NAN)), "a NaN default comes back");
	ok(ksr_json_num(NULL, "n", 7) == 7, "a NULL object gives the default");
	ok(ksr_json_num(o, NULL, 7) == 7, "a NULL key gives the default");
	ok(ksr_json_num(o, "N", 7) == 7, "keys are case-sensitive");

	cJSON_Delete(o);
	test_print_repairs();
	test_escape_controls();
	return tap_done();
}
