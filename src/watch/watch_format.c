/* A watch line as text (TYPE [event] key=value...) or as one JSON object. */
#include "ksr/strbuf.h"
#include "ksr/json.h"
#include "watch/watch_priv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool bare(const char *v)
{
	if (!*v)
		return false;
	for (const char *p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("._:/@+,-", *p)))
			return false;
	return true;
}

/* Quoted so that spaces, '=' and quotes inside a reason cannot split a line
 * or fake a key: the only bytes left raw are printable ASCII and UTF-8. */
static void put_quoted(ksr_strbuf *b, const char *v)
{
	ksr_strbuf_addn(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		char esc[8];
		if (*p == '"' || *p == '\\')
			snprintf(esc, sizeof esc, "\\%c", *p);
		else if (*p == '\n')
			snprintf(esc, sizeof esc, "\\n");
		else if (*p == '\t')
			snprintf(esc, sizeof esc, "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(esc, sizeof esc, "\\x%02x", *p);
		else
			snprintf(esc, sizeof esc, "%c", *p);
		ksr_strbuf_add(b, esc);
	}
	ksr_strbuf_addn(b, "\"", 1);
}

static void put_value(ksr_strbuf *b, const cJSON *v)
{
	char num[64];
	if (cJSON_IsString(v)) {
		if (bare(v->valuestring))
			ksr_strbuf_add(b, v->valuestring);
		else
			put_quoted(b, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;
		if (d == floor(d) && fabs(d) < 1e15)
			snprintf(num, sizeof num, "%lld", (long long)d);
		else
			snprintf(num, sizeof num, "%g", d);
		ksr_strbuf_add(b, num);
	} else if (cJSON_IsBool(v)) {
		ksr_strbuf_add(b, cJSON_IsTrue(v) ? "true" : "false");
	} else {
		char *text = ksr_json_print(v, false);
		put_quoted(b, text ? text : "");
		cJSON_free(text);
	}
}

static char *format_text(const cJSON *line)
{
	ksr_strbuf b = {0};
	const cJSON *type = cJSON_GetObjectItemCaseSensitive(line, "type");
	/* The second word: EVENT's event, ERROR's code ("ERROR code message"). */
	const cJSON *event = cJSON_GetObjectItemCaseSensitive(line, "event");
	if (!event)
		event = cJSON_GetObjectItemCaseSensitive(line, "code");
	ksr_strbuf_add(&b, cJSON_IsString(type) ? type->valuestring : "?");
	if (cJSON_IsString(event)) {
		ksr_strbuf_addn(&b, " ", 1);
		ksr_strbuf_add(&b, event->valuestring);
	}
	for (const cJSON *f = line ? line->child : NULL; f; f = f->next) {
		if (f == type || f == event || cJSON_IsNull(f))
			continue;
		ksr_strbuf_addn(&b, " ", 1);
		ksr_strbuf_add(&b, f->string);
		ksr_strbuf_addn(&b, "=", 1);
		put_value(&b, f);
	}
	if (!b.p)
		ksr_strbuf_add(&b, "");
	return b.p;
}

char *ksr_watch_format(const cJSON *line, bool json)
{
	if (!json)
		return format_text(line);
	char *text = ksr_json_print(line, false);
	char *out = ksr_xstrdup(text ? text : "{}");
	cJSON_free(text);
	return out;
}
