/* The window manager's death mid-run is recorded (context.h): a session
 * whose window manager went away (killed, crashed, replaced) no longer
 * focuses, stacks or decorates windows as the image does, so what the run
 * saw after it is not what a person in that session sees. It is a concern,
 * not a failure: the app did nothing wrong. Seen through the check window's
 * DestroyNotify on a connection of its own (ksr_x11_watch), read at every
 * step's and stage's end. */
#include "run/context/context.h"

#include <stdio.h>
#include <string.h>

static void add_wm_fields(cJSON *f, const char *key, const ksr_x11_wm *wm)
{
	char id[32];
	cJSON *o = cJSON_AddObjectToObject(f, key);
	cJSON_AddStringToObject(o, "name", wm->name);
	snprintf(id, sizeof id, "0x%lx", wm->check);
	cJSON_AddStringToObject(o, "check_window", id);
	snprintf(id, sizeof id, "0x%lx", wm->owner);
	cJSON_AddStringToObject(o, "selection_owner", wm->owner ? id : "");
}

void ksr_run_wm_watch_start(ksr_run *run)
{
	ksr_err err = {0};
	if (!run->x || ksr_x11_wm_read(run->x, &run->wm, &err) < 0)
		return;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "what", "wm");
	if (run->wm.check)
		add_wm_fields(f, "wm", &run->wm);
	else
		cJSON_AddNullToObject(f, "wm");
	ksr_run_emit(run, "session", f);
	if (!run->wm.check)
		return; /* a bare display: nothing to lose */
	run->wm_watch = ksr_x11_watch_open(run->x, run->wm.check, &err);
	snprintf(run->wm_seen_at, sizeof run->wm_seen_at, "the start of the run");
}

static const char *wm_name(const ksr_x11_wm *wm)
{
	return *wm->name ? wm->name : "(unnamed)";
}

static void record_lost(ksr_run *run, const char *where, int line)
{
	ksr_x11_wm now = {0};
	ksr_err err = {0};
	bool read = ksr_x11_wm_read(run->x, &now, &err) == 0;
	cJSON *f = cJSON_CreateObject();
	cJSON_AddStringToObject(f, "what", "wm-lost");
	add_wm_fields(f, "wm", &run->wm);
	cJSON_AddStringToObject(f, "last_seen", run->wm_seen_at);
	cJSON_AddStringToObject(f, "seen_gone", where);
	if (read && now.check)
		add_wm_fields(f, "replaced_by", &now);
	else
		cJSON_AddNullToObject(f, "replaced_by");
	ksr_run_emit(run, "session", f);
	char then[160];
	if (read && now.check)
		snprintf(then, sizeof then, "%s manages it now", wm_name(&now));
	else
		snprintf(then, sizeof then, "no window manager manages the display now");
	ksr_run_concern(run, KSR_CONCERN_WM_LOST, line,
	                "the window manager %.60s went away during the run: its "
	                "_NET_SUPPORTING_WM_CHECK window 0x%lx was destroyed (there at %s, gone at "
	                "%s); %s, so windows may not be focused, stacked or decorated as in the "
	                "session after that",
	                wm_name(&run->wm), run->wm.check, run->wm_seen_at, where, then);
}

void ksr_run_wm_check(ksr_run *run, const char *where, int line)
{
	if (!run->wm_watch || run->wm_lost || !run->x)
		return;
	int gone = ksr_x11_watch_gone(run->wm_watch);
	if (gone < 0)
		return; /* the X server went: the display's loss, told elsewhere */
	if (!gone) {
		snprintf(run->wm_seen_at, sizeof run->wm_seen_at, "%s", where);
		return;
	}
	run->wm_lost = true;
	record_lost(run, where, line);
}

void ksr_run_wm_watch_stop(ksr_run *run)
{
	ksr_x11_watch_close(run->wm_watch);
	run->wm_watch = NULL;
}
