// SPDX-License-Identifier: MIT
/*
 * cuda-probe: is there a CUDA driver and device here, and what are they?
 * Opens device 0 through libgpuar's CUDA backend, as every other program
 * of the bundle does (libcuda.so.1, or $GPUAR_CUDA_LIBRARY), and prints
 * key=value lines: the library, how entry points were resolved, the
 * driver's version, the device's name and compute capability, and whether
 * the library is the test double (it exports gpuar_fake_cuda_reset).
 *
 * Exit 0 found; 77 no driver library or no device (nothing to check
 * here); 1 anything else (a driver that is there but unusable).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

#include <gpuar/cuda.h>

#define NO_DEVICE 77
#define CU_ATTR_CC_MAJOR 75
#define CU_ATTR_CC_MINOR 76

typedef int (*cu_device_get_fn)(int *device, int ordinal);
typedef int (*cu_device_get_name_fn)(char *name, int len, int device);
typedef int (*cu_device_get_attribute_fn)(int *value, int attribute, int device);

/* The name and capability, from the library the backend loaded. */
static void print_device(const char *library)
{
	void *dl = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
	cu_device_get_fn get;
	cu_device_get_name_fn get_name;
	cu_device_get_attribute_fn attr;
	char name[128] = "unknown";
	int dev = 0, major = 0, minor = 0;

	if (!dl)
		return;
	get = (cu_device_get_fn)dlsym(dl, "cuDeviceGet");
	get_name = (cu_device_get_name_fn)dlsym(dl, "cuDeviceGetName");
	attr = (cu_device_get_attribute_fn)dlsym(dl, "cuDeviceGetAttribute");
	if (get && !get(&dev, 0)) {
		if (get_name && get_name(name, (int)sizeof(name), dev))
			snprintf(name, sizeof(name), "unknown");
		if (attr) {
			attr(&major, CU_ATTR_CC_MAJOR, dev);
			attr(&minor, CU_ATTR_CC_MINOR, dev);
		}
	}
	printf("device=%s\n", name);
	printf("compute_capability=%d.%d\n", major, minor);
	printf("test_double=%s\n",
	       dlsym(dl, "gpuar_fake_cuda_reset") ? "yes" : "no");
	dlclose(dl);
}

int main(void)
{
	struct gpuar_cuda *cu;
	struct gpuar_error d;
	int rc = gpuar_cuda_open(&cu, 0, &d);

	if (rc) {
		printf("error=%s\n", d.message);
		return rc == -ENOENT || rc == -ENODEV ? NO_DEVICE : 1;
	}
	printf("library=%s\n", gpuar_cuda_library(cu));
	printf("resolver=%s\n", gpuar_cuda_resolver(cu));
	printf("driver_version=%d\n", gpuar_cuda_driver_version(cu));
	print_device(gpuar_cuda_library(cu));
	gpuar_cuda_close(cu);
	return 0;
}
