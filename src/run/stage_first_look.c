/* First look: the screenshot after settle (baseline and dialogs: issue #3). */
#include "run/stage.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ksr/proc.h"

/* --update-baseline: the first-look screenshot becomes the scenario's baseline. */
static void update_baseline(ksr_run *run, const unsigned char *png, size_t len, char *note,
                            size_t note_len)
{
	const char *path = run->sc->baseline;
	if (!path) {
		snprintf(note, note_len,
		         "--update-baseline given but the scenario has no baseline:");
		return;
	}
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(png, 1, len, f) == len;
	if (f && fclose(f) != 0)
		ok = false;
	snprintf(note, note_len, ok ? "baseline %s updated" : "baseline %s could not be written",
	         path);
	cJSON *b = cJSON_CreateObject();
	cJSON_AddStringToObject(b, "path", path);
	cJSON_AddBoolToObject(b, "written", ok);
	ksr_run_emit(run, "baseline.update", b);
}

static ksr_stage_status stage_first_look(ksr_run *run, char *note, size_t len)
{
	unsigned char *png = NULL;
	size_t png_len = 0;
	if (ksr_run_screenshot_keep(run, "00-first-look.png", "the screen after settle", &png,
	                            &png_len) < 0 &&
	    !ksr_x11_alive(run->x)) {
		ksr_run_fail(run, KSR_OUTCOME_NO_DISPLAY, 0,
		             "the X display connection was lost before the first look");
		return KSR_STAGE_FAILED;
	}
	char extra[256] = "";
	if (png && run->opts->update_baseline)
		update_baseline(run, png, png_len, extra, sizeof extra);
	free(png);
	snprintf(note, len,
	         "screenshot 00-first-look.png%s%s; baseline comparison and dialog detection are "
	         "not built yet (issue #3)",
	         extra[0] ? "; " : "", extra);
	return KSR_STAGE_OK;
}

const ksr_stage_def ksr_stage_first_look = {.name = "first-look", .run = stage_first_look};
