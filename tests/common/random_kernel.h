// Random kernels for differential testing of the whole pipeline, beyond the
// examples: rectangular, triangular and shifted domains over 1 to 3 inames,
// element-wise updates with random offsets, reductions (sum, max, product),
// stencils with halos, matrix-product-like contractions, several
// instructions through private temporaries, in-place updates with a
// loop-carried dependence (an array, a running sum in a temporary), two
// instructions sharing an array, a gather through an index array, mixed dtypes (float32, float64,
// int32), substitution rules, Fortran-order layouts and assumptions, nested
// domains (equality, inequality and strided sub-domains of an outer iname),
// unsigned and bool values, global barriers at the ends, loops bounded by
// values the kernel reads (CSR segments), and instructions under conditions
// read from memory (a reduction's at its row, an element's at a neighbour). Each comes with an assumption-free text form; random_schedule
// (random_schedule.h) then transforms it. Used by the RandomKernels test (a
// short fixed-seed run) and by tools/fuzz-kernels (long runs with statistics).
#pragma once
#include <random>
#include <string>

#include "loom/parser.h"

namespace loom::testing {

struct RandomKernel {
  std::string text;  // kernel language, no transforms
  LoopKernel kernel;
};

inline RandomKernel random_kernel(std::mt19937& rng) {
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  static const char* dtypes[] = {"float32", "float64", "int32"};
  std::string dt = dtypes[pick(3)];
  bool is_int = dt == "int32";
  std::string lit = is_int ? "3" : "1.5";
  std::string domains, args, insns;
  std::string rules, assumptions;
  switch (pick(19)) {
    case 0: {  // element-wise with offsets: out[i] = f(a[i + s])
      int s = pick(3);
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n + " + std::to_string(s) + "], out: " + dt + "[n]";
      insns = "out[i] = " + lit + " * a[i + " + std::to_string(s) + "] + a[i]";
      break;
    }
    case 1: {  // row reductions
      static const char* ops[] = {"sum", "max", "min"};
      std::string op = ops[pick(3)];
      domains = "{[i, j]: 0 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m], out: " + dt + "[n]";
      insns = "out[i] = " + op + "(j, a[i, j] * " + lit + ")";
      break;
    }
    case 2: {  // 2-D stencil with a random halo
      int h = 1 + pick(2);
      std::string H = std::to_string(h);
      domains = "{[i, j]: " + H + " <= i < n - " + H + " and " + H + " <= j < m - " + H + "}";
      args = "u: " + dt + "[n, m], out: " + dt + "[n, m]";
      insns = "out[i, j] = u[i - " + H + ", j] + u[i + " + H + ", j] + u[i, j - " + H + "] + u[i, j + " + H + "] - u[i, j]";
      break;
    }
    case 3: {  // contraction (matrix-product-like)
      domains = "{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}";
      args = "a: " + dt + "[n, l], b: " + dt + "[l, m], c: " + dt + "[n, m]";
      insns = "c[i, j] = sum(k, a[i, k] * b[k, j])";
      break;
    }
    case 4: {  // triangular domain
      domains = "{[i, j]: 0 <= i < n and 0 <= j <= i}";
      args = "a: " + dt + "[n, n], out: " + dt + "[n, n]";
      insns = "out[i, j] = a[i, j] + a[j, i]";
      break;
    }
    case 5: {  // an in-place sweep: a dependence carried by i, none along j
      domains = "{[i, j]: 1 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m]";
      insns = "a[i, j] = a[i, j] + a[i - 1, j]";
      break;
    }
    case 8: {  // two instructions sharing an array, ordered by a dependency
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n + 1], out: " + dt + "[n]";
      insns = "out[i] = a[i + 1]  {id=first}\nout[i] = out[i] * " + lit + " + a[i]  {id=second, dep=first}";
      break;
    }
    case 9: {  // a gather through an index array
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n], idx: int32[n], out: " + dt + "[n]";
      insns = "out[i] = a[idx[i]] + a[i]";
      break;
    }
    case 10: {  // a running sum: a loop-carried dependence through a temporary
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n], out: " + dt + "[n]";
      insns = "<" + dt + "> s = 0  {id=init}\ns = s + a[i]  {id=acc, dep=init}\nout[i] = s  {id=store, dep=acc}";
      break;
    }
    case 11: {  // a nested domain that narrows only the instructions within its iname:
      // the element-wise one runs for every (i, j) whatever k allows
      static const char* sub[] = {"{[k]: k = i + 2 and k < n}", "{[k]: i <= k < n}", "{[k]: exists e: k = 2e and i <= k < n}"};
      domains = std::string("{[i, j]: 0 <= i < n and 0 <= j < m}\n  ") + sub[pick(3)];
      args = "a: " + dt + "[n, m], b: " + dt + "[n], out: " + dt + "[n, m], r: " + dt + "[n]";
      insns = "out[i, j] = a[i, j] * " + lit + "\nr[i] = sum(k, b[k] * " + lit + ")  {inames=i}";
      break;
    }
    case 12: {  // unsigned and bool values: conversions with one meaning on every target
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n], u: uint32[n], c: int32[1], b: bool[n]";
      // (negative values into uint32: integers wrap, floats saturate at 0; a sum of bools counts)
      insns = "u[i] = a[i] * " + lit + " - 20  {id=conv}\nb[i] = a[i] > 0  {id=test}\nc[0] = sum(i, b[i])  {dep=test}";
      break;
    }
    case 13: {  // a global barrier first or last: one launch, without it
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n], out: " + dt + "[n]";
      insns = pick(2) ? "out[i] = a[i] * " + lit + "\n... gbarrier" : "... gbarrier\nout[i] = a[i] * " + lit;
      break;
    }
    case 14: {  // loop bounds the kernel computes: a segmented reduction over CSR offsets
      static const char* ops[] = {"sum", "max"};
      domains = "{[i]: 0 <= i < n}\n  {[jj]: 0 <= jj < len}";
      args = "ptr: int32[n + 1], v: " + dt + "[nnz], out: " + dt + "[n]";
      insns = std::string("<int32> start = ptr[i]\n<int32> len = ptr[i + 1] - start\nout[i] = ") + ops[pick(2)] + "(jj, v[start + jj] * " +
              lit + ")";
      break;
    }
    case 15: {  // reductions under a condition read at the row: a warp's lanes share it
      static const char* ops[] = {"sum", "max"};
      domains = "{[i, j]: 0 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m], keep: int32[n], out: " + dt + "[n]";
      insns = std::string("out[i] = ") + ops[pick(2)] + "(j, a[i, j] * " + lit + ")  {if=keep[i] > 0}";
      break;
    }
    case 16: {  // a condition on each element, and one on a neighbour's value (read past no end)
      domains = "{[i, j]: 0 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m + 1], out: " + dt + "[n, m]";
      insns = "out[i, j] = a[i, j] * " + lit + "  {if=a[i, j + 1] > 0}\nout[i, j] = a[i, j]  {if=a[i, j + 1] <= 0}";
      break;
    }
    case 17: {  // scale, then accumulate into what was scaled (PolyBench's gemm, syrk, trmm, 2mm, gemver):
      // the scaling runs once per element, outside the accumulation's k loop
      domains = "{[i]: 0 <= i < n}\n  {[j1]: 0 <= j1 < m}\n  {[k]: 0 <= k < l}\n  {[j2]: 0 <= j2 < m}";
      args = "a: " + dt + "[n, l], b: " + dt + "[l, m], c: " + dt + "[n, m]";
      insns = "for i\n  for j1\n    c[i, j1] = " + lit + " * c[i, j1]  {id=scale}\n  end\n  for k, j2\n    c[i, j2] = c[i, j2] + a[i, k] * b[k, j2]  {id=acc" +
              (pick(2) ? ", dep=scale}" : "}") + "\n  end\nend";
      break;
    }
    case 18: {  // a chain of writers: w1 -> r -> w2 ordered only by the dependences the data flow gives
      // (PolyBench's deriche, adi, durbin)
      domains = "{[i]: 0 <= i < n}";
      args = "x: " + dt + "[n], a: " + dt + "[n], y: " + dt + "[n]";
      insns = "a[i] = x[i] * " + lit + "  {id=w1}\ny[i] = a[i] + x[i]  {id=r}\na[i] = y[i] - " + lit + "  {id=w2}";
      break;
    }
    case 6: {  // a substitution rule
      domains = "{[i]: 0 <= i < n}";
      args = "a: " + dt + "[n], out: " + dt + "[n]";
      // (its parameter sometimes named like the iname, as loopy's users write: the rule's own i)
      rules = pick(2) ? "f(x) := x * x + " + lit : "f(i) := i * i + " + lit;
      insns = "out[i] = f(a[i]) - f(" + lit + ")";
      break;
    }
    case 7: {  // a Fortran-order layout, under assumptions
      domains = "{[i, j]: 0 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m] order=F, out: " + dt + "[n, m]";
      assumptions = "n >= 1 and m >= 2";
      insns = "out[i, j] = a[i, j] * " + lit + " + a[i, 0]";
      break;
    }
    default: {  // two instructions through a private temporary
      domains = "{[i, j]: 0 <= i < n and 0 <= j < m}";
      args = "a: " + dt + "[n, m], x: " + dt + "[m], out: " + dt + "[n]";
      insns = "<> t = sum(j, a[i, j] * x[j])\nout[i] = t * " + lit + " + t";
      break;
    }
  }
  RandomKernel r;
  r.text = "kernel random\ndomains:\n  " + domains + "\narguments:\n  " + args + "\n  ...\n";
  if (!assumptions.empty()) r.text += "assumptions:\n  " + assumptions + "\n";
  r.text += "instructions:\n";
  if (!rules.empty()) r.text += "  " + rules + "\n";
  for (size_t b = 0, e; b < insns.size(); b = e + 1) {
    e = insns.find('\n', b);
    if (e == std::string::npos) e = insns.size();
    r.text += "  " + insns.substr(b, e - b) + "\n";
  }
  r.kernel = parse_kernel_text(r.text, "<random>").kernel;
  return r;
}

}  // namespace loom::testing
