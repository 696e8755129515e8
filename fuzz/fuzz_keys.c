/* libFuzzer target for key-chord strings (ksr_keys_parse, the parser behind
 * `key:` steps and the loader's check of them) and the UTF-8 decoder that
 * `type:` text goes through. Any bytes: chords or an error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/keys.h"

static void parse_chords(const char *text)
{
	ksr_chord *chords = NULL;
	size_t n = 0;
	ksr_err err = {0};
	int rc = ksr_keys_parse(text, &chords, &n, &err);
	/* The contract: on error no chords and a message naming the bad key. */
	if (rc != 0 && (chords != NULL || !err.msg[0]))
		abort();
	if (rc == 0 && n > 0 && !chords)
		abort();
	for (size_t i = 0; i < n && chords; i++)
		if (chords[i].n < 1 || chords[i].n > KSR_CHORD_MAX)
			abort();
	ksr_keys_free(chords);
}

static void decode_text(const char *text)
{
	const char *s = text;
	uint32_t cp;
	int r;
	while ((r = ksr_keys_utf8_next(&s, &cp)) != 0) {
		if (r < 0) {
			s++; /* the caller skips a malformed byte; so does this loop */
			continue;
		}
		(void)ksr_keys_from_codepoint(cp);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	parse_chords(text);
	(void)ksr_keys_lookup(text);
	decode_text(text);
	free(text);
	return 0;
}
