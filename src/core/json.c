/* The one set of cJSON field accessors (ksr/json.h). */
#include "ksr/json.h"

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
