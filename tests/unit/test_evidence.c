/* The evidence folder: creation, the lock, a stale DONE, whole-file writes, DONE
 * last, safe names, and a full disk (a small tmpfs, when we may mount one). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ksr/evidence.h"
#include "tap.h"

static char base[64];

static char *path_in(const char *dir, const char *name)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char *p = path_in(dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

/* The file's content ("" when empty), or NULL when it does not exist. */
static char *slurp(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	FILE *f = fopen(p, "r");
	free(p);
	if (!f)
		return NULL;
	char *buf = calloc(1, 4096);
	size_t n = fread(buf, 1, 4095, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static bool exists(const char *dir, const char *name)
{
	char *p = path_in(dir, name);
	bool e = access(p, F_OK) == 0;
	free(p);
	return e;
}

static bool any_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	bool found = false;
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);
		found = found || (n > 4 && !strcmp(de->d_name + n - 4, ".tmp"));
	}
	if (d)
		closedir(d);
	return found;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void test_fresh_and_nested(void)
{
	char *dir = path_in(base, "fresh/a/b/out");
	ksr_err err = {0};
	ksr_evidence *ev = ksr_evidence_open(dir, &err);
	ok(ev != NULL, "nested folder created and opened: %s", err.msg);
	if (!ev) {
		free(dir);
		return;
	}
	is_str(ksr_evidence_dir(ev), dir, "dir kept");
	ok(ksr_evidence_trace_fd(ev) >= 0, "trace fd open");
	char *trace = slurp(dir, "trace.jsonl");
	is_str(trace, "", "trace.jsonl starts empty");
	free(trace);
	char *lock = slurp(dir, ".lock");
	char want[32];
	snprintf(want, sizeof want, "%ld\n", (long)getpid());
	is_str(lock, want, ".lock names our PID");
	free(lock);
	ok(ksr_evidence_ok(ev), "no failures yet");
	is_str(ksr_evidence_failures(ev), "", "failure list empty");

	is_int(ksr_evidence_write(ev, "report.json", "{}\n", 3, &err), 0, "write report.json");
	is_int(ksr_evidence_write(ev, "../escape.txt", "x", 1, &err), 0, "write a hostile name");
	ok(exists(dir, "___escape.txt"), "it lands inside, sanitised");
	ok(ksr_evidence_write(ev, "DONE", "pass\n", 5, &err) != 0, "DONE refused from write");
	ok(!exists(dir, "DONE"), "no DONE before finish");
	ok(!ksr_evidence_ok(ev), "the refusal is a failure");
	ok(strstr(ksr_evidence_failures(ev), "DONE: ") == ksr_evidence_failures(ev),
	   "failure entry names DONE: %s", ksr_evidence_failures(ev));
	usleep(20000);
	is_int(ksr_evidence_finish(ev, "pass", &err), 0, "finish");
	char *done = slurp(dir, "DONE");
	is_str(done, "pass\n", "DONE holds the verdict and a newline");
	free(done);
	ok(!any_tmp(dir), "no temporary files left");

	struct stat dst, st;
	char *donep = path_in(dir, "DONE");
	stat(donep, &dst);
	free(donep);
	bool newest = true;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		char *p = path_in(dir, de->d_name);
		if (de->d_name[0] != '.' && stat(p, &st) == 0 &&
		    (st.st_mtim.tv_sec > dst.st_mtim.tv_sec ||
		     (st.st_mtim.tv_sec == dst.st_mtim.tv_sec &&
		      st.st_mtim.tv_nsec > dst.st_mtim.tv_nsec)))
			newest = false;
		free(p);
	}
	closedir(d);
	ok(newest, "DONE is the newest file");
	ksr_evidence_close(ev);
	ksr_evidence_close(NULL);

	ev = ksr_evidence_open(dir, &err);
	ok(ev != NULL, "closing released the lock: %s", err.msg);
	ok(!exists(dir, "DONE"), "a new run removes the old DONE");
	ksr_evidence_close(ev);
	free(dir);
}

static void test_lock(void)
{
	char *dir = path_in(base, "locked");
	ksr_err err = {0};
	ksr_evidence *first = ksr_evidence_open(dir, &err);
	ok(first != NULL, "first run opens");
	if (!first) {
		free(dir);
		return;
	}
	put_file(dir, "DONE", "pass\n");
	put_file(dir, "BLOCKED", "login page\n");
	if (write(ksr_evidence_trace_fd(first), "{\"event\":\"run.start\"}\n", 22) != 22)
		ok(0, "trace write");
	ksr_err err2 = {0};
	ksr_evidence *second = ksr_evidence_open(dir, &err2);
	ok(second == NULL, "a second run into a locked folder fails");
	char pid[32];
	snprintf(pid, sizeof pid, "PID %ld", (long)getpid());
	ok(strstr(err2.msg, pid) != NULL, "it names the holder's PID: %s", err2.msg);
	ok(strstr(err2.msg, dir) != NULL, "and the folder");
	char *done = slurp(dir, "DONE");
	is_str(done, "pass\n", "the existing DONE is untouched");
	free(done);
	ok(exists(dir, "BLOCKED"), "BLOCKED untouched");
	char *trace = slurp(dir, "trace.jsonl");
	is_str(trace, "{\"event\":\"run.start\"}\n", "trace.jsonl untouched");
	free(trace);
	ksr_evidence_close(second);
	ksr_evidence_close(first);
	free(dir);
}

static void test_stale(void)
{
	char *dir = path_in(base, "stale");
	mkdir(dir, 0755);
	put_file(dir, "DONE", "app-failed\n");
	put_file(dir, "BLOCKED", "otp\n");
	put_file(dir, "trace.jsonl", "{\"old\":1}\n");
	put_file(dir, ".report.json.tmp", "half");
	put_file(dir, "report.json", "{\"old\":true}");
	put_file(dir, "notes.txt", "mine\n");
	ksr_err err = {0};
	ksr_evidence *ev = ksr_evidence_open(dir, &err);
	ok(ev != NULL, "open over an earlier run: %s", err.msg);
	ok(!exists(dir, "DONE"), "stale DONE removed");
	ok(!exists(dir, "BLOCKED"), "stale BLOCKED removed");
	ok(!exists(dir, ".report.json.tmp"), "a dead run's temporary file removed");
	char *trace = slurp(dir, "trace.jsonl");
	is_str(trace, "", "trace.jsonl started afresh");
	free(trace);
	ok(!exists(dir, "report.json"), "the earlier report moved away");
	char *prev = path_in(dir, "previous");
	char *old_report = slurp(prev, "report.json");
	is_str(old_report, "{\"old\":true}", "previous/report.json is the earlier run's");
	free(old_report);
	char *old_done = slurp(prev, "DONE");
	is_str(old_done, "app-failed\n", "previous/DONE too");
	free(old_done);
	ok(exists(dir, "notes.txt") && !exists(prev, "notes.txt"), "a file no run wrote stays");
	is_str(ksr_evidence_foreign(ev), "notes.txt", "and is listed");
	free(prev);
	put_file(dir, "BLOCKED", "x");
	is_int(ksr_evidence_remove(ev, "BLOCKED", &err), 0, "remove BLOCKED");
	ok(!exists(dir, "BLOCKED"), "gone");
	is_int(ksr_evidence_remove(ev, "BLOCKED", &err), 0, "removing a missing file is fine");
	ksr_evidence_close(ev);
	free(dir);
}

/* The artifacts an earlier trace names move too; previous/ keeps one generation. */
static void test_previous_generation(void)
{
	char *dir = path_in(base, "generations");
	mkdir(dir, 0755);
	put_file(dir, "trace.jsonl",
	         "{\"event\":\"run.start\"}\n"
	         "{\"event\":\"artifact\",\"name\":\"99-failure.png\",\"kind\":\"screenshot\"}\n");
	put_file(dir, "99-failure.png", "png");
	put_file(dir, "DONE", "app-failed\n");
	ksr_err err = {0};
	ksr_evidence *ev = ksr_evidence_open(dir, &err);
	ok(ev != NULL, "open: %s", err.msg);
	char *prev = path_in(dir, "previous");
	ok(!exists(dir, "99-failure.png") && exists(prev, "99-failure.png"),
	   "an artifact of the earlier run moved to previous/");
	ok(ksr_evidence_foreign(ev)[0] == '\0', "nothing foreign");
	ksr_evidence_finish(ev, "pass", &err);
	ksr_evidence_close(ev);
	ev = ksr_evidence_open(dir, &err);
	ok(ev != NULL, "open again: %s", err.msg);
	ok(!exists(prev, "99-failure.png"), "previous/ holds the last run only");
	char *done = slurp(prev, "DONE");
	is_str(done, "pass\n", "previous/DONE is the last run's");
	free(done);
	ksr_evidence_close(ev);
	free(prev);
	free(dir);
}

static void sanitize_case(const char *in, const char *want)
{
	char *got = ksr_evidence_sanitize_name(in);
	char what[160];
	snprintf(what, sizeof what, "sanitize '%.100s'", in ? in : "(null)");
	is_str(got, want, what);
	free(got);
}

static void test_sanitize(void)
{
	sanitize_case("00-first-look.png", "00-first-look.png");
	sanitize_case("../x", "___x");
	sanitize_case("a/b", "a_b");
	sanitize_case("", "_");
	sanitize_case(NULL, "_");
	sanitize_case(".hidden", "_hidden");
	sanitize_case("..", "__");
	sanitize_case("/etc/passwd", "_etc_passwd");
	sanitize_case("Save As: «Résumé».png", "Save_As___R_sum__.png");
	sanitize_case("a b\tc|d", "a_b_c_d");
	sanitize_case("日本.txt", "__.txt");
	char long_name[300];
	memset(long_name, 'x', sizeof long_name);
	strcpy(long_name + 250, ".png");
	char *got = ksr_evidence_sanitize_name(long_name);
	is_int((long long)strlen(got), 100, "long names cut to 100");
	ok(strlen(got) >= 4 && !strcmp(got + strlen(got) - 4, ".png"), "keeping the extension");
	free(got);
	memset(long_name, 'y', 299);
	long_name[299] = '\0';
	got = ksr_evidence_sanitize_name(long_name);
	is_int((long long)strlen(got), 100, "no extension: cut to 100");
	free(got);
	char *p = ksr_evidence_path(NULL, "a/../b");
	is_str(p, "./a_.._b", "path joins the sanitised name");
	free(p);
}

static void test_under_file(void)
{
	char *file = path_in(base, "plainfile");
	put_file(base, "plainfile", "x");
	char *dir = path_in(file, "sub/out");
	ksr_err err = {0};
	ksr_evidence *ev = ksr_evidence_open(dir, &err);
	ok(ev == NULL, "a folder under a regular file fails");
	ok(strstr(err.msg, file) != NULL && strstr(err.msg, "not a directory") != NULL,
	   "naming the path and the cause: %s", err.msg);
	ksr_evidence_close(ev);
	ev = ksr_evidence_open("", &err);
	ok(ev == NULL, "an empty path fails");
	free(dir);
	free(file);
}

static void test_full_disk(void)
{
	char *mnt = path_in(base, "small");
	mkdir(mnt, 0755);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k") != 0) {
		skip_unless_installable("full disk: cannot mount a tmpfs: %s", strerror(errno));
		free(mnt);
		return;
	}
	ksr_err err = {0};
	ksr_evidence *ev = ksr_evidence_open(mnt, &err);
	ok(ev != NULL, "open on a small tmpfs: %s", err.msg);
	if (ev) {
		size_t big = 256 * 1024;
		char *data = malloc(big);
		memset(data, 'z', big);
		ok(ksr_evidence_write(ev, "big.bin", data, big, &err) != 0, "a big write fails");
		ok(strstr(err.msg, "big.bin") != NULL, "the error names the file: %s", err.msg);
		free(data);
		ok(!ksr_evidence_ok(ev), "not ok");
		ok(strstr(ksr_evidence_failures(ev), "big.bin: No space left on device") != NULL,
		   "listed in failures: %s", ksr_evidence_failures(ev));
		ok(!exists(mnt, ".big.bin.tmp") && !exists(mnt, "big.bin"),
		   "the partial file is removed");
		is_int(ksr_evidence_write(ev, "small.txt", "ok\n", 3, &err), 0,
		       "a small write fits again");
		is_int(ksr_evidence_finish(ev, "test-error", &err), 0, "DONE still written");
		char *done = slurp(mnt, "DONE");
		is_str(done, "test-error\n", "DONE content");
		free(done);
		ksr_evidence_close(ev);
	}
	umount2(mnt, MNT_DETACH);
	rmdir(mnt);
	free(mnt);
}

static void put_fd(int fd, const char *text)
{
	ok(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text), "wrote %s", text);
	if (fd >= 0)
		close(fd);
}

/* ksr_evidence_open_path: what is planted at the name is replaced, never
 * written through; a regular file of this run is appended to. */
static void test_protected_open(void)
{
	char *dir = path_in(base, "guarded");
	mkdir(dir, 0755);
	put_file(base, "outside.txt", "untouched");
	char *outside = path_in(base, "outside.txt");
	char *sym = path_in(dir, "sym.log"), *hard = path_in(dir, "hard.log");
	char *fifo = path_in(dir, "fifo.log"), *sub = path_in(dir, "sub.log");
	symlink(outside, sym);
	ok(link(outside, hard) == 0, "hard link planted");
	mkfifo(fifo, 0644);
	mkdir(sub, 0755);
	put_fd(ksr_evidence_open_path(sym, KSR_EVIDENCE_APPEND), "a");
	put_fd(ksr_evidence_open_path(hard, KSR_EVIDENCE_APPEND), "b");
	put_fd(ksr_evidence_open_path(fifo, KSR_EVIDENCE_APPEND), "c"); /* never hangs */
	put_fd(ksr_evidence_open_path(sub, KSR_EVIDENCE_NEW), "d");
	char *o = slurp(base, "outside.txt");
	is_str(o, "untouched", "nothing written outside");
	free(o);
	const char *names[] = {"sym.log", "hard.log", "fifo.log", "sub.log"},
	           *want[] = {"a", "b", "c", "d"};
	for (int i = 0; i < 4; i++) {
		char *got = slurp(dir, names[i]);
		is_str(got, want[i], names[i]);
		free(got);
	}
	put_fd(ksr_evidence_open_path(sym, KSR_EVIDENCE_APPEND), "e");
	char *got = slurp(dir, "sym.log");
	is_str(got, "ae", "a file of this run is appended to");
	free(got);
	put_fd(ksr_evidence_open_path(sym, KSR_EVIDENCE_NEW), "f");
	got = slurp(dir, "sym.log");
	is_str(got, "f", "NEW starts afresh");
	free(got);
	free(outside), free(sym), free(hard), free(fifo), free(sub), free(dir);
}

int main(void)
{
	snprintf(base, sizeof base, "/tmp/ksr-test-evidence-XXXXXX");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	test_fresh_and_nested();
	test_lock();
	test_stale();
	test_previous_generation();
	test_sanitize();
	test_under_file();
	test_full_disk();
	test_protected_open();
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
