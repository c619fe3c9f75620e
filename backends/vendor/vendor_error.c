// SPDX-License-Identifier: MIT
/* Coded errors of the CUDA and HIP backends (GPUAR_E_BACKEND). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codes.h"
#include "vendor.h"

void gv_diag_clear(struct gpuar_error *diag)
{
	if (diag) {
		diag->code = GPUAR_OK;
		diag->sys_errno = 0;
		diag->message[0] = '\0';
	}
}

int gv_refuse(struct gpuar_error *diag, const char *what)
{
	const char *args[2] = { what, "NULL or not this backend's" };

	return gpuar_diag_set(diag, GPUAR_E_INVALID_ARGUMENT, EINVAL, args, 2);
}

static int gv_fill(struct gv_backend *b, struct gpuar_error *diag, int err,
		   unsigned int status, const char *detail)
{
	char num[16];
	const char *args[4];

	if (!diag)
		return -err;
	if (status == GV_NO_VENDOR_STATUS) {
		args[1] = "-";
		args[2] = "gpuar";
	} else {
		snprintf(num, sizeof(num), "%u", status);
		args[1] = num;
		args[2] = b->ops->status_name(b, status);
	}
	args[0] = b->ops->name;
	args[3] = detail;
	diag->code = GPUAR_E_BACKEND;
	diag->sys_errno = err;
	gpuar_code_format(diag->message, sizeof(diag->message),
			  GPUAR_E_BACKEND, args, 4);
	return -err;
}

int gv_fail(struct gv_backend *b, struct gpuar_error *diag, int err,
	    unsigned int status, const char *fmt, ...)
{
	char detail[GPUAR_MESSAGE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	return gv_fill(b, diag, err, status, detail);
}

static int gv_errno_of(struct gv_backend *b, unsigned int status)
{
	(void)b;
	switch (status) {
	case 1:		/* INVALID_VALUE in both APIs */
		return EINVAL;
	case 2:		/* CUDA_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory */
		return ENOMEM;
	case 100:	/* NO_DEVICE */
	case 101:	/* INVALID_DEVICE */
		return ENODEV;
	case 400:	/* INVALID_HANDLE */
		return EBADF;
	case 500:	/* NOT_FOUND */
		return ENOSYS;
	case 801:	/* NOT_SUPPORTED */
		return EOPNOTSUPP;
	default:
		return EIO;
	}
}

int gv_vendor_fail(struct gv_backend *b, struct gpuar_error *diag,
		   unsigned int status, const char *op)
{
	unsigned int first;
	char first_op[sizeof(b->sticky_op)];
	bool sticky = b->ops->status_sticky(status);

	pthread_mutex_lock(&b->lock);
	if (sticky && !b->sticky) {
		b->sticky = status;
		snprintf(b->sticky_op, sizeof(b->sticky_op), "%s", op);
	}
	first = b->sticky;
	memcpy(first_op, b->sticky_op, sizeof(first_op));
	pthread_mutex_unlock(&b->lock);

	if (!first)
		return gv_fail(b, diag, gv_errno_of(b, status), status,
			       "%s failed on device %d", op, b->device);
	/* CUDA/HIP device errors are sticky: name the first, and what it
	 * poisons, so the caller does not chase the later, derived ones. */
	return gv_fail(b, diag, gv_errno_of(b, status), status,
		       "%s failed on device %d; %s poisoned by %s (%u, first "
		       "in %s): its streams, lines and waits are unusable "
		       "until it is reset",
		       op, b->device, b->ops->domain,
		       b->ops->status_name(b, first), first, first_op);
}

int gv_load_fail(struct gv_load_error *why, int err, unsigned int status,
		 const char *fmt, ...)
{
	va_list ap;

	why->err = err;
	why->status = status;
	va_start(ap, fmt);
	vsnprintf(why->detail, sizeof(why->detail), fmt, ap);
	va_end(ap);
	return -err;
}
