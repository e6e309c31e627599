// A kernel's identity by content (structural_key/hash/equal): equal for the
// same kernel made by different scripts, different when any field differs,
// and a hash that does not depend on the run (a constant checked here).
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {
LoopKernel mm() {
  return parse_kernel_text("kernel mm\ndomains:\n  {[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}\narguments:\n"
                           "  a: float32[n, l], b: float32[l, m], c: float32[n, m]\ninstructions:\n  c[i, j] = sum(k, a[i, k] * b[k, j])\n")
      .kernel;
}
}  // namespace

TEST(KernelIdentity, TwoScriptsThatMakeTheSameKernelMakeOne) {
  LoopKernel k = mm();
  LoopKernel one = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"));
  LoopKernel two = apply_transforms(k, parse_transform_script("split_iname i 16\ntag_inames i_outer:g.0 i_inner:l.0\n"));
  EXPECT_TRUE(structurally_equal(one, two));
  EXPECT_EQ(structural_hash(one), structural_hash(two));
  EXPECT_EQ(structural_hash(mm()), structural_hash(mm()));  // parsed twice
}

TEST(KernelIdentity, AnyFieldThatDiffersMakesAnotherKernel) {
  LoopKernel k = mm();
  std::vector<LoopKernel> variants = {
      apply_transforms(k, parse_transform_script("split_iname i 16\n")),
      apply_transforms(k, parse_transform_script("split_iname i 8\n")),
      apply_transforms(k, parse_transform_script("tag_inames j:l.0\n")),
      apply_transforms(k, parse_transform_script("assume n >= 1\n")),
      apply_transforms(k, parse_transform_script("prioritize_loops j,i\n")),
      apply_transforms(k, parse_transform_script("set_index_dtype int64\n")),
      apply_transforms(k, parse_transform_script("do_not_specialize n\n")),
      apply_transforms(k, parse_transform_script("split_iname i 16 slabs=0,1\n")),
  };
  LoopKernel renamed = k;
  renamed.name = "other";
  variants.push_back(renamed);
  LoopKernel typed = k;
  typed.arguments.edit()[0].dtype = types::float64;
  variants.push_back(typed);
  variants.push_back(k);
  for (size_t a = 0; a < variants.size(); ++a)
    for (size_t b = 0; b < variants.size(); ++b) {
      EXPECT_EQ(structurally_equal(variants[a], variants[b]), a == b) << a << " vs " << b;
      if (a != b) EXPECT_NE(structural_hash(variants[a]), structural_hash(variants[b])) << a << " vs " << b;
    }
}

TEST(KernelIdentity, TheHashIsTheSameInEveryRun) {
  // FNV-1a of the canonical text: a change of this constant means the key's
  // form changed (every content-keyed cache and tuning log starts over)
  LoopKernel k = parse_kernel_text("kernel v\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n], out: float32[n]\n"
                                   "instructions:\n  out[i] = 2 * a[i]\n")
                     .kernel;
  EXPECT_EQ(structural_hash(k), 0x621368d623c04318ull) << std::hex << structural_hash(k) << "\n" << structural_key(k);
  EXPECT_EQ(structural_key(k).substr(0, 9), "kernel v\n");
}

// A kernel is a handle to shared parts: a copy shares every part, a change
// through edit() copies only the part changed (the copy's; never the
// original's), and a transformation keeps the parts it does not touch.
TEST(KernelValue, ACopySharesItsPartsAndAChangeCopiesOnlyThatPart) {
  LoopKernel k = mm();
  LoopKernel c = k;
  EXPECT_TRUE(c.instructions.shares(k.instructions));
  EXPECT_TRUE(c.domains.shares(k.domains));
  EXPECT_TRUE(c.arguments.shares(k.arguments));
  c.arguments.edit()[0].dtype = types::float64;
  EXPECT_FALSE(c.arguments.shares(k.arguments));
  EXPECT_EQ(k.arguments[0].dtype, types::float32);  // the original is unchanged
  EXPECT_TRUE(c.instructions.shares(k.instructions));
  EXPECT_TRUE(c.domains.shares(k.domains));
  // an edit of a part nothing else holds happens in place
  const void* before = c.arguments.identity();
  c.arguments.edit()[1].dtype = types::float64;
  EXPECT_EQ(c.arguments.identity(), before);
}

TEST(KernelValue, TransformationsShareThePartsTheyDoNotChange) {
  LoopKernel k = mm();
  LoopKernel tagged = apply_transforms(k, parse_transform_script("tag_inames j:l.0\n"));
  EXPECT_TRUE(tagged.instructions.shares(k.instructions));
  EXPECT_TRUE(tagged.domains.shares(k.domains));
  EXPECT_TRUE(tagged.arguments.shares(k.arguments));
  EXPECT_FALSE(tagged.iname_tags.shares(k.iname_tags));
  LoopKernel assumed = apply_transforms(k, parse_transform_script("assume n >= 1\n"));
  EXPECT_TRUE(assumed.instructions.shares(k.instructions));
  EXPECT_TRUE(assumed.domains.shares(k.domains));
  LoopKernel prioritized = apply_transforms(k, parse_transform_script("prioritize_loops j,i\n"));
  EXPECT_TRUE(prioritized.instructions.shares(k.instructions));
  EXPECT_TRUE(prioritized.domains.shares(k.domains));
  LoopKernel split = apply_transforms(k, parse_transform_script("split_iname i 16\n"));
  EXPECT_TRUE(split.arguments.shares(k.arguments));
  EXPECT_FALSE(split.domains.shares(k.domains));
  EXPECT_FALSE(split.instructions.shares(k.instructions));
  // one tuned variant on top of another shares what the last step kept
  LoopKernel both = apply_transforms(split, parse_transform_script("tag_inames i_inner:l.0\n"));
  EXPECT_TRUE(both.instructions.shares(split.instructions));
  EXPECT_TRUE(both.domains.shares(split.domains));
}

TEST(KernelValue, GeneratingCodeLeavesTheKernelAsItWas) {
  // A joined domain has existentials, so the analyses took it through isl,
  // where coalescing one basic set handed the domain's own set back: the
  // bounds check then simplified the kernel's domain in place (its redundant
  // 0 <= i_j_inner went), and the kernel printed and hashed differently
  // after code generation than its script made it (LOOM_RANDOM_SEED=32)
  LoopKernel k = apply_transforms(parse_kernel_text("kernel random\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j <= i}\narguments:\n"
                                                    "  a: int32[n, n], out: int32[n, n]\ninstructions:\n  out[i, j] = a[i, j] + a[j, i]\n")
                                      .kernel,
                                  parse_transform_script("split_iname j 3 outer_tag=g.1 inner_tag=for\njoin_inames i,j_inner\n"));
  std::string before = k.str();
  uint64_t hash = structural_hash(k);
  generate(k);
  EXPECT_EQ(k.str(), before);
  EXPECT_EQ(structural_hash(k), hash);
}
