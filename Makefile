# Quick start: `make run` opens the app, `make test` runs the tests. Both create .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# (bench writes the stall and growth figures to build/bench/; benchmarks/doc_tables.py puts them
# into docs/benchmarks.md)
.PHONY: run test lint bench fuzz bundle clean screenshots

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python 3.11 or newer is needed; run: make PYTHON=python3.11 ...")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/roofline-explorer

test: $(STAMP)
	$(BIN)/ruff check explorer tests benchmarks packaging
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

# The long loader fuzz (tests/fuzz): 50,000 mutated files per loader and mutation kind; hours.
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=long $(BIN)/python -m pytest -q tests/fuzz --hypothesis-show-statistics

# The desktop bundle (packaging/): dist/roofline-explorer/ and a tarball; a few minutes.
bundle: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bundle]'
	$(BIN)/python packaging/build_bundle.py

bench: $(STAMP)
	$(BIN)/python benchmarks/analyze_speed.py
	$(BIN)/python benchmarks/profile_size.py
	$(BIN)/python benchmarks/profile_csv_size.py
	$(BIN)/python benchmarks/chart_build.py
	$(BIN)/python benchmarks/cpu_triad_vs_c.py
	$(BIN)/python benchmarks/gemm_vs_matmul.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python benchmarks/drag_latency.py
	$(BIN)/python benchmarks/drag_x11.py
	$(BIN)/python benchmarks/app_responsiveness.py --only startup --rounds 9
	$(BIN)/python benchmarks/startup_x11.py --rounds 9
	$(BIN)/python benchmarks/startup_instructions.py --rounds 3
	$(BIN)/python benchmarks/timer_agreement.py
	$(BIN)/python benchmarks/gpu_suite.py
	@mkdir -p build/bench
	$(BIN)/python benchmarks/gui_stalls.py --platform offscreen --json build/bench/stalls-offscreen.json
	$(BIN)/python benchmarks/gui_stalls.py --platform x11 --json build/bench/stalls-x11.json
	$(BIN)/python benchmarks/growth.py --json build/bench/growth.json
	@echo "On a quiet run: python benchmarks/doc_tables.py --note '…' writes build/bench/ into docs/benchmarks.md"

# The pictures of the README and docs/, drawn again from the current code (offscreen; a minute).
screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python main.py --screenshot packaging/screenshots/window-1366x768.png --size 1366x768
	$(BIN)/python main.py export --scene cpu-vs-gpu --width 1200 --out packaging/screenshots/scene-cpu-vs-gpu.png
	$(BIN)/python main.py export --scene decode-batching --width 1200 --out packaging/screenshots/scene-decode-batching.png

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache
