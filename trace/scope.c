/* The user's code and the system's (scope.h). */
#include <string.h>

#include "scope.h"

static bool system_path(const char *p)
{
	/* the distribution's libraries and programs (a packaged zstd is not
	 * the code under test, and instrumenting it all costs seconds) */
	static const char *const dirs[] = { "/lib/", "/lib64/", "/lib32/", "/usr/lib/",
					    "/usr/lib64/", "/usr/lib32/", "/usr/libexec/", "/bin/",
					    "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/games/" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (!strncmp(p, dirs[i], strlen(dirs[i])))
			return true;
	return false;
}

static bool in_scope(const char *scope, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	while (scope && *scope) {
		size_t n = strcspn(scope, ",");
		if ((n == 3 && !strncmp(scope, "all", 3)) ||
		    (n && !strncmp(base, scope, n) &&
		     (base[n] == 0 || base[n] == '.' || base[n] == '-')))
			return true;
		scope += n + (scope[n] == ',');
	}
	return false;
}

bool avt_user_code_path(const char *path, const char *scope)
{
	if (strstr(path, "/ld-linux") || strstr(path, "/libavtrace-agent"))
		return false;
	return !system_path(path) || in_scope(scope, path);
}
