// Kernels as JSON (docs/json-schema.md): the writer and the reader. The
// reader is as strict as the kernel-language parser and then stricter about
// shape: every value is checked for its type, unknown fields are refused, and
// every error names the JSON pointer of the value at fault. Expressions go
// through the kernel-language expression parser (errors add line and column
// within the string); the kernel is finished by the same steps as a kernel
// file (ids, inames, argument inference, name checks).
#include <nlohmann/json.hpp>

#include "frontend_internal.h"
#include "json_reader.h"
#include "loom/json.h"

namespace loom {

using frontend::JsonReader;
using frontend::JsonValue;
using ojson = nlohmann::ordered_json;

namespace {

// ---- writing ----

ojson exprs_to_json(const std::vector<Expr>& xs) {
  ojson a = ojson::array();
  for (auto& x : xs) a.push_back(x.exact_str());
  return a;
}

ojson dtype_to_json(Type t) { return t.known() ? ojson(t.name()) : ojson(nullptr); }

template <class C>
ojson names_to_json(const C& names) {
  ojson a = ojson::array();
  for (auto& n : names) a.push_back(n);
  return a;
}

ojson argument_to_json(const Argument& a) {
  ojson j;
  j["name"] = a.name;
  j["kind"] = a.kind == Argument::Array ? "array" : "value";
  j["dtype"] = dtype_to_json(a.dtype);
  if (a.kind == Argument::Array) j["shape"] = exprs_to_json(a.shape);
  if (!a.strides.empty()) j["strides"] = exprs_to_json(a.strides);
  if (a.offset.defined()) j["offset"] = a.offset.exact_str();
  if (a.vector_axis >= 0) j["vector_axis"] = a.vector_axis;
  if (a.shape_inferred) j["shape_inferred"] = true;
  if (a.dtype_inferred) j["dtype_inferred"] = true;
  return j;
}

const char* instruction_kind_name(Instruction::Kind k) {
  switch (k) {
    case Instruction::Assign: return "assign";
    case Instruction::Barrier: return "barrier";
    case Instruction::NoOp: return "nop";
    case Instruction::GlobalBarrier: return "global_barrier";
  }
  return "assign";
}

ojson instruction_to_json(const Instruction& i) {
  ojson j;
  j["id"] = i.id;
  j["kind"] = instruction_kind_name(i.kind);
  if (i.kind == Instruction::Assign) {
    j["assignee"] = i.lhs.exact_str();
    j["expression"] = i.rhs.exact_str();
  }
  j["within_inames"] = names_to_json(i.within_inames);
  j["inames_given"] = i.inames_given;
  if (!i.depends_on.empty()) j["depends_on"] = names_to_json(i.depends_on);
  if (!i.predicates.empty()) j["predicates"] = exprs_to_json(i.predicates);
  if (!i.no_sync_with.empty()) j["no_sync_with"] = names_to_json(i.no_sync_with);
  if (!i.tags.empty()) j["tags"] = names_to_json(i.tags);
  if (i.priority) j["priority"] = i.priority;
  if (i.atomic) j["atomic"] = true;
  if (i.async_copy) j["async_copy"] = true;
  if (i.loc.line > 0) j["source"] = {{"file", i.loc.file}, {"line", i.loc.line}, {"column", i.loc.column}};
  return j;
}

ojson kernel_object(const LoopKernel& k) {
  ojson j;
  j["name"] = k.name;
  j["domains"] = ojson::array();
  for (auto& d : k.domains) j["domains"].push_back(d.str());
  j["arguments"] = ojson::array();
  for (auto& a : k.arguments) j["arguments"].push_back(argument_to_json(a));
  if (!k.temporaries.empty()) {
    j["temporaries"] = ojson::array();
    for (auto& [n, t] : k.temporaries) {
      ojson tj = {{"name", n}, {"dtype", dtype_to_json(t.dtype)}, {"shape", exprs_to_json(t.shape)}, {"address_space", to_string(t.space)}};
      // what transformations recorded and later steps and code generation read
      if (!t.zero_fill_of.empty()) tj["zero_fill_of"] = t.zero_fill_of;
      if (!t.double_buffered_in.empty()) tj["double_buffered_in"] = t.double_buffered_in;
      if (t.swizzle_bytes) tj["swizzle_bytes"] = t.swizzle_bytes;
      if (t.double_buffer_ahead) tj["double_buffer_ahead"] = t.double_buffer_ahead;
      if (t.bulk_copy) tj["bulk_copy"] = true;
      j["temporaries"].push_back(tj);
    }
  }
  if (!k.substitutions.empty()) {
    j["substitutions"] = ojson::array();
    for (auto& [n, r] : k.substitutions)
      j["substitutions"].push_back({{"name", n}, {"params", names_to_json(r.params)}, {"body", r.body.exact_str()}});
  }
  j["instructions"] = ojson::array();
  for (auto& i : k.instructions) j["instructions"].push_back(instruction_to_json(i));
  if (!k.iname_tags.empty()) {
    j["iname_tags"] = ojson::object();
    for (auto& [n, t] : k.iname_tags) j["iname_tags"][n] = t.str();
  }
  if (!k.loop_priority.empty()) {
    j["loop_priority"] = ojson::array();
    for (auto& p : k.loop_priority) j["loop_priority"].push_back(names_to_json(p));
  }
  if (!k.slabs.empty()) {
    j["slabs"] = ojson::object();
    for (auto& [n, s] : k.slabs) j["slabs"][n] = {s.first, s.second};
  }
  if (k.assumptions.defined()) j["assumptions"] = k.assumptions.str();
  j["options"] = {{"index_dtype", k.options.index_dtype.name()}};
  if (!k.options.do_not_specialize.empty()) j["options"]["do_not_specialize"] = names_to_json(k.options.do_not_specialize);
  if (k.options.trust_unproven_accesses) j["options"]["trust_unproven_accesses"] = true;
  if (k.options.block_group != 1) j["options"]["block_group"] = k.options.block_group;
  return j;
}

// ---- reading ----

Type read_dtype(const JsonValue& v, bool open_allowed) {
  if (v.is_null() && open_allowed) return types::unknown;
  std::string s = v.string();
  auto t = Type::parse(s);
  if (!t) v.fail("unknown dtype '" + s + "'" + did_you_mean(s, Type::names()));
  return *t;
}

std::vector<Expr> read_exprs(const JsonValue& v, const std::set<std::string>& inames) {
  std::vector<Expr> out;
  for (auto& x : v.items()) out.push_back(x.expr(inames));
  return out;
}

Argument read_argument(const JsonValue& v, const std::set<std::string>& inames) {
  v.allow_fields({"name", "kind", "dtype", "shape", "strides", "offset", "vector_axis", "shape_inferred", "dtype_inferred"});
  Argument a;
  a.name = v.field("name").identifier();
  std::string kind = v.has("kind") ? v.field("kind").string() : "array";
  if (kind != "array" && kind != "value") v.field("kind").fail("kind is \"array\" or \"value\", not '" + kind + "'");
  a.kind = kind == "array" ? Argument::Array : Argument::Value;
  a.dtype = v.has("dtype") ? read_dtype(v.field("dtype"), true) : types::unknown;
  if (a.kind == Argument::Array) {
    a.shape = read_exprs(v.field("shape"), inames);
    if (v.has("strides")) {
      a.strides = read_exprs(v.field("strides"), inames);
      if (a.strides.size() != a.shape.size())
        v.field("strides").fail("has " + std::to_string(a.strides.size()) + " entries for a shape of " +
                                std::to_string(a.shape.size()));
    }
    if (v.has("offset")) a.offset = v.field("offset").expr(inames);
    if (v.has("vector_axis")) {
      a.vector_axis = int(v.field("vector_axis").integer(0, int64_t(a.shape.size()) - 1));
      if (a.dtype.known()) {
        std::string problem = vector_axis_problem(a, a.vector_axis);
        if (!problem.empty()) v.field("vector_axis").fail(problem);
      }
    }
  } else {
    for (const char* f : {"shape", "strides", "offset", "vector_axis"})
      if (v.has(f)) v.field(f).fail("a value argument has no " + std::string(f));
  }
  a.shape_inferred = v.has("shape_inferred") && v.field("shape_inferred").boolean();
  a.dtype_inferred = v.has("dtype_inferred") && v.field("dtype_inferred").boolean();
  return a;
}

Temporary read_temporary(const JsonValue& v, const std::set<std::string>& inames) {
  v.allow_fields({"name", "dtype", "shape", "address_space", "zero_fill_of", "double_buffered_in", "swizzle_bytes", "double_buffer_ahead", "bulk_copy"});
  Temporary t;
  if (v.has("zero_fill_of")) t.zero_fill_of = v.field("zero_fill_of").identifier();
  if (v.has("double_buffered_in")) t.double_buffered_in = v.field("double_buffered_in").identifier();
  if (v.has("double_buffer_ahead")) t.double_buffer_ahead = int(v.field("double_buffer_ahead").integer(0, 7));
  if (v.has("bulk_copy")) t.bulk_copy = v.field("bulk_copy").boolean();
  if (v.has("swizzle_bytes")) {
    t.swizzle_bytes = int(v.field("swizzle_bytes").integer(0, 128));
    if (t.swizzle_bytes != 0 && t.swizzle_bytes != 128) v.field("swizzle_bytes").fail("swizzle_bytes is 0 or 128");
  }
  t.name = v.field("name").identifier();
  t.dtype = v.has("dtype") ? read_dtype(v.field("dtype"), true) : types::unknown;
  if (v.has("shape")) t.shape = read_exprs(v.field("shape"), inames);
  if (v.has("address_space")) {
    const JsonValue& s = v.field("address_space");
    std::string name = s.string();
    bool found = false;
    for (AddressSpace a : {AddressSpace::Auto, AddressSpace::Private, AddressSpace::Local, AddressSpace::Global})
      if (name == to_string(a)) t.space = a, found = true;
    if (!found) s.fail("address_space is auto, private, local or global, not '" + name + "'");
  }
  return t;
}

Instruction read_instruction(const JsonValue& v, const std::set<std::string>& inames, const std::string& file) {
  v.allow_fields({"id", "kind", "assignee", "expression", "within_inames", "inames_given", "depends_on", "predicates",
                  "no_sync_with", "tags", "priority", "atomic", "async_copy", "source"});
  Instruction i;
  if (v.has("id")) i.id = v.field("id").identifier();
  std::string kind = v.has("kind") ? v.field("kind").string() : "assign";
  if (kind == "assign") i.kind = Instruction::Assign;
  else if (kind == "barrier") i.kind = Instruction::Barrier;
  else if (kind == "nop") i.kind = Instruction::NoOp;
  else if (kind == "global_barrier") i.kind = Instruction::GlobalBarrier;
  else v.field("kind").fail("kind is assign, barrier, global_barrier or nop, not '" + kind + "'");
  if (i.kind == Instruction::Assign) {
    i.lhs = v.field("assignee").expr(inames);
    if (!i.lhs.as<Var>() && !i.lhs.as<Subscript>())
      v.field("assignee").fail("the assignee is a variable or an array element (a or a[i, j]), not '" + i.lhs.str() + "'");
    i.rhs = v.field("expression").expr(inames);
  } else {
    for (const char* f : {"assignee", "expression"})
      if (v.has(f)) v.field(f).fail("a " + kind + " has no " + f);
  }
  if (v.has("within_inames")) {
    for (auto& n : v.field("within_inames").items()) i.within_inames.insert(n.identifier());
    // given inames are used as they are; inames_given says whether expressions may use others
    i.inames_given = !v.has("inames_given") || v.field("inames_given").boolean();
  } else if (v.has("inames_given")) {
    v.field("inames_given").fail("inames_given needs within_inames");
  }
  if (v.has("depends_on"))
    for (auto& d : v.field("depends_on").items()) i.depends_on.insert(d.string());
  if (v.has("predicates")) i.predicates = read_exprs(v.field("predicates"), inames);
  if (v.has("no_sync_with"))
    for (auto& d : v.field("no_sync_with").items()) i.no_sync_with.insert(d.string());
  if (v.has("tags"))
    for (auto& d : v.field("tags").items()) i.tags.insert(d.identifier());
  if (v.has("atomic")) i.atomic = v.field("atomic").boolean();
  if (v.has("async_copy")) i.async_copy = v.field("async_copy").boolean();
  if (v.has("priority")) i.priority = static_cast<int>(v.field("priority").integer(-1000000, 1000000));
  if (v.has("source")) {
    const JsonValue& s = v.field("source");
    s.allow_fields({"file", "line", "column"});
    i.loc.file = s.field("file").string();
    i.loc.line = static_cast<int>(s.field("line").integer(1, 1 << 30));
    i.loc.column = static_cast<int>(s.field("column").integer(0, 1 << 30));
  } else {
    i.loc.file = file + ": " + v.path();
  }
  return i;
}

Domain read_domain(const JsonValue& v) {
  std::string text = v.string();
  try {
    return Domain::parse(text);
  } catch (const DomainSyntaxError& e) {
    v.fail(std::string(e.what()) + " (line " + std::to_string(e.line) + ", column " + std::to_string(e.column) + ")");
  }
}

LoopKernel read_kernel(const JsonValue& v, const std::string& file) {
  v.allow_fields({"name", "domains", "arguments", "infer_arguments", "temporaries", "substitutions", "instructions",
                  "iname_tags", "loop_priority", "slabs", "assumptions", "options"});
  LoopKernel k;
  if (v.has("name")) k.name = v.field("name").identifier();
  for (auto& d : v.field("domains").items()) k.domains.edit().push_back(read_domain(d));
  std::set<std::string> inames;
  for (auto& n : k.all_inames()) inames.insert(n);
  std::set<std::string> declared;
  auto declare = [&](const JsonValue& where, const std::string& name) {
    if (!declared.insert(name).second) where.fail("'" + name + "' is declared twice");
    if (inames.count(name)) where.fail("'" + name + "' is an iname and cannot also be an argument or temporary");
  };
  if (v.has("arguments"))
    for (auto& a : v.field("arguments").items()) {
      k.arguments.edit().push_back(read_argument(a, inames));
      declare(a, k.arguments.back().name);
    }
  if (v.has("temporaries"))
    for (auto& t : v.field("temporaries").items()) {
      Temporary tmp = read_temporary(t, inames);
      declare(t, tmp.name);
      k.temporaries.edit()[tmp.name] = std::move(tmp);
    }
  if (v.has("substitutions"))
    for (auto& s : v.field("substitutions").items()) {
      s.allow_fields({"name", "params", "body"});
      SubstitutionRule r;
      r.name = s.field("name").identifier();
      if (s.has("params"))
        for (auto& p : s.field("params").items()) r.params.push_back(p.identifier());
      r.body = s.field("body").expr(inames);
      if (k.substitutions.count(r.name)) s.field("name").fail("rule '" + r.name + "' is defined twice");
      k.substitutions.edit()[r.name] = std::move(r);
    }
  for (auto& i : v.field("instructions").items()) k.instructions.edit().push_back(read_instruction(i, inames, file));
  if (v.has("iname_tags"))
    for (auto& [name, tag] : v.field("iname_tags").members()) {
      if (!inames.count(name)) tag.fail("no iname '" + name + "'" + did_you_mean(name, k.all_inames()));
      auto t = InameTag::parse(tag.string());
      if (!t) tag.fail("unknown tag '" + tag.string() + "' (use g.0-2, l.0-2, unr, ilp, ilp.seq, ilp.unr, vec, for)");
      k.iname_tags.edit()[name] = *t;
    }
  if (v.has("loop_priority"))
    for (auto& p : v.field("loop_priority").items()) {
      std::vector<std::string> order;
      for (auto& n : p.items()) {
        order.push_back(n.identifier());
        if (!inames.count(order.back())) n.fail("no iname '" + order.back() + "'");
      }
      k.loop_priority.edit().push_back(order);
    }
  if (v.has("slabs"))
    for (auto& [name, s] : v.field("slabs").members()) {
      if (!inames.count(name)) s.fail("no iname '" + name + "'");
      auto counts = s.items();
      if (counts.size() != 2) s.fail("slabs are two counts [head, tail]");
      k.slabs.edit()[name] = {static_cast<int>(counts[0].integer(0, 1 << 20)), static_cast<int>(counts[1].integer(0, 1 << 20))};
    }
  if (v.has("assumptions")) {
    k.assumptions = read_domain(v.field("assumptions"));
    if (!k.assumptions.inames().empty()) v.field("assumptions").fail("assumptions constrain parameters only ({ : n >= 1 })");
  }
  if (v.has("options")) {
    const JsonValue& o = v.field("options");
    o.allow_fields({"index_dtype", "do_not_specialize", "trust_unproven_accesses", "block_group"});
    if (o.has("trust_unproven_accesses")) k.options.trust_unproven_accesses = o.field("trust_unproven_accesses").boolean();
    if (o.has("block_group")) k.options.block_group = o.field("block_group").integer(1, 65535);
    if (o.has("do_not_specialize")) {
      std::vector<std::string> params = k.parameters();
      for (auto& n : o.field("do_not_specialize").items()) {
        std::string name = n.identifier();
        if (std::find(params.begin(), params.end(), name) == params.end()) n.fail("'" + name + "' is not a parameter of the kernel");
        k.options.do_not_specialize.insert(name);
      }
    }
    if (o.has("index_dtype")) {
      k.options.index_dtype = read_dtype(o.field("index_dtype"), false);
      if (!k.options.index_dtype.is_int()) o.field("index_dtype").fail("the index dtype is an integer type");
    }
  }
  // the same last steps as a kernel file; kernel errors name the instruction's JSON path
  frontend::assign_ids(k);
  // given inames are checked against the expressions; absent ones are inferred
  for (auto& insn : k.instructions.edit())
    if (insn.inames_given || insn.within_inames.empty()) frontend::infer_within_inames(k, insn, inames);
  bool infer_rest = v.has("infer_arguments") && v.field("infer_arguments").boolean();
  frontend::check_bounded_inames(k);
  frontend::infer_arguments(k, infer_rest);
  frontend::check_names(k);
  frontend::infer_written_dtypes(k);
  frontend::record_original(k);
  return k;
}

std::map<std::string, int64_t> read_defaults(const JsonValue& v) {
  std::map<std::string, int64_t> out;
  for (auto& [name, value] : v.members()) out[name] = value.integer(INT64_MIN, INT64_MAX);
  return out;
}

}  // namespace

std::string kernel_to_json(const LoopKernel& k, int indent) {
  KernelFile f;
  f.kernel = k;
  return kernel_file_to_json(f, indent);
}

std::string kernel_file_to_json(const KernelFile& file, int indent) {
  ojson j;
  j["format"] = "loom-kernel";
  j["version"] = kJsonVersion;
  j["kernel"] = kernel_object(file.kernel);
  if (!file.transforms.empty()) j["transforms"] = frontend::transform_steps_to_json(file.transforms);
  if (!file.defaults.empty()) j["defaults"] = file.defaults;
  return j.dump(indent) + "\n";
}

KernelFile kernel_file_from_json(const std::string& text, const std::string& filename) {
  JsonReader doc(text, filename);
  const JsonValue& root = doc.root();
  doc.check_format("loom-kernel");
  root.allow_fields({"format", "version", "kernel", "transforms", "defaults"});
  KernelFile out;
  out.kernel = read_kernel(root.field("kernel"), filename);
  if (root.has("transforms")) out.transforms = frontend::read_transform_steps(root.field("transforms"));
  if (root.has("defaults")) out.defaults = read_defaults(root.field("defaults"));
  return out;
}

LoopKernel kernel_from_json(const std::string& text, const std::string& filename) {
  return kernel_file_from_json(text, filename).kernel;
}

bool looks_like_json(const std::string& text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    return c == '{';
  }
  return false;
}

}  // namespace loom
