/* The run's video (ksr/video.h): a DAMAGE-driven frame source on an X
 * connection of its own and a VP9/WebM encoder, on a thread of its own.
 *
 * The thread sleeps in one poll on its X connection and a stop pipe, bounded
 * by the run's deadline; a DamageNotify on the root (ReportNonEmpty: one
 * event until the damage is subtracted) makes the screen dirty; a dirty
 * screen is captured (XShm) as soon as the frame interval allows, converted
 * to YUV (libswscale) and encoded (libavcodec) and written (libavformat) at
 * once. The encoder and the file are behind enc_lock, so that when the thread
 * is stuck in Xlib (a stopped X server) the finisher can still end the file. */
#include "ksr/video.h"
#include "ksr/evidence.h"

#ifndef KSR_HAVE_VIDEO
#include <stdio.h>

/* Built without FFmpeg (-DKSR_VIDEO=OFF, the portable build): no video, said so. */
ksr_video *ksr_video_start(const ksr_video_opts *opts, ksr_err *err)
{
	(void)opts;
	ksr_err_set(err, "this build has no video (built without FFmpeg's libraries: "
	                 "-DKSR_VIDEO=OFF, as the portable build is)");
	return NULL;
}

int64_t ksr_video_t0_ms(const ksr_video *v)
{
	(void)v;
	return 0;
}

int ksr_video_finish(ksr_video *v, const ksr_video_chapter *chapters, size_t n, ksr_deadline d,
                     ksr_video_result *res)
{
	(void)v;
	(void)chapters;
	(void)n;
	(void)d;
	*res = (ksr_video_result){.codec = NULL};
	snprintf(res->error, sizeof res->error, "no video was recorded");
	return -1;
}
#else

#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xdamage.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/macros.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CODEC_NAME "libvpx-vp9"

/* FFmpeg is loaded when a video is asked for, not linked: its libraries and
 * the codecs they pull in (x265, rav1e, librsvg, gnutls... about 140 shared
 * objects) were most of the runtime's memory on every run, video or not. The
 * sonames are those of the headers built against; a missing one is an error
 * value of ksr_video_start, the setup's (docs/packaging.md). */
#define AV_FUNCS(X)                                                                                \
	X(avutil, av_dict_set)                                                                     \
	X(avutil, av_dict_free)                                                                    \
	X(avutil, av_strerror)                                                                     \
	X(avutil, av_mallocz)                                                                      \
	X(avutil, av_calloc)                                                                       \
	X(avutil, av_log_set_callback)                                                             \
	X(avutil, av_frame_alloc)                                                                  \
	X(avutil, av_frame_free)                                                                   \
	X(avutil, av_frame_get_buffer)                                                             \
	X(avutil, av_frame_make_writable)                                                          \
	X(swscale, sws_getContext)                                                                 \
	X(swscale, sws_scale)                                                                      \
	X(swscale, sws_freeContext)                                                                \
	X(avcodec, avcodec_find_encoder_by_name)                                                   \
	X(avcodec, avcodec_alloc_context3)                                                         \
	X(avcodec, avcodec_open2)                                                                  \
	X(avcodec, avcodec_free_context)                                                           \
	X(avcodec, avcodec_send_frame)                                                             \
	X(avcodec, avcodec_receive_packet)                                                         \
	X(avcodec, avcodec_parameters_from_context)                                                \
	X(avcodec, av_packet_alloc)                                                                \
	X(avcodec, av_packet_free)                                                                 \
	X(avcodec, av_packet_unref)                                                                \
	X(avcodec, av_packet_rescale_ts)                                                           \
	X(avformat, avformat_alloc_output_context2)                                                \
	X(avformat, avformat_new_stream)                                                           \
	X(avformat, avformat_write_header)                                                         \
	X(avformat, avformat_free_context)                                                         \
	X(avformat, av_write_frame)                                                                \
	X(avformat, av_write_trailer)                                                              \
	X(avformat, avio_open)                                                                     \
	X(avformat, avio_closep)

typedef struct av_table {
#define AV_MEMBER(lib, fn) __typeof__(&fn) fn;
	AV_FUNCS(AV_MEMBER)
#undef AV_MEMBER
} av_table;

static av_table av;
static char av_error[KSR_ERR_MSG_MAX];
static pthread_once_t av_once = PTHREAD_ONCE_INIT;

#define AV_SONAME(lib, major) "lib" #lib ".so." AV_STRINGIFY(major)

static void *av_open(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h && !av_error[0])
		snprintf(av_error, sizeof av_error, "cannot load %s (FFmpeg, for the video): %s",
		         soname, dlerror());
	return h;
}

static void av_load(void)
{
	void *lib[4] = {av_open(AV_SONAME(avutil, LIBAVUTIL_VERSION_MAJOR)),
	                av_open(AV_SONAME(swscale, LIBSWSCALE_VERSION_MAJOR)),
	                av_open(AV_SONAME(avcodec, LIBAVCODEC_VERSION_MAJOR)),
	                av_open(AV_SONAME(avformat, LIBAVFORMAT_VERSION_MAJOR))};
	enum { avutil, swscale, avcodec, avformat };
	if (av_error[0])
		return;
	void *sym;
#define AV_LOAD(l, fn)                                                                             \
	if ((sym = dlsym(lib[l], #fn)) == NULL && !av_error[0])                                    \
		snprintf(av_error, sizeof av_error, "FFmpeg's lib" #l " has no " #fn);             \
	memcpy(&av.fn, &sym, sizeof sym);
	AV_FUNCS(AV_LOAD)
#undef AV_LOAD
}

/* 0 once FFmpeg's functions are in `av`, else -1 with the reason. */
static int av_ready(ksr_err *err)
{
	pthread_once(&av_once, av_load);
	return av_error[0] ? ksr_err_set(err, "%s", av_error) : 0;
}

struct ksr_video {
	char *display, *tmp_path, *path;
	int max_fps;
	ksr_deadline until;
	int64_t t0;

	/* The frame source (the thread's alone once started). */
	Display *dpy;
	Window root;
	int damage_event;
	Damage damage;
	XShmSegmentInfo shm;
	XImage *img;
	bool shm_ok;
	atomic_bool dead; /* the X connection broke */
	int sw, sh;       /* the screen */
	enum AVPixelFormat src_fmt;

	/* The encoder and the file, behind enc_lock. */
	pthread_mutex_t enc_lock;
	AVFormatContext *oc;
	AVCodecContext *cc;
	AVStream *st;
	struct SwsContext *sws;
	AVFrame *frame;
	AVPacket *pkt;
	int64_t last_pts;
	long frames;
	bool taken_over; /* the finisher ended the file without the thread */
	char error[KSR_ERR_MSG_MAX];

	pthread_t thread;
	int stop_pipe[2];
	atomic_int refs; /* the thread and the owner: the last one frees */
};

/* FFmpeg prints to stderr by default; library code never prints. */
static void quiet_log(void *avcl, int level, const char *fmt, va_list ap)
{
	(void)avcl;
	(void)level;
	(void)fmt;
	(void)ap;
}

static void on_io_error(Display *dpy, void *data)
{
	(void)dpy;
	atomic_store(&((ksr_video *)data)->dead, true);
}

static void set_error(ksr_video *v, const char *what, int averr)
{
	if (v->error[0])
		return;
	char msg[128] = "";
	if (averr)
		av.av_strerror(averr, msg, sizeof msg);
	snprintf(v->error, sizeof v->error, "%s%s%s", what, averr ? ": " : "", msg);
}

/* ---- the frame source --------------------------------------------------- */

static enum AVPixelFormat pixel_format(const XImage *img)
{
	if (img->bits_per_pixel != 32 || img->red_mask != 0xff0000 || img->green_mask != 0xff00 ||
	    img->blue_mask != 0xff)
		return AV_PIX_FMT_NONE;
	return img->byte_order == LSBFirst ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_0RGB;
}

static bool shm_setup(ksr_video *v)
{
	if (!XShmQueryExtension(v->dpy))
		return false;
	int scr = DefaultScreen(v->dpy);
	v->img = XShmCreateImage(v->dpy, DefaultVisual(v->dpy, scr),
	                         (unsigned)DefaultDepth(v->dpy, scr), ZPixmap, NULL, &v->shm,
	                         (unsigned)v->sw, (unsigned)v->sh);
	if (!v->img)
		return false;
	size_t size = (size_t)v->img->bytes_per_line * (size_t)v->img->height;
	v->shm.shmid = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	v->shm.shmaddr = v->shm.shmid < 0 ? (char *)-1 : shmat(v->shm.shmid, NULL, 0);
	if (v->shm.shmaddr == (char *)-1) {
		if (v->shm.shmid >= 0)
			shmctl(v->shm.shmid, IPC_RMID, NULL);
		XDestroyImage(v->img);
		v->img = NULL;
		return false;
	}
	v->img->data = v->shm.shmaddr;
	v->shm.readOnly = False;
	Bool ok = XShmAttach(v->dpy, &v->shm);
	XSync(v->dpy, False);
	shmctl(v->shm.shmid, IPC_RMID, NULL); /* gone with the last detach */
	if (!ok || atomic_load(&v->dead)) {
		shmdt(v->shm.shmaddr);
		v->img->data = NULL;
		XDestroyImage(v->img);
		v->img = NULL;
		return false;
	}
	v->shm_ok = true;
	return true;
}

static int source_open(ksr_video *v, ksr_err *err)
{
	v->dpy = XOpenDisplay(v->display);
	if (!v->dpy)
		return ksr_err_set(err, "cannot open a connection to X display %s for the video",
		                   v->display ? v->display : "(DISPLAY)");
	XSetIOErrorExitHandler(v->dpy, on_io_error, v);
	int scr = DefaultScreen(v->dpy);
	v->root = RootWindow(v->dpy, scr);
	v->sw = DisplayWidth(v->dpy, scr);
	v->sh = DisplayHeight(v->dpy, scr);
	int ev = 0, er = 0;
	if (!XDamageQueryExtension(v->dpy, &ev, &er))
		return ksr_err_set(err, "the X server has no DAMAGE extension: no video");
	v->damage_event = ev + XDamageNotify;
	v->damage = XDamageCreate(v->dpy, v->root, XDamageReportNonEmpty);
	if (!shm_setup(v)) {
		/* XGetImage each frame instead: slower, still bounded. */
		XImage *probe = XGetImage(v->dpy, v->root, 0, 0, 1, 1, AllPlanes, ZPixmap);
		if (!probe)
			return ksr_err_set(err, "cannot read the screen for the video");
		v->src_fmt = pixel_format(probe);
		XDestroyImage(probe);
	} else {
		v->src_fmt = pixel_format(v->img);
	}
	if (v->src_fmt == AV_PIX_FMT_NONE)
		return ksr_err_set(err, "the screen's visual is not 32-bit RGB: no video");
	XSync(v->dpy, False);
	return atomic_load(&v->dead) ? ksr_err_set(err, "the X display connection was lost") : 0;
}

/* Has the screen changed size (RandR) since recording began? The video
 * keeps its first size, so it ends there (a capture of the old size would
 * fail on a smaller screen). One round trip. */
static bool resized(ksr_video *v)
{
	Window root;
	int x, y;
	unsigned int w = 0, h = 0, border, depth;
	if (!XGetGeometry(v->dpy, v->root, &root, &x, &y, &w, &h, &border, &depth))
		return false;
	if ((int)w == v->sw && (int)h == v->sh)
		return false;
	pthread_mutex_lock(&v->enc_lock);
	char what[96];
	snprintf(what, sizeof what,
	         "the screen changed size from %dx%d to %ux%u; the video ends there", v->sw, v->sh,
	         w, h);
	set_error(v, what, 0);
	pthread_mutex_unlock(&v->enc_lock);
	return true;
}

/* The screen now, or NULL (the caller frees a non-shm image). */
static XImage *grab(ksr_video *v)
{
	if (atomic_load(&v->dead) || resized(v))
		return NULL;
	if (v->shm_ok)
		return XShmGetImage(v->dpy, v->root, v->img, 0, 0, AllPlanes) &&
		                       !atomic_load(&v->dead)
		               ? v->img
		               : NULL;
	return XGetImage(v->dpy, v->root, 0, 0, (unsigned)v->sw, (unsigned)v->sh, AllPlanes,
	                 ZPixmap);
}

static void source_close(ksr_video *v)
{
	if (!v->dpy)
		return;
	bool dead = atomic_load(&v->dead);
	if (v->shm_ok && !dead)
		XShmDetach(v->dpy, &v->shm);
	if (v->shm_ok)
		shmdt(v->shm.shmaddr);
	if (v->img) {
		v->img->data = NULL;
		XDestroyImage(v->img);
	}
	if (!dead && v->damage)
		XDamageDestroy(v->dpy, v->damage);
	XCloseDisplay(v->dpy); /* skips its round trip on a broken connection */
	v->dpy = NULL;
	v->img = NULL;
}

/* ---- the encoder ---------------------------------------------------------- */

/* The temporary file is created as every file in OUT is (never through a
 * link); FFmpeg opens it again through /proc/self/fd, which names the file
 * just created, not whatever the name in OUT points to now. */
static int open_tmp(ksr_video *v)
{
	int fd = ksr_evidence_open_path(v->tmp_path, KSR_EVIDENCE_NEW);
	if (fd < 0)
		return -1;
	char self[64];
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	int r = av.avio_open(&v->oc->pb, self, AVIO_FLAG_WRITE);
	close(fd);
	if (r < 0)
		errno = EIO;
	return r < 0 ? -1 : 0;
}

static int encoder_open(ksr_video *v, ksr_err *err)
{
	const AVCodec *codec = av.avcodec_find_encoder_by_name(CODEC_NAME);
	if (!codec)
		return ksr_err_set(err, "this FFmpeg has no %s encoder: no video", CODEC_NAME);
	int r = av.avformat_alloc_output_context2(&v->oc, NULL, "webm", v->tmp_path);
	if (r < 0 || !v->oc)
		return ksr_err_set(err, "cannot set up the WebM muxer");
	v->cc = av.avcodec_alloc_context3(codec);
	v->cc->width = v->sw & ~1; /* 4:2:0 wants even sizes */
	v->cc->height = v->sh & ~1;
	v->cc->pix_fmt = AV_PIX_FMT_YUV420P;
	v->cc->time_base = (AVRational){1, 1000};
	v->cc->framerate = (AVRational){v->max_fps, 1};
	v->cc->gop_size = v->max_fps * 4; /* a key frame at least every 4 s of motion */
	v->cc->bit_rate = 0;              /* constant quality (crf) */
	v->cc->thread_count = 2;
	if (v->oc->oformat->flags & AVFMT_GLOBALHEADER)
		v->cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
	AVDictionary *o = NULL;
	av.av_dict_set(&o, "deadline", "realtime", 0);
	av.av_dict_set(&o, "cpu-used", "8", 0);
	av.av_dict_set(&o, "lag-in-frames", "0", 0); /* no look-ahead: bounded memory */
	av.av_dict_set(&o, "row-mt", "1", 0);
	av.av_dict_set(&o, "crf", "36", 0);
	av.av_dict_set(&o, "tune-content", "screen", 0);
	r = av.avcodec_open2(v->cc, codec, &o);
	av.av_dict_free(&o);
	if (r < 0)
		return ksr_err_set(err, "cannot open the %s encoder", CODEC_NAME);
	v->st = av.avformat_new_stream(v->oc, NULL);
	v->st->time_base = (AVRational){1, 1000};
	av.avcodec_parameters_from_context(v->st->codecpar, v->cc);
	if (open_tmp(v) < 0)
		return ksr_err_set(err, "cannot create %s: %s", v->tmp_path, strerror(errno));
	if (av.avformat_write_header(v->oc, NULL) < 0)
		return ksr_err_set(err, "cannot write the WebM header to %s", v->tmp_path);
	v->sws = av.sws_getContext(v->cc->width, v->cc->height, v->src_fmt, v->cc->width,
	                           v->cc->height, AV_PIX_FMT_YUV420P, SWS_POINT, NULL, NULL, NULL);
	v->frame = av.av_frame_alloc();
	v->pkt = av.av_packet_alloc();
	if (!v->sws || !v->frame || !v->pkt)
		return ksr_err_set(err, "cannot set up the video's frame conversion");
	v->frame->format = AV_PIX_FMT_YUV420P;
	v->frame->width = v->cc->width;
	v->frame->height = v->cc->height;
	if (av.av_frame_get_buffer(v->frame, 0) < 0)
		return ksr_err_set(err, "cannot allocate the video frame");
	v->last_pts = -1;
	return 0;
}

/* Send a frame (NULL: flush) and write every packet that comes out. Under enc_lock. */
static int encode(ksr_video *v, AVFrame *f)
{
	int r = av.avcodec_send_frame(v->cc, f);
	if (r < 0)
		return r;
	while ((r = av.avcodec_receive_packet(v->cc, v->pkt)) == 0) {
		av.av_packet_rescale_ts(v->pkt, v->cc->time_base, v->st->time_base);
		v->pkt->stream_index = v->st->index;
		if (v->pkt->duration <= 0)
			v->pkt->duration = 1;
		r = av.av_write_frame(v->oc, v->pkt);
		av.av_packet_unref(v->pkt);
		if (r < 0)
			return r;
	}
	return r == AVERROR(EAGAIN) || r == AVERROR_EOF ? 0 : r;
}

/* The image as the frame at pts (ms from t0). Under enc_lock. */
static void encode_image(ksr_video *v, const XImage *img, int64_t pts)
{
	if (!v->oc || v->error[0])
		return;
	if (av.av_frame_make_writable(v->frame) < 0) {
		set_error(v, "cannot reuse the video frame", 0);
		return;
	}
	const uint8_t *src[1] = {(const uint8_t *)img->data};
	int stride[1] = {img->bytes_per_line};
	av.sws_scale(v->sws, src, stride, 0, v->cc->height, v->frame->data, v->frame->linesize);
	v->frame->pts = pts > v->last_pts ? pts : v->last_pts + 1;
	v->last_pts = v->frame->pts;
	int r = encode(v, v->frame);
	if (r < 0)
		set_error(v, "encoding a video frame failed", r);
	else
		v->frames++;
}

/* Capture and encode one frame, timed at now (when it was decided on, so
 * that frames are never closer than the interval whatever a capture takes);
 * false when the thread must end (the finisher took the file over while it
 * was in Xlib). */
static bool capture_frame(ksr_video *v, int64_t now)
{
	XDamageSubtract(v->dpy, v->damage, None, None); /* later changes notify anew */
	XImage *img = grab(v);
	int64_t pts = now - v->t0;
	pthread_mutex_lock(&v->enc_lock);
	bool over = v->taken_over;
	if (img && !over)
		encode_image(v, img, pts);
	over |= v->error[0] != '\0'; /* nothing more can go into the file */
	pthread_mutex_unlock(&v->enc_lock);
	if (img && img != v->img)
		XDestroyImage(img);
	return !over;
}

static void unref(ksr_video *v);

static bool stop_requested(const struct pollfd *p)
{
	return p[1].revents & (POLLIN | POLLHUP | POLLERR);
}

/* Drain the queue: true when the screen was damaged. */
static bool drain(ksr_video *v)
{
	bool damaged = false;
	while (!atomic_load(&v->dead) && XPending(v->dpy) > 0) {
		XEvent ev;
		XNextEvent(v->dpy, &ev);
		damaged |= ev.type == v->damage_event;
	}
	return damaged;
}

static void *record(void *arg)
{
	ksr_video *v = arg;
	int64_t interval = 1000 / v->max_fps, next_at = 0;
	bool dirty = true, live = true; /* the first frame: the screen as it is */
	while (live && !atomic_load(&v->dead)) {
		dirty |= drain(v);
		int64_t now = ksr_now_ms();
		if (dirty && now >= next_at) {
			dirty = false;
			next_at = now + interval;
			live = capture_frame(v, now);
			continue;
		}
		struct pollfd p[2] = {{.fd = ConnectionNumber(v->dpy), .events = POLLIN},
		                      {.fd = v->stop_pipe[0], .events = POLLIN}};
		/* Not cancellable by SIGTERM on purpose: an interrupted run's video
		 * shows its end too; the stop pipe and the deadline end this wait. */
		ksr_deadline d =
		        dirty ? ksr_deadline_min(v->until, (ksr_deadline){next_at}) : v->until;
		ksr_wait w = ksr_wait_fds_uncancellable(p, 2, d);
		if (w == KSR_WAIT_READY && stop_requested(p))
			break;
		if (w == KSR_WAIT_ERROR || (w == KSR_WAIT_TIMEOUT && ksr_deadline_passed(v->until)))
			break;
	}
	if (live && !atomic_load(&v->dead))
		live = capture_frame(v, ksr_now_ms()); /* the screen at the end: until now */
	source_close(v);
	unref(v);
	return NULL;
}

/* ---- start and finish ------------------------------------------------------ */

static void video_free(ksr_video *v)
{
	if (v->oc && v->oc->pb)
		av.avio_closep(&v->oc->pb);
	av.avformat_free_context(v->oc);
	av.avcodec_free_context(&v->cc);
	av.sws_freeContext(v->sws);
	av.av_frame_free(&v->frame);
	av.av_packet_free(&v->pkt);
	source_close(v);
	if (v->stop_pipe[0] >= 0)
		close(v->stop_pipe[0]);
	if (v->stop_pipe[1] >= 0)
		close(v->stop_pipe[1]);
	pthread_mutex_destroy(&v->enc_lock);
	free(v->display);
	free(v->tmp_path);
	free(v->path);
	free(v);
}

static void unref(ksr_video *v)
{
	if (atomic_fetch_sub(&v->refs, 1) == 1)
		video_free(v);
}

ksr_video *ksr_video_start(const ksr_video_opts *opts, ksr_err *err)
{
	if (av_ready(err) < 0)
		return NULL;
	av.av_log_set_callback(quiet_log);
	ksr_video *v = ksr_xcalloc(1, sizeof *v);
	v->display = opts->display ? strdup(opts->display) : NULL;
	v->tmp_path = strdup(opts->tmp_path);
	v->path = strdup(opts->path);
	v->max_fps = opts->max_fps < 1 ? 1 : opts->max_fps > 60 ? 60 : opts->max_fps;
	v->until = opts->until;
	v->stop_pipe[0] = v->stop_pipe[1] = -1;
	atomic_init(&v->refs, 1);
	atomic_init(&v->dead, false);
	pthread_mutex_init(&v->enc_lock, NULL);
	if (source_open(v, err) < 0 || encoder_open(v, err) < 0 ||
	    pipe2(v->stop_pipe, O_CLOEXEC) < 0) {
		if (!err->msg[0])
			ksr_err_set(err, "cannot create the video's stop pipe: %s",
			            strerror(errno));
		video_free(v);
		unlink(opts->tmp_path);
		return NULL;
	}
	v->t0 = ksr_now_ms();
	atomic_store(&v->refs, 2);
	sigset_t block, old;
	sigfillset(&block); /* signals go to the main thread */
	pthread_sigmask(SIG_BLOCK, &block, &old);
	int rc = pthread_create(&v->thread, NULL, record, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		ksr_err_set(err, "cannot start the video thread: %s", strerror(rc));
		video_free(v);
		unlink(opts->tmp_path);
		return NULL;
	}
	return v;
}

int64_t ksr_video_t0_ms(const ksr_video *v)
{
	return v ? v->t0 : 0;
}

static void add_chapters(ksr_video *v, const ksr_video_chapter *ch, size_t n, int64_t end)
{
	if (!n)
		return;
	v->oc->chapters = av.av_calloc(n, sizeof *v->oc->chapters);
	if (!v->oc->chapters)
		return;
	for (size_t i = 0; i < n; i++) {
		AVChapter *c = av.av_mallocz(sizeof *c);
		if (!c)
			break;
		c->id = (int64_t)i + 1;
		c->time_base = (AVRational){1, 1000};
		c->start = ch[i].at_ms < 0 ? 0 : ch[i].at_ms;
		c->end = i + 1 < n ? ch[i + 1].at_ms : end;
		c->end = c->end < c->start ? c->start : c->end;
		av.av_dict_set(&c->metadata, "title", ch[i].title ? ch[i].title : "", 0);
		v->oc->chapters[v->oc->nb_chapters++] = c;
	}
}

/* Flush, chapters, trailer, close, fsync, rename. Under enc_lock. */
static int end_file(ksr_video *v, const ksr_video_chapter *ch, size_t n, ksr_video_result *res)
{
	int r = encode(v, NULL);
	if (r < 0)
		set_error(v, "flushing the encoder failed", r);
	int64_t end = v->last_pts > 0 ? v->last_pts + 1 : 0;
	add_chapters(v, ch, n, end);
	int written = av.av_write_trailer(v->oc);
	if (written < 0)
		set_error(v, "writing the WebM trailer failed", written);
	r = av.avio_closep(&v->oc->pb);
	if (r < 0)
		set_error(v, "closing the video file failed", r);
	if (written < 0 || r < 0) {
		snprintf(res->error, sizeof res->error, "%s", v->error);
		unlink(v->tmp_path);
		return -1;
	}
	int fd = open(v->tmp_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat sb;
	bool synced = fd >= 0 && fsync(fd) == 0 && fstat(fd, &sb) == 0;
	if (fd >= 0)
		close(fd);
	if (!synced || rename(v->tmp_path, v->path) < 0) {
		snprintf(res->error, sizeof res->error, "the video file could not be finished: %s",
		         strerror(errno));
		unlink(v->tmp_path);
		return -1;
	}
	res->bytes = (long long)sb.st_size;
	res->duration_ms = v->last_pts > 0 ? v->last_pts : 0;
	return 0;
}

static bool join_until(ksr_video *v, ksr_deadline d)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t left = ksr_deadline_remaining_ms(d);
	ts.tv_sec += left / 1000;
	ts.tv_nsec += (left % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(v->thread, NULL, &ts) == 0;
}

static bool lock_until(ksr_video *v, ksr_deadline d)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ksr_deadline_remaining_ms(d) / 1000 + 1;
	return pthread_mutex_timedlock(&v->enc_lock, &ts) == 0;
}

int ksr_video_finish(ksr_video *v, const ksr_video_chapter *chapters, size_t n, ksr_deadline d,
                     ksr_video_result *res)
{
	*res = (ksr_video_result){.codec = "vp9 (WebM)"};
	if (!v) {
		snprintf(res->error, sizeof res->error, "no video was recorded");
		return -1;
	}
	res->width = v->cc ? v->cc->width : 0;
	res->height = v->cc ? v->cc->height : 0;
	ssize_t wr = write(v->stop_pipe[1], "x", 1);
	(void)wr; /* a full pipe is already a stop request */
	bool joined = join_until(v, d);
	if (!joined) /* stuck in Xlib: end the file without it */
		pthread_detach(v->thread);
	if (!lock_until(v, d)) {
		snprintf(res->error, sizeof res->error,
		         "the video thread did not let go of the encoder; the file is unfinished");
		unref(v);
		return -1;
	}
	v->taken_over = true;
	int rc = end_file(v, chapters, n, res);
	res->frames = v->frames;
	if (v->error[0] && !res->error[0])
		snprintf(res->error, sizeof res->error, "%s", v->error);
	else if (!joined && !res->error[0])
		snprintf(res->error, sizeof res->error,
		         "the video thread was stuck reading the screen; the video ends early");
	else if (atomic_load(&v->dead) && !res->error[0])
		snprintf(res->error, sizeof res->error,
		         "the X display went away; the video ends there");
	pthread_mutex_unlock(&v->enc_lock);
	unref(v); /* a thread left behind holds its own reference */
	return rc;
}
#endif /* KSR_HAVE_VIDEO */
