# Two commands for a newcomer: `make book` and `make test`. Both create .venv
# from requirements.txt on first use (only Python 3.11 and make are needed).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# nbval compares every byte: fix the hash seed (set iteration order).
export PYTHONHASHSEED := 0
JB_FLAGS := -W -n --keep-going

.PHONY: book test lint unit notebooks html browser lab clean

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

## book: build the HTML book into _build/html and print the index page path.
book: $(STAMP)
	$(BIN)/jupyter-book build $(JB_FLAGS) .
	@echo "Book index: $(CURDIR)/_build/html/index.html"

## test: unit tests, nbval on every notebook, strict HTML build, browser checks.
test: unit notebooks html browser

## lint: ruff, configured in pyproject.toml (src/llm_from_scratch/ruff.toml: 76 columns,
## so the listings the book shows never scroll sideways).
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

unit: $(STAMP)
	$(BIN)/python -m pytest -q tests --ignore=tests/browser

notebooks: $(STAMP)
	$(BIN)/python -m pytest -q --nbval --nbval-current-env --nbval-sanitize-with book/sanitize.cfg book

html: $(STAMP)
	$(BIN)/jupyter-book build --all $(JB_FLAGS) .

browser: $(STAMP)
	$(BIN)/python -m pytest -q tests/browser

## lab: open JupyterLab on book/ with the package importable.
lab: $(STAMP)
	$(BIN)/jupyter lab --notebook-dir=book

clean:
	rm -rf _build
