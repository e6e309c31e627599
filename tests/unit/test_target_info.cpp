// The target model: each architecture's limits and features, and the checks
// and code generation that read them instead of constants.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/target_info.h"
#include "oracle.h"

using namespace loom;

TEST(TargetInfo, ArchitecturesHaveTheirLimitsAndFeatures) {
  TargetInfo a100 = TargetInfo::cuda("sm_80"), rtx = TargetInfo::cuda("sm_86"), h100 = TargetInfo::cuda("sm_90"),
             h100a = TargetInfo::cuda("sm_90a"), t4 = TargetInfo::cuda("sm_75");
  EXPECT_EQ(a100.max_shared_bytes, 163 * 1024);
  EXPECT_EQ(rtx.max_shared_bytes, 99 * 1024);
  EXPECT_EQ(h100.max_shared_bytes, 227 * 1024);
  EXPECT_TRUE(a100.async_copy);
  EXPECT_FALSE(t4.async_copy);
  EXPECT_FALSE(a100.tensor_memory_accelerator);
  EXPECT_TRUE(h100.tensor_memory_accelerator);
  EXPECT_NE(a100.find_matrix_instruction(16, 8, 16, Type(ScalarKind::BFloat16)), nullptr);
  EXPECT_EQ(t4.find_matrix_instruction(16, 8, 16, Type(ScalarKind::BFloat16)), nullptr);
  EXPECT_EQ(h100.find_matrix_instruction(64, 256, 16, Type(ScalarKind::BFloat16)), nullptr);  // wgmma needs sm_90a
  ASSERT_NE(h100a.find_matrix_instruction(64, 256, 16, Type(ScalarKind::BFloat16)), nullptr);
  EXPECT_TRUE(h100a.find_matrix_instruction(64, 256, 16, Type(ScalarKind::BFloat16))->warpgroup);
  EXPECT_NE(h100a.str().find("wgmma"), std::string::npos) << h100a.str();
  for (const char* bad : {"sm90", "sm_", "compute_90", "sm_90b", "sm_9000", "sm_35"})
    EXPECT_THROW(TargetInfo::cuda(bad), Error) << bad;
  EXPECT_EQ(TargetInfo::generic_cuda().arch, "sm_90a");  // (H100/H200 with wgmma)
}

TEST(TargetInfo, ChecksAndCodeGenerationReadTheTargetsLimits) {
  // 120 KiB of shared memory: the opt-in of sm_80 and sm_90 allows it, sm_86's 99 KiB does not
  LoopKernel k = parse_kernel_text(R"(kernel big
domains:
  {[t]: 0 <= t < 32}
arguments:
  out: float32[32]
temporaries:
  big: float32[30720] local
instructions:
  big[t] = 1  {id=w}
  out[t] = big[31 - t]  {dep=w}
transforms:
  tag_inames t:l.0
)").kernel;
  LoopKernel t = apply_transforms(k, parse_transform_script("tag_inames t:l.0\n"));
  EXPECT_NO_THROW(generate(t, TargetInfo::cuda("sm_80")));
  GeneratedKernel g = generate(t, TargetInfo::cuda("sm_90"));
  EXPECT_EQ(g.target.arch, "sm_90");
  try {
    generate(t, TargetInfo::cuda("sm_86"));
    ADD_FAILURE() << "sm_86 accepted 120 KiB of shared memory";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("at most 101376 bytes on sm_86"), std::string::npos) << e.what();
  }
  // the printer reads the static limit from the target: above it, dynamic shared memory
  EXPECT_NE(cuda::print_source(g).find("extern __shared__"), std::string::npos);
  // a block of 1024 threads fits every architecture; the model's limit is what refuses more
  TargetInfo small = TargetInfo::cuda("sm_90");
  small.max_threads_per_block = 16;
  LoopKernel wide = apply_transforms(parse_kernel_text("kernel w\ndomains:\n  {[i]: 0 <= i < 32}\narguments:\n  out: float32[32]\n"
                                                       "instructions:\n  out[i] = 1\n")
                                         .kernel,
                                     parse_transform_script("tag_inames i:l.0\n"));
  EXPECT_NO_THROW(generate(wide));
  EXPECT_THROW(generate(wide, nullptr, CodegenPath::Isl, small), KernelError);
}
