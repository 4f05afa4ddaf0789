# Two commands for a newcomer: `make book` and `make test`. Both create .venv
# from requirements.txt on first use (only Python 3.11 and make are needed).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# nbval compares every byte: fix the hash seed (set iteration order).
export PYTHONHASHSEED := 0
# The stored notebook outputs come from OpenBLAS's Haswell kernel (AVX2). Its
# kernel for a newer CPU (SkylakeX, AVX-512) sums in another order, and one
# training run of ten on chapter 31's training page (Pre, seed 39, eta = 0.03)
# then ends above the loss line 2 late: its verdict changes and nbval fails.
# Pin the kernel on x86-64 unless the caller chose one; the page says so too.
ifeq ($(shell uname -m),x86_64)
export OPENBLAS_CORETYPE ?= Haswell
endif
JB_FLAGS := -W -n --keep-going
# Two editions in one site: the Russian (the first edition) from the repository's
# _config.yml and _toc.yml into _build/html, the English from book/en/_config.yml
# and book/en/_toc.yml (its pages are book/en/) into _build/html/en. jupyter-book
# writes a build to <path-output>/_build/html, so the English one is built in
# _build/en and copied into place (its doctrees stay out of the site). The toc
# path is absolute: Sphinx reads it from the source folder, the CLI from here.
EN_DIR := book/en
EN_BUILD := _build/en
JB_EN := --config $(EN_DIR)/_config.yml --toc $(CURDIR)/$(EN_DIR)/_toc.yml --path-output $(EN_BUILD) $(EN_DIR)
# pytest-xdist: one worker per core. nbval needs --dist loadscope (a notebook's
# cells stay on one worker); the other suites' tests are independent.
XDIST := -n auto
NBVAL := --nbval --nbval-current-env --nbval-sanitize-with book/sanitize.cfg
# The downloadable course, linked from book/intro.md with {download}: Sphinx
# copies it into _build/html/_downloads/.
COURSE_ZIP := _build/course/llm-from-scratch-course.zip
COURSE_SOURCES := tools/build_course.py tools/course/README.md tools/course/requirements.lock \
	tools/lab/llm-from-scratch.json5 requirements.txt pyproject.toml $(wildcard book/ch*.ipynb) \
	$(shell find src -name '*.py' -not -path '*/__pycache__/*')
# Node tools of the build (MathJax typesets the formulas, PurgeCSS drops unused
# CSS: book/_ext/), installed exactly from package-lock.json. npm ci writes
# node_modules/.package-lock.json, the stamp.
NODE_STAMP := node_modules/.package-lock.json
# JupyterLab's settings shipped with the repository (no first-start news
# prompt; every cell rendered when a notebook opens, so that no solution shows
# as raw MyST: the file says why), in the settings layer for packages
# (overrides.d/), so a developer's own overrides.json is neither written nor
# shadowed; the course's wheel installs the same file at the same place.
LAB_OVERRIDES := $(VENV)/share/jupyter/lab/settings/overrides.d/llm-from-scratch.json5
# JupyterLab refuses to start as root (every Docker user) without --allow-root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB_DIR ?= book
LAB_ARGS ?=
# The file browser shows the book, not its build tooling (Sphinx's _ext, the
# HTML book's _static and _templates, nbval's sanitize.cfg); the rest are
# JupyterLab's own defaults.
LAB_HIDDEN := __pycache__ *.pyc *.pyo .DS_Store *~ _ext _static _templates sanitize.cfg

.PHONY: book test lint lint-python lint-workflow unit notebooks nbval habits html browser lab lock clean \
	editions edition-ru edition-en

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

$(LAB_OVERRIDES): tools/lab/llm-from-scratch.json5 $(STAMP)
	@mkdir -p $(dir $@)
	cp $< $@

$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "make book needs Node.js 18+ and npm (Debian: apt-get install nodejs npm)"; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

$(COURSE_ZIP): $(STAMP) $(COURSE_SOURCES)
	$(BIN)/python tools/build_course.py $@

# The English edition's course: the same files, book/en/'s notebooks (under the
# same names) and tools/course/README.en.md; linked from book/en/intro.md.
# `make book`, `make html` (so `make browser`) and `make test` build it too.
COURSE_ZIP_EN := _build/course/llm-from-scratch-course-en.zip
COURSE_SOURCES_EN := $(COURSE_SOURCES) tools/course/README.en.md $(wildcard book/en/ch*.ipynb)

$(COURSE_ZIP_EN): $(STAMP) $(COURSE_SOURCES_EN)
	$(BIN)/python tools/build_course.py --edition en $@

book html test: $(COURSE_ZIP_EN)

## course: both editions' course zips (make book builds them too).
.PHONY: course
course: $(COURSE_ZIP) $(COURSE_ZIP_EN)

## book: build both editions of the HTML book (with the course zip) into _build/html
## (English: _build/html/en) and print the index page path.
book: $(STAMP) $(NODE_STAMP) $(COURSE_ZIP)
	@$(MAKE) --no-print-directory editions JB_BUILD_FLAGS="$(JB_FLAGS)"
	@echo "Book index: $(CURDIR)/_build/html/index.html (English: $(CURDIR)/_build/html/en/index.html)"

# The two editions' builds side by side (two jobs; each one's log printed whole
# when it ends); JB_BUILD_FLAGS: book's incremental build or html's full one.
editions:
	@$(MAKE) --no-print-directory -j2 --output-sync=target edition-ru edition-en

edition-ru:
	$(BIN)/jupyter-book build $(JB_BUILD_FLAGS) .

edition-en:
	$(BIN)/jupyter-book build $(JB_BUILD_FLAGS) $(JB_EN)
	rm -rf _build/html/en && mkdir -p _build/html && cp -R $(EN_BUILD)/_build/html _build/html/en

## test: lint, then every part below in one pytest session (unit, nbval, habits,
## browser) while a fresh strict build runs beside it (its log is printed after
## the tests); the tests that read the built book wait for it (BOOK_BUILD_STATUS,
## tests/browser/conftest.py). It runs every part even when one fails, and fails
## at the end if any failed. Modules start slowest first (tests/conftest.py). At
## the end it prints what each suite cost (tools/suite_costs.py, from pytest's JUnit report).
BUILD_STATUS := _build/html-build.status
BUILD_SECONDS := _build/html-build.seconds
TEST_TIMES := _build/test-times.xml
test: $(STAMP) $(LAB_OVERRIDES) $(NODE_STAMP) $(COURSE_ZIP)
	@status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	rm -f $(BUILD_STATUS); \
	{ start=$$(date +%s); $(MAKE) --no-print-directory html > _build/html-build.log 2>&1; \
	  echo $$? > $(BUILD_STATUS); echo $$(( $$(date +%s) - start )) > $(BUILD_SECONDS); } & \
	BOOK_BUILD_STATUS=$(BUILD_STATUS) $(BIN)/python -m pytest -q $(XDIST) --dist loadscope \
		--no-loadscope-reorder $(NBVAL) --junitxml=$(TEST_TIMES) -o junit_family=xunit1 \
		tests book || status=1; \
	wait; \
	echo "--- make html (beside the tests) ---"; cat _build/html-build.log; \
	echo "--- what each suite cost (tools/suite_costs.py) ---"; \
	$(BIN)/python tools/suite_costs.py $(TEST_TIMES) $(BUILD_SECONDS) || true; \
	test "$$(cat $(BUILD_STATUS))" = 0 || status=1; \
	exit $$status

## lint: ruff (its one configuration is in pyproject.toml; not tests/fixtures, whose
## notebooks break rules on purpose) and zizmor on the CI workflow. The book's 76
## columns, so that listings never scroll sideways, are a unit test.
lint: lint-python lint-workflow

lint-python: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools book/_ext

lint-workflow: $(STAMP)
	$(BIN)/zizmor --offline --no-progress .github/workflows

## unit: the package's tests and the static notebook conventions.
unit: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) tests --ignore=tests/browser \
		--ignore=tests/test_notebook_habits.py --ignore=tests/test_notebook_rules.py

## notebooks: nbval (stored outputs equal a fresh run) and the learner-habit tests.
notebooks: nbval habits

nbval: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) --dist loadscope $(NBVAL) book

habits: $(STAMP)
	$(BIN)/python -m pytest -q $(XDIST) tests/test_notebook_habits.py tests/test_notebook_rules.py

## html: a full strict rebuild of both editions (every warning fails), from an
## empty _build/html (no file of an older build counts toward the page and size limits).
html: $(STAMP) $(NODE_STAMP) $(COURSE_ZIP)
	rm -rf _build/html $(EN_BUILD)
	@$(MAKE) --no-print-directory editions JB_BUILD_FLAGS="--all $(JB_FLAGS)"

## browser: the built book in Chromium, the downloaded course in a fresh venv,
## the chapters in real JupyterLab. Always after a fresh build. Modules go to
## the workers in the order of tests/browser/conftest.py (slowest first).
browser: html $(LAB_OVERRIDES)
	$(BIN)/python -m pytest -q $(XDIST) --dist loadscope --no-loadscope-reorder tests/browser

## lab: JupyterLab on book/ with the package importable (its kernel is .venv's).
## LAB_DIR and LAB_ARGS are for the tests (another folder, port, token).
lab: $(STAMP) $(LAB_OVERRIDES)
	@echo "JupyterLab starts on $(LAB_DIR)/: open the http://127.0.0.1:... URL it prints (Ctrl+C stops it)."
	$(BIN)/jupyter lab $(ALLOW_ROOT) --notebook-dir=$(LAB_DIR) \
		$(foreach glob,$(LAB_HIDDEN),--ContentsManager.hide_globs='$(glob)') $(LAB_ARGS)

## lock: regenerate tools/course/requirements.lock, the downloadable course's lock,
## from the runtime pins of requirements.txt (after changing one): uv resolves
## every transitive package, with the sha256 of each file on the registry, for
## every platform; the unit tests fail while the lock is stale.
lock: $(STAMP)
	$(BIN)/python tools/build_course.py --lock

clean:
	rm -rf _build
