/* The JSON field accessors: present values, the caller's default for a
 * missing key, a value of another type, a NULL object or key, and a
 * case-sensitive lookup. */
#include <math.h>
#include <stddef.h>

#include "ksr/json.h"
#include "tap.h"

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
	return tap_done();
}
