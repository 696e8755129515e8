/* The run's video around the backend's recorder (ksr/video.h): where it goes
 * in OUT, its chapters from the recorded events, and its video event. */
#include "run/context/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksr/json.h"
#include "ksr/video.h"

#define VIDEO_NAME "video.webm"
#define VIDEO_FPS  10
/* How long stopping may wait for the thread's last frame and the trailer. */
#define VIDEO_STOP_MS 5000

static bool wanted(const ksr_run *run)
{
	return run->opts->video || (run->sc && run->sc->video);
}

static int max_fps(const ksr_run *run)
{
	return run->opts->video_fps > 0 ? run->opts->video_fps : VIDEO_FPS;
}

static void record_video_error(ksr_run *run, const char *error)
{
	cJSON *f = cJSON_CreateObject();
	cJSON_AddNullToObject(f, "name");
	cJSON_AddNumberToObject(f, "max_fps", max_fps(run));
	cJSON_AddStringToObject(f, "error", error);
	ksr_run_emit(run, "video", f);
}

void ksr_run_video_start(ksr_run *run)
{
	if (!wanted(run) || run->video || !run->x)
		return;
	char *tmp = ksr_evidence_log_path(run->out, "." VIDEO_NAME ".tmp");
	char *path = ksr_evidence_path(run->out, VIDEO_NAME);
	ksr_video_opts o = {
	        .display = ksr_x11_display_name(run->x),
	        .tmp_path = tmp,
	        .path = path,
	        .max_fps = max_fps(run),
	        .until = run->hard,
	};
	ksr_err err = {0};
	run->video = ksr_video_start(&o, &err);
	if (run->video) {
		/* The run's clock at the video's time 0. */
		int64_t now = ksr_now_ms();
		run->video_t_ms =
		        ksr_events_elapsed_ms(run->ev) - (now - ksr_video_t0_ms(run->video));
	} else {
		record_video_error(run, err.msg);
	}
	free(tmp);
	free(path);
}

/* A chapter at each stage and step start the video covers (one that began
 * before it, at 0). */
static size_t chapters_from_events(const ksr_run *run, ksr_video_chapter **out, cJSON *rows)
{
	const cJSON *e;
	size_t n = 0, cap = 0;
	ksr_video_chapter *ch = NULL;
	cJSON_ArrayForEach(e, ksr_events_all(run->ev))
	{
		const char *kind = ksr_json_str(e, "event", "");
		bool stage = !strcmp(kind, "stage.start"), step = !strcmp(kind, "step.start");
		if (!stage && !step)
			continue;
		char title[200];
		if (stage)
			snprintf(title, sizeof title, "stage %s", ksr_json_str(e, "name", "?"));
		else
			snprintf(title, sizeof title, "step %.0f (line %.0f): %s",
			         ksr_json_num(e, "index", 0), ksr_json_num(e, "line", 0),
			         ksr_json_str(e, "kind", "?"));
		int64_t at = (int64_t)ksr_json_num(e, "t_ms", 0) - run->video_t_ms;
		at = at < 0 ? 0 : at;
		/* Strictly increasing: a player (FFmpeg's Matroska reader too) drops
		 * a chapter that starts where the one before it does. */
		if (n > 0 && at <= ch[n - 1].at_ms)
			at = ch[n - 1].at_ms + 1;
		cJSON *row = cJSON_CreateObject();
		cJSON_AddNumberToObject(row, "at_ms", (double)at);
		cJSON_AddStringToObject(row, "title", title);
		cJSON_AddNumberToObject(row, "step", step ? ksr_json_num(e, "index", 0) : 0);
		cJSON_AddItemToArray(rows, row);
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			ch = ksr_xrealloc(ch, cap * sizeof *ch);
		}
		ch[n++] = (ksr_video_chapter){.at_ms = at, .title = NULL};
	}
	/* Titles point into rows, which outlive the call. */
	size_t i = 0;
	const cJSON *row;
	cJSON_ArrayForEach(row, rows) ch[i++].title = ksr_json_str(row, "title", "");
	*out = ch;
	return n;
}

static void record_artifact(ksr_run *run)
{
	cJSON *a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "name", VIDEO_NAME);
	cJSON_AddStringToObject(a, "kind", "video");
	cJSON_AddStringToObject(a, "description", "the run's screen, recorded when it changed");
	ksr_run_emit(run, "artifact", a);
}

void ksr_run_video_stop(ksr_run *run)
{
	struct ksr_video *v = __atomic_exchange_n(&run->video, NULL, __ATOMIC_ACQ_REL);
	if (!v)
		return;
	cJSON *rows = cJSON_CreateArray();
	ksr_video_chapter *ch = NULL;
	size_t n = chapters_from_events(run, &ch, rows);
	ksr_video_result res;
	/* A second before the run deadline at the latest: the report and DONE
	 * still have to come after it (the watchdog's path comes here too). */
	ksr_deadline d = ksr_deadline_min(ksr_deadline_in_ms(VIDEO_STOP_MS),
	                                  (ksr_deadline){run->hard.at_ms - 1000});
	int rc = ksr_video_finish(v, ch, n, d, &res);
	free(ch);
	cJSON *f = cJSON_CreateObject();
	if (rc == 0)
		cJSON_AddStringToObject(f, "name", VIDEO_NAME);
	else
		cJSON_AddNullToObject(f, "name");
	cJSON_AddNumberToObject(f, "start_ms", (double)run->video_t_ms);
	cJSON_AddNumberToObject(f, "duration_ms", (double)res.duration_ms);
	cJSON_AddNumberToObject(f, "frames", (double)res.frames);
	cJSON_AddNumberToObject(f, "max_fps", max_fps(run));
	cJSON_AddNumberToObject(f, "width", res.width);
	cJSON_AddNumberToObject(f, "height", res.height);
	cJSON_AddNumberToObject(f, "bytes", (double)res.bytes);
	cJSON_AddStringToObject(f, "codec", res.codec ? res.codec : "");
	if (res.error[0])
		cJSON_AddStringToObject(f, "error", res.error);
	else
		cJSON_AddNullToObject(f, "error");
	cJSON_AddItemToObject(f, "chapters", rows);
	if (rc == 0)
		record_artifact(run);
	ksr_run_emit(run, "video", f);
	if (rc != 0 && res.frames > 0) {
		/* Frames were recorded and the file could not be finished: evidence
		 * lost, as any file that cannot be written (docs/report.md). */
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "what", "video.webm");
		cJSON_AddStringToObject(o, "error", res.error);
		ksr_run_emit(run, "output_error", o);
	}
}
