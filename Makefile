# The two set-up commands (README.md):
#   make run    build, then generate, compile and run the matrix-product example:
#               its CUDA C, NVRTC's report, and a checked, timed run on the GPU
#               (without a GPU: on the LLVM CPU target)
#   make test   build, then run the test suite (GPU tests skip where there is no GPU)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# The Python package is built and tested with the python3 on PATH, in a venv
# of its own under the build folder (numpy and pytest from PyPI; tqdm,
# matplotlib and Ray for the tuner: its progress bar, plots and Ray backend;
# loopy, the independent oracle of what a kernel as written means).
PYTHON ?= python3
VENV = $(BUILD)/venv

.PHONY: all deps pyenv build run test test-asan bench clean

all: build

deps:
	@tools/install-deps.sh

pyenv: deps
	@$(VENV)/bin/python -c "import numpy, pytest, tqdm, matplotlib, ray" 2>/dev/null || \
	  { $(PYTHON) -m venv $(VENV) && $(VENV)/bin/pip install -q --disable-pip-version-check numpy pytest tqdm matplotlib 'ray>=2'; }
	@$(VENV)/bin/python -c "import loopy" 2>/dev/null || \
	  $(VENV)/bin/pip install -q --disable-pip-version-check loopy 'islpy<2026' || \
	  echo "warning: loopy could not be installed: the loopy_oracle tests will be skipped"

build: deps pyenv
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DLOOM_WITH_PYTHON=ON \
	  -DPython_EXECUTABLE=$(abspath $(VENV))/bin/python $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/loom show examples/matmul.loom
	$(BUILD)/loom compile examples/matmul.loom
	$(BUILD)/loom run examples/matmul.loom --fallback-compile

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The C++ suite (unit, CLI) under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a build folder of its own. Leak checking is
# off: the isl context and caches live for the whole process on purpose.
# The pinned-CPU runs (the CPU suites again for other LLVM CPU models) are
# left out: they test code generation for those CPUs, not memory safety, and
# the unit run already covers their tests on the host; repeated checks do a
# quarter of their work under the sanitizers (tests/common/oracle.h).
test-asan: deps
	@cmake -S . -B $(BUILD)-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_WITH_PYTHON=OFF \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -E '^unit_cpu_'

bench: build
	$(BUILD)/bench_codegen

clean:
	rm -rf $(BUILD)
