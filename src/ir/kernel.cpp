// LoopKernel lookups and printing; InameTag parsing.
#include "loom/kernel.h"

#include <algorithm>
#include <sstream>

namespace loom {

std::string SourceLoc::str() const {
  std::ostringstream os;
  os << (file.empty() ? "<input>" : file);
  if (line > 0) os << ':' << line << ':' << column;
  return os.str();
}

ParseError::ParseError(SourceLoc l, const std::string& msg) : Error(l.str() + ": " + msg), loc(std::move(l)) {}

std::string InameTag::str() const {
  switch (kind) {
    case Seq: return "for";
    case Group: return "g." + std::to_string(axis);
    case Local: return "l." + std::to_string(axis);
    case Unroll: return "unr";
    case Ilp: return "ilp";
    case IlpSeq: return "ilp.seq";
    case Vec: return "vec";
    case MatrixM: return "mma.m";
    case MatrixN: return "mma.n";
    case MatrixK: return "mma.k";
  }
  return "?";
}

std::optional<InameTag> InameTag::parse(const std::string& s) {
  if (s == "for" || s == "seq" || s == "None") return InameTag{Seq, 0};
  if (s == "unr") return InameTag{Unroll, 0};
  if (s == "ilp" || s == "ilp.unr") return InameTag{Ilp, 0};
  if (s == "ilp.seq") return InameTag{IlpSeq, 0};
  if (s == "vec") return InameTag{Vec, 0};
  if (s == "mma.m") return InameTag{MatrixM, 0};
  if (s == "mma.n") return InameTag{MatrixN, 0};
  if (s == "mma.k") return InameTag{MatrixK, 0};
  if (s.size() == 3 && (s[0] == 'g' || s[0] == 'l') && s[1] == '.' && s[2] >= '0' && s[2] <= '2')
    return InameTag{s[0] == 'g' ? Group : Local, s[2] - '0'};
  return std::nullopt;
}

const char* to_string(AddressSpace s) {
  switch (s) {
    case AddressSpace::Auto: return "auto";
    case AddressSpace::Private: return "private";
    case AddressSpace::Local: return "local";
    case AddressSpace::Global: return "global";
  }
  return "?";
}

const std::string& Instruction::assignee_name() const {
  static const std::string none;
  if (auto s = lhs.as<Subscript>()) return s->name;
  if (auto v = lhs.as<Var>()) return v->name;
  return none;
}

std::set<std::string> Instruction::read_names() const {
  std::set<std::string> r;
  auto look = [&](const Expr& e) {
    if (!e.defined()) return;
    for_each_subscript(e, [&](const Subscript& s) { r.insert(s.name); });
    std::vector<std::string> vs;
    collect_vars(e, vs);
    r.insert(vs.begin(), vs.end());
  };
  look(rhs);
  for (auto& p : predicates) look(p);
  return r;
}

std::set<std::string> Instruction::iteration_inames() const {
  std::set<std::string> r = within_inames;
  if (rhs.defined()) collect_reduction_inames(rhs, r);
  return r;
}

bool Instruction::reads(const std::string& name) const {
  bool found = false;
  auto look = [&](const Expr& e) {
    if (!e.defined()) return;
    std::set<std::string> vars;
    collect_free_vars(e, vars);
    found |= vars.count(name) != 0;
    for_each_subscript(e, [&](const Subscript& s) { found |= s.name == name; });
  };
  look(rhs);
  for (auto& p : predicates) look(p);
  if (auto s = lhs.as<Subscript>())
    for (auto& i : s->indices) look(i);
  return found;
}

namespace {
template <class C>
std::string join(const C& xs, const char* sep) {
  std::string r;
  for (auto& x : xs) {
    if (!r.empty()) r += sep;
    r += x;
  }
  return r;
}
}  // namespace

std::string Instruction::str() const {
  std::ostringstream os;
  if (kind == Barrier) os << "... lbarrier";
  else if (kind == NoOp) os << "... nop";
  else if (kind == GlobalBarrier) os << "... gbarrier";
  else os << lhs.str() << " = " << rhs.str();
  std::vector<std::string> opts{"id=" + id};
  if (!depends_on.empty()) opts.push_back("dep=" + join(depends_on, ":"));
  if (!within_inames.empty()) opts.push_back("inames=" + join(within_inames, ":"));
  if (!predicates.empty()) {
    std::vector<std::string> ps;
    for (auto& p : predicates) ps.push_back(p.str());
    opts.push_back("if=" + join(ps, ":"));
  }
  if (!no_sync_with.empty()) opts.push_back("nosync=" + join(no_sync_with, ":"));
  if (!tags.empty()) opts.push_back("tags=" + join(tags, ":"));
  if (priority) opts.push_back("priority=" + std::to_string(priority));
  if (atomic) opts.push_back("atomic");
  if (async_copy) opts.push_back("async");
  os << "  {" << join(opts, ", ") << "}";
  return os.str();
}

std::string StandIn::str() const {
  switch (kind) {
    case None: return "";
    case InitialValues: return "initial values of " + array;
    case Expansion: return "expansion of " + array + " over " + std::to_string(leading_axes) + " loops";
  }
  return "";
}

std::string Argument::str() const {
  std::string s = name + ": " + dtype.name();
  if (kind == Array) {
    std::vector<std::string> dims;
    for (auto& d : shape) dims.push_back(d.str());
    s += "[" + join(dims, ", ") + "]";
    if (!strides.empty()) {
      std::vector<std::string> st;
      for (auto& d : strides) st.push_back(d.str());
      s += " strides=(" + join(st, ", ") + (st.size() == 1 ? ",)" : ")");
    }
    if (offset.defined()) s += " offset=" + offset.str();
    if (vector_axis >= 0) s += " vector_axis=" + std::to_string(vector_axis);
  }
  return s;
}

namespace {
// Strides as products of the shape's extents, taken in `order`.
std::vector<Expr> strides_in_order(const std::vector<Expr>& shape, const std::vector<size_t>& order) {
  std::vector<Expr> st(shape.size());
  Expr acc;  // undefined: 1 (no "1 * n" in printed code)
  for (size_t d : order) {
    st[d] = acc.defined() ? acc : make_int(1);
    acc = acc.defined() ? make_binary(BinOp::Mul, acc, shape[d]) : shape[d];
  }
  return st;
}
}  // namespace

std::vector<Expr> row_major_strides(const std::vector<Expr>& shape) {
  std::vector<size_t> order;
  for (size_t d = shape.size(); d-- > 0;) order.push_back(d);
  return strides_in_order(shape, order);
}

std::vector<Expr> column_major_strides(const std::vector<Expr>& shape) {
  std::vector<size_t> order;
  for (size_t d = 0; d < shape.size(); ++d) order.push_back(d);
  return strides_in_order(shape, order);
}

std::string vector_axis_problem(const Argument& a, int d) {
  if (d < 0 || size_t(d) >= a.shape.size())
    return "axis " + std::to_string(d) + " is not an axis of '" + a.name + "' (" + std::to_string(a.shape.size()) + " axes)";
  auto extent = a.shape[size_t(d)].as<IntImm>();
  if (!extent) return "the vec axis " + std::to_string(d) + " has extent " + a.shape[size_t(d)].str() + ", not a constant";
  if (!has_vector_type(a.dtype, extent->value))
    return "a vec axis of " + std::to_string(extent->value) + " " + a.dtype.name() +
           " elements is no vector type (float2/float4, int2/int4, double2 and kin: 8 or 16 bytes of 4- or 8-byte elements)";
  auto strides = a.element_strides();
  auto one = strides[size_t(d)].as<IntImm>();
  if (!one || one->value != 1) return "the vec axis " + std::to_string(d) + " has stride " + strides[size_t(d)].str() + ", not 1";
  if (a.offset.defined() && !(a.offset.as<IntImm>() && a.offset.as<IntImm>()->value % extent->value == 0))
    return "offset=" + a.offset.str() + " is not a multiple of the vec axis' " + std::to_string(extent->value) +
           " lanes, so its vectors would not be aligned";
  return "";
}

std::vector<Expr> Argument::element_strides() const { return strides.empty() ? row_major_strides(shape) : strides; }

bool Argument::plain_layout() const {
  auto zero = offset.defined() ? offset.as<IntImm>() : nullptr;
  return strides.empty() && (!offset.defined() || (zero && zero->value == 0));
}

namespace {
// An integer expression of parameters with every node typed t.
class Retype : public ExprMutator {
 public:
  explicit Retype(Type t) : t_(t) {}

 protected:
  Expr mutate_int(const IntImm& i, const Expr&) override { return make_int(i.value, t_); }
  Expr mutate_var(const Var& v, const Expr&) override { return make_var(v.name, t_); }
  Expr mutate_binary(const Binary& b, const Expr&) override {
    Type r = is_comparison(b.op) || is_logical(b.op) ? types::boolean : t_;
    return make_binary(b.op, mutate(b.a), mutate(b.b), r);
  }
  Expr mutate_unary(const Unary& u, const Expr&) override { return make_unary(u.op, mutate(u.a), t_); }
  Expr mutate_call(const Call& c, const Expr&) override {
    std::vector<Expr> a;
    for (auto& x : c.args) a.push_back(mutate(x));
    return make_call(c.name, a, t_);
  }
  Expr mutate_cast(const Cast& c, const Expr&) override { return mutate(c.value); }

 private:
  Type t_;
};
}  // namespace

Expr LoopKernel::flat_index(const Subscript& s) const {
  std::vector<Expr> strides;
  Expr offset;
  if (auto a = find_argument(s.name)) {
    strides = a->element_strides();
    offset = a->offset;
  } else if (auto t = find_temporary(s.name)) {
    strides = row_major_strides(t->shape);
  } else {
    throw KernelError("kernel '" + name + "': unknown array '" + s.name + "'");
  }
  Type it = options.index_dtype;
  Retype retype(it);
  Expr flat;
  for (size_t d = 0; d < s.indices.size(); ++d) {
    Expr term = make_binary(BinOp::Mul, s.indices[d], retype.mutate(strides[d]), it);
    flat = flat.defined() ? make_binary(BinOp::Add, flat, term, it) : term;
  }
  if (offset.defined()) {
    Expr o = retype.mutate(offset);
    flat = flat.defined() ? make_binary(BinOp::Add, flat, o, it) : o;
  }
  return flat.defined() ? simplify(flat) : make_int(0, it);
}

namespace {
// v[i] whose name(v[i]) is n, through the cached index (rebuilt when v was
// reallocated or resized). A hit is checked against the element; a miss is
// believed when `trust_misses` (arguments are replaced, never renamed in
// place, and a miss is an everyday question: "is this name an argument?"),
// else confirmed by a scan (instruction ids may be edited in place; a miss
// there is an error anyway).
template <class T, class Name>
const T* find_by_name(const std::vector<T>& v, const std::string& n, const detail::NameIndexCache& cache, Name name,
                      bool trust_misses) {
  auto scan = [&]() -> const T* {
    for (auto& x : v)
      if (name(x) == n) return &x;
    return nullptr;
  };
  if (v.size() <= 8) return scan();  // cheaper than hashing
  auto index = cache.get();
  auto build = [&] {
    auto fresh = std::make_shared<detail::NameIndex>();
    fresh->data = v.data();
    fresh->size = v.size();
    for (size_t i = 0; i < v.size(); ++i) fresh->at.emplace(name(v[i]), i);
    cache.set(fresh);
    index = fresh;
  };
  if (!index || index->data != v.data() || index->size != v.size()) build();
  auto it = index->at.find(n);
  if (it != index->at.end() && name(v[it->second]) == n) return &v[it->second];
  if (trust_misses && it == index->at.end()) return nullptr;
  const T* found = scan();
  if (found) build();  // the index was stale: names changed in place
  return found;
}
}  // namespace

const Instruction& LoopKernel::instruction(const std::string& id) const {
  if (auto* i = find_by_name(instructions.get(), id, instruction_index_, [](const Instruction& x) -> const std::string& { return x.id; }, false))
    return *i;
  throw KernelError("kernel '" + name + "': no instruction with id '" + id + "'");
}

const Argument* LoopKernel::find_argument(const std::string& n) const {
  return find_by_name(arguments.get(), n, argument_index_, [](const Argument& x) -> const std::string& { return x.name; }, true);
}

const Temporary* LoopKernel::find_temporary(const std::string& n) const {
  auto it = temporaries.find(n);
  return it == temporaries.end() ? nullptr : &it->second;
}

InameTag LoopKernel::tag_of(const std::string& iname) const {
  auto it = iname_tags.find(iname);
  return it == iname_tags.end() ? InameTag{} : it->second;
}

std::vector<std::string> LoopKernel::all_inames() const {
  std::vector<std::string> r;
  for (auto& d : domains)
    for (auto& n : d.inames())
      if (std::find(r.begin(), r.end(), n) == r.end()) r.push_back(n);
  return r;
}

bool LoopKernel::has_iname(const std::string& iname) const { return domain_of(iname) >= 0; }

bool LoopKernel::name_taken(const std::string& n) const {
  return has_iname(n) || find_argument(n) || find_temporary(n) || substitutions.count(n);
}

int LoopKernel::domain_of(const std::string& iname) const {
  if (domains.size() <= 8) {  // cheaper than the index
    for (size_t i = 0; i < domains.size(); ++i)
      if (domains[i].has_iname(iname)) return int(i);
    return -1;
  }
  // (kernels with hundreds of domains ask this per instruction and iname: a
  // scan per question made code generation quadratic)
  auto fresh = [&](const detail::InameIndex& x) {
    if (x.ids.size() != domains.size()) return false;
    for (size_t i = 0; i < domains.size(); ++i)
      if (x.ids[i] != domains[i].id()) return false;
    return true;
  };
  auto index = iname_index_.get();
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (index) {
      auto it = index->domain.find(iname);
      if (it != index->domain.end() && size_t(it->second) < domains.size() && domains[size_t(it->second)].id() == index->ids[size_t(it->second)])
        return it->second;  // (a domain's inames are fixed with its id)
      if (it == index->domain.end() && fresh(*index)) return -1;
    }
    auto built = std::make_shared<detail::InameIndex>();
    for (size_t i = 0; i < domains.size(); ++i) {
      built->ids.push_back(domains[i].id());
      for (auto& n : domains[i].inames()) built->domain.emplace(n, int(i));
    }
    iname_index_.set(built);
    index = built;
  }
  return -1;
}

bool LoopKernel::is_written(const std::string& var) const {
  for (auto& i : instructions)
    if (i.kind == Instruction::Assign && i.assignee_name() == var) return true;
  return false;
}

bool LoopKernel::is_read(const std::string& var) const {
  bool found = false;
  auto look = [&](const Expr& e) {
    if (!e.defined() || found) return;
    found = mentions_var(e, var);
    for_each_subscript(e, [&](const Subscript& s) { found |= s.name == var; });
  };
  for (auto& i : instructions) {
    look(i.rhs);
    for (auto& p : i.predicates) look(p);
    if (auto s = i.lhs.as<Subscript>())
      for (auto& x : s->indices) look(x);
  }
  return found;
}

std::vector<std::string> LoopKernel::parameters() const {
  std::vector<std::string> r;
  auto add = [&](const std::string& n) {
    if (!has_iname(n) && !temporaries.count(n) && std::find(r.begin(), r.end(), n) == r.end()) r.push_back(n);
  };
  for (auto& d : domains)
    for (auto& p : d.params()) add(p);
  for (auto& a : arguments) {
    if (a.kind == Argument::Value) {
      if (!a.dtype.is_float()) add(a.name);  // a float scalar (alpha) is data, not a parameter
      continue;
    }
    std::vector<std::string> vs;
    for (auto& s : a.shape) collect_vars(s, vs);
    for (auto& s : a.strides) collect_vars(s, vs);
    collect_vars(a.offset, vs);
    for (auto& v : vs) add(v);
  }
  return r;
}

std::vector<std::string> LoopKernel::data_parameters() const {
  std::vector<std::string> r;
  for (auto& d : domains)
    for (auto& p : d.params())
      if (temporaries.count(p) && std::find(r.begin(), r.end(), p) == r.end()) r.push_back(p);
  return r;
}

std::map<std::string, std::set<std::string>> LoopKernel::data_parameter_inames() const {
  std::map<std::string, std::set<std::string>> r;
  for (auto& p : data_parameters()) {
    std::set<std::string>& bound = r[p];
    for (bool grew = true; grew;) {  // (domains are few; nesting is shallow)
      grew = false;
      for (auto& d : domains) {
        bool dependent = false;
        for (auto& q : d.params()) dependent |= q == p || bound.count(q) > 0;
        if (dependent)
          for (auto& n : d.inames()) grew |= bound.insert(n).second;
      }
    }
  }
  return r;
}

std::set<std::string> LoopKernel::data_dependent_inames() const {
  std::set<std::string> r;
  for (auto& [p, inames] : data_parameter_inames()) r.insert(inames.begin(), inames.end());
  return r;
}

std::string LoopKernel::str() const {
  std::ostringstream os;
  os << "kernel " << name << "\n\ndomains:\n";
  for (auto& d : domains) os << "  " << d.str() << "\n";
  os << "\narguments:\n";
  for (auto& a : arguments) os << "  " << a.str() << "\n";
  if (!temporaries.empty()) {
    os << "\ntemporaries:\n";
    for (auto& [n, t] : temporaries) {
      os << "  " << n << ": " << (t.dtype.known() ? t.dtype.name() : std::string("auto"));
      if (!t.shape.empty()) {
        std::vector<std::string> dims;
        for (auto& d : t.shape) dims.push_back(d.str());
        os << "[" << join(dims, ", ") << "]";
      }
      os << " (" << to_string(t.space) << ")\n";
    }
  }
  if (!iname_tags.empty()) {
    os << "\ntags:\n";
    for (auto& [n, t] : iname_tags) os << "  " << n << ": " << t.str() << "\n";
  }
  os << "\ninstructions:\n";
  for (auto& i : instructions) os << "  " << i.str() << "\n";
  return os.str();
}

}  // namespace loom
