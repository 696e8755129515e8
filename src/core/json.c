/* The one set of cJSON field accessors (ksr/json.h). */
#include "ksr/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/error.h"
#include "ksr/utf8.h"

const char *ksr_json_str(const cJSON *o, const char *key, const char *dflt)
{
	const cJSON *v = o && key ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

double ksr_json_num(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = o && key ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* The printed text with every byte that is not part of well-formed UTF-8
 * written as the JSON text `\\xNN` (the string then holds `\xNN`, as
 * ksr_utf8_repair would). cJSON prints non-ASCII bytes as they are, and such
 * a byte can only be inside a string (a key or a value), where a backslash
 * escape is what JSON allows. */
static char *repair_text(char *text)
{
	if (ksr_utf8_valid(text))
		return text;
	size_t n = strlen(text);
	char *out = ksr_xmalloc(5 * n + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		size_t len = ksr_utf8_seq_len(p);
		if (len) {
			memcpy(o, p, len);
			o += len, p += len;
		} else {
			o += snprintf(o, 6, "\\\\x%02x", *p);
			p++;
		}
	}
	*o = '\0';
	cJSON_free(text);
	return out;
}

char *ksr_json_print(const cJSON *v, bool pretty)
{
	char *text = pretty ? cJSON_Print(v) : cJSON_PrintUnformatted(v);
	if (!text)
		return NULL;
	return repair_text(text);
}

static void repair_string(char **s, bool is_const_key, cJSON *o)
{
	if (!*s || ksr_utf8_valid(*s))
		return;
	char *fixed = ksr_utf8_repair(*s);
	char *mine = cJSON_malloc(strlen(fixed) + 1);
	strcpy(mine, fixed);
	free(fixed);
	if (is_const_key)
		o->type &= ~cJSON_StringIsConst; /* now ours to free */
	else
		cJSON_free(*s);
	*s = mine;
}

void ksr_json_repair(cJSON *o)
{
	for (; o; o = o->next) {
		repair_string(&o->string, (o->type & cJSON_StringIsConst) != 0, o);
		if (cJSON_IsString(o) || cJSON_IsRaw(o))
			repair_string(&o->valuestring, false, o);
		ksr_json_repair(o->child);
	}
}
