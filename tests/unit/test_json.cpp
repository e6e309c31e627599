// JSON kernels and scripts (loom/json.h): the lossless round trip at every
// step of every example's and every conformance kernel's transformation
// sequence, hand-written documents, and the errors bad documents get.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "transform_check.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;
using loom::testing::error_of;

namespace {

// The CUDA C of k, or the error that stopped its generation.
std::string code_or_error(const LoopKernel& k) {
  try {
    return cuda::print_source(generate(k));
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what();
  }
}

std::vector<std::string> kernel_files() {
  std::vector<std::string> files;
  for (auto& n : loom::testing::example_names()) files.push_back(loom::testing::source_dir() + "/examples/" + n + ".loom");
  for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/tests/conformance"))
    if (e.path().extension() == ".loom") files.push_back(e.path().string());
  // the loopy corpus, but for the kernels Loom refuses (expect-error) or cannot run yet (gap)
  for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/tests/conformance/loopy")) {
    if (e.path().extension() != ".loom") continue;
    std::ifstream in(e.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("# expect-error:") == std::string::npos && text.find("# gap:") == std::string::npos)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

// One test per kernel file, named by its folder and file (examples_axpy,
// conformance_loopy_...), so a sharded suite spreads them.
class JsonRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(JsonRoundTrip, GivesIdenticalCodeAtEveryStep) {
  const std::string& path = GetParam();
  KernelFile f = parse_kernel_file(path);
  LoopKernel k = f.kernel;
  for (size_t s = 0; s <= f.transforms.size(); ++s) {
    if (s > 0) k = apply_transform(k, f.transforms[s - 1]);
    SCOPED_TRACE("after " + std::to_string(s) + " transformation(s)");
    std::string json = kernel_to_json(k);
    LoopKernel back = kernel_from_json(json, path + ".json");
    // (under the sanitizers the code of every fourth step and the last: generating it is the cost)
    if (!loom::testing::kSanitized || s % 4 == 0 || s == f.transforms.size()) EXPECT_EQ(code_or_error(back), code_or_error(k));
    EXPECT_EQ(kernel_to_json(back), json);  // writing is a fixed point
    EXPECT_EQ(back.str(), k.str());
  }
  // the whole file: kernel, script and defaults
  KernelFile g = kernel_file_from_json(kernel_file_to_json(f), path + ".json");
  EXPECT_EQ(g.defaults, f.defaults);
  ASSERT_EQ(g.transforms.size(), f.transforms.size());
  EXPECT_EQ(code_or_error(apply_transforms(g.kernel, g.transforms)), code_or_error(k));
}
INSTANTIATE_TEST_SUITE_P(, JsonRoundTrip, ::testing::ValuesIn(kernel_files()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           std::string rel = i.param.substr(loom::testing::source_dir().size() + 1);
                           rel = rel.substr(0, rel.size() - 5);  // (.loom)
                           for (char& c : rel)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return rel;
                         });

TEST(Json, TheRoundTripCoversEveryKernelFile) { EXPECT_GE(kernel_files().size(), 50u); }

TEST(Json, TransformScriptRoundTrip) {
  auto script = parse_transform_script(
      "split_iname i 16 outer_tag=g.0 inner_tag=l.0\n"
      "tag_inames j:unr\n"
      "assume n >= 1 and n mod 16 = 0\n"
      "fix_parameters n=64\n");
  std::string json = transform_script_to_json(script);
  EXPECT_NE(json.find("\"inner_length\": 16"), std::string::npos) << json;  // integers stay integers
  auto back = transform_script_from_json(json, "s.json");
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < 4}"}, "out[i, j] = 2*a[i, j]", {"..."});
  EXPECT_EQ(code_or_error(apply_transforms(k, back)), code_or_error(apply_transforms(k, script)));
  EXPECT_EQ(transform_script_to_json(back), json);
}

TEST(Json, KernelOptionsRoundTrip) {
  LoopKernel k = make_kernel({"{[i, j]: 0 <= i < n and 0 <= j < m}"}, "out[i, j] = 2*a[i, j]", {"..."});
  LoopKernel d = do_not_specialize(set_index_dtype(k, "int64"), "m, n");
  std::string json = kernel_to_json(d);
  EXPECT_NE(json.find("\"do_not_specialize\": [\n        \"m\",\n        \"n\"\n      ]"), std::string::npos) << json;
  LoopKernel back = kernel_from_json(json, "k.json");
  EXPECT_EQ(back.options.do_not_specialize, (std::set<std::string>{"m", "n"}));
  EXPECT_EQ(back.options.index_dtype, types::int64);
  EXPECT_EQ(kernel_to_json(back), json);
  EXPECT_NE(error_of([&] { do_not_specialize(k, "q"); }).find("'q' is not a parameter"), std::string::npos);
  std::string bad = json;
  bad.replace(bad.find("\"m\"", bad.find("do_not_specialize")), 3, "\"q\"");
  std::string e = error_of([&] { kernel_from_json(bad, "k.json"); });
  EXPECT_NE(e.find("'q' is not a parameter of the kernel"), std::string::npos) << e;
  EXPECT_NE(e.find("do_not_specialize"), std::string::npos) << e;  // the JSON path
}

TEST(Json, HandWrittenKernelMeansWhatItsTextSays) {
  // no ids, no within_inames, arguments inferred: the same finishing steps as a kernel file
  std::string json = R"J({
    "format": "loom-kernel", "version": 1,
    "kernel": {
      "name": "scale",
      "domains": ["{[i]: 0 <= i < n}"],
      "infer_arguments": true,
      "instructions": [{"assignee": "out[i]", "expression": "2*a[i] + sum(j, 1.5f)"}]
    },
    "transforms": [{"transform": "split_iname", "iname": "i", "inner_length": 128, "outer_tag": "g.0", "inner_tag": "l.0"},
                   {"transform": "fix_parameters", "n": 1000}],
    "defaults": {"n": 1000}
  })J";
  EXPECT_NE(error_of([&] { kernel_file_from_json(json); }), "no error");  // j is no iname: refused
  size_t at = json.find("sum(j, 1.5f)");
  json.replace(at, 12, "a[i]");
  KernelFile f = kernel_file_from_json(json, "scale.json");
  KernelFile t = parse_kernel_text(
      "kernel scale\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = 2*a[i] + a[i]\n"
      "transforms:\n  split_iname i 128 outer_tag=g.0 inner_tag=l.0\n  fix_parameters n=1000\n");
  EXPECT_EQ(code_or_error(apply_transforms(f.kernel, f.transforms)), code_or_error(apply_transforms(t.kernel, t.transforms)));
  EXPECT_EQ(f.defaults.at("n"), 1000);
}

TEST(Json, ExactTextKeepsTreesTheShortFormWouldChange) {
  std::set<std::string> inames{"i", "j"};
  for (const char* text : {"max((i,), a[i])", "max(i, x)", "1.5f*x", "argmax(i, __argpair(a[i], i))",
                           "float64(x) + 2.5", "sum((i, j), a[i, j])"}) {
    Expr e = parse_expr(text, inames, "<test>");
    Expr back = parse_expr(e.exact_str(), inames, "<test>");
    EXPECT_TRUE(back.same_as(e)) << text << " -> " << e.exact_str();
  }
  // max over one iname with the short form reads as a reduction only when i is an iname;
  // the exact form reads as one whatever the inames
  Expr r = parse_expr("max((i,), a[i])", inames, "<test>");
  ASSERT_NE(r.as<Reduce>(), nullptr);
  EXPECT_EQ(r.exact_str(), "max((i,), a[i])");
}

TEST(Json, ErrorsNameTheJsonPath) {
  auto kernel_with = [](const std::string& instruction) {
    return R"({"format": "loom-kernel", "version": 1, "kernel": {"domains": ["{[i]: 0 <= i < n}"],
              "arguments": [{"name": "a", "dtype": "float32", "shape": ["n"]}], "instructions": [)" +
           instruction + "]}}";
  };
  // malformed JSON: line and column
  std::string e = error_of([] { kernel_from_json("{\n  \"format\": \"loom-kernel\",\n  \"version\": 1,,\n}", "k.json"); });
  EXPECT_NE(e.find("k.json:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
  // a number no JSON number type holds (found by the libFuzzer target)
  e = error_of([] { kernel_from_json("{\"format\": 1" + std::string(400, '8') + "}", "k.json"); });
  EXPECT_NE(e.find("k.json: malformed JSON: number overflow"), std::string::npos) << e;
  // version
  e = error_of([] { kernel_from_json(R"({"format": "loom-kernel", "version": 7, "kernel": {}})", "k.json"); });
  EXPECT_NE(e.find("k.json: /version: version 7 is not supported"), std::string::npos) << e;
  e = error_of([] { kernel_from_json(R"({"format": "loom-kernel", "kernel": {}})", "k.json"); });
  EXPECT_NE(e.find("missing field 'version'"), std::string::npos) << e;
  e = error_of([] { kernel_from_json(R"({"format": "loom-transforms", "version": 1})", "k.json"); });
  EXPECT_NE(e.find("/format: this reader takes a 'loom-kernel' document, not 'loom-transforms'"), std::string::npos) << e;
  e = error_of([] { kernel_from_json("[1, 2]", "k.json"); });
  EXPECT_NE(e.find("k.json: /: a Loom document is a JSON object"), std::string::npos) << e;
  // unknown field, with a suggestion
  e = error_of([&] { kernel_from_json(kernel_with(R"({"assignee": "a[i]", "expresion": "1"})"), "k.json"); });
  EXPECT_NE(e.find("/kernel/instructions/0/expresion: unknown field 'expresion'"), std::string::npos) << e;
  EXPECT_NE(e.find("expression"), std::string::npos) << e;
  // wrong type
  e = error_of([&] { kernel_from_json(kernel_with(R"({"assignee": "a[i]", "expression": 1})"), "k.json"); });
  EXPECT_NE(e.find("/kernel/instructions/0/expression: expected a string, got an integer"), std::string::npos) << e;
  // an expression error: the path, then line and column inside the string
  e = error_of([&] { kernel_from_json(kernel_with(R"({"assignee": "a[i]", "expression": "2 * * a[i]"})"), "k.json"); });
  EXPECT_NE(e.find("k.json: /kernel/instructions/0/expression:1:5"), std::string::npos) << e;
  // a kernel error names the instruction's path
  e = error_of([&] { kernel_from_json(kernel_with(R"({"assignee": "a[i]", "expression": "b[i]"})"), "k.json"); });
  EXPECT_NE(e.find("/kernel/instructions/0"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown array 'b'"), std::string::npos) << e;
  // a bad domain, a bad dtype, a bad tag
  e = error_of([] {
    kernel_from_json(R"({"format": "loom-kernel", "version": 1, "kernel": {"domains": ["{[i]: 0 <= i <"], "instructions": []}})");
  });
  EXPECT_NE(e.find("/kernel/domains/0"), std::string::npos) << e;
  e = error_of([&] {
    kernel_from_json(R"({"format": "loom-kernel", "version": 1, "kernel": {"domains": ["{[i]: 0 <= i < n}"],
      "arguments": [{"name": "a", "dtype": "float23", "shape": ["n"]}], "instructions": []}})");
  });
  EXPECT_NE(e.find("/kernel/arguments/0/dtype: unknown dtype 'float23'"), std::string::npos) << e;
  e = error_of([&] {
    kernel_from_json(R"({"format": "loom-kernel", "version": 1, "kernel": {"domains": ["{[i]: 0 <= i < n}"],
      "instructions": [], "iname_tags": {"i": "g.7"}}})");
  });
  EXPECT_NE(e.find("/kernel/iname_tags/i: unknown tag 'g.7'"), std::string::npos) << e;
  // integers out of range
  e = error_of([&] {
    kernel_from_json(R"({"format": "loom-kernel", "version": 1, "kernel": {"domains": ["{[i]: 0 <= i < n}"], "instructions": []},
      "defaults": {"n": 99999999999999999999}})");
  });
  EXPECT_NE(e.find("/defaults/n"), std::string::npos) << e;
}

TEST(Json, ScriptErrorsNameTheJsonPath) {
  auto script = [](const std::string& step) {
    return R"({"format": "loom-transforms", "version": 1, "transforms": [)" + step + "]}";
  };
  std::string e = error_of([&] { transform_script_from_json(script(R"({"transform": "split_inam", "iname": "i"})"), "s.json"); });
  EXPECT_NE(e.find("s.json: /transforms/0/transform: unknown transform 'split_inam'"), std::string::npos) << e;
  EXPECT_NE(e.find("split_iname"), std::string::npos) << e;
  e = error_of([&] {
    transform_script_from_json(script(R"({"transform": "split_iname", "iname": "i", "inner_length": "16"})"), "s.json");
  });
  EXPECT_NE(e.find("/transforms/0/inner_length: expected an integer, got a string"), std::string::npos) << e;
  e = error_of([&] {
    transform_script_from_json(script(R"({"transform": "split_iname", "iname": "i", "inner_length": 16, "outer": "g.0"})"),
                               "s.json");
  });
  EXPECT_NE(e.find("/transforms/0/outer: unknown argument 'outer' of split_iname"), std::string::npos) << e;
  e = error_of([&] { transform_script_from_json(script(R"({"transform": "split_iname", "inner_length": 16})"), "s.json"); });
  EXPECT_NE(e.find("/transforms/0: split_iname: missing argument 'iname'"), std::string::npos) << e;
  // a transform's own refusal names the step's path
  auto steps = transform_script_from_json(script(R"({"transform": "split_iname", "iname": "q", "inner_length": 16})"), "s.json");
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i]", {"..."});
  e = error_of([&] { apply_transforms(k, steps); });
  EXPECT_NE(e.find("s.json: /transforms/0: "), std::string::npos) << e;
  // tag maps and lists as JSON objects and arrays
  steps = transform_script_from_json(
      script(R"({"transform": "split_iname", "iname": "i", "inner_length": 16}, {"transform": "tag_inames", "tags": {"i_outer": "g.0", "i_inner": "l.0"}})"),
      "s.json");
  EXPECT_EQ(apply_transforms(k, steps).tag_of("i_inner").str(), "l.0");
}
