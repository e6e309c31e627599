#!/usr/bin/env bash
# CLI tests: every example shows and compiles for sm_90 (sm_90a for wgmma; NVRTC needs no GPU);
# bad input gives an error with file:line:col and a non-zero exit code.
set -u
LOOM=$1
SRC=$2
fail=0; pass=0
expect() {  # expect NAME EXPECTED_RC PATTERN -- command...
  local name=$1 want=$2 pattern=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL $name (rc=$rc, want $want; pattern '$pattern')"; echo "$out" | head -20; fail=$((fail+1))
  else
    pass=$((pass+1))
  fi
}
for f in "$SRC"/examples/*.loom; do
  n=$(basename "$f" .loom)
  expect "show $n" 0 '__global__ void' -- "$LOOM" show "$f"
  case $n in *wgmma*) arch=sm_90a ;; *) arch=sm_90 ;; esac  # (wgmma: the arch-specific sm_90a only)
  expect "compile $n" 0 'registers' -- "$LOOM" compile "$f" --arch $arch
done
expect "wgmma is refused on plain sm_90" 1 'wgmma needs sm_90a' -- "$LOOM" compile "$SRC/examples/gemm_bf16_wgmma.loom" --arch sm_90
tmp=$(mktemp -d)
printf 'kernel k\ndomains:\n  {[i]: 0 <= i < n}\ninstructions:\n  out[i] = a[i] +* 2\n' >"$tmp/bad.loom"
expect "parse error names line:col" 1 'bad.loom:5:18: expected an expression, found '\*'' -- "$LOOM" show "$tmp/bad.loom"
printf 'kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = a[i]\ntransforms:\n  split_iname q 4\n' >"$tmp/badt.loom"
expect "transform error names iname" 1 "badt.loom:9:3: split_iname\('q', 4\) on kernel 'k': no iname 'q'" -- "$LOOM" show "$tmp/badt.loom"
expect "unknown option" 2 'unknown option' -- "$LOOM" show "$SRC/examples/matmul.loom" --bogus
expect "no gpu run fallback" 0 'compiled' -- "$LOOM" run "$SRC/examples/vector_add.loom" --fallback-compile
printf 'kernel k\ndomains:\n  {[i, j]: 0 <= i, j < 1//0}\narguments:\n  ...\ninstructions:\n  out[i, j] = a[i, j]\n' >"$tmp/div0.loom"
expect "division by zero in a domain" 1 'div0.loom:3:25: bad domain: division by zero' -- "$LOOM" show "$tmp/div0.loom"
if "$LOOM" compile "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then  # built with the CPU target
  expect "show --target cpu prints LLVM IR" 0 'define void' -- "$LOOM" show "$SRC/examples/vector_add.loom" --target cpu
  expect "LOOM_CPU names an unknown CPU" 1 "LOOM_CPU='bogus' is not a CPU LLVM knows" -- env LOOM_CPU=bogus "$LOOM" run "$SRC/examples/vector_add.loom" --target cpu
  expect "LOOM_CPU pins a baseline CPU" 0 'check out: match' -- env LOOM_CPU=x86-64 "$LOOM" run "$SRC/examples/vector_add.loom" --target cpu
fi
# help for the tool and each command
expect "tool help" 0 'commands:' -- "$LOOM" --help
expect "stats symbolic" 0 'Sync\(barrier_local, matmul_prefetch\): \[n, m, l\] -> \{ \[\] -> 2 \* floor' -- "$LOOM" stats "$SRC/examples/matmul_prefetch.loom"
expect "stats evaluated" 0 'Op\(float32, mul, workitem, "matmul_prefetch"\): 1000000000' -- "$LOOM" stats "$SRC/examples/matmul_prefetch.loom" -D n=1000 -D m=1000 -D l=1000 --granularity workitem
expect "stats bad granularity" 2 'granularity is workitem, subgroup or workgroup' -- "$LOOM" stats "$SRC/examples/matmul.loom" --granularity warp
for c in show compile run bench stats tune best transforms help; do
  expect "help $c" 0 "usage: loom $c" -- "$LOOM" help $c
done
expect "run --help" 0 'example:' -- "$LOOM" run --help
expect "unknown command" 2 "unknown command 'shw'" -- "$LOOM" shw x.loom
expect "unknown stage" 1 "no stage 'ptxx'.*did you mean 'ptx'" -- "$LOOM" show "$SRC/examples/vector_add.loom" --emit ptxx
expect "-o without --emit" 2 '-o names where --emit writes' -- "$LOOM" show "$SRC/examples/vector_add.loom" -o x
# stages: each one --emit names, for a kernel with a prefetch and barriers
for s in input kernel json preprocessed schedule cuda ptx; do
  expect "emit $s" 0 '.' -- "$LOOM" show "$SRC/examples/matmul_prefetch.loom" --emit $s --arch sm_90
done
expect "emit schedule shows the barriers" 0 'lbarrier' -- "$LOOM" show "$SRC/examples/matmul_prefetch.loom" --emit schedule
expect "emit ptx" 0 '\.entry' -- "$LOOM" compile "$SRC/examples/matmul_prefetch.loom" --arch sm_90 --emit ptx
expect "emit cubin to a file" 0 'wrote the cubin stage' -- "$LOOM" compile "$SRC/examples/vector_add.loom" --arch sm_90 --emit cubin -o "$tmp/k.cubin"
expect "cubin is an ELF file" 0 'ELF' -- head -c 4 "$tmp/k.cubin"
expect "compile -v names the loop-nest generator" 0 "loop nests: Loom's direct generator" -- "$LOOM" compile "$SRC/examples/stencil_prefetch.loom" --arch sm_90 -v
# JSON: a kernel file written as JSON shows the same CUDA C; a JSON script transforms like a text one
for n in matmul_prefetch sgemm_tiled row_sums_parallel stencil_prefetch; do
  "$LOOM" show "$SRC/examples/$n.loom" --emit json -o "$tmp/$n.json" 2>/dev/null
  "$LOOM" show "$SRC/examples/$n.loom" >"$tmp/$n.cu"
  expect "json $n shows the same code" 0 '^$' -- bash -c "\"$LOOM\" show \"$tmp/$n.json\" | diff - \"$tmp/$n.cu\""
done
printf '{"format": "loom-transforms", "version": 1, "transforms": [{"transform": "split_iname", "iname": "i", "inner_length": 128, "outer_tag": "g.0", "inner_tag": "l.0"}]}' >"$tmp/s.json"
printf 'kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = 2*a[i]\n' >"$tmp/k.loom"
expect "JSON transformation script" 0 'blockIdx.x' -- "$LOOM" show "$tmp/k.loom" -t "$tmp/s.json"
printf '{"format": "loom-transforms", "version": 1, "transforms": [{"transform": "split_iname", "iname": "i", "inner_length": "x"}]}' >"$tmp/bad.json"
expect "JSON script error names the path" 1 'bad.json: /transforms/0/inner_length: expected an integer' -- "$LOOM" show "$tmp/k.loom" -t "$tmp/bad.json"
printf '{"format": "loom-kernel", "version": 1,\n "kernel": {"domains": ["{[i]: 0 <= i < n}"], "instructions": [}}' >"$tmp/badk.json"
expect "malformed JSON names line:col" 1 'badk.json:2:[0-9]+: malformed JSON' -- "$LOOM" show "$tmp/badk.json"
# loom run's check follows what the script declared: fix_parameters and assume (loopy compatibility, item 12)
printf 'kernel fx\ndomains:\n  {[i, k]: 0 <= i < n and 0 <= k < m}\narguments:\n  a: float32[n, m]\n  out: float32[n]\ninstructions:\n  out[i] = sum(k, a[i, k])\ntransforms:\n  fix_parameters n=100\n  assume m >= 1 and m mod 4 = 0\n  split_iname k 4 inner_tag=unr\ndefaults:\n  m=64\n' >"$tmp/fx.loom"
if "$LOOM" compile "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then
  expect "run checks under the script's declarations" 0 'check out: match' -- "$LOOM" run "$tmp/fx.loom" --target cpu
  printf 'kernel sq\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\ninstructions:\n  a[i*i] = 17\ndefaults:\n  n=100\n' >"$tmp/sq.loom"
  expect "a[i*i] stops with the array and index, no heap corruption" 1 "accesses 'a' at element 9801, outside its 100 elements" -- "$LOOM" run "$tmp/sq.loom" --target cpu
  printf 'kernel sc\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  out: float32[n]\n  idx: int32[n]\n  a: float32[n]\ninstructions:\n  out[idx[i]] = a[i]\ndefaults:\n  n=1000\n' >"$tmp/sc.loom"
  expect "a scatter runs on index arrays inside the range" 0 'check out: match' -- "$LOOM" run "$tmp/sc.loom" --target cpu
fi
# hostile inputs (Reliability II): crashes that became errors, and runs that now agree with the reference
printf 'kernel ga\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  out: float32[n]\ninstructions:\n  out[i] = a[i]\n  ... gbarrier\ndefaults:\n  n=100\n' >"$tmp/glast.loom"
printf 'kernel gb\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  out: float32[n]\ninstructions:\n  ... gbarrier\n  out[i] = a[i]\ndefaults:\n  n=100\n' >"$tmp/gfirst.loom"
expect "a global barrier last is no launch of its own" 0 '__global__ void' -- "$LOOM" show "$tmp/glast.loom"
expect "a global barrier first is no launch of its own" 0 '__global__ void' -- "$LOOM" show "$tmp/gfirst.loom"
printf 'kernel b\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n, 9223372036854775807]\n  out: float32[n]\ninstructions:\n  out[i] = a[i, 0]\n' >"$tmp/huge.loom"
expect "-D zz names no parameter" 1 "-D zz=3: kernel 'vector_add' has no parameter 'zz' \(its parameters: n\)" -- "$LOOM" run "$SRC/examples/vector_add.loom" -D zz=3 --target cpu
printf 'kernel cv\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n], h: float16[n], d: float64[n]\n  u: uint32[n], q: int64[n], b: uint8[n]\ninstructions:\n  u[i] = a[i] - 10\n  q[i] = d[i] * 1e30\n  b[i] = h[i]\n' >"$tmp/cvt.loom"
expect "float to integer conversions compile with NVRTC (loom_cvt_sat)" 0 'registers' -- "$LOOM" compile "$tmp/cvt.loom" --arch sm_90
if "$LOOM" compile "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then
  expect "float to integer conversions agree with the reference" 0 'check b: match' -- "$LOOM" run "$tmp/cvt.loom" --target cpu -D n=100
  expect "a global barrier last runs" 0 'check out: match' -- "$LOOM" run "$tmp/glast.loom" --target cpu
  expect "a global barrier first runs" 0 'check out: match' -- "$LOOM" run "$tmp/gfirst.loom" --target cpu
  expect "an extent near 2^63 is refused, not a crash" 1 "array 'a': an array of shape \(4, 9223372036854775807\) has more than 2\^63 - 1 elements" -- "$LOOM" run "$tmp/huge.loom" --target cpu -D n=4
  expect "huge random inputs are refused before they are allocated" 1 "its arrays take 112 GiB of host memory.*--max-memory GIB raises it" -- "$LOOM" run "$SRC/examples/matmul.loom" --target cpu -D n=100000 -D m=100000 -D l=100000
  expect "--max-memory is checked" 2 "--max-memory takes a size in GiB" -- "$LOOM" run "$SRC/examples/matmul.loom" --max-memory lots
  for layout in 'stride:0,stride:1' 'N0,N1' 'stride:2,stride:10' 'stride:1,stride:n' 'stride:m,stride:0'; do
    for arr in a out; do
      printf 'kernel c\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < m}\narguments:\n  a: float32[n, m]\n  out: float32[n, m]\ninstructions:\n  out[i, j] = 2 * a[i, j] + i\ntransforms:\n  tag_array_axes %s %s\ndefaults:\n  n = 5, m = 7\n' "$arr" "$layout" >"$tmp/layout.loom"
      expect "the reference reads $arr in the layout $layout" 0 'check out: match' -- "$LOOM" run "$tmp/layout.loom" --target cpu
    done
  done
fi
# sizes beyond 2^31 - 1 elements: the command line generates 64-bit index arithmetic by itself
expect "more than 2^31 elements get 64-bit indices" 0 'long long const i_outer' -- "$LOOM" show "$SRC/examples/vector_add.loom" -D n=3000000000
expect "and says so" 0 'beyond 2\^31 - 1: 64-bit index arithmetic' -- "$LOOM" show "$SRC/examples/vector_add.loom" -D n=3000000000
expect "small sizes keep 32-bit indices" 0 'int const i_outer' -- "$LOOM" show "$SRC/examples/vector_add.loom" -D n=1000
# arrays that fit, but the last block of 100 threads computes 100*o + t past 2^31 - 1 before its guard:
# the generated code is checked, not just the sizes
sed 's/split_iname i 256/split_iname i 100/' "$SRC/examples/vector_add.loom" >"$tmp/va100.loom"
expect "a tail that would wrap gets 64-bit indices" 0 'long long const i_outer' -- "$LOOM" show "$tmp/va100.loom" -D n=2147483601
expect "naming the expression" 0 '100 \* i_outer \+ i_inner` can reach 2147483699: 64-bit' -- "$LOOM" show "$tmp/va100.loom" -D n=2147483601
expect "one element fewer fits 32 bits" 0 'int const i_outer' -- "$LOOM" show "$tmp/va100.loom" -D n=2147483600
expect "compile -v says how the index width is decided" 0 'index arithmetic: 32-bit, checked at each launch' -- "$LOOM" compile "$SRC/examples/vector_add.loom" --arch sm_90 -v
# float value arguments take values from -D and --in; comments in assumptions are comments
printf 'domains:\n  {[i]: 0 <= i < n}\narguments:\n  alpha: float32\n  a: float32[n], out: float32[n]\nassumptions:\n  # a[n] is long\n  n >= 1\ninstructions:\n  out[i] = alpha * a[i]\n' >"$tmp/alpha.loom"
if "$LOOM" compile "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then
  expect "a float scalar from -D" 0 'check out: match' -- "$LOOM" run "$tmp/alpha.loom" --target cpu -D n=5 -D alpha=2.5
  expect "an integer size is not a float" 1 "n=4.5[0-9]*: parameter 'n' takes an integer" -- "$LOOM" run "$tmp/alpha.loom" --target cpu -D n=4.5
  expect "a float for no scalar" 1 "has no float value argument 'beta'" -- "$LOOM" run "$tmp/alpha.loom" --target cpu -D n=5 -D beta=2.5
fi
# the tuner on the CPU target: a run, its log, the best trial replayed as a script
if "$LOOM" compile "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then
  printf 'split_iname i choice(32|64|2048) outer_tag=g.0 inner_tag=l.0\n' >"$tmp/rows.space"
  expect "tune a user space" 0 'illegal: kernel .row_sums.: 2048 threads' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/rows.space" -D n=301 -D m=77 --log "$tmp/rows.jsonl"
  printf 'split_iname i choice(16|32|64 as threads) outer_tag=g.0 inner_tag=l.0\n' >"$tmp/named.space"
  expect "tune --restrict leaves configurations out" 0 '2 left out by --restrict' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/named.space" -D n=301 -D m=77 --restrict 'threads >= 64' --no-settle
  expect "tune --ray needs a python" 1 "--ray: cannot run /nonexistent/python" -- env LOOM_PYTHON=/nonexistent/python "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --ray 127.0.0.1:1
  expect "tune --ray needs Loom's Python package" 1 "cannot import Loom's Python package" -- env -u PYTHONPATH LOOM_PYTHON=python3 "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --ray 127.0.0.1:1
  expect "tune --restrict names a choice point" 1 "no choice point is named 'blocks'" -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/named.space" -D n=301 -D m=77 --restrict 'blocks < 4'
  expect "tune resumes from its log" 0 '3 already in the log' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/rows.space" -D n=301 -D m=77 --log "$tmp/rows.jsonl"
  expect "trials at other sizes seed a run" 0 '1 seeded by the fastest measured elsewhere' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/rows.space" -D n=401 -D m=77 --strategy random --trials 2 --log "$tmp/rows.jsonl"
  expect "a missing seed log is an error" 1 "seed log '.*missing.jsonl' does not exist" -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/rows.space" -D n=301 -D m=77 --seed-log "$tmp/missing.jsonl"
  expect "best refuses to mix sizes" 1 'holds trials of 2 kernels, sizes, targets or cards' -- "$LOOM" best "$tmp/rows.jsonl"
  expect "best says what it picked" 0 "# from kernel 'row_sums' \(hash [0-9a-f]+\), m=77 n=301, cpu" -- "$LOOM" best "$tmp/rows.jsonl" -D n=301
  expect "a missing log is an error" 1 "tuning log '.*nosuch.jsonl' does not exist" -- "$LOOM" best "$tmp/nosuch.jsonl"
  "$LOOM" best "$tmp/rows.jsonl" -D n=301 >"$tmp/best.txt" 2>&1
  expect "the best trial replays" 0 'check out: match' -- "$LOOM" run "$SRC/examples/row_sums.loom" --target cpu --as-written -t "$tmp/best.txt"
  expect "-v shows where a trial's time went and its check" 0 'check passed at m=77 n=67 against the interpreter, largest error' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/rows.space" -D n=301 -D m=77 --check-size n=67 --check-size m=77 --rtol 1e-5 -v
  expect "a bad tolerance is a usage error" 2 'takes \[ARRAY=\]TOLERANCE' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --rtol out=-1
  # (trial 0, the kernel as written, may be the best at this size on the CPU)
  expect "tune with the automatic space" 0 'best: (the kernel as written, )?[0-9.]+ ms' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --trials 6 -D n=301 -D m=77
  expect "tune reports the kernel as written, trial 0" 0 'the kernel as written \(trial 0\): [0-9.]+ ms; the best is [0-9.]+x faster' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --trials 2 -D n=301 -D m=77
  expect "tune reports a file's own transforms, trial 1" 0 "the file's own transforms \(trial 1\): [0-9.]+ ms" -- "$LOOM" tune "$SRC/examples/row_sums_warp.loom" --target cpu --trials 2 -D n=301 -D m=64
  printf 'split_iname i choice(32|) outer_tag=g.0\n' >"$tmp/bad.space"
  expect "a bad space names line and column" 1 'bad.space:1:15: an empty value' -- "$LOOM" tune "$SRC/examples/row_sums.loom" --target cpu --space "$tmp/bad.space"
fi
# whole programs' steps from a script file (issue 49): floyd-warshall split around k, a refusal with its line:col
printf 'split_index_set i k\nsplit_index_set j k\n' >"$tmp/split.t"
expect "split_index_set from a script" 0 'id=insn_0_gt_gt' -- "$LOOM" show "$SRC/examples/polybench/floyd_warshall.loom" --emit kernel -t "$tmp/split.t"
printf 'split_index_set i k\nreorder_instructions "insn_0_gt, insn_0_lt"\n' >"$tmp/order.t"
expect "an illegal instruction order is refused" 1 'reorder dependent iterations' -- "$LOOM" show "$SRC/examples/polybench/floyd_warshall.loom" -t "$tmp/order.t"
printf 'rename_iname i j existing_ok=true\n' >"$tmp/join.t"
expect "a join of related loops names the reason" 1 "join.t:1:1: rename_iname\('i', 'j'\) on kernel 'floyd_warshall': instruction 'insn_0' runs in both loops" -- "$LOOM" show "$SRC/examples/polybench/floyd_warshall.loom" -t "$tmp/join.t"
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
