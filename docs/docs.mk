# SPDX-License-Identifier: MIT
# Pictures drawn from sources in docs/ (Graphviz dot, Debian's graphviz):
#   make docs         build/docs/path.svg and path.png from docs/path.dot
#   make docs-update  the same, and copies each SVG over the committed one
#                     (docs/path.svg, which the README shows)
#   make check-docs   the same drawing, which must have every stage of the
#                     path and be byte for byte the committed docs/path.svg,
#                     which README.md must show
DOCS_DOT := $(wildcard docs/*.dot)
DOCS_OUT := $(patsubst docs/%.dot,$(BUILD)/docs/%.svg,$(DOCS_DOT)) \
	$(patsubst docs/%.dot,$(BUILD)/docs/%.png,$(DOCS_DOT))
DOCS_SVG := $(patsubst docs/%.dot,docs/%.svg,$(DOCS_DOT))
DOT ?= dot

$(BUILD)/docs/%.svg: docs/%.dot
	@mkdir -p $(dir $@)
	$(DOT) -Tsvg $< -o $@.tmp && mv $@.tmp $@
$(BUILD)/docs/%.png: docs/%.dot
	@mkdir -p $(dir $@)
	$(DOT) -Tpng $< -o $@.tmp && mv $@.tmp $@

.PHONY: docs docs-update check-docs
docs: $(DOCS_OUT)
docs-update: docs
	@for f in $(DOCS_SVG); do cp $(BUILD)/$$f $$f && echo "docs-update: $$f"; done

# The stages the README names, in the order a completion takes them.
DOCS_PATH_STAGES := 'stream work' write 'completion line' timer 'deadline estimator' \
	'word check' 'record queue' 'port fd' application
check-docs:
	@command -v $(DOT) >/dev/null || \
		{ echo "not ok - check-docs: no $(DOT) (make deps installs graphviz)"; exit 1; }
	@$(MAKE) --no-print-directory docs >/dev/null || \
		{ echo "not ok - check-docs: $(DOT) failed on $(DOCS_DOT)"; exit 1; }
	@for s in $(DOCS_PATH_STAGES); do \
		grep -q ">$$s" $(BUILD)/docs/path.svg || \
			{ echo "not ok - check-docs: path.svg lacks the stage '$$s'"; exit 1; }; \
	done
	@for f in $(DOCS_SVG); do \
		cmp -s $(BUILD)/$$f $$f || \
			{ echo "not ok - check-docs: $$f differs from what $(DOT) draws from $${f%.svg}.dot" \
				"(make docs-update, then commit it)"; exit 1; }; \
	done
	@grep -q '](docs/path.svg)' README.md || \
		{ echo "not ok - check-docs: README.md does not show docs/path.svg"; exit 1; }
	@echo "ok - check-docs: $(words $(DOCS_OUT)) pictures drawn from $(DOCS_DOT)," \
		"$(DOCS_SVG) as committed and shown in README.md"
CHECK_UNIT_TARGETS += check-docs
