// Transformations: pure functions LoopKernel -> LoopKernel that validate their
// input and throw TransformError naming the kernel, the iname or array, and
// the reason. Each is also registered by name with its argument schema
// (transform_registry()), which is how scripts, the CLI, Python and the
// tuner reach them.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/kernel.h"
#include "loom/parser.h"

namespace loom {

// ---- inames (transforms/inames.cpp) ----

struct SplitOptions {
  std::optional<InameTag> outer_tag, inner_tag;
  std::string outer_iname, inner_iname;  // default: <iname>_outer, <iname>_inner
};

// i -> inner_length*i_outer + i_inner with 0 <= i_inner < inner_length. The
// domain keeps the original bounds as constraints, so the last, partial tile
// is handled by guards.
LoopKernel split_iname(const LoopKernel& k, const std::string& iname, int64_t inner_length,
                       const SplitOptions& opts = {});

// "i:g.0, j:l.0" or a map iname -> tag ("g.N", "l.N", "unr", "for").
LoopKernel tag_inames(const LoopKernel& k, const std::map<std::string, std::string>& tags);
LoopKernel tag_inames(const LoopKernel& k, const std::string& spec);

// ---- the registry ----

struct TransformParam {
  enum Kind { String, Int, Tag, TagMap };
  std::string name;
  Kind kind = String;
  bool required = true;
  std::string help;
};

// Arguments bound to a transform's schema (all values as text, converted on access).
class TransformArgs {
 public:
  TransformArgs(std::string transform, std::map<std::string, std::string> values)
      : transform_(std::move(transform)), values_(std::move(values)) {}
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  std::string str(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  std::optional<InameTag> tag(const std::string& name) const;  // nullopt when absent

 private:
  std::string transform_;
  std::map<std::string, std::string> values_;
};

struct TransformInfo {
  std::string name;
  std::string doc;
  std::vector<TransformParam> params;
  std::function<LoopKernel(const LoopKernel&, const TransformArgs&)> apply;
};

class TransformRegistry {
 public:
  void add(TransformInfo info);
  const TransformInfo* find(const std::string& name) const;
  const std::vector<TransformInfo>& all() const { return list_; }

 private:
  std::vector<TransformInfo> list_;
};

const TransformRegistry& transform_registry();

// Applies one script step: binds positional and keyword arguments to the
// schema (errors name the step's line), then runs the transform.
LoopKernel apply_transform(const LoopKernel& k, const TransformStep& step);
LoopKernel apply_transforms(const LoopKernel& k, const std::vector<TransformStep>& steps);

// Registration hooks, one per transforms/ file (called by the registry).
void register_iname_transforms(TransformRegistry& r);

}  // namespace loom
