/* Every input under tests/data/scenarios/fuzz-regressions/ (what the fuzzer
 * found, and edge cases at the loader's limits) loads from its file and from a
 * string without crashing, leaking or tripping UBSan (the CI build has ASan and
 * UBSan), and keeps the loader's contract: a scenario xor errors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/scenario.h"
#include "tap.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static bool contract(ksr_scenario *s, const ksr_errlist *e)
{
	return (s != NULL) != (e->len != 0);
}

static void check_file(const char *path)
{
	ksr_errlist e = {0};
	ksr_scenario *s = ksr_scenario_load(path, &e);
	ok(contract(s, &e), "%s from the file: a scenario xor errors", path);
	ksr_scenario_free(s);
	ksr_errlist_free(&e);

	char *text = slurp(path);
	if (!ok(text != NULL, "%s: readable", path))
		return;
	ksr_errlist e2 = {0};
	s = ksr_scenario_load_string(text, path, &e2);
	ok(contract(s, &e2), "%s from a string: a scenario xor errors", path);
	ksr_scenario_free(s);
	ksr_errlist_free(&e2);
	free(text);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static bool is_input(const struct dirent *d)
{
	return d->d_name[0] != '.' && strcmp(d->d_name, "README.md") != 0;
}

static int keep_input(const struct dirent *d)
{
	return is_input(d);
}

int main(void)
{
	const char *src = getenv("KSR_SOURCE_DIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/data/scenarios/fuzz-regressions", src ? src : ".");
	struct dirent **names = NULL;
	int n = scandir(dir, &names, keep_input, by_name);
	ok(n > 0, "inputs found in %s", dir);
	for (int i = 0; i < n; i++) {
		char path[4400];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name);
		check_file(path);
		free(names[i]);
	}
	free(names);
	return tap_done();
}
