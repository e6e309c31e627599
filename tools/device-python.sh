#!/usr/bin/env bash
# For the lent GPU machine: build the Python module with that machine's own
# python3 (pybind11 from its pip), run the pytest suite (the CUDA-tensor test
# included) and the launch-overhead benchmark. .deps/ as for device-run.sh;
# .whl/ may carry pytest if the machine lacks it. Logs under $OUT.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
python3 -c "import pytest" 2>/dev/null || { python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site; }
{
  # The system compiler, linking the system libstdc++ that Python and NumPy
  # load: that machine's CXX is a wrapper (/opt/gcc/bin/g++) that links
  # through GCC's own runtime folder, and a module built with it segfaults at
  # its first C++ stream once NumPy has loaded the system libstdc++ (two
  # copies of the C++ runtime's state in one process).
  cmake -S . -B build-py -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF -DLOOM_WITH_PYTHON=ON \
    -DCMAKE_CXX_COMPILER=/usr/bin/g++ \
    -DPython_EXECUTABLE=$(command -v python3) -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) \
    && cmake --build build-py -j 16 --target _loom loom_python_files
} > "$OUT/py_build.log" 2>&1 || { tail -40 "$OUT/py_build.log"; exit 1; }
export PYTHONPATH=$PWD/build-py/python:${PYTHONPATH:-}
LOOM_SOURCE_DIR=$PWD python3 -m pytest -q -p no:cacheprovider -rs tests/python 2>&1 | tee "$OUT/pytest.log" | tail -8
python3 bench/launch_overhead.py 2>&1 | tee "$OUT/launch_overhead.log"
# the GPU benchmark of issue 11 (bench/gpu.py) when asked: LOOM_GPU_BENCH=1
if [ "${LOOM_GPU_BENCH:-0}" = 1 ]; then python3 bench/gpu.py 2>&1 | tee "$OUT/bench_gpu.log"; fi
