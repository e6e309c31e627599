// Typed transformation parameters, declared once (TransformParam): a bound
// value is checked against its type and refused with the parameter's name
// and type; a default comes from the declaration; the search domain a tuner
// reads and the JSON schema come from the same declaration.
#include <gtest/gtest.h>

#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;

namespace {
LoopKernel kernel() {
  return parse_kernel_text("kernel k\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < 100}\narguments:\n  a: float32[n, 100], out: float32[n, 100]\n"
                           "instructions:\n  out[i, j] = 2 * a[i, j]\n")
      .kernel;
}

std::string error_of(const std::string& script) {
  try {
    apply_transforms(kernel(), parse_transform_script(script, "s"));
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(TransformParams, EveryParameterHasATypeAndBadValuesNameIt) {
  for (auto& t : transform_registry().all())
    for (auto& p : t.params) EXPECT_FALSE(p.type_name().empty()) << t.name << "." << p.name;
  struct Case {
    const char* script;
    const char* says;
  } cases[] = {
      {"split_iname i 0", "argument 'inner_length' must be at least 1, got 0 (inner_length: int >= 1)"},
      {"split_iname i four", "argument 'inner_length' must be an integer, got 'four'"},
      {"split_iname i 4 outer_tag=g.9", "argument 'outer_tag' unknown tag 'g.9'"},
      {"add_prefetch a j temporary_address_space=texture", "must be one of local, shared, private or auto, got 'texture'"},
      {"add_prefetch a j default_tag=l.7", "unknown tag 'l.7' (l.auto, for, or a tag such as l.0 or unr)"},
      {"add_prefetch a j vector_width=3", "argument 'vector_width' must be one of 1, 2 or 4, got '3'"},
      {"add_prefetch a j async_copy=perhaps", "argument 'async_copy' must be true or false, got 'perhaps'"},
      {"set_index_dtype int16", "must be one of int32 or int64, got 'int16'"},
      {"split_iname i 4 within=id:", "argument 'within' is not an instruction match"},
      {"precompute f j dtype=float33", "argument 'dtype' is not a dtype: 'float33'"},
  };
  for (auto& c : cases) {
    std::string e = error_of(c.script);
    EXPECT_NE(e.find(c.says), std::string::npos) << c.script << ": " << e;
    EXPECT_NE(e.find("s:1:"), std::string::npos) << c.script << ": " << e;  // the script line
  }
}

TEST(TransformParams, DefaultsComeFromTheDeclaration) {
  const TransformInfo* p = transform_registry().find("add_prefetch");
  ASSERT_NE(p, nullptr);
  TransformStep step;
  step.name = "add_prefetch";
  step.positional = {"a", "j"};
  auto bound = bind_transform_arguments(step);
  EXPECT_EQ(bound.at("default_tag"), "l.auto");
  EXPECT_EQ(bound.at("temporary_address_space"), "auto");
  EXPECT_EQ(bound.at("async_copy"), "false");
  EXPECT_EQ(bound.count("temporary_name"), 0u);  // no declared default: the transformation names it
}

TEST(TransformParams, SearchDomainsFollowTheKernel) {
  LoopKernel k = kernel();
  EXPECT_EQ(search_domain("split_iname", "inner_length", k, {{"iname", "j"}}),
            (std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64"}));
  // a parametric extent: up to 1024
  EXPECT_EQ(search_domain("split_iname", "inner_length", k, {{"iname", "i"}}).back(), "1024");
  EXPECT_EQ(search_domain("split_iname", "outer_tag", k), (std::vector<std::string>{"for", "g.0", "g.1", "g.2"}));
  LoopKernel tagged = apply_transforms(k, parse_transform_script("split_iname i 16 outer_tag=g.0 inner_tag=l.0"));
  EXPECT_EQ(search_domain("split_iname", "inner_tag", tagged), (std::vector<std::string>{"for", "l.1", "l.2"}));
  EXPECT_EQ(search_domain("add_prefetch", "async_copy", k), (std::vector<std::string>{"false", "true"}));
  EXPECT_EQ(search_domain("split_iname", "iname", k), (std::vector<std::string>{"i", "j"}));
  EXPECT_TRUE(search_domain("split_iname", "outer_iname", k).empty());
  EXPECT_THROW(search_domain("split_iname", "inner_length", k), TransformError);  // which iname?
  EXPECT_THROW(search_domain("split_inames", "inner_length", k), TransformError);
}

TEST(TransformParams, TheSchemaListsEveryDeclaration) {
  std::string s = transform_schema_json();
  EXPECT_NE(s.find("\"format\": \"loom-transform-schema\""), std::string::npos);
  for (auto& t : transform_registry().all()) EXPECT_NE(s.find("\"name\": \"" + t.name + "\""), std::string::npos) << t.name;
  EXPECT_NE(s.find("\"search\": \"powers of two up to the extent of iname\""), std::string::npos);
  EXPECT_NE(s.find("\"default\": \"l.auto\""), std::string::npos);
  // the steps the reference takes too (reference_kernel): those that change the computation's interface
  std::set<std::string> interface;
  for (auto& t : transform_registry().all())
    if (t.changes_interface) interface.insert(t.name);
  EXPECT_EQ(interface, (std::set<std::string>{"add_dtypes", "assume", "fix_parameters", "split_array_axis", "to_batched"}));
  EXPECT_NE(s.find("\"changes_interface\": true"), std::string::npos);
}
