# hlsgen — the two set-up commands are `make demo` and `make test`; both build .venv themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,sim,dist]'
	touch $(STAMP)

# Optional Debian packages (ccache, liblz4-dev; for `make test` also iverilog and chromium): installed with
# apt-get when root and apt-get are there, each announced with what it adds; otherwise a note, and on.
# HLSGEN_SYSTEM_TOOLS=skip never installs any. See scripts/system_tools.sh.
.PHONY: system-tools-demo system-tools-test
system-tools-demo system-tools-test:
	@sh scripts/system_tools.sh $(@:system-tools-%=%)

demo: $(STAMP) system-tools-demo
	$(BIN)/python examples/resnet_cifar/make_model.py
	$(BIN)/hlsgen compile examples/resnet_cifar/model.onnx --calib examples/resnet_cifar/calib.npy \
	    -c examples/resnet_cifar/config.yaml -o build/resnet_cifar
	$(BIN)/hlsgen run examples/resnet_cifar/model.onnx --calib examples/resnet_cifar/calib.npy \
	    -c examples/resnet_cifar/config.yaml --input examples/resnet_cifar/sample.npy \
	    --output build/resnet_cifar_sample_out.npy
	$(BIN)/hlsgen csim build/resnet_cifar
	$(BIN)/hlsgen rtlsim build/resnet_cifar
	@echo "report: build/resnet_cifar/report.md; HLS C++: build/resnet_cifar/hls/; Verilog: build/resnet_cifar/rtl/"

# pytest-xdist: one worker per core (at most 4), a file's tests on one worker (tests/conftest.py)
PYTEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
PARALLEL := -n $(PYTEST_JOBS) --dist loadfile --no-loadscope-reorder

test: $(STAMP) system-tools-test
	$(BIN)/ruff check hlsgen tests examples benchmarks scripts
	$(BIN)/mypy
	$(BIN)/pytest -q $(PARALLEL)

test-all: $(STAMP) system-tools-test
	$(BIN)/pytest -q -m '' $(PARALLEL)

bench: $(STAMP)
	$(BIN)/python benchmarks/golden_throughput.py
	$(BIN)/python benchmarks/ort_agreement.py
	$(BIN)/python benchmarks/rtl_cycles.py
	$(BIN)/python benchmarks/hls_timed_cycles.py

.PHONY: regress
regress: $(STAMP)
	@# compile + golden + csim + rtlsim of every example, 2 at a time; table on stdout, JUnit in build/ (docs/cli.md)
	$(BIN)/hlsgen regress examples/ -j 2 --frames 2 -o build/regress --junit build/regress.xml

.PHONY: bench-mlperf
bench-mlperf: $(STAMP)
	@# MLPerf Tiny ResNet-8, DS-CNN, FC autoencoder: compile (defaults), rtlsim, synth; minutes (docs/benchmarks.md)
	$(BIN)/python benchmarks/mlperf_tiny.py

.PHONY: fuzz
fuzz: $(STAMP)
	@# golden == C-sim (every network) == RTL (every 5th) on N random networks, default 200; a failure
	@# stops the run with hypothesis's shrunk reproducer; log in build/fuzz/campaign.jsonl (docs/testing.md)
	HLSGEN_FUZZ_N=$(or $(N),200) $(BIN)/pytest -q -x -m fuzz_campaign tests/fuzz/test_fuzz.py

clean:
	rm -rf $(VENV) build
