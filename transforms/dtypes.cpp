// add_dtypes (loopy's name): the dtypes of arrays and scalars, where the
// kernel left them open (inferred). Arrays still open that the kernel writes
// then take the dtype of what is assigned to them, as loopy infers it; this
// is also how a Python call specializes a kernel for the dtypes it is given.
#include "common.h"
#include "loom/analysis.h"
#include "loom/transforms.h"

namespace loom {

using transforms::refuse;

LoopKernel add_dtypes(const LoopKernel& k, const std::map<std::string, std::string>& dtypes) {
  const std::string what = "add_dtypes";
  LoopKernel r = k;
  for (auto& [name, dt] : dtypes) {
    auto t = Type::parse(dt);
    if (!t) refuse(k, what, "unknown dtype '" + dt + "' for '" + name + "'" + did_you_mean(dt, Type::names()));
    Argument* a = nullptr;
    for (auto& x : r.arguments.edit())
      if (x.name == name) a = &x;
    if (!a) refuse(k, what, "no argument '" + name + "'");
    if (!a->dtype_inferred && a->dtype != *t)
      refuse(k, what, "argument '" + name + "' is declared " + a->dtype.name() + ", not " + t->name());
    a->dtype = *t;
    a->dtype_inferred = false;
  }
  // open arrays written by the kernel: the promoted type of their assignments
  for (int round = 0; round < 3; ++round) {
    LoopKernel typed = infer_types(expand_substitutions(r));
    bool changed = false;
    for (auto& a : r.arguments.edit()) {
      if (a.kind != Argument::Array || !a.dtype_inferred) continue;
      Type t;
      for (auto& insn : typed.instructions) {
        if (insn.kind != Instruction::Assign || insn.assignee_name() != a.name) continue;
        Expr v = insn.rhs.as<Cast>() ? insn.rhs.as<Cast>()->value : insn.rhs;
        t = t.known() ? promote(t, v.type()) : v.type();
      }
      if (t.known() && t != a.dtype) {
        a.dtype = t;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return r;
}

void register_dtype_transforms(TransformRegistry& reg) {
  using P = TransformParam;
  reg.add({"add_dtypes", "Set the dtypes of arguments the kernel left open ('a=float64'); open outputs follow what is assigned to them.",
           {TransformParam{"dtypes", TransformParam::KeywordMap, true, "name=dtype pairs"}.of(TransformParam::Type::KeywordMap)},
           [](const LoopKernel& k, const TransformArgs& a) {
             std::map<std::string, std::string> m;
             for (auto& entry : transforms::name_list(a.str("dtypes"))) {
               auto eq = entry.find('=');
               if (eq == std::string::npos) throw TransformError("add_dtypes on kernel '" + k.name + "': expected name=dtype, got '" + entry + "'");
               m[entry.substr(0, eq)] = entry.substr(eq + 1);
             }
             return add_dtypes(k, m);
           },
           /*changes_interface=*/true});
}

}  // namespace loom
