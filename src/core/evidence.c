/* The evidence folder (docs/report.md): created if missing, locked against a second
 * run, the previous run's own files moved to previous/ (one generation), every
 * file written whole (temporary name, fsync, rename) and DONE last, after the
 * files and the folder are synced. */
#include "ksr/evidence.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "ksr/redact.h"
#include "ksr/strbuf.h"

#define NAME_MAX_LEN 100
#define EXT_MAX_LEN  16
#define PREVIOUS     "previous"
#define TRACE_MAX    (64u * 1024u * 1024u) /* an old trace read for its artifacts */

struct ksr_evidence {
	char *dir;
	int dir_fd;
	int lock_fd;
	int trace_fd;
	ksr_strbuf failures; /* entries, each NUL-ended, then the buffer's own NUL */
	ksr_strbuf moved;    /* the earlier run's files moved to previous/, the same way */
	ksr_strbuf foreign;  /* files found that no run of ours wrote, the same way */
};

/* Names */

static bool name_char_ok(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* Cut to NAME_MAX_LEN, keeping a short extension. */
static void cut_name(char *s)
{
	size_t len = strlen(s);
	if (len <= NAME_MAX_LEN)
		return;
	const char *dot = strrchr(s, '.');
	size_t ext = dot && dot != s && (size_t)(s + len - dot) <= EXT_MAX_LEN
	                     ? (size_t)(s + len - dot)
	                     : 0;
	memmove(s + NAME_MAX_LEN - ext, s + len - ext, ext);
	s[NAME_MAX_LEN] = '\0';
}

char *ksr_evidence_sanitize_name(const char *name)
{
	const unsigned char *in = (const unsigned char *)(name ? name : "");
	char *out = ksr_xmalloc(strlen((const char *)in) + 2);
	size_t n = 0;
	for (size_t i = 0; in[i]; i++) {
		bool continuation = in[i] >= 0x80 && in[i] < 0xc0 && i > 0 && in[i - 1] >= 0x80;
		if (continuation)
			continue; /* one '_' per UTF-8 character */
		out[n++] = name_char_ok(in[i]) ? (char)in[i] : '_';
	}
	if (n == 0)
		out[n++] = '_';
	out[n] = '\0';
	for (size_t i = 0; out[i] == '.'; i++)
		out[i] = '_';
	cut_name(out);
	return out;
}

static bool reserved_name(const char *name)
{
	return !strcmp(name, "DONE") || !strcmp(name, "trace.jsonl");
}

/* Failures */

/* Add a failure: "NAME: strerror text", NUL-ended. */
static void ksr_evidence_note_failure(ksr_evidence *ev, const char *name, int errnum)
{
	if (!ev)
		return;
	char *entry = ksr_xasprintf("%s: %s", name ? name : "?", strerror(errnum));
	ksr_strbuf_addn(&ev->failures, entry, strlen(entry) + 1);
	free(entry);
}

const char *ksr_evidence_failures(const ksr_evidence *ev)
{
	return ev && ev->failures.p ? ev->failures.p : "";
}

bool ksr_evidence_ok(const ksr_evidence *ev)
{
	return ev && ev->failures.len == 0;
}

/* Opening */

/* mkdir -p, one component at a time, saying which component is in the way. */
static int make_dirs(const char *dir, ksr_err *err)
{
	char *p = ksr_xstrdup(dir);
	int rc = 0;
	for (char *c = p + 1;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char saved = *c;
		*c = '\0';
		struct stat st;
		if (mkdir(p, 0755) != 0 && errno != EEXIST) {
			rc = ksr_err_set(err, "cannot create the evidence folder %s: %s: %s", dir,
			                 p, strerror(errno));
		} else if (stat(p, &st) != 0) {
			rc = ksr_err_set(err, "cannot create the evidence folder %s: %s: %s", dir,
			                 p, strerror(errno));
		} else if (!S_ISDIR(st.st_mode)) {
			rc = ksr_err_set(
			        err,
			        "cannot create the evidence folder %s: %s exists and is not a "
			        "directory",
			        dir, p);
		}
		*c = saved;
		if (rc || saved == '\0')
			break;
	}
	free(p);
	return rc;
}

static long read_holder_pid(int fd)
{
	char buf[32] = {0};
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	char *end;
	long pid = strtol(buf, &end, 10);
	return end != buf && pid > 0 ? pid : 0;
}

static int take_lock(ksr_evidence *ev, ksr_err *err)
{
	ev->lock_fd = openat(ev->dir_fd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (ev->lock_fd < 0)
		return ksr_err_set(err, "cannot lock the evidence folder %s: %s/.lock: %s", ev->dir,
		                   ev->dir, strerror(errno));
	if (flock(ev->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK)
			return ksr_err_set(err, "cannot lock the evidence folder %s: %s", ev->dir,
			                   strerror(errno));
		long pid = read_holder_pid(ev->lock_fd);
		if (pid)
			return ksr_err_set(
			        err, "the evidence folder %s is in use by another run (PID %ld)",
			        ev->dir, pid);
		return ksr_err_set(err,
		                   "the evidence folder %s is in use by another run (PID unknown)",
		                   ev->dir);
	}
	/* Who holds the lock, for the next run to name; informational only. */
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(ev->lock_fd, 0) == 0)
		(void)!pwrite(ev->lock_fd, pid, (size_t)n, 0);
	return 0;
}

static bool is_stale_tmp(const char *name)
{
	size_t len = strlen(name);
	return name[0] == '.' && len > 5 && !strcmp(name + len - 4, ".tmp");
}

/* Temporary files a killed run left behind. */
static void remove_stale_tmps(ksr_evidence *ev)
{
	int fd = dup(ev->dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (is_stale_tmp(de->d_name))
			unlinkat(ev->dir_fd, de->d_name, 0);
	closedir(d);
}

static int sync_dir(ksr_evidence *ev)
{
	if (fsync(ev->dir_fd) == 0 || errno == EINVAL)
		return 0;
	ksr_evidence_note_failure(ev, "folder (fsync)", errno);
	return -1;
}

/* ---- the previous run's files ---- */

static void list_add(ksr_strbuf *list, const char *name)
{
	ksr_strbuf_addn(list, name, strlen(name) + 1);
}

static bool listed(const ksr_strbuf *list, const char *name)
{
	for (const char *p = list->p; p && *p; p += strlen(p) + 1)
		if (!strcmp(p, name))
			return true;
	return false;
}

/* The files a run of ours writes whatever it does. */
static bool own_fixed_name(const char *name)
{
	static const char *const own[] = {"DONE",        "BLOCKED",   "trace.jsonl",
	                                  "report.json", "report.md", "report.html"};
	for (size_t i = 0; i < sizeof own / sizeof *own; i++)
		if (!strcmp(name, own[i]))
			return true;
	return false;
}

/* Every artifact the earlier run's trace names (the files it wrote besides the
 * fixed ones), NUL-separated into names. */
static void old_artifacts(ksr_evidence *ev, ksr_strbuf *names)
{
	int fd = openat(ev->dir_fd, "trace.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	char *line = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0 && (total += (size_t)n) < TRACE_MAX) {
		if (!strstr(line, "\"artifact\""))
			continue;
		cJSON *e = cJSON_Parse(line);
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(e, "event");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		if (cJSON_IsString(kind) && !strcmp(kind->valuestring, "artifact") &&
		    cJSON_IsString(name)) {
			char *clean = ksr_evidence_sanitize_name(name->valuestring);
			if (!listed(names, clean))
				list_add(names, clean);
			free(clean);
		}
		cJSON_Delete(e);
	}
	free(line);
	fclose(f);
}

/* previous/ holds one generation: the files of the run before, removed. */
static int empty_previous(ksr_evidence *ev, int *pfd, ksr_err *err)
{
	if (mkdirat(ev->dir_fd, PREVIOUS, 0755) != 0 && errno != EEXIST)
		return ksr_err_set(err, "cannot create %s/%s: %s", ev->dir, PREVIOUS,
		                   strerror(errno));
	*pfd = openat(ev->dir_fd, PREVIOUS, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (*pfd < 0)
		return ksr_err_set(err, "cannot open %s/%s: %s", ev->dir, PREVIOUS,
		                   strerror(errno));
	int fd = dup(*pfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		if (fstatat(*pfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISDIR(st.st_mode))
			unlinkat(*pfd, de->d_name, 0);
	}
	closedir(d);
	return 0;
}

static bool skipped_entry(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..") || !strcmp(name, ".lock") ||
	       !strcmp(name, PREVIOUS) || is_stale_tmp(name);
}

/* Move the earlier run's files into previous/ and note what else is there. */
static int move_previous(ksr_evidence *ev, ksr_err *err)
{
	ksr_strbuf artifacts = {0};
	old_artifacts(ev, &artifacts);
	int fd = dup(ev->dir_fd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		ksr_strbuf_free(&artifacts);
		return 0;
	}
	rewinddir(d); /* a dup shares the offset remove_stale_tmps read to the end */
	int pfd = -1, rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (skipped_entry(de->d_name))
			continue;
		if (!own_fixed_name(de->d_name) && !listed(&artifacts, de->d_name)) {
			list_add(&ev->foreign, de->d_name);
			continue;
		}
		if (pfd < 0 && (rc = empty_previous(ev, &pfd, err)) < 0)
			break;
		if (renameat(ev->dir_fd, de->d_name, pfd, de->d_name) != 0)
			rc = ksr_err_set(err, "cannot move the earlier run's %s/%s to %s/: %s",
			                 ev->dir, de->d_name, PREVIOUS, strerror(errno));
		else
			list_add(&ev->moved, de->d_name);
	}
	closedir(d);
	if (pfd >= 0) {
		fsync(pfd);
		close(pfd);
	}
	ksr_strbuf_free(&artifacts);
	return rc;
}

static int clear_old(ksr_evidence *ev, ksr_err *err)
{
	remove_stale_tmps(ev);
	if (move_previous(ev, err) < 0)
		return -1;
	/* Never a stale DONE beside this run's files, whatever the move saw. */
	static const char *const old[] = {"DONE", "BLOCKED"};
	for (size_t i = 0; i < 2; i++)
		if (unlinkat(ev->dir_fd, old[i], 0) != 0 && errno != ENOENT)
			return ksr_err_set(err, "cannot remove the old %s/%s: %s", ev->dir, old[i],
			                   strerror(errno));
	sync_dir(ev);
	return 0;
}

const char *ksr_evidence_moved(const ksr_evidence *ev)
{
	return ev && ev->moved.p ? ev->moved.p : "";
}

const char *ksr_evidence_foreign(const ksr_evidence *ev)
{
	return ev && ev->foreign.p ? ev->foreign.p : "";
}

static int open_trace(ksr_evidence *ev, ksr_err *err)
{
	int fd = ksr_evidence_open_at(ev->dir_fd, "trace.jsonl", KSR_EVIDENCE_NEW);
	ev->trace_fd = fd >= 0 && fcntl(fd, F_SETFL, O_APPEND) == 0 ? fd : -1;
	if (fd >= 0 && ev->trace_fd < 0)
		close(fd);
	if (ev->trace_fd < 0)
		return ksr_err_set(err, "cannot start %s/trace.jsonl: %s", ev->dir,
		                   strerror(errno));
	return 0;
}

ksr_evidence *ksr_evidence_open(const char *dir, ksr_err *err)
{
	if (!dir || !*dir) {
		ksr_err_set(err, "no evidence folder given");
		return NULL;
	}
	if (make_dirs(dir, err))
		return NULL;
	ksr_evidence *ev = ksr_xcalloc(1, sizeof *ev);
	ev->dir = ksr_xstrdup(dir);
	ev->lock_fd = ev->trace_fd = -1;
	ev->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ev->dir_fd < 0) {
		ksr_err_set(err, "cannot open the evidence folder %s: %s", dir, strerror(errno));
		goto fail;
	}
	if (take_lock(ev, err) || clear_old(ev, err) || open_trace(ev, err))
		goto fail;
	return ev;
fail:
	ksr_evidence_close(ev);
	return NULL;
}

const char *ksr_evidence_dir(const ksr_evidence *ev)
{
	return ev ? ev->dir : NULL;
}

int ksr_evidence_trace_fd(const ksr_evidence *ev)
{
	return ev ? ev->trace_fd : -1;
}

char *ksr_evidence_path(const ksr_evidence *ev, const char *name)
{
	char *clean = ksr_evidence_sanitize_name(name);
	char *path = ksr_xasprintf("%s/%s", ev ? ev->dir : ".", clean);
	free(clean);
	return path;
}

char *ksr_evidence_log_path(const ksr_evidence *ev, const char *name)
{
	char *path = ksr_evidence_path(ev, name);
	if (ev) {
		char *clean = ksr_evidence_sanitize_name(name);
		struct stat st;
		if (fstatat(ev->dir_fd, clean, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    !S_ISREG(st.st_mode))
			unlinkat(ev->dir_fd, clean, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
		free(clean);
	}
	return path;
}

/* Opening a file in OUT, never through a link */

/* A regular file with one link: ours to append to (a hard link planted at
 * the name would send the writes to a file outside). */
static bool own_regular(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1;
}

static void remove_at(int dir_fd, const char *name)
{
	struct stat st;
	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		unlinkat(dir_fd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
}

int ksr_evidence_open_at(int dir_fd, const char *name, ksr_evidence_mode mode)
{
	const int base = O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW;
	const int append = mode == KSR_EVIDENCE_APPEND ? O_APPEND : 0;
	/* Bounded: a name that keeps coming back between remove and create is
	 * someone racing us, refused (EEXIST). */
	for (int tries = 0; tries < 3; tries++) {
		if (append) {
			/* O_NONBLOCK: a FIFO planted at the name cannot hang the open. */
			int fd = openat(dir_fd, name, base | O_APPEND | O_NONBLOCK);
			if (fd >= 0 && own_regular(fd) && fcntl(fd, F_SETFL, O_APPEND) == 0)
				return fd;
			if (fd >= 0)
				close(fd);
		}
		remove_at(dir_fd, name);
		int fd = openat(dir_fd, name, base | append | O_CREAT | O_EXCL, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

int ksr_evidence_open_path(const char *path, ksr_evidence_mode mode)
{
	if (!path || !*path) {
		errno = ENOENT;
		return -1;
	}
	const char *slash = strrchr(path, '/');
	char *dir = slash ? ksr_xasprintf("%.*s", (int)(slash - path), path) : ksr_xstrdup(".");
	int dir_fd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dir_fd < 0)
		return -1;
	int fd = ksr_evidence_open_at(dir_fd, slash ? slash + 1 : path, mode);
	int e = errno;
	close(dir_fd);
	errno = e;
	return fd;
}

FILE *ksr_evidence_fopen_path(const char *path, ksr_evidence_mode mode)
{
	int fd = ksr_evidence_open_path(path, mode);
	FILE *f = fd >= 0 ? fdopen(fd, mode == KSR_EVIDENCE_APPEND ? "a" : "w") : NULL;
	if (!f && fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

/* Writing */

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* tmp, write, fsync, close, rename; on any failure the tmp is removed and the
 * failure remembered. name is already clean. */
static int write_whole(ksr_evidence *ev, const char *name, const void *data, size_t len,
                       ksr_err *err)
{
	char *tmp = ksr_xasprintf(".%s.tmp", name);
	int fd = ksr_evidence_open_at(ev->dir_fd, tmp, KSR_EVIDENCE_NEW);
	if (fd < 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0)
		goto fail;
	int rc = close(fd);
	fd = -1;
	if (rc != 0 || renameat(ev->dir_fd, tmp, ev->dir_fd, name) != 0)
		goto fail;
	free(tmp);
	return 0;
fail:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(ev->dir_fd, tmp, 0);
	free(tmp);
	ksr_evidence_note_failure(ev, name, e);
	return ksr_err_set(err, "could not write %s/%s: %s", ev->dir, name, strerror(e));
}

int ksr_evidence_write(ksr_evidence *ev, const char *name, const void *data, size_t len,
                       ksr_err *err)
{
	if (!ev)
		return ksr_err_set(err, "no evidence folder is open");
	char *clean = ksr_evidence_sanitize_name(name);
	int rc;
	if (reserved_name(clean)) {
		ksr_evidence_note_failure(ev, clean, EPERM);
		rc = ksr_err_set(err, "%s is written only by the runtime itself", clean);
	} else {
		rc = write_whole(ev, clean, data, len, err);
	}
	free(clean);
	return rc;
}

int ksr_evidence_write_text(ksr_evidence *ev, const char *name, const char *data, size_t len,
                            ksr_err *err)
{
	ksr_strbuf b = {0};
	for (size_t at = 0; at < len;) {
		const char *nul = memchr(data + at, '\0', len - at);
		size_t n = nul ? (size_t)(nul - (data + at)) : len - at;
		char *piece = ksr_xasprintf("%.*s", (int)n, data + at);
		char *clean = ksr_redact(piece);
		ksr_strbuf_add(&b, clean ? clean : piece);
		free(clean);
		free(piece);
		at += n;
		if (nul) {
			ksr_strbuf_addn(&b, "", 1);
			at++;
		}
	}
	int rc = ksr_evidence_write(ev, name, b.p ? b.p : "", b.len, err);
	ksr_strbuf_free(&b);
	return rc;
}

int ksr_evidence_remove(ksr_evidence *ev, const char *name, ksr_err *err)
{
	if (!ev)
		return ksr_err_set(err, "no evidence folder is open");
	char *clean = ksr_evidence_sanitize_name(name);
	int rc = 0;
	if (unlinkat(ev->dir_fd, clean, 0) != 0 && errno != ENOENT)
		rc = ksr_err_set(err, "could not remove %s/%s: %s", ev->dir, clean,
		                 strerror(errno));
	free(clean);
	return rc;
}

int ksr_evidence_finish(ksr_evidence *ev, const char *verdict_word, ksr_err *err)
{
	if (!ev)
		return ksr_err_set(err, "no evidence folder is open");
	if (ev->trace_fd >= 0 && fsync(ev->trace_fd) != 0 && errno != EINVAL)
		ksr_evidence_note_failure(ev, "trace.jsonl", errno);
	sync_dir(ev);
	char *done =
	        ksr_xasprintf("%s\n", verdict_word && *verdict_word ? verdict_word : "test-error");
	int rc = write_whole(ev, "DONE", done, strlen(done), err);
	free(done);
	if (rc != 0)
		return -1;
	sync_dir(ev);
	return 0;
}

void ksr_evidence_close(ksr_evidence *ev)
{
	if (!ev)
		return;
	if (ev->trace_fd >= 0)
		close(ev->trace_fd);
	if (ev->dir_fd >= 0)
		close(ev->dir_fd);
	if (ev->lock_fd >= 0)
		close(ev->lock_fd); /* releases the flock */
	ksr_strbuf_free(&ev->failures);
	ksr_strbuf_free(&ev->moved);
	ksr_strbuf_free(&ev->foreign);
	free(ev->dir);
	free(ev);
}
