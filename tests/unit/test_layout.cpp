// tag_array_axes: the strides each tag gives, the CPU oracle against the
// same kernel declared with those strides (Fortran order, a permuted 3-d
// array) and against the plain C layout for a vec axis, float4 accesses in
// the CUDA C, the kernel text and JSON round trips of a vector axis, and the
// refusals (each with its reason).
#include <gtest/gtest.h>

#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "loom/interpreter.h"
#include "oracle.h"
#include "transform_check.h"

using namespace loom;
using loom::testing::check_transformed;
using loom::testing::error_of;

namespace {

LoopKernel scaled_copy(const std::string& layout = "") {
  return make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2 * a[i, j] + j",
                     {"a: float32[n, m]" + layout + ", out: float32[n, m]" + layout}, "scaled_copy");
}

std::vector<std::string> stride_texts(const LoopKernel& k, const std::string& array) {
  std::vector<std::string> out;
  for (auto& s : k.find_argument(array)->element_strides()) out.push_back(simplify(s).str());
  return out;
}

LoopKernel vector_add4() {
  return make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 4}"}, "out[i, j] = a[i, j] + 2 * b[i, j]",
                     {"a: float32[n, 4], b: float32[n, 4], out: float32[n, 4]"}, "vadd4");
}

}  // namespace

TEST(Layout, TagsBecomeStrides) {
  LoopKernel k = scaled_copy();
  EXPECT_EQ(stride_texts(tag_array_axes(k, "a", "N0,N1"), "a"), (std::vector<std::string>{"1", "n"}));
  EXPECT_EQ(stride_texts(tag_array_axes(k, "a", "f,f"), "a"), (std::vector<std::string>{"1", "n"}));
  EXPECT_EQ(stride_texts(tag_array_axes(k, "a", "stride:1, stride:n"), "a"), (std::vector<std::string>{"1", "n"}));
  // C order is the plain declaration again
  LoopKernel c = tag_array_axes(tag_array_axes(k, "a", "f,f"), "a", "c,c");
  EXPECT_TRUE(c.find_argument("a")->strides.empty());
  EXPECT_EQ(c.find_argument("a")->str(), "a: float32[n, m]");
  LoopKernel k3 = make_kernel({"{[i, j, l]: 0 <= i < n and 0 <= j < m and 0 <= l < p}"}, "out[i, j, l] = x[i, j, l]",
                              {"x: float32[n, m, p], out: float32[n, m, p]"}, "k3");
  EXPECT_EQ(stride_texts(tag_array_axes(k3, "x", "N2,N0,N1"), "x"), (std::vector<std::string>{"m * p", "1", "m"}));
  // the vector lanes lie innermost, the other axes above them
  EXPECT_EQ(stride_texts(tag_array_axes(vector_add4(), "a", "c,vec"), "a"), (std::vector<std::string>{"4", "1"}));
}

TEST(Layout, OracleAgainstTheSameStridesDeclared) {
  LoopKernel fortran = scaled_copy(" order=F");
  LoopKernel tagged = tag_array_axes(scaled_copy(), "a, out", "f,f");
  for (auto p : std::vector<std::map<std::string, int64_t>>{{{"n", 7}, {"m", 5}}, {{"n", 1}, {"m", 13}}, {{"n", 0}, {"m", 3}}})
    EXPECT_SAME_RESULTS(fortran, tagged, p);
  // with a schedule on top (threads along the fast axis)
  LoopKernel scheduled = split_iname(tagged, "i", 32, {.outer_tag = InameTag::parse("g.0"), .inner_tag = InameTag::parse("l.0")});
  check_transformed(fortran, scheduled, {{{"n", 45}, {"m", 3}}, {{"n", 32}, {"m", 1}}});
  LoopKernel k3 = make_kernel({"{[i, j, l]: 0 <= i < n and 0 <= j < m and 0 <= l < p}"}, "out[i, j, l] = x[i, j, l] * (i + 1)",
                              {"x: float32[n, m, p] strides=(m*p, 1, m), out: float32[n, m, p]"}, "k3");
  LoopKernel t3 = tag_array_axes(make_kernel({"{[i, j, l]: 0 <= i < n and 0 <= j < m and 0 <= l < p}"}, "out[i, j, l] = x[i, j, l] * (i + 1)",
                                             {"x: float32[n, m, p], out: float32[n, m, p]"}, "k3"),
                                 "x", "N2,N0,N1");
  check_transformed(k3, t3, {{{"n", 3}, {"m", 4}, {"p", 5}}, {{"n", 2}, {"m", 1}, {"p", 7}}});
}

TEST(Layout, VecAxisMovesAsVectors) {
  LoopKernel k = vector_add4();
  LoopKernel t = tag_array_axes(k, "a,b,out", "c,vec");
  EXPECT_EQ(t.find_argument("a")->vector_axis, 1);
  t = split_iname(t, "i", 64, {.outer_tag = InameTag::parse("g.0"), .inner_tag = InameTag::parse("l.0")});
  t = tag_inames(t, "j:vec");
  check_transformed(k, t, {{{"n", 1001}}, {{"n", 3}}, {{"n", 64}}});
  GeneratedKernel g = generate(t);
  std::string src = cuda::print_source(g);
  EXPECT_NE(src.find("float4 const loom_v0 = *reinterpret_cast<const float4 *>"), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<float4 *>(&(out["), std::string::npos) << src;
  EXPECT_EQ(g.argument_alignment.at("a"), 16);
  // a lane by its index (no vec iname): scalar components, as written
  LoopKernel lanes = tag_array_axes(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i, 0] + a[i, 3]",
                                                {"a: float32[n, 4], out: float32[n]"}, "lanes"),
                                    "a", "c,vec");
  check_transformed(make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i, 0] + a[i, 3]", {"a: float32[n, 4], out: float32[n]"}, "lanes"),
                    lanes, {{{"n", 9}}});
}

TEST(Layout, VectorAxisRoundTrips) {
  LoopKernel t = tag_array_axes(vector_add4(), "a", "c,vec");
  EXPECT_EQ(t.find_argument("a")->str(), "a: float32[n, 4] vector_axis=1");
  LoopKernel back = kernel_from_json(kernel_to_json(t));
  EXPECT_EQ(back.find_argument("a")->vector_axis, 1);
  KernelFile f = parse_kernel_text("kernel v\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < 2}\narguments:\n"
                                   "  a: float64[n, 2] vector_axis=1\n  out: float64[n, 2]\ninstructions:\n  out[i, j] = a[i, j]\n");
  EXPECT_EQ(f.kernel.find_argument("a")->vector_axis, 1);
  EXPECT_NE(error_of([] {
              parse_kernel_text("kernel v\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < 3}\narguments:\n"
                                "  a: float32[n, 3] vector_axis=1\n  out: float32[n, 3]\ninstructions:\n  out[i, j] = a[i, j]\n");
            }).find("a vec axis of 3 float32 elements is no vector type"),
            std::string::npos);
}

TEST(Layout, Refusals) {
  LoopKernel k = scaled_copy();
  auto refused = [](const std::function<void()>& f, const std::string& part) {
    std::string e = error_of(f);
    EXPECT_NE(e.find(part), std::string::npos) << e;
    EXPECT_NE(e.find("tag_array_axes"), std::string::npos) << e;  // the transformation is named
  };
  refused([&] { tag_array_axes(k, "a", "c"); }, "array 'a' has 2 axes, but 1 tags were given");
  refused([&] { tag_array_axes(k, "a", "c,q"); }, "unknown axis tag 'q'");
  refused([&] { tag_array_axes(k, "a", "sep,c"); }, "'sep'");
  refused([&] { tag_array_axes(k, "a", "N0,N2"); }, "nesting levels N<k> must be 0, 1, ... once each");
  refused([&] { tag_array_axes(k, "a", "c,N0"); }, "mix c, f and N<k>");
  refused([&] { tag_array_axes(k, "a", "stride:q,c"); }, "stride:q is neither an integer nor a parameter");
  refused([&] { tag_array_axes(k, "nope", "c,c"); }, "no array argument 'nope'");
  refused([&] { tag_array_axes(k, "a", "c,vec"); }, "has extent m, not a constant");
  refused([&] { tag_array_axes(k, "a", "vec,vec"); }, "two vec axes");
  LoopKernel k3 = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 3}"}, "out[i, j] = a[i, j]", {"a: float32[n, 3], out: float32[n, 3]"}, "k3");
  refused([&] { tag_array_axes(k3, "a", "c,vec"); }, "a vec axis of 3 float32 elements is no vector type");
  LoopKernel bytes = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 4}"}, "out[i, j] = a[i, j]", {"a: int8[n, 4], out: int8[n, 4]"}, "b");
  refused([&] { tag_array_axes(bytes, "a", "c,vec"); }, "4 int8 elements is no vector type");
  LoopKernel off = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 4}"}, "out[i, j] = a[i, j]", {"a: float32[n, 4] offset=2, out: float32[n, 4]"}, "o");
  refused([&] { tag_array_axes(off, "a", "c,vec"); }, "offset=2 is not a multiple of the vec axis' 4 lanes");
  LoopKernel temp = make_kernel({"{[i]: 0 <= i < n}"}, "<float32> t = a[i]\nout[i] = t", {"a: float32[n], out: float32[n]"}, "tmp");
  refused([&] { tag_array_axes(temp, "t", "c"); }, "temporary 't' has 0 axes, but 1 tags were given");  // (a temporary's axes reorder)
  refused([&] { tag_array_axes(temp, "n", "c"); }, "'n' is a scalar, not an array");
}

TEST(Layout, VecAccessesThatCannotBeVectorsAreRefused) {
  // lanes reversed: not contiguous in the lanes
  LoopKernel rev = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 4}"}, "out[i, j] = a[i, 3 - j]",
                               {"a: float32[n, 4], out: float32[n, 4]"}, "rev");
  LoopKernel t = tag_inames(tag_array_axes(rev, "a", "c,vec"), "j:vec");
  std::string e = error_of([&] { generate(t); });
  EXPECT_NE(e.find("array 'a' has a vec axis (tag_array_axes), but a[i, 3 - j] in the vec loop over 'j' cannot move as one vector"),
            std::string::npos)
      << e;
  // the same kernel without the vec axis unrolls (loopy's fallback) and computes the same
  LoopKernel plain = tag_inames(rev, "j:vec");
  check_transformed(rev, plain, {{{"n", 5}}});
}

// split_array_axis (loopy's): an argument keeps its memory (the same values
// read at the same addresses: the transformed kernel on the storage of the
// untransformed one's input computes the same output, at extents that are
// not multiples of the count, C and F order), a temporary's axis splits
// whatever the schedule, and bad requests are refused.
TEST(Layout, SplitArrayAxisKeepsTheMemoryOfArguments) {
  LoopKernel k = scaled_copy();
  for (const char* order : {"C", "F"})
    for (int64_t m : {12, 10, 1}) {
      LoopKernel t = split_array_axis(k, "a", 1, 4, order);
      ASSERT_EQ(t.find_argument("a")->shape.size(), 3u);
      std::map<std::string, int64_t> p{{"n", 7}, {"m", m}};
      auto ref = make_host_arrays(k, p, 3);
      auto got = make_host_arrays(t, p, 4);
      for (int64_t e = 0; e < 7 * m; ++e) got.at("a").set(e, ref.at("a").get(e));  // (storage: the same addresses)
      interpret(generate(k), loom::testing::args_of(k, ref, p));
      interpret(generate(t), loom::testing::args_of(t, got, p));
      for (int64_t e = 0; e < 7 * m; ++e) ASSERT_EQ(got.at("out").get(e), ref.at("out").get(e)) << order << " m = " << m << " at " << e;
    }
  // printed: the new shape, the inner axis keeping the old stride
  EXPECT_EQ(split_array_axis(k, "a", 1, 4).find_argument("a")->str(), "a: float32[n, (m + 3) // 4, 4] strides=(m, 4, 1)");
  EXPECT_EQ(stride_texts(split_array_axis(k, "a", 0, 8, "F"), "a"), (std::vector<std::string>{"m", "8 * m", "1"}));
}

TEST(Layout, SplitArrayAxisOfATemporaryAndRefusals) {
  LoopKernel k = parse_kernel_text("kernel tmp\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < 24}\narguments:\n  a: float32[n, 24], out: float32[n, 24]\n"
                                   "temporaries:\n  t: float32[24] private\ninstructions:\n  t[j] = a[i, j] * 2  {id=w}\n  out[i, j] = t[j] + 1  {dep=w}\n")
                     .kernel;
  LoopKernel t = split_array_axis(k, "t", 0, 5);
  EXPECT_EQ(t.find_temporary("t")->shape.size(), 2u);
  check_transformed(k, t, {{{"n", 3}}, {{"n", 17}}});
  check_transformed(k, tag_inames(split_array_axis(k, "t", 0, 8, "F"), "i:g.0, j:l.0"), {{{"n", 5}}});
  EXPECT_NE(error_of([&] { split_array_axis(k, "a", 2, 4); }).find("array 'a' has 2 axes; there is no axis 2"), std::string::npos);
  EXPECT_NE(error_of([&] { split_array_axis(k, "zz", 0, 4); }).find("no array argument or temporary 'zz'"), std::string::npos);
  EXPECT_NE(error_of([&] { split_array_axis(k, "a", 0, 4, "X"); }).find("order is 'C'"), std::string::npos);
  EXPECT_NE(error_of([&] { split_array_axis(k, "a", 0, 0); }).find("positive"), std::string::npos);
}

// Found while adding split_array_axis: a contiguous array passed for an
// argument declared with other strides or an offset (examples/layouts.loom's
// out from Python) made the kernel write outside it (heap corruption). Such
// a call is refused; arrays laid out as declared (the command line's) run.
TEST(Layout, AContiguousArrayForAStridedArgumentIsRefused) {
  KernelFile f = loom::testing::example("layouts");
  LoopKernel t = apply_transforms(f.kernel, f.transforms);
  std::map<std::string, int64_t> p{{"n", 30}, {"m", 20}};
  auto arrays = make_host_arrays(t, p, 1);
  ArgMap args = loom::testing::args_of(t, arrays, p);
  EXPECT_NO_THROW(bind_parameters(t, args));
  HostArray dense(types::float32, {30, 20});
  args["out"] = ArgValue::of(ArrayRef{dense.ref().data, types::float32, {30, 20}, true});
  std::string e = error_of([&] { bind_parameters(t, args); });
  EXPECT_NE(e.find("array 'out' is declared with strides (24, 1) and offset 2"), std::string::npos) << e;
  EXPECT_NE(e.find("would address memory outside it"), std::string::npos) << e;
}
