#!/usr/bin/env bash
set -uo pipefail
source tools/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
{ cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF -DLOOM_WITH_PYTHON=OFF \
   && cmake --build build-device -j16 --target loom_cli loom_gpu_tests; } > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
LOOM_SOURCE_DIR=$PWD build-device/loom_gpu_tests > $OUT/gpu_tests.log 2>&1; tail -5 $OUT/gpu_tests.log; grep "FAILED" $OUT/gpu_tests.log | head
{ build-device/loom run examples/csr_row_sums.loom; build-device/loom run examples/histogram.loom;
  compute-sanitizer --tool memcheck build-device/loom run examples/csr_row_sums.loom -D n=3001 -D nnz=50000 2>&1 | tail -4; } > $OUT/run.log 2>&1; tail -12 $OUT/run.log
{ cmake -S . -B build-py -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF -DLOOM_WITH_PYTHON=ON \
    -DCMAKE_CXX_COMPILER=/usr/bin/g++ -DPython_EXECUTABLE=$(command -v python3) -Dpybind11_DIR=$(python3 -m pybind11 --cmakedir) \
    && cmake --build build-py -j 16 --target _loom loom_python_files; } > $OUT/py_build.log 2>&1 || { tail -30 $OUT/py_build.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python
LOOM_SOURCE_DIR=$PWD python3 -m pytest -q -p no:cacheprovider -rs tests/python 2>&1 | tee $OUT/pytest.log | tail -6
python3 bench/gpu.py --csr 2>&1 | tee $OUT/bench_csr.log
