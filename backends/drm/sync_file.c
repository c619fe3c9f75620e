// SPDX-License-Identifier: MIT
/* sync_file state through SYNC_IOC_FILE_INFO (no DRM device needed). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/sync_file.h>

GPUAR_EXPORT int gpuar_sync_file_info(int fd, int *signalled, int *status,
				      uint64_t *timestamp_ns)
{
	struct sync_file_info info;
	struct sync_fence_info *fences = NULL;
	u64 ts = 0;
	u32 i;
	int ret;

	memset(&info, 0, sizeof(info));
	/* First ask how many fences, then fetch them for the timestamps. */
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) < 0)
		return -errno;
	if (info.num_fences) {
		fences = calloc(info.num_fences, sizeof(*fences));
		if (!fences)
			return -ENOMEM;
		info.sync_fence_info = (u64)(uintptr_t)fences;
		if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) < 0) {
			ret = -errno;
			free(fences);
			return ret;
		}
		for (i = 0; i < info.num_fences; i++)
			if (fences[i].timestamp_ns > ts)
				ts = fences[i].timestamp_ns;
		free(fences);
	}
	if (signalled)
		*signalled = info.status != 0;
	if (status)
		*status = info.status < 0 ? info.status : 0;
	if (timestamp_ns)
		*timestamp_ns = info.status ? ts : 0;
	return 0;
}
