// The table of transformations by name, and binding of script arguments to
// their schemas. Each transforms/ file contributes through its register_*
// function, listed once here.
#include <algorithm>
#include <cstdlib>

#include "common.h"
#include "loom/transforms.h"

namespace loom {

void TransformRegistry::add(TransformInfo info) {
  if (find(info.name)) throw Error("transform '" + info.name + "' registered twice");
  list_.push_back(std::move(info));
}

const TransformInfo* TransformRegistry::find(const std::string& name) const {
  for (auto& t : list_)
    if (t.name == name) return &t;
  return nullptr;
}

const TransformRegistry& transform_registry() {
  static const TransformRegistry r = [] {
    TransformRegistry t;
    register_iname_transforms(t);
    register_reduction_transforms(t);
    register_parameter_transforms(t);
    register_instruction_transforms(t);
    register_memory_transforms(t);
    register_precompute_transforms(t);
    register_substitution_transforms(t);
    register_privatize_transforms(t);
    register_buffer_array_transforms(t);
    register_dtype_transforms(t);
    register_layout_transforms(t);
    register_save_reload_transforms(t);
    register_double_buffer_transforms(t);
    register_bulk_copy_transforms(t);
    register_round_up_reduction_transforms(t);
    register_tensor_core_transforms(t);
    register_batch_transforms(t);
    register_block_order_transforms(t);
    register_rfactor_transforms(t);
    register_global_barrier_transforms(t);
    register_distribute_transforms(t);
    register_accumulation_transforms(t);
    register_affine_map_transforms(t);
    register_index_set_transforms(t);
    register_initial_value_transforms(t);
    register_expand_array_transforms(t);
    register_forward_substitute_transforms(t);
    return t;
  }();
  return r;
}

std::string TransformArgs::str(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw TransformError(transform_ + ": missing argument '" + name + "'");
  return it->second;
}

bool TransformArgs::flag(const std::string& name, bool absent) const {
  if (!has(name)) return absent;
  std::string s = str(name);
  if (s == "true" || s == "True" || s == "1") return true;
  if (s == "false" || s == "False" || s == "0") return false;
  throw TransformError(transform_ + ": argument '" + name + "' must be true or false, got '" + s + "'");
}

int64_t TransformArgs::integer(const std::string& name) const {
  std::string s = str(name);
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (...) {
    used = 0;
  }
  if (used != s.size() || s.empty())
    throw TransformError(transform_ + ": argument '" + name + "' must be an integer, got '" + s + "'");
  return v;
}

double TransformArgs::number(const std::string& name) const {
  std::string s = str(name);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != 0) throw TransformError(transform_ + ": argument '" + name + "' must be a number, got '" + s + "'");
  return v;
}

std::optional<InameTag> TransformArgs::tag(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  std::string s = str(name);
  auto t = InameTag::parse(s);
  if (!t) throw TransformError(transform_ + ": argument '" + name + "': unknown tag '" + s + "' (use g.0-2, l.0-2, unr, ilp, ilp.seq, ilp.unr, vec, for)");
  return t;
}

std::map<std::string, std::string> bind_transform_arguments(const TransformStep& step) {
  const TransformInfo* info = transform_registry().find(step.name);
  // scripts name their line; calls from Python or C++ have no location
  auto where = step.loc.file.empty() && step.loc.line == 0 ? std::string() : step.loc.str() + ": ";
  if (!info) {
    std::string known;
    for (auto& t : transform_registry().all()) known += (known.empty() ? "" : ", ") + t.name;
    if (!step.name.empty() && step.name.back() == ':')
      throw TransformError(where + "'" + step.name + "' is not a transform; a misspelled section header? (sections: domains:, " +
                           "arguments:, temporaries:, assumptions:, instructions:, transforms:, defaults:)");
    std::vector<std::string> names;
    for (auto& t : transform_registry().all()) names.push_back(t.name);
    throw TransformError(where + "unknown transform '" + step.name + "'" + did_you_mean(step.name, names) + " (known: " + known + ")");
  }
  // arguments from Python or C++ do not pass the script reader's check: no control
  // characters (a NUL would cut a name short for isl)
  auto control = [](const std::string& x) {
    return std::any_of(x.begin(), x.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n'; });
  };
  for (auto& p : step.positional)
    if (control(p)) throw TransformError(where + step.name + ": an argument holds a control character");
  for (auto& [key, v] : step.keyword)
    if (control(key) || control(v)) throw TransformError(where + step.name + ": argument '" + key + "' holds a control character");
  std::map<std::string, std::string> values;
  std::vector<std::string> positional = step.positional;
  // a trailing iname:tag list may be written as separate words: tag_inames i:g.0 j:l.0
  // or a trailing constraint as separate words: assume n >= 1 and n mod 16 = 0
  if (!info->params.empty() && positional.size() > info->params.size() &&
      (info->params.back().kind == TransformParam::TagMap || info->params.back().kind == TransformParam::Text)) {
    size_t last = info->params.size() - 1;
    const char* sep = info->params.back().kind == TransformParam::TagMap ? "," : " ";
    for (size_t i = last + 1; i < positional.size(); ++i) positional[last] += sep + positional[i];
    positional.resize(last + 1);
  }
  if (positional.size() > info->params.size())
    throw TransformError(where + step.name + " takes at most " + std::to_string(info->params.size()) + " arguments");
  for (size_t i = 0; i < positional.size(); ++i) values[info->params[i].name] = positional[i];
  auto collector = std::find_if(info->params.begin(), info->params.end(), [](auto& p) { return p.kind == TransformParam::KeywordMap; });
  for (auto& kv : step.keyword) {  // (no structured binding: a lambda below captures the key)
    const std::string& key = kv.first;
    const std::string& v = kv.second;
    bool known = std::any_of(info->params.begin(), info->params.end(), [&](auto& p) { return p.name == key; });
    if (!known && collector != info->params.end()) {
      std::string value = v;
      while (!value.empty() && value.back() == ',') value.pop_back();
      std::string& all = values[collector->name];
      all += (all.empty() ? "" : ",") + key + "=" + value;
      continue;
    }
    if (!known) throw TransformError(where + step.name + ": unknown argument '" + key + "'");
    if (values.count(key)) throw TransformError(where + step.name + ": argument '" + key + "' given twice");
    values[key] = v;
  }
  for (auto& p : info->params) {
    auto v = values.find(p.name);
    if (v == values.end()) {
      if (p.required) throw TransformError(where + step.name + ": missing argument '" + p.name + "' (" + p.help + ")");
      if (!p.default_value.empty()) values[p.name] = p.default_value;  // (declared once, with the parameter)
      continue;
    }
    std::string why = p.check(v->second);
    if (!why.empty()) throw TransformError(where + step.name + ": argument '" + p.name + "' " + why + " (" + p.name + ": " + p.type_name() + ")");
  }
  return values;
}

LoopKernel apply_transform(const LoopKernel& k, const TransformStep& step) {
  std::map<std::string, std::string> values = bind_transform_arguments(step);
  const TransformInfo* info = transform_registry().find(step.name);
  auto where = step.loc.file.empty() && step.loc.line == 0 ? std::string() : step.loc.str() + ": ";
  try {
    // (an argument's error names the kernel, as the transformations' own do)
    return info->apply(k, TransformArgs(step.name + " on kernel '" + k.name + "'", std::move(values)));
  } catch (const TransformError& e) {
    throw TransformError(where + e.what());
  }
}

LoopKernel apply_transforms(const LoopKernel& k, const std::vector<TransformStep>& steps) {
  LoopKernel r = k;
  for (auto& s : steps) r = apply_transform(r, s);
  return r;
}

LoopKernel reference_kernel(const LoopKernel& as_written, const std::vector<TransformStep>& steps, const LoopKernel& transformed) {
  std::vector<TransformStep> declarations;
  for (auto& s : steps)
    if (const TransformInfo* info = transform_registry().find(s.name); info && info->changes_interface)  // (the reference changes with them)
      declarations.push_back(s);
  LoopKernel r = as_written;
  for (auto& s : declarations) {
    if (s.name == "split_array_axis") {
      // (only the arrays the kernel as written has: a temporary a transformation made is not there)
      auto values = bind_transform_arguments(s);
      std::vector<std::string> there;
      for (auto& n : transforms::name_list(values["array_names"]))
        if (r.find_argument(n) || r.find_temporary(n)) there.push_back(n);
      if (there.empty()) continue;
      TransformStep only = s;
      std::string joined;
      for (auto& n : there) joined += (joined.empty() ? "" : ",") + n;
      if (only.keyword.count("array_names")) only.keyword["array_names"] = joined;
      else if (!only.positional.empty()) only.positional[0] = joined;
      r = apply_transform(r, only);
      continue;
    }
    r = apply_transform(r, s);
  }
  for (auto& a : r.arguments.edit())
    if (const Argument* t = transformed.find_argument(a.name); t && t->kind == Argument::Array && t->shape.size() == a.shape.size()) {
      a.strides = t->strides;
      a.offset = t->offset;
    }
  return r;
}

}  // namespace loom
