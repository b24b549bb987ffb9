/*
 * meta.json reader (meta.h).  jansson parses (it bounds nesting and
 * rejects NUL in strings); this file bounds the size, refuses what is not
 * a regular file, and checks the type and shape of every field replay
 * uses, so a malformed file is one message naming the field.
 */
#include "meta.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "log.h"

struct mreader {
	const char *path;
	char *err;
	size_t errlen;
};

static int mfail(struct mreader *r, const char *fmt, ...) AVT_PRINTF(2, 3);

static int mfail(struct mreader *r, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "cannot read '%s': %s", r->path, msg);
	return -1;
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* A JSON array of strings as a NULL-terminated vector. */
static int strv(struct mreader *r, json_t *arr, const char *field, char ***out, size_t *n)
{
	size_t len = json_array_size(arr);
	char **v;

	if (!json_is_array(arr))
		return mfail(r, "\"%s\" is not an array of strings", field);
	v = calloc(len + 1, sizeof *v);
	if (!v)
		return mfail(r, "out of memory");
	for (size_t i = 0; i < len; i++) {
		const char *s = json_string_value(json_array_get(arr, i));
		if (!s) {
			free_strv(v);
			return mfail(r, "\"%s\"[%zu] is not a string", field, i);
		}
		if (!(v[i] = strdup(s))) {
			free_strv(v);
			return mfail(r, "out of memory");
		}
	}
	*out = v;
	*n = len;
	return 0;
}

static int text(struct mreader *r, json_t *o, const char *field, char **out)
{
	const char *s = json_string_value(json_object_get(o, field));

	if (!s || !*s)
		return mfail(r, "\"%s\" is missing or not a non-empty string", field);
	if (!(*out = strdup(s)))
		return mfail(r, "out of memory");
	return 0;
}

/* An optional boolean: def when absent. */
static int flag(struct mreader *r, json_t *o, const char *field, bool def, bool *out)
{
	json_t *v = json_object_get(o, field);

	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_boolean(v))
		return mfail(r, "\"%s\" is not true or false", field);
	*out = json_is_true(v);
	return 0;
}

static int build_id(struct mreader *r, json_t *o, char **out)
{
	json_t *v = json_object_get(o, "build_id");
	const char *s = v ? json_string_value(v) : "";
	size_t n;

	if (!s)
		return mfail(r, "\"build_id\" is not a string");
	n = strlen(s);
	if (n > 40 || n % 2 || strspn(s, "0123456789abcdef") != n)
		return mfail(r, "\"build_id\" '%.48s' is not a build-id (up to 40 lowercase "
			     "hex digits)", s);
	if (!(*out = strdup(s)))
		return mfail(r, "out of memory");
	return 0;
}

static int fields(struct mreader *r, struct avt_meta *m)
{
	json_t *o = m->json, *env = json_object_get(o, "env"), *watch;

	if (!json_is_object(o))
		return mfail(r, "not a JSON object");
	if (strv(r, json_object_get(o, "argv"), "argv", &m->argv, &m->argc) < 0)
		return -1;
	if (!m->argc)
		return mfail(r, "\"argv\" is empty");
	if (env && !json_is_null(env) && strv(r, env, "env", &m->env, &m->nenv) < 0)
		return -1;
	if (text(r, o, "executable", &m->executable) < 0 || text(r, o, "cwd", &m->cwd) < 0 ||
	    build_id(r, o, &m->build_id) < 0)
		return -1;
	watch = json_object_get(o, "watch");
	if (watch && strv(r, watch, "watch", &m->watch, &m->nwatch) < 0)
		return -1;
	if (!watch && !(m->watch = calloc(1, sizeof *m->watch)))
		return mfail(r, "out of memory");
	if (m->nwatch > AVT_META_MAX_WATCH)
		return mfail(r, "\"watch\" has %zu variables (at most %u)", m->nwatch,
			     AVT_META_MAX_WATCH);
	if (flag(r, o, "heap", true, &m->heap) < 0 ||
	    flag(r, o, "watch_auto", false, &m->watch_auto) < 0 ||
	    flag(r, o, "access", false, &m->access) < 0 || flag(r, o, "futex", false, &m->futex) < 0)
		return -1;
	json_t *ab = json_object_get(o, "access_budget");
	if (ab && (!json_is_integer(ab) || json_integer_value(ab) < 0 ||
		   json_integer_value(ab) > 1000000000))
		return mfail(r, "\"access_budget\" is not a number of hits (0..1000000000)");
	m->access_budget = ab ? (unsigned)json_integer_value(ab) : 0;
	json_t *sc = json_object_get(o, "access_scope");
	if (sc && (!json_is_string(sc) || json_string_length(sc) > AVT_META_MAX_SCOPE ||
		   strlen(json_string_value(sc)) != json_string_length(sc)))
		return mfail(r, "\"access_scope\" is not a list of module names (at most %d characters)",
			     AVT_META_MAX_SCOPE);
	if (sc && !(m->access_scope = strdup(json_string_value(sc))))
		return mfail(r, "out of memory");
	if (json_object_get(o, "program") && text(r, o, "program", &m->program) < 0)
		return -1;
	return 0;
}

struct avt_meta *meta_read(const char *path, char *err, size_t errlen, int *errno_out)
{
	struct mreader r = { path, err, errlen };
	struct avt_meta *m = NULL;
	json_error_t je;
	uint64_t size;
	char why[128];
	FILE *fp = avt_fopen_regular(path, AVT_META_MAX_BYTES, &size);
	int e = errno, rc = -1;

	if (errno_out)
		*errno_out = fp || e == EINVAL || e == EFBIG ? 0 : e;
	if (!fp) {
		mfail(&r, "%s", avt_file_error(e, size, AVT_META_MAX_BYTES, why, sizeof why));
		return NULL;
	}
	if (!(m = calloc(1, sizeof *m)))
		mfail(&r, "out of memory");
	else if (!(m->json = json_loadf(fp, JSON_REJECT_DUPLICATES, &je)))
		mfail(&r, "line %d column %d: %s", je.line, je.column, je.text);
	else
		rc = fields(&r, m);
	fclose(fp);
	if (rc < 0) {
		meta_free(m);
		return NULL;
	}
	return m;
}

json_t *avt_json_read(const char *path, char *err, size_t errlen)
{
	struct mreader r = { path, err, errlen };
	json_error_t je;
	uint64_t size;
	char why[128];
	FILE *fp = avt_fopen_regular(path, AVT_META_MAX_BYTES, &size);
	json_t *j = NULL;

	if (!fp) {
		mfail(&r, "%s", avt_file_error(errno, size, AVT_META_MAX_BYTES, why, sizeof why));
		return NULL;
	}
	if (!(j = json_loadf(fp, 0, &je)))
		mfail(&r, "line %d column %d: %s", je.line, je.column, je.text);
	fclose(fp);
	return j;
}

void meta_free(struct avt_meta *m)
{
	if (!m)
		return;
	free_strv(m->argv);
	free_strv(m->env);
	free_strv(m->watch);
	free(m->executable);
	free(m->cwd);
	free(m->build_id);
	free(m->access_scope);
	free(m->program);
	json_decref(m->json);
	free(m);
}

int meta_fork_path(const struct avt_meta *m, unsigned *path, size_t max, size_t *n)
{
	*n = 0;
	json_t *a = json_object_get(m->json, "fork_path");
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || json_array_size(a) > max)
		return -1;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *v = json_array_get(a, i);
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1000000000)
			return -1;
		path[(*n)++] = (unsigned)json_integer_value(v);
	}
	return 0;
}
