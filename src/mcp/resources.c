/* The server's evidence folder and the MCP resources that serve it. A large
 * result (a screenshot asked for by reference) is written here as a file and
 * returned as a resource_link; resources/read gives its bytes back, and only
 * for files this server wrote (no other path can be read through it). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/mcp_priv.h"

#define RPC_NOT_FOUND -32002 /* MCP: resource not found */
#define LIST_MAX      1000   /* resources/list: the newest this many */

static int ensure_dir(ksr_mcp *m, mcp_result *r)
{
	if (m->ev_dir)
		return 0;
	if (m->opts.evidence_dir) {
		if (mkdir(m->opts.evidence_dir, 0700) < 0 && errno != EEXIST)
			return mcp_fail(r, "cannot make the evidence folder %s: %s",
			                m->opts.evidence_dir, strerror(errno)),
			       -1;
		char *abs = realpath(m->opts.evidence_dir, NULL);
		if (!abs)
			return mcp_fail(r, "evidence folder %s: %s", m->opts.evidence_dir,
			                strerror(errno)),
			       -1;
		m->ev_dir = ksr_xstrdup(abs);
		free(abs);
		return 0;
	}
	const char *tmp = getenv("TMPDIR");
	char *templ = ksr_xasprintf("%s/ksr-mcp-evidence-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(templ)) {
		mcp_fail(r, "cannot make a temporary evidence folder: %s", strerror(errno));
		free(templ);
		return -1;
	}
	char *abs = realpath(templ, NULL);
	m->ev_dir = ksr_xstrdup(abs ? abs : templ);
	free(abs);
	free(templ);
	m->ev_temp = true;
	return 0;
}

/* The whole file under a temporary name, then renamed: a reader never sees
 * half a PNG. */
static int write_file(const char *path, const void *data, size_t len)
{
	char *tmp = ksr_xasprintf("%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	int rc = -1;
	if (f) {
		bool ok = fwrite(data, 1, len, f) == len;
		ok = fclose(f) == 0 && ok;
		rc = ok && rename(tmp, path) == 0 ? 0 : -1;
		if (rc < 0)
			unlink(tmp);
	}
	free(tmp);
	return rc;
}

static char *uri_of(const ksr_mcp *m, const char *name)
{
	return ksr_xasprintf("file://%s/%s", m->ev_dir, name);
}

/* Under m->ev_lock: a scenario task writes its report from its own thread
 * while the request loop lists and reads. */
static char *write_locked(ksr_mcp *m, const char *prefix, const char *ext, const char *mime,
                          const void *data, size_t len, mcp_result *r)
{
	if (ensure_dir(m, r) < 0)
		return NULL;
	char *name = ksr_xasprintf("%s-%d-%04u.%s", prefix, (int)getpid(), ++m->next_file, ext);
	char *path = ksr_xasprintf("%s/%s", m->ev_dir, name);
	if (write_file(path, data, len) < 0) {
		mcp_fail(r, "cannot write %s: %s", path, strerror(errno));
		free(path);
		free(name);
		return NULL;
	}
	free(path);
	if (m->n_files == m->files_cap) {
		m->files_cap = m->files_cap ? 2 * m->files_cap : 16;
		m->files = ksr_xrealloc(m->files, m->files_cap * sizeof *m->files);
	}
	m->files[m->n_files++] = (mcp_file){name, ksr_xstrdup(mime), len};
	return uri_of(m, name);
}

char *mcp_evidence_write(ksr_mcp *m, const char *prefix, const char *ext, const char *mime,
                         const void *data, size_t len, mcp_result *r)
{
	ksr_mcp *s = m->parent ? m->parent : m; /* a task's files are the server's */
	pthread_mutex_lock(&s->ev_lock);
	char *uri = write_locked(s, prefix, ext, mime, data, len, r);
	pthread_mutex_unlock(&s->ev_lock);
	return uri;
}

void mcp_evidence_cleanup(ksr_mcp *m)
{
	for (size_t i = 0; i < m->n_files; i++) {
		if (m->ev_temp) {
			char *path = ksr_xasprintf("%s/%s", m->ev_dir, m->files[i].name);
			unlink(path);
			free(path);
		}
		free(m->files[i].name);
		free(m->files[i].mime);
	}
	if (m->ev_temp && m->ev_dir)
		rmdir(m->ev_dir);
	free(m->files);
	free(m->ev_dir);
	m->files = NULL;
	m->ev_dir = NULL;
	m->n_files = m->files_cap = 0;
}

cJSON *mcp_resources_list(ksr_mcp *m)
{
	pthread_mutex_lock(&m->ev_lock);
	cJSON *r = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(r, "resources");
	size_t from = m->n_files > LIST_MAX ? m->n_files - LIST_MAX : 0;
	for (size_t i = m->n_files; i-- > from;) { /* newest first */
		cJSON *o = cJSON_CreateObject();
		char *uri = uri_of(m, m->files[i].name);
		cJSON_AddStringToObject(o, "uri", uri);
		free(uri);
		cJSON_AddStringToObject(o, "name", m->files[i].name);
		cJSON_AddStringToObject(o, "mimeType", m->files[i].mime);
		cJSON_AddNumberToObject(o, "size", (double)m->files[i].size);
		cJSON_AddItemToArray(arr, o);
	}
	pthread_mutex_unlock(&m->ev_lock);
	return r;
}

static const mcp_file *find_file(const ksr_mcp *m, const char *uri)
{
	for (size_t i = 0; i < m->n_files; i++) {
		char *mine = uri_of(m, m->files[i].name);
		bool same = !strcmp(mine, uri);
		free(mine);
		if (same)
			return &m->files[i];
	}
	return NULL;
}

static unsigned char *read_all(const char *path, size_t want, size_t *got)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *buf = ksr_xmalloc(want ? want : 1);
	*got = fread(buf, 1, want, f);
	fclose(f);
	return buf;
}

cJSON *mcp_resource_read(ksr_mcp *m, const char *uri, int *code, char *why, size_t len)
{
	pthread_mutex_lock(&m->ev_lock);
	const mcp_file *f = find_file(m, uri);
	char *path = f ? ksr_xasprintf("%s/%s", m->ev_dir, f->name) : NULL;
	size_t size = f ? f->size : 0;
	char *mime = f ? ksr_xstrdup(f->mime) : NULL;
	pthread_mutex_unlock(&m->ev_lock);
	if (!path) {
		*code = RPC_NOT_FOUND;
		snprintf(why, len,
		         "Resource not found: %.200s (only the server's own evidence files)", uri);
		return NULL;
	}
	size_t got = 0;
	unsigned char *data = read_all(path, size, &got);
	free(path);
	if (!data || got != size) {
		free(data);
		free(mime);
		*code = RPC_NOT_FOUND;
		snprintf(why, len, "Resource %.200s can no longer be read (removed or changed)",
		         uri);
		return NULL;
	}
	cJSON *r = cJSON_CreateObject();
	cJSON *c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "uri", uri);
	cJSON_AddStringToObject(c, "mimeType", mime);
	free(mime);
	char *b64 = mcp_base64(data, got);
	cJSON_AddStringToObject(c, "blob", b64);
	free(b64);
	free(data);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(r, "contents"), c);
	return r;
}
