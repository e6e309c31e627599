// privatize_temporaries_with_inames, unprivatize_temporaries_with_inames and
// rename_temporary: shapes and accesses after each, the CPU oracle against
// the untransformed kernel, and the refusals.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel row_sums() {
  return parse_kernel_text(R"(
kernel pv
domains:
  {[i, k]: 0 <= i < 8 and 0 <= k < m}
arguments:
  a: float32[8, m]
  out: float32[8]
instructions:
  <> acc = 0  {id=init, inames=i}
  acc = acc + a[i, k]  {id=upd, dep=init}
  out[i] = 2 * acc  {id=st, dep=upd}
)")
      .kernel;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  std::string e = error_of(f);
  EXPECT_NE(e.find(part), std::string::npos) << e;
}

}  // namespace

TEST(Privatize, OneCopyPerIterationAndBack) {
  LoopKernel k = row_sums();
  LoopKernel p = privatize_temporaries_with_inames(k, "i");
  ASSERT_EQ(p.find_temporary("acc")->shape.size(), 1u);
  EXPECT_EQ(p.find_temporary("acc")->shape[0].str(), "8");
  EXPECT_EQ(p.instruction("upd").lhs.str(), "acc[i]");
  check_transformed(k, p, {{{"m", 5}}, {{"m", 0}}});
  // the copies in local memory, one per thread of the block
  LoopKernel local = set_temporary_address_space(tag_inames(p, "i:l.0"), "acc", "local");
  check_transformed(k, local, {{{"m", 7}}});
  LoopKernel u = unprivatize_temporaries_with_inames(p, "i");
  EXPECT_TRUE(u.find_temporary("acc")->shape.empty());
  EXPECT_EQ(u.instruction("upd").lhs.str(), "acc");
  check_transformed(k, u, {{{"m", 5}}});
  // through the registry, with loopy's argument names
  LoopKernel viaRegistry = apply_transforms(k, parse_transform_script("privatize_temporaries_with_inames i only_var_names=acc\n"));
  EXPECT_EQ(viaRegistry.find_temporary("acc")->shape.size(), 1u);
}

TEST(Privatize, Refusals) {
  LoopKernel k = row_sums();
  expect_error([&] { privatize_temporaries_with_inames(k, "k"); }, "accessed outside iname 'k'");
  expect_error([&] { privatize_temporaries_with_inames(k, "q"); }, "no iname 'q'");
  expect_error([&] { privatize_temporaries_with_inames(k, "i", "zz"); }, "no temporary 'zz'");
  expect_error([&] { unprivatize_temporaries_with_inames(k, "i"); }, "no temporary has an axis indexed by these inames");
  LoopKernel p = set_temporary_address_space(tag_inames(privatize_temporaries_with_inames(k, "i"), "i:l.0"), "acc", "local");
  expect_error([&] { unprivatize_temporaries_with_inames(p, "i"); }, "would be a race");
  LoopKernel param = parse_kernel_text(R"(
kernel pr
domains:
  {[i]: 0 <= i < n}
arguments:
  out: float32[n]
instructions:
  <> t = i * 2  {id=d}
  out[i] = t  {id=u, dep=d}
)")
                         .kernel;
  expect_error([&] { privatize_temporaries_with_inames(param, "i"); }, "depends on the parameters");
}

TEST(RenameTemporary, RenamesEveryAccess) {
  LoopKernel k = row_sums();
  LoopKernel r = rename_temporary(k, "acc", "total");
  EXPECT_EQ(r.find_temporary("acc"), nullptr);
  ASSERT_NE(r.find_temporary("total"), nullptr);
  EXPECT_EQ(r.instruction("st").rhs.str(), "2 * total");
  check_transformed(k, r, {{{"m", 4}}});
  expect_error([&] { rename_temporary(k, "acc", "a"); }, "'a' is already taken");
  expect_error([&] { rename_temporary(k, "nope", "x"); }, "no temporary 'nope'");
  expect_error([&] { rename_temporary(k, "acc", "1x"); }, "is not a name");
}

// with within: one web of a temporary (the accesses among which its values
// flow) gets a name of its own, in the kernel as written too; a renaming
// that would cut a flow is refused with a witness.
TEST(RenameTemporary, WithinRenamesOneWebAndRefusesToCutAFlow) {
  LoopKernel k = parse_kernel_text(R"(
kernel webs
domains:
  {[i]: 0 <= i < n}
  {[j]: 0 <= j < m}
arguments:
  a: float64[n]
  b: float64[n]
  out: float64[n]
instructions:
  for i
    <float64> w = a[i]  {id=a0}
    for j
      w = w * 0.5 + b[i]  {id=a1}
    end
    out[i] = w  {id=a2}
    w = b[i] + 1  {id=b0}
    out[i] = out[i] + w  {id=b1}
  end
)")
                     .kernel;
  LoopKernel r = apply_transforms(k, parse_transform_script("rename_temporary w w2 within=\"id:b0 or id:b1\"\n"));
  ASSERT_NE(r.find_temporary("w"), nullptr);
  ASSERT_NE(r.find_temporary("w2"), nullptr);
  EXPECT_EQ(r.instruction("b1").rhs.str(), "out[i] + w2");
  EXPECT_EQ(r.instruction("a2").rhs.str(), "w");
  ASSERT_NE(r.original, nullptr);
  EXPECT_NE(r.original->find_temporary("w2"), nullptr);
  check_transformed(k, r, {{{"n", 5}, {"m", 3}}, {{"n", 1}, {"m", 0}}});
  // a1 reads what a0 writes: cut there, refused with the pair
  expect_error([&] { rename_temporary(k, "w", "w3", "id:a1 or id:a2"); }, "'a1' at");
  expect_error([&] { rename_temporary(k, "w", "w3", "id:a1 or id:a2"); }, "reads the value 'a0'");
  expect_error([&] { rename_temporary(k, "w", "w3", "id:nothing"); }, "no instruction matching 'id:nothing' accesses 'w'");
}
