# SPDX-License-Identifier: MIT
# The Python binding (python/gpuar: ctypes over libgpuar.so.0, nothing to
# compile) and its pytest suite, run against the in-tree shared library
# and the CUDA/HIP test doubles.
#
# Debian's interpreter: python3-pytest installs for it, and a python3
# earlier in PATH (pyenv's, a virtual environment's) may lack pytest.
PYTHON ?= /usr/bin/python3

.PHONY: check-python
check-python: $(LIB_SO) $(BACKEND_DOUBLES)
	BUILD=$(abspath $(BUILD)) PYTHONDONTWRITEBYTECODE=1 \
		$(PYTHON) -m pytest -p no:cacheprovider -rs python/tests
