/* The run's video (docs/report.md#the-runs-video): the screen recorded when it
 * changes, encoded as it goes. A thread of its own on an X connection of its
 * own waits on DAMAGE events for the root window (no polling), captures the
 * screen with XShm at most max_fps times a second, and encodes each frame at
 * once with FFmpeg's libavcodec (VP9) into a WebM file (libavformat): memory
 * stays one screen image and one converted frame whatever the run's length.
 * Its waits end at the stop request or at opts.until, whichever comes first. */
#ifndef KSR_VIDEO_H
#define KSR_VIDEO_H

#include <stddef.h>
#include <stdint.h>

#include "ksr/deadline.h"
#include "ksr/error.h"

typedef struct ksr_video ksr_video;

typedef struct ksr_video_opts {
	const char *display;  /* the X display to record */
	const char *tmp_path; /* written while recording (a .NAME.tmp in OUT) */
	const char *path;     /* renamed to when finished and synced */
	int max_fps;          /* at most this many frames a second (1..60) */
	ksr_deadline until;   /* the recording ends here at the latest */
} ksr_video_opts;

/* A chapter mark: ms from the video's start, and its title. */
typedef struct ksr_video_chapter {
	int64_t at_ms;
	const char *title;
} ksr_video_chapter;

typedef struct ksr_video_result {
	int64_t duration_ms; /* the last frame's time (the stop time) */
	long frames;         /* frames encoded */
	int width, height;
	long long bytes; /* the finished file's size */
	const char *codec;
	char error[KSR_ERR_MSG_MAX]; /* why recording stopped early or failed; "" none */
} ksr_video_result;

/* Start recording; the video's time 0 is now (ksr_now_ms()). NULL with err
 * when the display, DAMAGE, the encoder or the file cannot be had. */
ksr_video *ksr_video_start(const ksr_video_opts *opts, ksr_err *err);
/* ksr_now_ms() at the video's time 0. */
int64_t ksr_video_t0_ms(const ksr_video *v);
/* Stop: a last frame of the screen as it is now, the chapters, the file
 * finished (trailer), fsync'd and renamed to opts.path. Waits for the thread
 * until d; a thread stuck in Xlib past d (a stopped X server) is left behind
 * and the file is finished without it. Frees v. 0, or -1 (res->error says
 * why; a file with frames is still kept when it could be finished). */
int ksr_video_finish(ksr_video *v, const ksr_video_chapter *chapters, size_t n, ksr_deadline d,
                     ksr_video_result *res);

#endif
