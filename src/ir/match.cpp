// Parsing and evaluation of instruction match expressions.
#include "loom/match.h"

#include <fnmatch.h>

#include <cctype>

namespace loom {

struct InstructionMatch::Node {
  enum Kind { All, Id, Tag, Writes, Reads, Iname, And, Or, Not } kind = All;
  std::string pattern;
  std::shared_ptr<const Node> a, b;
};

namespace {

class MatchParser {
 public:
  explicit MatchParser(const std::string& t) : t_(t) {}

  std::shared_ptr<const InstructionMatch::Node> parse() {
    auto n = parse_or();
    skip();
    if (pos_ != t_.size()) fail("unexpected '" + t_.substr(pos_) + "'");
    return n;
  }

 private:
  using Node = InstructionMatch::Node;
  using P = std::shared_ptr<const Node>;

  [[noreturn]] void fail(const std::string& why) {
    throw Error("match expression '" + t_ + "', column " + std::to_string(pos_ + 1) + ": " + why);
  }
  void skip() {
    while (pos_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[pos_]))) ++pos_;
  }
  bool word(const char* w) {
    skip();
    size_t n = std::char_traits<char>::length(w);
    if (t_.compare(pos_, n, w) != 0) return false;
    if (pos_ + n < t_.size() && !std::isspace(static_cast<unsigned char>(t_[pos_ + n])) && t_[pos_ + n] != '(') return false;
    pos_ += n;
    return true;
  }
  P make(Node::Kind k, P a = nullptr, P b = nullptr, std::string pat = "") {
    auto n = std::make_shared<Node>();
    n->kind = k;
    n->a = a;
    n->b = b;
    n->pattern = std::move(pat);
    return n;
  }
  P parse_or() {
    P l = parse_and();
    while (word("or")) l = make(Node::Or, l, parse_and());
    return l;
  }
  P parse_and() {
    P l = parse_not();
    while (word("and")) l = make(Node::And, l, parse_not());
    return l;
  }
  P parse_not() {
    if (word("not")) return make(Node::Not, parse_not());
    skip();
    if (pos_ < t_.size() && t_[pos_] == '(') {
      ++pos_;
      P e = parse_or();
      skip();
      if (pos_ >= t_.size() || t_[pos_] != ')') fail("expected ')'");
      ++pos_;
      return e;
    }
    size_t start = pos_;
    while (pos_ < t_.size() && !std::isspace(static_cast<unsigned char>(t_[pos_])) && t_[pos_] != '(' && t_[pos_] != ')') ++pos_;
    std::string tok = t_.substr(start, pos_ - start);
    if (tok.empty()) fail("expected a match such as id:name, tag:t, writes:a, reads:b, iname:i or *");
    if (tok == "*") return make(Node::All);
    auto colon = tok.find(':');
    if (colon == std::string::npos) return make(Node::Id, nullptr, nullptr, tok);
    std::string key = tok.substr(0, colon), pat = tok.substr(colon + 1);
    if (pat.empty()) fail("nothing after '" + key + ":'");
    static const std::pair<const char*, Node::Kind> keys[] = {
        {"id", Node::Id}, {"tag", Node::Tag}, {"writes", Node::Writes}, {"reads", Node::Reads}, {"iname", Node::Iname}};
    for (auto& [k, kind] : keys)
      if (key == k) return make(kind, nullptr, nullptr, pat);
    pos_ = start;
    fail("unknown key '" + key + "' (known: id, tag, writes, reads, iname)");
  }

  const std::string& t_;
  size_t pos_ = 0;
};

bool glob(const std::string& pattern, const std::string& s) { return fnmatch(pattern.c_str(), s.c_str(), 0) == 0; }

bool reads(const Instruction& insn, const std::string& pattern) {
  for (auto& n : insn.read_names())
    if (glob(pattern, n)) return true;
  return false;
}

bool eval(const InstructionMatch::Node& n, const Instruction& insn) {
  using Node = InstructionMatch::Node;
  switch (n.kind) {
    case Node::All: return true;
    case Node::Id: return glob(n.pattern, insn.id);
    case Node::Tag:
      for (auto& t : insn.tags)
        if (glob(n.pattern, t)) return true;
      return false;
    case Node::Writes: return insn.kind == Instruction::Assign && glob(n.pattern, insn.assignee_name());
    case Node::Reads: return reads(insn, n.pattern);
    case Node::Iname:
      for (auto& i : insn.within_inames)
        if (glob(n.pattern, i)) return true;
      return false;
    case Node::And: return eval(*n.a, insn) && eval(*n.b, insn);
    case Node::Or: return eval(*n.a, insn) || eval(*n.b, insn);
    case Node::Not: return !eval(*n.a, insn);
  }
  return false;
}

}  // namespace

InstructionMatch InstructionMatch::parse(const std::string& text) {
  InstructionMatch m;
  m.text_ = text;
  m.root_ = MatchParser(text).parse();
  return m;
}

bool InstructionMatch::operator()(const Instruction& insn) const { return eval(*root_, insn); }

std::vector<std::string> find_instructions(const LoopKernel& k, const std::string& match) {
  InstructionMatch m = InstructionMatch::parse(match);
  std::vector<std::string> ids;
  for (auto& insn : k.instructions)
    if (m(insn)) ids.push_back(insn.id);
  return ids;
}

}  // namespace loom
