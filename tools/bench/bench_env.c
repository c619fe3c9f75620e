// SPDX-License-Identifier: MIT
#include "bench_env.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

static bool cpuinfo_has_hypervisor(void)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5) && strstr(line, " hypervisor"))
			found = true;
	fclose(f);
	return found;
}

const char *bench_env_virt(const char *clocksources, const char *dmi_vendor,
			   bool hypervisor_flag)
{
	if (strstr(clocksources, "kvm-clock"))
		return "kvm";
	if (strstr(dmi_vendor, "QEMU"))
		return "tcg";
	return hypervisor_flag ? "hypervisor" : "none";
}

void bench_env_read(struct bench_env *env, const struct bench_config *cfg)
{
	struct utsname u;
	char avail[256], vendor[128];
	time_t now = time(NULL);
	struct tm tm;

	memset(env, 0, sizeof(*env));
	if (!uname(&u))
		snprintf(env->kernel, sizeof(env->kernel), "%s", u.release);
	env->cpus = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource",
		  env->clocksource, sizeof(env->clocksource));
	read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource",
		  avail, sizeof(avail));
	read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	snprintf(env->virt, sizeof(env->virt), "%s",
		 bench_env_virt(avail, vendor, cpuinfo_has_hypervisor()));
	snprintf(env->engine, sizeof(env->engine), "%s",
		 access(cfg->device_path, F_OK) ? "user" : "kernel");
	gmtime_r(&now, &tm);
	strftime(env->date, sizeof(env->date), "%Y-%m-%dT%H:%M:%SZ", &tm);
}
