# SPDX-License-Identifier: MIT
# Installing the way clusters install software: manual pages, Debian
# packages, the RPM spec, and their checks.
#
#   make install-man        man/ into $(MANDIR) (part of make install)
#   make deb                build/deb/*.deb: gpuar-dkms, libgpuar$(SOVERSION),
#                           libgpuar-dev, gpuar-tools; lintian
#   make check-packages     those packages in a clean bookworm chroot
#                           (tools/check-packages.sh)
#   make check-man          mandoc -T lint; every exported function has a page
#   make check-rpm-spec     rpmbuild -bs (and -bb --nodeps) of the RPM spec
#   make check-modprobe-example, check-version
#                           the hand-written parameter list and version
#                           macros agree with the module and the Makefile
#
# The Debian packaging lives in packaging/debian and is copied, with the
# source tree, into build/deb/gpuar-$(VERSION)/debian by make deb. A
# top-level debian/ would be where dpkg-buildpackage expects it, but the
# build would then write debian/tmp, debian/<package>/, debian/files and
# the .deb files themselves (into the tree's parent directory) outside
# build/; and the version and soname, which come from this Makefile,
# would have to be edited into debian/changelog and debian/control by
# hand. The copy gets both filled in.

MANDIR ?= $(PREFIX)/share/man
MAN_PAGES := $(sort $(wildcard man/man*/*.[0-9]))

.PHONY: install-man uninstall-man uninstall install-dkms-source install-module-config \
	deb check-packages check-man check-rpm-spec rpm-spec

# A function's page is often a link to its group's page: installed as
# the same link.
install-man:
	@for p in $(MAN_PAGES); do \
		d=$(DESTDIR)$(MANDIR)/$$(basename $$(dirname $$p)); \
		install -d $$d || exit 1; \
		if [ -L $$p ]; then ln -sf $$(readlink $$p) $$d/$$(basename $$p); \
		else install -m 644 $$p $$d/; fi || exit 1; \
	done
INSTALL_TARGETS += install-man

uninstall-man:
	@rm -f $(addprefix $(DESTDIR)$(MANDIR)/,$(patsubst man/%,%,$(MAN_PAGES)))

# What make install installed (lib/lib.mk and tools/tools.mk install the
# library and the tools).
uninstall: uninstall-lib uninstall-man
	rm -f $(DESTDIR)$(BINDIR)/gpuar-bench $(DESTDIR)$(BINDIR)/gpuar-stat

# check-install: make install PREFIX=<tmp>, the tools and the quick start
# run from there without LD_LIBRARY_PATH, make uninstall empties it
# (tools/check-install.sh). Not under SANITIZE: plain cc cannot link an
# ASan library.
.PHONY: check-install
ifeq ($(SANITIZE),)
check-install: $(LIB_A) $(LIB_SO) $(BENCH) $(STAT)
	@MAKE="$(MAKE)" tools/check-install.sh $(BUILD)/install-check
else
check-install:
	@echo "ok - check-install # SKIP under SANITIZE (plain cc cannot link an ASan library)"
endif
CHECK_UNIT_TARGETS += check-install

# The DKMS source tree alone (what make dkms-install registers), for the
# packages, whose install scripts do the registering.
install-dkms-source:
	@mkdir -p $(DESTDIR)/usr/src
	$(call dkms_tree,$(DKMS_SRC))

# The module's boot-time load and the example of its parameters.
install-module-config:
	install -D -m 644 packaging/modules-load/gpuar.conf \
		$(DESTDIR)/usr/lib/modules-load.d/gpuar.conf
	install -D -m 644 packaging/modprobe/gpuar.conf \
		$(DESTDIR)/usr/share/doc/gpuar-dkms/examples/modprobe.d/gpuar.conf

# ---------------------------------------------------------------- deb
DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/gpuar-$(VERSION)
# The source tree as it stands (committed or not), without the build
# directory and version control.
DEB_TREE_EXCLUDES := --exclude-vcs --exclude=./$(firstword $(subst /, ,$(BUILD)))
# The changelog's date: the last commit's, so two builds of one commit
# make the same packages; now where there is no git.
DEB_DATE = $(shell date -R -u -d @$$(git log -1 --format=%ct 2>/dev/null || date +%s))

deb:
	@rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	@tar -cf - $(DEB_TREE_EXCLUDES) . | tar -xf - -C $(DEB_SRC)
	@rm -rf $(DEB_SRC)/packaging/debian && cp -r packaging/debian $(DEB_SRC)/debian
	@cd $(DEB_SRC)/debian && \
		sed -e 's/@VERSION@/$(VERSION)/' -e 's/@DATE@/$(DEB_DATE)/' changelog.in >changelog && \
		sed 's/@SOVERSION@/$(SOVERSION)/g' control.in >control && \
		sed 's/@SOVERSION@/$(SOVERSION)/g' libgpuar.symbols >libgpuar$(SOVERSION).symbols && \
		mv libgpuar.install libgpuar$(SOVERSION).install && \
		rm changelog.in control.in libgpuar.symbols && \
		cp ../kmod/60-gpuar.rules gpuar-dkms.gpuar.udev
	@echo "deb: dpkg-buildpackage in $(DEB_SRC) (log: $(DEB_DIR)/build.log)"
	@cd $(DEB_SRC) && dpkg-buildpackage -b -us -uc -j2 >../build.log 2>&1 || \
		{ tail -40 ../build.log; exit 1; }
	@rm -rf $(DEB_SRC)
	@ls $(DEB_DIR)/*.deb
	@echo "deb: lintian (log: $(DEB_DIR)/lintian.log)"
	@lintian --fail-on error --info $(DEB_DIR)/gpuar_$(VERSION)_*.changes \
		>$(DEB_DIR)/lintian.log 2>&1; rc=$$?; \
		grep -E '^[EW]: ' $(DEB_DIR)/lintian.log | sort | uniq -c; \
		test $$rc = 0 || { echo "deb: lintian reports errors"; exit 1; }

# The packages on a clean bookworm node (tools/check-packages.sh): DKMS
# builds the module, the quick start builds against libgpuar-dev and runs,
# a purge leaves nothing behind.
check-packages: deb
	@BUILD=$(BUILD) tools/check-packages.sh $(DEB_DIR)

# mandoc -T lint clean, a page for every exported function, every option
# of the tools' --help in their pages (man/check-man.sh).
check-man: $(LIB_SO) $(BENCH) $(STAT)
	@command -v mandoc >/dev/null || { echo "not ok - check-man: no mandoc (make deps)"; exit 1; }
	@man/check-man.sh $(LIB_SO) $(BENCH) $(STAT)

# ---------------------------------------------------------------- rpm
RPM_DIR := $(BUILD)/rpm

rpm-spec:
	@rm -rf $(RPM_DIR) && mkdir -p $(RPM_DIR)/SPECS $(RPM_DIR)/SOURCES
	@sed -e 's/@VERSION@/$(VERSION)/g' -e 's/@SOVERSION@/$(SOVERSION)/g' \
		packaging/rpm/gpuar.spec.in >$(RPM_DIR)/SPECS/gpuar.spec
	@tar -czf $(RPM_DIR)/SOURCES/gpuar-$(VERSION).tar.gz $(DEB_TREE_EXCLUDES) \
		--transform 's|^\.|gpuar-$(VERSION)|' .

# The spec parses and a source RPM builds from it; then the binary
# packages build from it too (--nodeps: Debian's rpm and toolchain, not a
# Fedora or EL build root), which proves that %install and %files agree.
# What this cannot check is in the README's "Installing".
RPMBUILD = rpmbuild --define '_topdir $(abspath $(RPM_DIR))' --define '_smp_mflags -j2'
check-rpm-spec: rpm-spec
	@command -v rpmbuild >/dev/null || { echo "not ok - check-rpm-spec: no rpmbuild (make deps)"; exit 1; }
	@$(RPMBUILD) -bs $(RPM_DIR)/SPECS/gpuar.spec >$(RPM_DIR)/rpmbuild.log 2>&1 || \
		{ cat $(RPM_DIR)/rpmbuild.log; echo "not ok - check-rpm-spec: rpmbuild -bs failed"; exit 1; }
	@srpm=$$(ls $(RPM_DIR)/SRPMS/gpuar-$(VERSION)-1*.src.rpm) && \
		rpm -qp --qf '%{VERSION}\n' $$srpm 2>/dev/null | grep -qx '$(VERSION)' && \
		echo "ok - check-rpm-spec: rpmbuild -bs gives $$(basename $$srpm)"
	@$(RPMBUILD) -bb --nodeps $(RPM_DIR)/SPECS/gpuar.spec >>$(RPM_DIR)/rpmbuild.log 2>&1 || \
		{ tail -30 $(RPM_DIR)/rpmbuild.log; echo "not ok - check-rpm-spec: rpmbuild -bb failed"; exit 1; }
	@n=$$(ls $(RPM_DIR)/RPMS/*/*.rpm | grep -vc debug); test $$n = 4 || \
		{ echo "not ok - check-rpm-spec: $$n binary packages, not 4"; exit 1; }; \
		echo "ok - check-rpm-spec: rpmbuild -bb --nodeps builds the 4 binary packages"

# The example modprobe.d file names every parameter the module has, and
# no other (its values are the defaults, written by hand).
.PHONY: check-modprobe-example
check-modprobe-example:
	@sed -n 's/^module_param_cb(\([a-z_0-9]*\),.*/\1/p' kmod/params.c | sort >$(BUILD)/params.module && \
		sed -n 's/^#options gpuar \([a-z_0-9]*\)=.*/\1/p' packaging/modprobe/gpuar.conf | sort >$(BUILD)/params.example && \
		if cmp -s $(BUILD)/params.module $(BUILD)/params.example; then \
			echo "ok - check-modprobe-example: packaging/modprobe/gpuar.conf has the module's $$(wc -l <$(BUILD)/params.module) parameters"; \
		else diff $(BUILD)/params.module $(BUILD)/params.example | sed 's/^/# /'; \
			echo "not ok - check-modprobe-example: packaging/modprobe/gpuar.conf and kmod/params.c's parameters differ (< module, > example)"; exit 1; fi

# The version is the Makefile's VERSION everywhere it is written: the
# packages, the module and the library get it from there; the header's
# GPUAR_LIB_VERSION_* (what a program compiles against) must agree.
.PHONY: check-version
check-version:
	@v=$$(for p in MAJOR MINOR PATCH; do \
		sed -n "s/^#define GPUAR_LIB_VERSION_$$p \([0-9]*\)$$/\1/p" include/gpuar/gpuar.h; \
	done | paste -sd.); \
	if [ "$$v" = "$(VERSION)" ]; then \
		echo "ok - check-version: <gpuar/gpuar.h> says $$v, as the Makefile's VERSION"; \
	else echo "not ok - check-version: <gpuar/gpuar.h> says $$v, the Makefile's VERSION $(VERSION)"; exit 1; fi

# In check-unit; not again in check-sanitize's build, which tests the same
# code under ASan and UBSan and would only repeat these.
ifeq ($(SANITIZE),)
CHECK_UNIT_TARGETS += check-man check-rpm-spec check-modprobe-example check-version
endif
