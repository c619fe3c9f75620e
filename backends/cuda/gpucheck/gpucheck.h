/* SPDX-License-Identifier: MIT */
/*
 * What the CUDA gpucheck programs share: CUDA and gpuar calls that must
 * succeed, the engine named on the command line, and device 0 opened the
 * way an application opens it (the runtime's primary context), with exit
 * status 77 when the runtime finds no driver or no device: the bundle's
 * run script reads that as "nothing to check here", not as a failure.
 */
#ifndef GPUAR_GPUCHECK_H
#define GPUAR_GPUCHECK_H

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include <gpuar/cuda.h>

#define GPUCHECK_NO_DEVICE 77

#define CHECK_CUDA(call)                                                  \
	do {                                                              \
		cudaError_t e_ = (call);                                  \
		if (e_ != cudaSuccess) {                                  \
			std::fprintf(stderr, "%s: %s\n", #call,           \
				     cudaGetErrorString(e_));             \
			std::exit(1);                                     \
		}                                                         \
	} while (0)

static inline void gpucheck_die(const char *what, const struct gpuar_error *d)
{
	std::fprintf(stderr, "%s: %s\n", what, d ? d->message : "");
	std::exit(1);
}

/* "user" or "kernel" into a port option's engine; false for anything else. */
static inline bool gpucheck_engine(const char *name, uint32_t *engine)
{
	if (!std::strcmp(name, "user"))
		*engine = GPUAR_ENGINE_USER;
	else if (!std::strcmp(name, "kernel"))
		*engine = GPUAR_ENGINE_KERNEL;
	else
		return false;
	return true;
}

/* Device 0 and its primary context, which gpuar's lines share. */
static inline void gpucheck_device(void)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	/* No libcuda.so.1 (insufficient driver), a stub, or no GPU. */
	if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
	    e == cudaErrorStubLibrary || (e == cudaSuccess && n == 0)) {
		std::fprintf(stderr, "no CUDA device: %s\n", cudaGetErrorString(e));
		std::exit(GPUCHECK_NO_DEVICE);
	}
	CHECK_CUDA(e);
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaFree(nullptr));	/* create the primary context */
}

/*
 * What the programs await with: device 0 through gpuar, a port of
 * @engine (strict: never the other engine instead) and one line on it.
 */
static inline void gpucheck_open(uint32_t engine, struct gpuar_cuda **cu,
				 struct gpuar_port **port,
				 struct gpuar_vendor_line **line)
{
	struct gpuar_port_options po = {};
	struct gpuar_error d;

	po.engine = engine;
	po.flags = GPUAR_PORT_STRICT;
	if (gpuar_cuda_open(cu, 0, &d))
		gpucheck_die("gpuar_cuda_open", &d);
	if (gpuar_port_open(port, &po, &d))
		gpucheck_die("gpuar_port_open", &d);
	if (gpuar_cuda_line_alloc(*cu, *port, line, &d))
		gpucheck_die("gpuar_cuda_line_alloc", &d);
}

#endif
