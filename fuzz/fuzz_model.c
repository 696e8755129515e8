/* libFuzzer target for model answers: a response body of each protocol
 * (OpenAI, Anthropic, Ollama) through ksr_model_parse_response, the tolerant
 * JSON extraction from free text, and reading yes/no and a location in every
 * coordinate convention out of whatever object came back. The first byte
 * picks the protocol, the convention and the image size; the rest is the body. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/model.h"

static void read_answer(const cJSON *answer, uint8_t sel)
{
	static const int sizes[][2] = {{1280, 720}, {1, 1}, {3, 5000}, {28, 28}};
	const int *wh = sizes[(sel >> 5) & 3];
	int px = -1, py = -1;
	(void)ksr_model_parse_yes_no(cJSON_GetObjectItem(answer, "answer"));
	int r = ksr_model_parse_location(answer, (ksr_model_coords)((sel >> 2) % 5), wh[0], wh[1],
	                                 &px, &py);
	/* A location found is inside the image sent (overshoot is clamped). */
	if (r == 1 && (px < 0 || py < 0 || px >= wh[0] || py >= wh[1]))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	char *body = malloc(size);
	if (!body)
		return 0;
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	ksr_err err = {0};
	cJSON *answer = ksr_model_parse_response((ksr_model_api)(sel % 3), body, &err);
	if (answer)
		read_answer(answer, sel);
	cJSON_Delete(answer);
	cJSON *free_text = ksr_model_extract_json(body);
	if (free_text)
		read_answer(free_text, sel);
	cJSON_Delete(free_text);
	free(body);
	return 0;
}
