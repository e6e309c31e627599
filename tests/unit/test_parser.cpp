// The kernel language: good inputs build the expected kernel, bad inputs
// raise ParseError naming line and column and what was expected.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;

namespace {
std::string parse_error(const std::string& text) {
  try {
    parse_kernel_text(text, "k.loom");
  } catch (const ParseError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("other error: ") + e.what();
  }
  return "no error";
}
}  // namespace

TEST(Parser, MatmulWithInferredArguments) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}"},
                             "c[i, j] = sum(k, a[i, k] * b[k, j])", {"..."}, "mm");
  EXPECT_EQ(k.name, "mm");
  ASSERT_EQ(k.instructions.size(), 1u);
  const Instruction& insn = k.instructions[0];
  EXPECT_EQ(insn.id, "insn_0");
  EXPECT_EQ(insn.within_inames, (std::set<std::string>{"i", "j"}));
  ASSERT_TRUE(insn.rhs.as<Reduce>());
  EXPECT_EQ(insn.rhs.as<Reduce>()->inames, std::vector<std::string>{"k"});
  // a, b, c inferred with shapes from the access ranges; n, m, l as int32 values
  ASSERT_NE(k.find_argument("a"), nullptr);
  EXPECT_EQ(k.find_argument("a")->str(), "a: float32[n, l]");
  EXPECT_EQ(k.find_argument("b")->str(), "b: float32[l, m]");
  EXPECT_EQ(k.find_argument("c")->str(), "c: float32[n, m]");
  EXPECT_EQ(k.find_argument("n")->kind, Argument::Value);
  EXPECT_EQ(k.find_argument("n")->dtype, types::int32);
}

TEST(Parser, SeveralDomainsAndNonRectangularSets) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}", "{[j]: 0 <= j <= i}"}, "out[i] = sum(j, a[j])", {"..."});
  EXPECT_EQ(k.domains.size(), 2u);
  EXPECT_EQ(k.all_inames(), (std::vector<std::string>{"i", "j"}));
  EXPECT_EQ(k.domain_of("j"), 1);
  EXPECT_EQ(k.parameters(), std::vector<std::string>{"n"});
  EXPECT_EQ(k.find_argument("a")->str(), "a: float32[n]");  // max over j <= i < n, plus one
}

TEST(Parser, InstructionOptionsTemporariesAndRules) {
  KernelFile f = parse_kernel_text(R"(kernel opts
domains:
  {[i, k]: 0 <= i < n and 0 <= k < 4}
arguments:
  a: float64[n, 4], out: float64[n], scale: float64
  ...
instructions:
  f(x, y) := scale * x + y
  <float64> acc = 0   {id=init, inames=i}
  acc = acc + f(a[i, k], 1.0)  {id=upd, dep=init, priority=2, tags=hot}
  <> t = acc * 2   {id=t, dep=upd}
  out[i] = t   {id=store, dep=t, if=i % 2 == 0:i > 0, nosync=upd}
defaults:
  n = 10
)");
  const LoopKernel& k = f.kernel;
  EXPECT_EQ(k.name, "opts");
  ASSERT_EQ(k.instructions.size(), 4u);
  EXPECT_EQ(k.substitutions.at("f").params, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(k.temporaries.at("acc").dtype, types::float64);
  EXPECT_FALSE(k.temporaries.at("t").dtype.known());  // <>: inferred later
  const Instruction& upd = k.instruction("upd");
  EXPECT_EQ(upd.depends_on, std::set<std::string>{"init"});
  EXPECT_EQ(upd.priority, 2);
  EXPECT_EQ(upd.tags, std::set<std::string>{"hot"});
  EXPECT_EQ(upd.within_inames, (std::set<std::string>{"i", "k"}));
  EXPECT_EQ(k.instruction("init").within_inames, std::set<std::string>{"i"});
  const Instruction& store = k.instruction("store");
  EXPECT_EQ(store.predicates.size(), 2u);
  EXPECT_EQ(store.no_sync_with, std::set<std::string>{"upd"});
  EXPECT_EQ(f.defaults.at("n"), 10);
}

TEST(Parser, MaxMinAreReductionsOnlyOverInames) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"},
                             "out[i] = max(j, a[i, j])\nout2[i] = max(a[i, 0], b[i])", {"..."});
  EXPECT_TRUE(k.instructions[0].rhs.as<Reduce>());
  EXPECT_TRUE(k.instructions[1].rhs.as<Call>());
}

TEST(Parser, ContinuationLinesAndComments) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = (a[i] +  # a comment\n   2)\n# another\n", {"..."});
  ASSERT_EQ(k.instructions.size(), 1u);
  EXPECT_EQ(k.instructions[0].rhs.str(), "a[i] + 2");
}

TEST(Parser, ErrorsNameLineAndColumn) {
  const char* head = "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n";
  std::string e = parse_error(std::string(head) + "  out[i] = a[i] +* 2\n");
  EXPECT_NE(e.find("k.loom:7:18: expected an expression, found '*'"), std::string::npos) << e;
  e = parse_error(std::string(head) + "  out[i] = a[i\n");
  EXPECT_NE(e.find("k.loom:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("']'"), std::string::npos) << e;
  e = parse_error(std::string(head) + "  out[i] = a[i] {id=x, bogus=1}\n");
  EXPECT_NE(e.find("k.loom:7:24: unknown option 'bogus'"), std::string::npos) << e;
  e = parse_error(std::string(head) + "  out[i] = sum(q, a[i])\n");
  EXPECT_NE(e.find("reduction over 'q', which is not an iname"), std::string::npos) << e;
  e = parse_error(std::string(head) + "  <flaot32> t = 1\n");
  EXPECT_NE(e.find("k.loom:7:4: unknown dtype 'flaot32'"), std::string::npos) << e;
  e = parse_error(std::string(head) + "  out[i] = a[i] {dep=nothere}\n");
  EXPECT_NE(e.find("no instruction with id 'nothere'"), std::string::npos) << e;
  e = parse_error("kernel k\ndomains:\n  {[i]: 0 <= i < n\ninstructions:\n  out[i] = 1\n");
  EXPECT_NE(e.find("k.loom:3:3: domain is missing its closing '}'"), std::string::npos) << e;
  e = parse_error("kernel k\ndomains:\n  {[i]: 0 <= i <<< n}\ninstructions:\n  out[i] = 1\n");
  EXPECT_NE(e.find("k.loom:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("bad domain"), std::string::npos) << e;
  e = parse_error("kernel k\ndomains:\n  {[i]: 0 <= i < n}\ninstructions:\n  out[i] = x[i]\n");
  EXPECT_NE(e.find("k.loom:5:3: unknown array 'out'"), std::string::npos) << e;  // no '...': x is undeclared
  e = parse_error("stray text\n");
  EXPECT_NE(e.find("k.loom:1:1: expected a section header"), std::string::npos) << e;
  e = parse_error("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\ninstructions:\n  a[i] = 1\n  z = 1\n");
  EXPECT_NE(e.find("k.loom:8:3:"), std::string::npos) << e;  // no '...': z is not a declared temporary
  e = parse_error("kernel pow\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = a[i]\n");
  EXPECT_NE(e.find("k.loom:1:8: kernel name 'pow' is the name of a math function"), std::string::npos) << e;
}

// loopy's `...` makes a scalar that is assigned but not declared a 0-d
// output array; argmax's two outputs (value, index) are one reduction.
TEST(Parser, AssignedScalarsAndMultiOutputReductions) {
  LoopKernel k = parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n"
                              "  max_val, max_idx = argmax(i, abs(a[i]), i)\n", "k.loom").kernel;
  ASSERT_EQ(k.instructions.size(), 2u);
  EXPECT_EQ(k.instructions[0].id, "argmax_0_value");
  EXPECT_EQ(k.instructions[1].id, "argmax_0");
  EXPECT_TRUE(k.instructions[1].depends_on.count("argmax_0_value"));
  const Argument* v = k.find_argument("max_val");
  const Argument* i = k.find_argument("max_idx");
  ASSERT_TRUE(v && i);
  EXPECT_TRUE(v->shape.empty() && i->shape.empty());
  EXPECT_EQ(v->dtype, types::float32);
  EXPECT_EQ(i->dtype, types::int32);
  EXPECT_NE(parse_error(std::string("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n") + "  x, y, z = argmax(i, a[i], i)\n").find("two outputs"), std::string::npos);
  EXPECT_NE(parse_error(std::string("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n") + "  x, y = sum(i, a[i])\n").find("argmax(i, value, index)"), std::string::npos);
}

TEST(Parser, TransformScriptLines) {
  auto steps = parse_transform_script("# tile\nsplit_iname i 16 outer_tag=g.0 inner_tag=\"l.0\"\n\ntag_inames j:g.1 k:unr\n", "s.txt");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].name, "split_iname");
  EXPECT_EQ(steps[0].positional, (std::vector<std::string>{"i", "16"}));
  EXPECT_EQ(steps[0].keyword.at("inner_tag"), "l.0");
  EXPECT_EQ(steps[0].loc.line, 2);
  EXPECT_EQ(steps[1].positional.size(), 2u);
}

TEST(Parser, ArrayLayouts) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = a[i, j]",
                             {"a: float32[n, m] order=F, out: float32[n, m] strides=(m + 4, 1) offset=2", "..."});
  EXPECT_EQ(k.find_argument("a")->str(), "a: float32[n, m] strides=(1, n)");
  EXPECT_EQ(k.find_argument("out")->str(), "out: float32[n, m] strides=(m + 4, 1) offset=2");
  auto flat = [&](const char* access) { return k.flat_index(*parse_expr(access).as<Subscript>()).str(); };
  EXPECT_EQ(flat("a[i, j]"), "i + j * n");
  EXPECT_EQ(flat("out[i, j]"), "i * (m + 4) + j + 2");
  EXPECT_THROW(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 1", {"out: float32[n] strides=(1, 2)"}), ParseError);
  EXPECT_THROW(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 1", {"out: float32[n] order=X"}), ParseError);
  EXPECT_THROW(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 1", {"out: float32[n] align=16"}), ParseError);
}

// loopy compatibility item 1: for ... end and if ... elif ... else ... end
// blocks in instruction text.
TEST(Parser, LoopysForAndIfBlocks) {
  KernelFile f = parse_kernel_text(
      "kernel blocks\n"
      "domains:\n  {[i, j]: 0 <= i < n and 0 <= j < 3}\n"
      "arguments:\n  a: float32[n]\n  b: float32[n]\n  c: float32[n]\n"
      "instructions:\n"
      "  for i\n"
      "    a[i] = 1  {id=first}\n"
      "    if i > 2\n"
      "      b[i] = 2  {id=big}\n"
      "    elif i > 0\n"
      "      b[i] = 3  {id=middle}\n"
      "    else\n"
      "      b[i] = 4  {id=zero}\n"
      "    end\n"
      "    for j\n"
      "      c[i] = c[i] + 1  {id=thrice}\n"
      "    end\n"
      "  end\n");
  const LoopKernel& k = f.kernel;
  EXPECT_EQ(k.instruction("first").within_inames, (std::set<std::string>{"i"}));
  EXPECT_EQ(k.instruction("big").predicates.size(), 1u);
  EXPECT_EQ(k.instruction("middle").predicates.size(), 2u);  // not (i > 2), i > 0
  EXPECT_EQ(k.instruction("zero").predicates.size(), 2u);    // not (i > 2), not (i > 0)
  EXPECT_EQ(k.instruction("thrice").within_inames, (std::set<std::string>{"i", "j"}));  // j from the block
  auto arrays = make_host_arrays(k, {{"n", 6}}, 3);
  auto c0 = arrays.at("c");
  ArgMap args;
  for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
  interpret(generate(k), args);
  std::vector<double> want_b{4, 3, 3, 2, 2, 2};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(arrays.at("b").get(i), want_b[i]) << i;
    EXPECT_FLOAT_EQ(arrays.at("c").get(i), c0.get(i) + 3) << i;  // once per j
  }
  // unbalanced blocks are errors with their line
  auto error = [](const std::string& insns) {
    try {
      parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n" + insns, "b.loom");
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("  for i\n    a[i] = 1\n").find("b.loom:7:3: this 'for' block has no 'end'"), std::string::npos);
  EXPECT_NE(error("  a[i] = 1\n  end\n").find("b.loom:8:3: 'end' without an open"), std::string::npos);
  EXPECT_NE(error("  for q\n  a[i] = 1\n  end\n").find("'q' is not an iname"), std::string::npos);
  EXPECT_NE(error("  for i\n  else\n  end\n").find("'else' without an open 'if' block"), std::string::npos);
}

// loopy infers an output `...` leaves open from what is assigned to it: a
// float64 expression makes a float64 array (it was float32: values rounded),
// an integer one an int32 array; a call may still choose (the array stays open).
TEST(Parser, OpenOutputsTakeTheDtypeOfWhatIsAssigned) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 2 * x[i]\nidx[i] = i * 3\ny[i] = out[i] + 1", {"x: float64[n]", "..."});
  EXPECT_EQ(k.find_argument("out")->dtype, types::float64);
  EXPECT_TRUE(k.find_argument("out")->dtype_inferred);
  EXPECT_EQ(k.find_argument("idx")->dtype, types::int32);
  EXPECT_EQ(k.find_argument("y")->dtype, types::float64);  // (through another open array)
  LoopKernel j = kernel_from_json(kernel_to_json(k));
  EXPECT_EQ(j.find_argument("out")->dtype, types::float64);
  LoopKernel f32 = add_dtypes(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 2 * x[i]", {"..."}), {{"x", "float32"}});
  EXPECT_EQ(f32.find_argument("out")->dtype, types::float32);  // an open input is float32 until a call says otherwise
}

TEST(Parser, AnArrayTemporaryDeclaredWhereItIsWrittenIsSizedByItsAccesses) {
  // loopy's `<> arr[k] = ...`: the shape is one past the largest index of its accesses
  KernelFile f = parse_kernel_text(
      "kernel at\ndomains:\n  {[i, k]: 0 <= i < n and 0 <= k < 16}\narguments:\n  a: float32[n]\n  out: float32[n]\n"
      "instructions:\n  <> arr[k + 1] = a[i] * k {id=w}\n  out[i] = sum(k, arr[k + 1]) {dep=w}\n");
  const Temporary* t = f.kernel.find_temporary("arr");
  ASSERT_TRUE(t);
  ASSERT_EQ(t->shape.size(), 1u);
  EXPECT_EQ(t->shape[0].str(), "17");
  EXPECT_EQ(loom::testing::compare_kernels(f.kernel, apply_transforms(f.kernel, parse_transform_script("split_iname i 4 outer_tag=g.0\n")),
                                           {{"n", 37}}),
            "");
  // one name, an array in one place and a scalar in another: refused where it is
  std::string e = loom::testing::error_of([] {
    parse_kernel_text("kernel at\ndomains:\n  {[i, k]: 0 <= i < n and 0 <= k < 16}\narguments:\n  a: float32[n]\n  out: float32[n]\n"
                      "instructions:\n  <> arr[k] = a[i] {id=w}\n  <> arr = 1 {id=v}\n  out[i] = arr {dep=w:v}\n");
  });
  EXPECT_NE(e.find("9:6: temporary 'arr' is declared as an array elsewhere"), std::string::npos) << e;
}

TEST(Parser, PythonsConditionalExpressionIsASelect) {
  // `a if c else b` (pymbolic's, so loopy's), right-associative, below `or`
  KernelFile f = parse_kernel_text("kernel t\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  out: float32[n]\n"
                                   "instructions:\n  out[i] = a[i] if a[i] > 0 or i == 0 else 1 if i < 3 else 2\n");
  EXPECT_EQ(f.kernel.instructions[0].rhs.str(), "if_then_else(a[i] > 0 or i == 0, a[i], if_then_else(i < 3, 1, 2))");
  std::string e = loom::testing::error_of([] {
    parse_kernel_text("kernel t\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n  out: float32[n]\n"
                      "instructions:\n  out[i] = a[i] if a[i] > 0\n");
  });
  EXPECT_NE(e.find("8:28: expected 'else' after the condition"), std::string::npos) << e;
}

// Scale, then accumulate into what was scaled (PolyBench's gemm, syrk,
// syr2k, trmm, 2mm, gemver): the scaling's loops come from its own text, not
// from the accumulation's k. loopy's rule intersects the implicit loops of
// every writer of what an instruction reads, the reader itself included;
// leaving the reader out put the scaling inside k (c scaled n times, on every
// target and in the interpreter alike).
TEST(Parser, AnInstructionIsAmongTheWritersWhoseLoopsItTakes) {
  std::string text = "domains:\n";
  for (const char* x : {"i", "j1", "k", "j2"}) text += std::string("  {[") + x + "]: 0 <= " + x + " < n}\n";
  text += "arguments:\n  a: float64[n, n], c: float64[n, n]\ninstructions:\n  for i\n    for j1\n      c[i, j1] = 2 * c[i, j1]  {id=scale}\n"
          "    end\n    for k, j2\n      c[i, j2] = c[i, j2] + a[i, k]  {id=add}\n    end\n  end\n";
  KernelFile f = parse_kernel_text(text);
  EXPECT_EQ(f.kernel.instruction("scale").within_inames, (std::set<std::string>{"i", "j1"}));
  EXPECT_EQ(f.kernel.instruction("add").within_inames, (std::set<std::string>{"i", "j2", "k"}));
  const int n = 5;
  auto arrays = make_host_arrays(f.kernel, {{"n", n}}, 2);
  auto a = arrays.at("a"), c = arrays.at("c");
  interpret(generate(f.kernel), host_arguments(f.kernel, arrays, {{"n", n}}));
  for (int i = 0; i < n; ++i) {
    double row = 0;
    for (int k = 0; k < n; ++k) row += a.get(i * n + k);
    for (int j = 0; j < n; ++j) EXPECT_NEAR(arrays.at("c").get(i * n + j), 2 * c.get(i * n + j) + row, 1e-12);
  }
}
