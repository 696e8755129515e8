/* libFuzzer target for the scenario loader: any bytes must load or be rejected
 * with errors, never crash, leak or trip UBSan. Built only with -DKSR_FUZZ=ON
 * (clang); see fuzz/CMakeLists.txt and `scripts/setup.sh fuzz`. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario.h"

/* ${VAR} expansion reads the environment: give the fuzzer a set variable, an
 * empty one and a long one so that every expansion branch is reachable. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	static char big[4096];
	memset(big, 'x', sizeof big - 1);
	setenv("KSR_FUZZ_SET", "value", 1);
	setenv("KSR_FUZZ_EMPTY", "", 1);
	setenv("KSR_FUZZ_BIG", big, 1);
	unsetenv("KSR_FUZZ_UNSET");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The public entry point takes a C string: the input up to its first NUL. */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	ksr_errlist errs = {0};
	ksr_scenario *s = ksr_scenario_load_string(text, "fuzz.yaml", &errs);
	/* The loader's contract: a scenario and no errors, or no scenario and errors. */
	if ((s != NULL) == (errs.len != 0))
		abort();
	ksr_scenario_free(s);
	ksr_errlist_free(&errs);
	free(text);
	return 0;
}
