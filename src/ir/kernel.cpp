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
  }
  return "?";
}

std::optional<InameTag> InameTag::parse(const std::string& s) {
  if (s == "for" || s == "seq" || s == "None") return InameTag{Seq, 0};
  if (s == "unr") return InameTag{Unroll, 0};
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

std::string Instruction::assignee_name() const {
  if (auto s = lhs.as<Subscript>()) return s->name;
  if (auto v = lhs.as<Var>()) return v->name;
  return "";
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
  os << "  {" << join(opts, ", ") << "}";
  return os.str();
}

std::string Argument::str() const {
  std::string s = name + ": " + dtype.name();
  if (kind == Array) {
    std::vector<std::string> dims;
    for (auto& d : shape) dims.push_back(d.str());
    s += "[" + join(dims, ", ") + "]";
  }
  return s;
}

const Instruction& LoopKernel::instruction(const std::string& id) const {
  for (auto& i : instructions)
    if (i.id == id) return i;
  throw KernelError("kernel '" + name + "': no instruction with id '" + id + "'");
}

const Argument* LoopKernel::find_argument(const std::string& n) const {
  for (auto& a : arguments)
    if (a.name == n) return &a;
  return nullptr;
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

int LoopKernel::domain_of(const std::string& iname) const {
  for (size_t i = 0; i < domains.size(); ++i)
    if (domains[i].has_iname(iname)) return int(i);
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
    if (!has_iname(n) && std::find(r.begin(), r.end(), n) == r.end()) r.push_back(n);
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
    for (auto& v : vs) add(v);
  }
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
      os << "  " << n << ": " << t.dtype.name();
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
