#!/usr/bin/env bash
# For the lent GPU machine: build the command-line tool (CUDA only), then tune
# PolyBench kernels (examples/polybench) from the automatic space, at the
# files' default sizes (PolyBench's SMALL) or, with SIZES=large, PolyBench's
# LARGE dataset: the kernel as written (trial 0) against the space's winner,
# every trial checked against the reference interpreter at small sizes.
# Kernels whose random-input checks need the user's tolerance or sizes
# (issue 50's checks) get them: lu and ludcmp --atol 1e-6 (LU without
# pivoting, FMA rounding), gramschmidt checked with m >= n.
#   [SIZES=large] tools/device-polybench.sh TRIALS [NAME ...]   (no names: all 30)
# Logs go to $OUT (tools/device-env.sh); tune-full.log keeps each run's whole output.
set -uo pipefail
source "$(dirname "$0")/device-env.sh"
TRIALS=${1:-16}
shift || true
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$PREFIX/usr -DLOOM_WITH_LLVM=OFF \
    && cmake --build build-device -j 16 --target loom_cli
} > "$OUT/build.log" 2>&1 || { tail -50 "$OUT/build.log"; exit 1; }
L=./build-device/loom
declare -A LARGE=(
  [2mm]="ni=800 nj=900 nk=1100 nl=1200" [3mm]="ni=800 nj=900 nk=1000 nl=1100 nm=1200" [adi]="tsteps=500 n=1000"
  [atax]="m=1900 n=2100" [bicg]="m=1900 n=2100" [cholesky]="n=2000" [correlation]="m=1200 n=1400" [covariance]="m=1200 n=1400"
  [deriche]="w=4096 h=2160" [doitgen]="nq=140 nr=150 np=160" [durbin]="n=2000" [fdtd_2d]="tmax=500 nx=1000 ny=1200"
  [floyd_warshall]="n=2800" [gemm]="ni=1000 nj=1100 nk=1200" [gemver]="n=2000" [gesummv]="n=1300" [gramschmidt]="m=1000 n=1200"
  [heat_3d]="tsteps=500 n=120" [jacobi_1d]="tsteps=500 n=2000" [jacobi_2d]="tsteps=500 n=1300" [lu]="n=2000" [ludcmp]="n=2000"
  [mvt]="n=2000" [nussinov]="n=2500" [seidel_2d]="tsteps=500 n=2000" [symm]="m=1000 n=1200" [syr2k]="m=1000 n=1200"
  [syrk]="m=1000 n=1200" [trisolv]="n=2000" [trmm]="m=1000 n=1200")
# check inputs where random ones make the kernel ill-posed: nonnegative path
# lengths (random ones have negative cycles, whose sums overflow int32:
# undefined behaviour, so two right orders may differ), an SPD matrix for
# Cholesky (random ones take square roots of negatives)
CHECKS=$(mktemp -d)
env -u LD_LIBRARY_PATH python3 - "$CHECKS" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(0)
np.save(sys.argv[1] + "/floyd_path.npy", rng.integers(0, 100, (67, 67)).astype(np.int32))
a = rng.uniform(-1, 1, (67, 67))
np.save(sys.argv[1] + "/cholesky_A.npy", (a + a.T) / 2 + 68 * np.eye(67))
PY
declare -A CHECK=([lu]="--atol 1e-6" [ludcmp]="--atol 1e-6" [gramschmidt]="--check-size m=67 --check-size n=60"
  [floyd_warshall]="--check-input path=$CHECKS/floyd_path.npy --check-size n=67"
  [cholesky]="--check-input A=$CHECKS/cholesky_A.npy --check-size n=67")
names=("$@")
[ ${#names[@]} -eq 0 ] && names=($(ls examples/polybench/*.loom | xargs -n1 basename | sed 's/\.loom$//'))
for n in "${names[@]}"; do
  SECONDS=0
  sizes=""
  [ "${SIZES:-}" = large ] && for d in ${LARGE[$n]}; do sizes="$sizes -D $d"; done
  out=$($L tune examples/polybench/$n.loom --target cuda --trials "$TRIALS" --trial-timeout ${TRIAL_TIMEOUT:-60} ${CHECK[$n]:-} $sizes 2>&1)
  echo "== $n (${SECONDS} s)${sizes}"
  { echo "== $n"; echo "$out"; } >> "$OUT/tune-full.log"  # (every trial's line and reason)
  echo "$out" | grep -E "^[0-9]+ trials in|^the kernel as written|^best|^loom: error|^  [0-9]+:[0-9.]* \(" | cut -c1-400
  echo "$out" | sed -n '/^best: [0-9]/,$p' | tail -n +2
done 2>&1 | tee "$OUT/polybench.log"
[ "${SIZES:-}" = large ] && env -u LD_LIBRARY_PATH python3 -u bench/polybench_torch.py 2>&1 | tee "$OUT/polybench_torch.log"
