/* What an app's process says about its accessibility bridge: the toolkit
 * libraries and bridges mapped into it (/proc/PID/maps) and the environment
 * entries that turn a bridge off (/proc/PID/environ). An app that is not on
 * the bus is then described by the cause seen (a GTK 2 app without the
 * atk-bridge module, NO_AT_BRIDGE=1, a Tk app) before any guess. */
#include "backend/atspi/priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksr/strbuf.h"

/* Toolkits by the library that identifies them; where a process maps several,
 * the first in this order names it (a GTK 2 app may map GTK 3 through a
 * plugin). has_bridge: the toolkit brings a bridge of its own once loaded (GTK
 * 4's AT-SPI, Qt's in its platform plugin); none: it has no AT-SPI support. */
static const struct toolkit_lib {
	const char *lib, *name;
	bool has_bridge, none;
} toolkit_libs[] = {
        {"libgtk-x11-2.0.so", "GTK 2", false, false},
        {"libgtk-3.so", "GTK 3", false, false},
        {"libgtk-4.so", "GTK 4", true, false},
        {"libQt5Gui.so", "Qt 5", true, false},
        {"libQt6Gui.so", "Qt 6", true, false},
        {"libjvm.so", "Java", false, false},
        {"libtk8.", "Tk", false, true},
        {"libXm.so", "Motif", false, true},
        {"libXaw", "Xaw", false, true},
        {"libfltk", "FLTK", false, true},
};
#define N_TOOLKITS (sizeof toolkit_libs / sizeof *toolkit_libs)

/* The bridges that are libraries of their own: GTK 2's module and GTK 3's
 * (Chromium's, Electron's) atk-bridge, Java's ATK wrapper. */
static const char *const bridge_libs[] = {"libatk-bridge", "libatk-wrapper"};

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void note_library(ksr_atspi_bridge *b, bool *mapped, const char *file)
{
	for (size_t i = 0; i < sizeof bridge_libs / sizeof *bridge_libs; i++)
		b->bridge_lib |= starts_with(file, bridge_libs[i]);
	for (size_t i = 0; i < N_TOOLKITS; i++)
		mapped[i] |= starts_with(file, toolkit_libs[i].lib);
}

/* The toolkit that names the process, and whether any mapped one brings a bridge. */
static void pick_toolkit(ksr_atspi_bridge *b, const bool *mapped)
{
	size_t chosen = N_TOOLKITS;
	for (size_t i = 0; i < N_TOOLKITS; i++) {
		if (!mapped[i])
			continue;
		if (chosen == N_TOOLKITS)
			chosen = i;
		b->toolkit_bridge |= toolkit_libs[i].has_bridge;
	}
	if (chosen == N_TOOLKITS)
		return;
	b->toolkit = toolkit_libs[chosen].name;
	b->library = toolkit_libs[chosen].lib;
	b->no_atspi = toolkit_libs[chosen].none && !b->toolkit_bridge && !b->bridge_lib;
}

static int read_maps(int pid, ksr_atspi_bridge *b)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	bool mapped[N_TOOLKITS] = {false};
	while (fgets(line, sizeof line, f)) {
		const char *file = strrchr(line, '/');
		if (file)
			note_library(b, mapped, file + 1);
	}
	fclose(f);
	pick_toolkit(b, mapped);
	return 0;
}

static bool env_is(const char *block, size_t len, const char *name, const char *value)
{
	char *v = ksr_atspi_environ_lookup(block, len, name);
	bool is = v && (!value || strcmp(v, value) == 0); /* NULL: set at all */
	free(v);
	return is;
}

/* The entries that turn a bridge off, as the toolkits read them. */
static void read_env(int pid, ksr_atspi_bridge *b)
{
	size_t len = 0;
	char *env = ksr_atspi_read_environ(pid, &len);
	if (!env)
		return;
	if (env_is(env, len, "NO_AT_BRIDGE", "1"))
		b->off_by = "NO_AT_BRIDGE=1";
	else if (env_is(env, len, "GTK_A11Y", "none"))
		b->off_by = "GTK_A11Y=none";
	else if (env_is(env, len, "QT_ACCESSIBILITY", "0"))
		b->off_by = "QT_ACCESSIBILITY=0";
	b->qt_always_on = env_is(env, len, "QT_LINUX_ACCESSIBILITY_ALWAYS_ON", NULL);
	free(env);
}

/* How long ago pid started (its stat's starttime against /proc/uptime), -1
 * when unknown. */
static int64_t process_age_ms(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	unsigned long long start = 0;
	/* After the name: state (field 3) ... starttime (field 22). */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -1;
	double up = 0;
	f = fopen("/proc/uptime", "re");
	bool have_up = f && fscanf(f, "%lf", &up) == 1;
	if (f)
		fclose(f);
	long tck = sysconf(_SC_CLK_TCK);
	if (!have_up || tck <= 0)
		return -1;
	int64_t age = (int64_t)(up * 1000) - (int64_t)(start * 1000 / (unsigned long long)tck);
	return age < 0 ? 0 : age;
}

int ksr_atspi_bridge_of(int pid, ksr_atspi_bridge *out)
{
	*out = (ksr_atspi_bridge){.age_ms = -1};
	if (pid <= 0 || read_maps(pid, out) < 0)
		return -1;
	out->readable = true;
	out->loaded = out->bridge_lib || out->toolkit_bridge;
	out->age_ms = process_age_ms(pid);
	read_env(pid, out);
	return 0;
}

bool ksr_atspi_bridge_is_qt(const ksr_atspi_bridge *b)
{
	return b->toolkit && strncmp(b->toolkit, "Qt", 2) == 0;
}

void ksr_atspi_bridge_cause(const ksr_atspi_bridge *b, int pid, bool root_names_bus, char *buf,
                            size_t cap)
{
	buf[0] = '\0';
	if (!b->readable)
		return;
	if (b->off_by && (b->loaded || b->toolkit))
		snprintf(buf, cap,
		         "the app (pid %d) has %s in its environment, which turns its %s "
		         "accessibility bridge off",
		         pid, b->off_by, b->toolkit ? b->toolkit : "");
	else if (b->no_atspi)
		snprintf(buf, cap,
		         "the app (pid %d) is a %s app (%s is mapped): %s has no "
		         "accessibility bridge, it cannot join the AT-SPI bus",
		         pid, b->toolkit, b->library, b->toolkit);
	else if (b->toolkit && strcmp(b->toolkit, "GTK 2") == 0 && !b->loaded)
		snprintf(buf, cap,
		         "the app (pid %d) is a GTK 2 app (%s is mapped) with no "
		         "accessibility bridge loaded: GTK 2 loads it only as a module, start it "
		         "with GTK_MODULES=gail:atk-bridge",
		         pid, b->library);
	else if (b->toolkit && strcmp(b->toolkit, "Java") == 0 && !b->loaded)
		snprintf(buf, cap,
		         "the app (pid %d) is a Java app with no ATK wrapper loaded "
		         "(libatk-wrapper; Debian: libatk-wrapper-java-jni, enabled in the JRE's "
		         "accessibility.properties, or start it with -Djavax.accessibility."
		         "assistive_technologies=org.GNOME.Accessibility.AtkWrapper)",
		         pid);
	else if (ksr_atspi_bridge_is_qt(b) && !b->qt_always_on && !root_names_bus)
		snprintf(buf, cap,
		         "the app (pid %d) is a %s app, whose bridge joins reliably only "
		         "when the X root names the bus (AT_SPI_BUS) as the app starts, and this "
		         "session's root has none (its at-spi-bus-launcher ran without DISPLAY); "
		         "start it with QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1",
		         pid, b->toolkit);
	else if (!b->loaded && !b->toolkit)
		snprintf(buf, cap,
		         "the app (pid %d) loads no accessibility bridge (no atk-bridge, "
		         "GTK, Qt or Java ATK wrapper library is mapped)",
		         pid);
}
