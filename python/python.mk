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

# The binding's files where Debian's python3 finds packages, for the
# python3-gpuar Debian package (packaging/debian/rules): the pure Python
# package only, loading the system's libgpuar.so.0 (libgpuar0). Not part of
# `make install`: outside a package, `pip install ./python` (which builds
# the library into the package) is the way.
PYTHON3_DIST ?= $(PREFIX)/lib/python3/dist-packages
.PHONY: install-python
install-python:
	install -d $(DESTDIR)$(PYTHON3_DIST)/gpuar
	install -m 644 python/gpuar/*.py python/gpuar/py.typed $(DESTDIR)$(PYTHON3_DIST)/gpuar/
