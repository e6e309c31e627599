// The checks that refuse an illegal kernel instead of miscompiling it: each
// error is triggered, and kernels that look alike but are legal pass.
#include <gtest/gtest.h>

#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/preprocess.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {
std::string kernel_error(const LoopKernel& k) {
  try {
    generate(k);
  } catch (const KernelError& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST(BoundsCheck, AnAccessPastTheEndIsRefusedWithAWitness) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i + 1]", {"a: float32[n], out: float32[n]"}, "shift");
  std::string e = kernel_error(k);
  EXPECT_NE(e.find("kernel 'shift': instruction 'insn_0' accesses a[i + 1] out of bounds"), std::string::npos) << e;
  EXPECT_NE(e.find("for n = "), std::string::npos) << e;  // a concrete witness
  LoopKernel neg = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i - 1]", {"a: float32[n], out: float32[n]"});
  EXPECT_NE(kernel_error(neg).find("out of bounds"), std::string::npos);
  LoopKernel two = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j <= m}"}, "out[i, j] = 1", {"out: float32[n, m]"});
  EXPECT_NE(kernel_error(two).find("index 1 (j) leaves [0, m)"), std::string::npos) << kernel_error(two);
}

TEST(BoundsCheck, GuardsPredicatesAndAssumptionsAreTakenIntoAccount) {
  EXPECT_EQ(kernel_error(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = if_then_else(i < n - 1, a[i + 1], 0.0)",
                                     {"a: float32[n], out: float32[n]"})), "accepted");
  EXPECT_EQ(kernel_error(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i + 1] {if=i + 1 < n}", {"a: float32[n], out: float32[n]"})),
            "accepted");
  EXPECT_EQ(kernel_error(make_kernel({"{[i]: 0 <= i < n}"}, "f[i] = i > 0 and a[i - 1] > 0", {"a: float32[n], f: bool[n]"})),
            "accepted");
  // a[i + 4] is in bounds only if the array has 4 more elements: its shape says so
  EXPECT_EQ(kernel_error(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i + 4]", {"a: float32[n + 4], out: float32[n]"})),
            "accepted");
  // an index that is not affine cannot be proved either way: accepted (the interpreter checks at run time)
  EXPECT_EQ(kernel_error(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[idx[i]]", {"a: float32[n], idx: int32[n], out: float32[n]"})),
            "accepted");
  // every split and tag of every example stays in bounds
  for (const std::string& name : loom::testing::example_names()) {
    KernelFile f = loom::testing::example(name);
    EXPECT_EQ(kernel_error(apply_transforms(f.kernel, f.transforms)), "accepted") << name;
  }
}

TEST(RaceCheck, TwoThreadsWritingOneElementAreRefused) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < 64}"}, "out[0] = a[i]", {"a: float32[64], out: float32[1]"}, "racy");
  std::string e = kernel_error(tag_inames(k, "i:l.0"));
  EXPECT_NE(e.find("write race: instruction 'insn_0' writes one element of array 'out' from two different threads"), std::string::npos)
      << e;
  EXPECT_EQ(kernel_error(k), "accepted");  // sequential: fine
  // a write outside every iname of an axis: every block writes it
  LoopKernel g = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"}, "x[i] = 1 {id=s1}\ny[j] = 2 {id=s2}",
                             {"x: float32[n], y: float32[8]"});
  std::string e2 = kernel_error(tag_inames(g, "i:g.0"));
  EXPECT_NE(e2.find("from every thread along axis g.0"), std::string::npos) << e2;
  // integer division by the thread index folds several threads onto one element
  LoopKernel h = make_kernel({"{[i]: 0 <= i < 64}"}, "out[i // 2] = a[i]", {"a: float32[64], out: float32[32]"});
  EXPECT_NE(kernel_error(tag_inames(h, "i:l.0")).find("write race"), std::string::npos);
  // distinct elements per thread: fine, also when the index mixes block and thread inames
  LoopKernel ok = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 8}"}, "out[8 * i + j] = 1", {"out: float32[8 * n]"});
  EXPECT_EQ(kernel_error(tag_inames(ok, "i:g.0, j:l.0")), "accepted");
}

TEST(RaceCheck, LocalMemoryRacesWithinABlock) {
  LoopKernel k = make_kernel({"{[g, t]: 0 <= g < n and 0 <= t < 32}"}, "tile[t // 2] = a[32 * g + t]\nout[32 * g + t] = 1",
                             {"a: float32[32 * n], out: float32[32 * n]", "..."});
  k.temporaries.edit()["tile"] = Temporary{"tile", types::float32, {make_int(16)}, AddressSpace::Local, {}, {}};
  EXPECT_NE(kernel_error(tag_inames(k, "g:g.0, t:l.0")).find("local temporary 'tile'"), std::string::npos);
}

TEST(BarrierPlacement, ReadAfterWriteAndLoopCarriedOverwriteGetBarriersOfTheirOwn) {
  const char* text = R"(kernel staged
domains:
  {[g, t, k]: 0 <= g < n and 0 <= t < 32 and 0 <= k < 4}
arguments:
  a: float32[n, 4, 32], out: float32[n, 32]
temporaries:
  tile: float32[32] local
instructions:
  <float32> acc = 0 {id=init}
  tile[t] = a[g, k, t] {id=load, dep=init}
  ... lbarrier {id=b1, dep=load, inames=k}
  acc = acc + tile[31 - t] {id=use, dep=b1, inames=g:t:k}
  ... lbarrier {id=b2, dep=use, inames=k}
  out[g, t] = acc {dep=use}
transforms:
  tag_inames g:g.0 t:l.0
)";
  KernelFile f = parse_kernel_text(text);
  LoopKernel k = apply_transforms(f.kernel, f.transforms);
  auto barriers = [](const LoopKernel& x) {
    GeneratedKernel g = generate(x);
    std::string body = to_string(g.body);
    size_t n = 0;
    for (size_t p = body.find("barrier"); p != std::string::npos; p = body.find("barrier", p + 1)) ++n;
    return n;
  };
  // the written barriers suffice: none is added
  EXPECT_EQ(barriers(k), 2u);
  // without b2 the next k iteration's load would overwrite tile while others still read it,
  // without b1 the use would read it before it is written: Loom places each where it is needed
  LoopKernel none = remove_instructions(k, "id:b1 or id:b2");
  LoopKernel no_b2 = remove_instructions(k, "id:b2");
  LoopKernel no_b1 = remove_instructions(k, "id:b1");
  EXPECT_EQ(barriers(none), 2u);
  EXPECT_EQ(barriers(no_b1), 2u);
  EXPECT_EQ(barriers(no_b2), 2u);
#ifdef LOOM_HAS_CPU_TARGET
  for (const LoopKernel* v : {&k, &none, &no_b1, &no_b2}) {
    // the CPU target runs threads region by region, as a GPU with barriers would
    std::map<std::string, int64_t> p{{"n", 3}};
    auto arrays = make_host_arrays(*v, p, 2);
    HostArray a = arrays.at("a");
    loom::testing::run_on_host(*v, loom::testing::args_of(*v, arrays, p));
    for (int64_t g = 0; g < 3; ++g)
      for (int64_t t = 0; t < 32; ++t) {
        float acc = 0;
        for (int64_t kk = 0; kk < 4; ++kk) acc += float(a.get((g * 4 + kk) * 32 + 31 - t));
        EXPECT_FLOAT_EQ(float(arrays.at("out").get(g * 32 + t)), acc);
      }
  }
#endif
}

TEST(Limits, OneInamePerHardwareAxisAndInstruction) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 1", {"out: float32[n, m]"});
  std::string e = kernel_error(tag_inames(k, "i:g.1, j:g.1"));
  EXPECT_NE(e.find("runs within inames 'i' and 'j', both tagged g.1"), std::string::npos) << e;
  // different instructions may share an axis
  LoopKernel two = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "x[i] = 1\ny[j] = 2", {"x: float32[n], y: float32[m]"});
  EXPECT_EQ(kernel_error(tag_inames(two, "i:g.0, j:g.0")), "accepted");
}

TEST(Limits, SharedMemoryAndUnloopedInames) {
  LoopKernel k = parse_kernel_text(R"(kernel big_shared
domains:
  {[t]: 0 <= t < 32}
arguments:
  out: float32[32]
temporaries:
  big: float64[30000] local
instructions:
  big[t] = 1  {id=w}
  out[t] = big[31 - t]  {dep=w}
)").kernel;
  EXPECT_NE(kernel_error(k).find("local temporary 'big' takes 240000 bytes; a block's local (shared) memory holds at most 232448 bytes"),
            std::string::npos)
      << kernel_error(k);
  // two that fit alone but not together: the block's total
  k.temporaries.edit()["big"].shape = {make_int(20000)};
  k.temporaries.edit()["big2"] = k.temporaries.edit()["big"];
  k.temporaries.edit()["big2"].name = "big2";
  EXPECT_NE(kernel_error(k).find("320000 bytes of local (shared) memory per block; at most 232448 bytes"), std::string::npos) << kernel_error(k);
  k.temporaries.edit().erase("big2");
  // 64 KiB: dynamic shared memory, which NVRTC compiles
  k.temporaries.edit()["big"].shape = {make_int(8192)};
  EXPECT_EQ(kernel_error(k), "accepted");
  GeneratedKernel g = generate(k);
  EXPECT_EQ(g.local_bytes(), 65536);
  std::string src = cuda::print_source(g);
  EXPECT_NE(src.find("extern __shared__ __align__(16) unsigned char loom_shared[];"), std::string::npos) << src;
  if (cuda::nvrtc_available()) EXPECT_GT(cuda::compile(src, "sm_90").cubin.size(), 0u);
  LoopKernel u = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < n}"}, "out[i] = a[i]", {"a: float32[n], out: float32[n]"});
  u.instructions.edit()[0].rhs = parse_expr("a[j]");  // j used, but the instruction has no j loop
  EXPECT_NE(kernel_error(u).find("uses iname 'j' but runs within no loop or tag of it"), std::string::npos) << kernel_error(u);
}

// Found by the random-kernel fuzzer: a private prefetch whose fetch loop was
// then split onto g.0, while the readers use another g.0 iname of another
// range; each block fetched other elements than it read.
TEST(PrivateMemory, ValuesWrittenOnOtherThreadsAreRefused) {
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = 1.5 * a[i] + a[i]", {"a: float32[n], out: float32[n]"}, "random");
  LoopKernel t = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.1 inner_tag=for\n"
                                                           "add_prefetch a i_inner temporary_address_space=private default_tag=for\n"
                                                           "split_iname i_inner 8 outer_tag=g.0 inner_tag=l.0\n"
                                                           "split_iname a_dim_0 3 outer_tag=for inner_tag=g.0\n"));
  std::string e = kernel_error(t);
  EXPECT_NE(e.find("private temporary 'a_fetch' is written by 'fetch_a' within iname 'a_dim_0_inner' (g.0)"), std::string::npos) << e;
  EXPECT_NE(e.find("an iname of the same axis with another range"), std::string::npos) << e;
  // the same prefetch with the fetch loop left sequential: every thread fetches the whole tile itself
  LoopKernel ok = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.1 inner_tag=for\n"
                                                            "add_prefetch a i_inner temporary_address_space=private default_tag=for\n"
                                                            "split_iname i_inner 8 outer_tag=g.0 inner_tag=l.0\n"));
  EXPECT_EQ(kernel_error(ok), "accepted");
  EXPECT_SAME_RESULTS(k, ok, {{"n", 37}});
  // a thread-indexed private element read by the thread that wrote it is fine; another thread's is not
  LoopKernel own = parse_kernel_text(R"(kernel own
domains:
  {[i]: 0 <= i < 32}
arguments:
  a: float32[33], out: float32[32]
temporaries:
  v: float32[33] private
instructions:
  v[i] = a[i]  {id=w}
  out[i] = 2 * v[i]  {dep=w}
)").kernel;
  EXPECT_EQ(kernel_error(tag_inames(own, "i:l.0")), "accepted");
  LoopKernel other = own;
  other.instructions.edit()[1].rhs = parse_expr("2 * v[i + 1]");
  std::string e2 = kernel_error(tag_inames(other, "i:l.0"));
  EXPECT_NE(e2.find("another thread may have written it"), std::string::npos) << e2;
  // without an address space (loopy's auto), a temporary each thread writes at its own
  // element is local: the block shares it
  LoopKernel shared = own;
  shared.temporaries.edit().at("v").space = AddressSpace::Auto;
  EXPECT_EQ(preprocess(tag_inames(shared, "i:l.0")).temporaries.at("v").space, AddressSpace::Local);
  EXPECT_EQ(preprocess(shared).temporaries.at("v").space, AddressSpace::Private);
}
