// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Probe: vm_flags_set() exists (6.3 and later; vm_flags is read-only there). */
#include <linux/mm.h>

void gpuar_conftest(struct vm_area_struct *vma);
void gpuar_conftest(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
