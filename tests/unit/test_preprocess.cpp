// Preprocessing: type inference, substitution expansion, reduction
// realization, dependencies and linearization order.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "loom/interpreter.h"
#include "loom/preprocess.h"
#include "loom/schedule.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {
LoopKernel typed(const std::string& insns, const std::string& args = "a: float32[n], b: float64[n], ia: int32[n], out: float32[n]") {
  return infer_types(expand_substitutions(make_kernel({"{[i]: 0 <= i < n}"}, insns, {args, "..."})));
}
std::string kernel_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const KernelError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(Types, LiteralsAdoptTheOtherOperandsType) {
  LoopKernel k = typed("out[i] = a[i] * 0.5 + 1");
  EXPECT_EQ(k.instructions[0].rhs.type(), types::float32);
  EXPECT_EQ(k.instructions[0].rhs.str(), "a[i] * 0.5 + 1.0");
  // float32 with float64 promotes; the store converts explicitly
  LoopKernel m = typed("out[i] = a[i] + b[i]");
  EXPECT_EQ(m.instructions[0].rhs.kind(), ExprKind::Cast);
  EXPECT_EQ(m.instructions[0].rhs.as<Cast>()->value.type(), types::float64);
  // int array times a weak float: float64, as numpy
  LoopKernel n = typed("<> t = ia[i] * 0.5\nout[i] = t");
  EXPECT_EQ(n.temporaries.at("t").dtype, types::float64);
}

TEST(Types, TemporariesTakeThePromotionOfWhatIsAssigned) {
  LoopKernel k = typed("<> acc = 0 {id=init}\nacc = acc + a[i] {id=upd, dep=init}\nout[i] = acc {dep=upd}");
  EXPECT_EQ(k.temporaries.at("acc").dtype, types::float32);
  LoopKernel j = typed("<> c = 2 * 3\nout[i] = c");
  EXPECT_EQ(j.temporaries.at("c").dtype, types::int32);
}

TEST(Types, Errors) {
  EXPECT_NE(kernel_error([] { typed("out[i] = ia[i] / 2"); }).find("use '//'"), std::string::npos);
  EXPECT_NE(kernel_error([] { typed("out[i] = frobnicate(a[i])"); }).find("unknown function 'frobnicate'"), std::string::npos);
  EXPECT_NE(kernel_error([] { typed("out[i] = a[a[i]]"); }).find("not an integer"), std::string::npos);
  EXPECT_NE(kernel_error([] { typed("out[i] = a[i] & 1"); }).find("integer operands"), std::string::npos);
}

TEST(Substitutions, ExpandWithArguments) {
  LoopKernel k = typed("sq(x) := x * x\nout[i] = sq(a[i] + 1)");
  EXPECT_EQ(k.instructions[0].rhs.str(), "(a[i] + 1.0) * (a[i] + 1.0)");
  EXPECT_NE(kernel_error([] { typed("f(x) := g(x)\ng(x) := f(x)\nout[i] = f(a[i])"); }).find("recursively"), std::string::npos);
}

TEST(Reductions, RealizedAsInitUpdateAndUse) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i] = 2 * sum(j, a[i, j])", {"..."});
  LoopKernel r = realize_reductions(infer_types(k));
  ASSERT_EQ(r.instructions.size(), 3u);
  const Instruction& init = r.instructions[0];
  const Instruction& upd = r.instructions[1];
  const Instruction& use = r.instructions[2];
  EXPECT_EQ(init.within_inames, std::set<std::string>{"i"});
  EXPECT_EQ(upd.within_inames, (std::set<std::string>{"i", "j"}));
  EXPECT_TRUE(upd.depends_on.count(init.id));
  EXPECT_TRUE(use.depends_on.count(upd.id));
  EXPECT_EQ(use.rhs.str(), "2.0 * acc_out");
  EXPECT_EQ(r.temporaries.at("acc_out").space, AddressSpace::Private);
}

TEST(Reductions, AllOperatorsAndNestingMatchHandComputedValues) {
  LoopKernel k = make_kernel({"{[i, j, q]: 0 <= i < n and 0 <= j < m and 0 <= q < 3}"},
                             "s[i] = sum(j, a[i, j])\np[i] = product(j, a[i, j])\nmx[i] = max(j, a[i, j])\n"
                             "mn[i] = min(j, a[i, j])\nnest[i] = sum(j, max(q, a[i, j] * q))",
                             {"a: float64[n, m], s: float64[n], p: float64[n], mx: float64[n], mn: float64[n], nest: float64[n]", "..."});
  std::map<std::string, int64_t> params{{"n", 3}, {"m", 5}};
  auto arrays = make_host_arrays(k, params, 5);
  interpret(generate(k), loom::testing::args_of(k, arrays, params));
  const HostArray& a = arrays.at("a");
  for (int64_t i = 0; i < 3; ++i) {
    double s = 0, p = 1, mx = -1e30, mn = 1e30, nest = 0;
    for (int64_t j = 0; j < 5; ++j) {
      double v = a.get(i * 5 + j);
      s += v, p *= v, mx = std::max(mx, v), mn = std::min(mn, v), nest += std::max({0.0, v, 2 * v});
    }
    EXPECT_DOUBLE_EQ(arrays.at("s").get(i), s);
    EXPECT_DOUBLE_EQ(arrays.at("p").get(i), p);
    EXPECT_DOUBLE_EQ(arrays.at("mx").get(i), mx);
    EXPECT_DOUBLE_EQ(arrays.at("mn").get(i), mn);
    EXPECT_DOUBLE_EQ(arrays.at("nest").get(i), nest);
  }
  // an empty reduction gives the neutral element
  std::map<std::string, int64_t> empty{{"n", 2}, {"m", 0}};
  auto e = make_host_arrays(k, empty, 5);
  interpret(generate(k), loom::testing::args_of(k, e, empty));
  EXPECT_EQ(e.at("s").get(0), 0.0);
  EXPECT_EQ(e.at("p").get(1), 1.0);
  EXPECT_EQ(e.at("mx").get(0), -INFINITY);
}

TEST(Reductions, OverABlockInameIsRefused) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 32}"}, "out[i] = sum(j, a[i, j])", {"..."});
  std::string e = kernel_error([&] { generate(tag_inames(k, "j:g.0")); });
  EXPECT_NE(e.find("reduction over 'j', which is tagged 'g.0'"), std::string::npos) << e;
  LoopKernel two = make_kernel({"{[i, j]: 0 <= i < 8 and 0 <= j < 32}"}, "out[0] = sum((i, j), a[i, j])", {"..."});
  e = kernel_error([&] { generate(tag_inames(two, "i:l.1, j:l.0")); });
  EXPECT_NE(e.find("several thread inames"), std::string::npos) << e;
}

TEST(Dependencies, ReadAfterWriteAndWriteAfterReadInTextOrder) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "<> t = a[i] {id=w}\nb[i] = t {id=r}\na[i] = 0 {id=war}", {"..."});
  LoopKernel d = add_dependencies(infer_types(k));
  EXPECT_TRUE(d.instruction("r").depends_on.count("w"));
  EXPECT_TRUE(d.instruction("war").depends_on.count("w"));  // a read by w, then written
  EXPECT_FALSE(d.instruction("w").depends_on.count("r"));
}

TEST(Linearize, LoopsNestInInameOrderAndPriorityOrdersInstructions) {
  LoopKernel k = make_kernel({"{[i, j, k]: 0 <= i < n and 0 <= j < n and 0 <= k < n}"}, "c[i, j] = sum(k, a[i, k] * b[k, j])", {"..."});
  Linearization L = linearize(preprocess(k));
  EXPECT_EQ(L.str(),
            "for i\n  for j\n    insn_0_acc_c_init\n    for k\n      insn_0_acc_c_update\n    end k\n    insn_0\n  end j\nend i\n");
  LoopKernel p = k;
  p.loop_priority = std::vector<std::vector<std::string>>{{"j", "i"}};
  EXPECT_EQ(linearize(preprocess(p)).str().substr(0, 14), "for j\n  for i\n");
  LoopKernel two = make_kernel({"{[i]: 0 <= i < n}"}, "x[i] = 1 {id=lo}\ny[i] = 2 {id=hi, priority=5}", {"..."});
  EXPECT_EQ(linearize(preprocess(two)).str(), "for i\n  hi\n  lo\nend i\n");
}

TEST(Dependencies, OnlyWhereAccessesCanMeet) {
  // two halves of one array: no order needed between them; a read of what the first wrote: ordered
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "a[i] = 1 {id=lo}\na[n + i] = 2 {id=hi}\nb[i] = a[i] {id=use_lo}\nc[i] = a[idx[i]] {id=gather}",
                             {"a: float32[2 * n], b: float32[n], c: float32[n], idx: int32[n]"});
  LoopKernel d = add_dependencies(infer_types(k));
  EXPECT_FALSE(d.instruction("hi").depends_on.count("lo"));     // disjoint elements
  EXPECT_TRUE(d.instruction("use_lo").depends_on.count("lo"));  // reads what lo wrote
  EXPECT_FALSE(d.instruction("use_lo").depends_on.count("hi"));
  EXPECT_TRUE(d.instruction("gather").depends_on.count("hi"));  // not affine: assumed to meet
  LoopKernel halves = remove_instructions(k, "id:gather");  // (the gather reads random indices)
  EXPECT_SAME_RESULTS(halves, tag_inames(split_iname(halves, "i", 8), "i_outer:g.0, i_inner:l.0"), {{"n", 21}});
}

TEST(Cse, RepeatedSubexpressionsAreComputedOnce) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"},
                             "out[i] = (a[i] - 2 * b[i]) * (a[i] - 2 * b[i]) + if_then_else(i > 0, a[i - 1] * 3 + a[i - 1] * 3, 0)",
                             {"a: float32[n], b: float32[n], out: float32[n]"});
  LoopKernel c = eliminate_common_subexpressions(infer_types(k));
  ASSERT_EQ(c.instructions.size(), 2u);  // the square's operand hoisted; the guarded a[i - 1] * 3 left in place
  EXPECT_EQ(c.instructions[0].rhs.str(), "a[i] - 2.0 * b[i]");
  EXPECT_NE(c.instructions[1].rhs.str().find("cse_0 * cse_0"), std::string::npos) << c.instructions[1].rhs.str();
  EXPECT_NE(c.instructions[1].rhs.str().find("a[i - 1] * 3.0 + a[i - 1] * 3.0"), std::string::npos);
  EXPECT_TRUE(c.instructions[1].depends_on.count(c.instructions[0].id));
  EXPECT_SAME_RESULTS(k, tag_inames(split_iname(k, "i", 16), "i_outer:g.0, i_inner:l.0"), {{"n", 37}});
}

// find_argument and instruction() look names up through an index built on
// first use: it must follow arguments added later, kernels copied, and
// instruction ids edited in place.
TEST(KernelLookups, IndexFollowsChangesToTheKernel) {
  std::string text = "kernel many\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n]\n";
  for (int q = 0; q < 20; ++q) text += "  out" + std::to_string(q) + ": float32[n]\n";
  text += "instructions:\n";
  for (int q = 0; q < 20; ++q) text += "  out" + std::to_string(q) + "[i] = a[i] * " + std::to_string(q + 1) + "  {id=w" + std::to_string(q) + "}\n";
  LoopKernel k = parse_kernel_text(text, "many").kernel;
  ASSERT_NE(k.find_argument("out7"), nullptr);
  EXPECT_EQ(k.find_argument("out7")->name, "out7");
  EXPECT_EQ(k.find_argument("nothing"), nullptr);
  EXPECT_EQ(k.instruction("w13").id, "w13");
  LoopKernel c = k;  // a copy answers from its own vectors
  c.arguments.edit().push_back(Argument{Argument::Array, "extra", types::float32, {make_var("n")}, {}, false, false});
  ASSERT_NE(c.find_argument("extra"), nullptr);
  EXPECT_EQ(c.find_argument("out3"), &c.arguments[3 + 1]);  // (a first, then out0...)
  EXPECT_EQ(k.find_argument("extra"), nullptr);
  c.instructions.edit()[5].id = "renamed";
  EXPECT_EQ(c.instruction("renamed").id, "renamed");
  EXPECT_THROW(c.instruction("w5"), KernelError);
  EXPECT_EQ(c.instruction("w6").id, "w6");
}
