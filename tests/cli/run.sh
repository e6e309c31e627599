#!/usr/bin/env bash
# CLI tests: every example shows and compiles for sm_90 (NVRTC needs no GPU);
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
  expect "compile $n" 0 'registers' -- "$LOOM" compile "$f" --arch sm_90
done
tmp=$(mktemp -d)
printf 'kernel k\ndomains:\n  {[i]: 0 <= i < n}\ninstructions:\n  out[i] = a[i] +* 2\n' >"$tmp/bad.loom"
expect "parse error names line:col" 1 'bad.loom:5:18: expected an expression, found '\*'' -- "$LOOM" show "$tmp/bad.loom"
printf 'kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = a[i]\ntransforms:\n  split_iname q 4\n' >"$tmp/badt.loom"
expect "transform error names iname" 1 "badt.loom:9:3: split_iname\('q', 4\) on kernel 'k': no iname 'q'" -- "$LOOM" show "$tmp/badt.loom"
expect "unknown option" 2 'unknown option' -- "$LOOM" show "$SRC/examples/matmul.loom" --bogus
expect "no gpu run fallback" 0 'compiled' -- "$LOOM" run "$SRC/examples/vector_add.loom" --fallback-compile
printf 'kernel k\ndomains:\n  {[i, j]: 0 <= i, j < 1//0}\narguments:\n  ...\ninstructions:\n  out[i, j] = a[i, j]\n' >"$tmp/div0.loom"
expect "division by zero in a domain" 1 'div0.loom:3:25: bad domain: division by zero' -- "$LOOM" show "$tmp/div0.loom"
if "$LOOM" show "$SRC/examples/vector_add.loom" --target cpu >/dev/null 2>&1; then  # built with the CPU target
  expect "LOOM_CPU names an unknown CPU" 1 "LOOM_CPU='bogus' is not a CPU LLVM knows" -- env LOOM_CPU=bogus "$LOOM" run "$SRC/examples/vector_add.loom" --target cpu
  expect "LOOM_CPU pins a baseline CPU" 0 'check out: match' -- env LOOM_CPU=x86-64 "$LOOM" run "$SRC/examples/vector_add.loom" --target cpu
fi
rm -rf "$tmp"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
