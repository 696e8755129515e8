/* What the stages and executors ask of the screen: screenshots into the
 * evidence folder and window look-ups. */
#include "run/run.h"

#include <stdlib.h>
#include <string.h>

int ksr_run_screenshot(ksr_run *run, const char *name, const char *description)
{
	ksr_err err = {0};
	if (!run->x)
		return -1;
	ksr_image *img = ksr_x11_capture(run->x, 0, &err);
	if (!img)
		return -1;
	unsigned char *png = NULL;
	size_t len = 0;
	int rc = ksr_image_encode_png(img, &png, &len, &err);
	ksr_image_free(img);
	if (rc == 0)
		rc = ksr_evidence_write(run->out, name, png, len, &err);
	free(png);
	if (rc < 0)
		return -1;
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", name);
	cJSON_AddStringToObject(a, "kind", "screenshot");
	cJSON_AddStringToObject(a, "description", description);
	ksr_run_emit(run, "artifact", a);
	return 0;
}

bool ksr_run_find_window(ksr_run *run, const ksr_pattern *title, const ksr_pattern *klass,
			 ksr_window *found)
{
	ksr_window_list wins = {0};
	ksr_err err = {0};
	bool hit = false;
	if (!run->x || ksr_x11_list_windows(run->x, &wins, &err) < 0)
		return false;
	for (size_t i = 0; i < wins.len && !hit; i++) {
		const ksr_window *w = &wins.items[i];
		if (title && !ksr_pattern_match(title, w->title))
			continue;
		if (klass && !ksr_pattern_match(klass, w->res_name) &&
		    !ksr_pattern_match(klass, w->res_class))
			continue;
		hit = true;
		if (found) {
			*found = *w;
			found->title = ksr_xstrdup(w->title);
			found->res_name = ksr_xstrdup(w->res_name);
			found->res_class = ksr_xstrdup(w->res_class);
		}
	}
	ksr_window_list_clear(&wins);
	return hit;
}
