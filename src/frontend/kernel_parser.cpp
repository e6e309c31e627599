// Kernel files and make_kernel: splits text into sections (kernel, domains,
// arguments, temporaries, assumptions, instructions, transforms, defaults),
// parses each, and assembles a LoopKernel with inferred instruction inames
// and arguments. Grammar: docs/language.md.
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>

#include "../ir/expr_parser.h"
#include "frontend_internal.h"
#include "loom/functions.h"
#include "loom/parser.h"

namespace loom {


using frontend::ExprParser;
using frontend::Source;
using frontend::Tok;
using frontend::Token;

namespace {

struct Range {
  size_t begin = 0, end = 0;
};

// Splits [r.begin, r.end) into logical lines: a newline ends a line unless
// brackets are open or the line ends with a backslash. Comments are skipped.
std::vector<Range> logical_lines(const Source& src, Range r) {
  const std::string& s = src.text();
  std::vector<Range> out;
  int depth = 0;
  size_t start = r.begin;
  auto flush = [&](size_t end) {
    size_t b = start, e = end;
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    if (b < e && s[b] != '#') out.push_back({b, e});
  };
  for (size_t i = r.begin; i < r.end; ++i) {
    char c = s[i];
    if (c == '#') {
      while (i < r.end && s[i] != '\n') ++i;
      if (i >= r.end) break;
      c = '\n';
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') depth = std::max(0, depth - 1);
    else if (c == '\n' && depth == 0) {
      size_t e = i;
      while (e > start && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
      if (e > start && s[e - 1] == '\\') continue;
      flush(i);
      start = i + 1;
    }
  }
  flush(r.end);
  return out;
}

class KernelBuilder {
 public:
  explicit KernelBuilder(const Source& src) : src_(src) {}

  void add_domain(Range r) {
    std::string text = src_.text().substr(r.begin, r.end - r.begin);
    Domain d;
    try {
      d = Domain::parse(text);
    } catch (const DomainSyntaxError& e) {
      // isl's position is within the domain text: map it into the file
      size_t off = r.begin;
      for (int line = 1; line < e.line && off < r.end; ++off)
        if (src_.text()[off] == '\n') ++line;
      src_.fail(std::min(off + size_t(e.column - 1), r.end), std::string("bad domain: ") + e.what());
    }
    for (auto& n : d.inames()) {
      if (n.empty()) src_.fail(r.begin, "every dimension of a domain needs a name");
      if (kernel_.has_iname(n)) src_.fail(r.begin, "iname '" + n + "' is defined by two domains");
    }
    kernel_.domains.edit().push_back(std::move(d));
  }

  // Splits a domains section into domain texts: each runs from '{' or '['
  // to the '}' that closes it.
  void add_domains(Range r) {
    const std::string& s = src_.text();
    size_t i = r.begin;
    while (i < r.end) {
      char c = s[i];
      if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
        ++i;
        continue;
      }
      if (c == '#') {
        while (i < r.end && s[i] != '\n') ++i;
        continue;
      }
      if (c != '{' && c != '[') src_.fail(i, "expected a domain in isl syntax, e.g. {[i]: 0 <= i < n}");
      size_t start = i;
      int depth = 0;
      bool closed = false;
      for (; i < r.end; ++i) {
        if (s[i] == '{') ++depth;
        else if (s[i] == '}') {
          if (--depth == 0) {
            ++i;
            closed = true;
            break;
          }
        }
      }
      if (!closed) src_.fail(start, "domain is missing its closing '}'");
      add_domain({start, i});
    }
  }

  void add_arguments(Range r) {
    ExprParser p(src_, frontend::tokenize(src_, r.begin, r.end), nullptr);
    while (!p.at_end()) {
      if (p.accept("...")) {
        infer_rest_ = true;
      } else {
        size_t off = p.peek().offset;
        Argument a;
        a.name = p.expect_ident("an argument name or '...'");
        p.expect(":", "after the argument name");
        size_t dtype_off = p.peek().offset;
        std::string tn = p.expect_ident("a dtype (float32, int32, ...)");
        // auto (loopy's dtype=None): the dtype the call's array has (float32 until then, as for '...')
        auto t = tn == "auto" ? std::optional<Type>(types::float32) : Type::parse(tn);
        if (!t) p.source().fail(p.peek(0).offset - tn.size() - 0, "unknown dtype '" + tn + "'" + did_you_mean(tn, Type::names()));
        a.dtype = *t;
        a.dtype_inferred = tn == "auto";
        if (a.dtype_inferred && !p.is("[")) src_.fail(dtype_off, "value argument '" + a.name + "' needs a dtype (auto is for arrays)");
        if (p.accept("[")) {
          a.kind = Argument::Array;
          if (!p.is("]")) do {
              a.shape.push_back(p.parse_expr());
            } while (p.accept(","));
          p.expect("]", "to close the shape");
          parse_layout(p, a);
        } else {
          a.kind = Argument::Value;
        }
        for (auto& b : kernel_.arguments)
          if (b.name == a.name) src_.fail(off, "argument '" + a.name + "' declared twice");
        kernel_.arguments.edit().push_back(std::move(a));
      }
      if (!p.accept(",") && !p.at_end() && p.peek().kind != Tok::Ident && !p.is("..."))
        p.fail_here("',' or the next argument");
    }
  }

  // Layout attributes after an array's shape: order=C|F, strides=(...), offset=expr.
  void parse_layout(ExprParser& p, Argument& a) {
    while (p.peek().kind == Tok::Ident && p.is("=", 1)) {
      size_t off = p.peek().offset;
      std::string key = p.next().text;
      p.next();  // '='
      if (key == "order") {
        std::string o = p.expect_ident("C or F");
        if (o == "F") a.strides = column_major_strides(a.shape);
        else if (o == "C") a.strides.clear();
        else src_.fail(off, "order= is C (row-major) or F (column-major), got '" + o + "'");
      } else if (key == "strides") {
        p.expect("(", "to open the strides");
        a.strides.clear();
        if (!p.is(")")) do {
            if (p.is(")")) break;
            a.strides.push_back(p.parse_expr());
          } while (p.accept(","));
        p.expect(")", "to close the strides");
        if (a.strides.size() != a.shape.size())
          src_.fail(off, "'" + a.name + "' has " + std::to_string(a.shape.size()) + " dimension(s) but " +
                             std::to_string(a.strides.size()) + " stride(s)");
      } else if (key == "offset") {
        a.offset = p.parse_expr();
      } else if (key == "vector_axis") {
        if (p.peek().kind != Tok::Int) p.fail_here("the index of the vec axis (an integer)");
        a.vector_axis = int(std::min<long long>(std::strtoll(p.next().text.c_str(), nullptr, 10), 1 << 20));
        std::string problem = vector_axis_problem(a, a.vector_axis);
        if (!problem.empty()) src_.fail(off, "'" + a.name + "': " + problem);
      } else {
        src_.fail(off, "unknown array attribute '" + key + "' (known: order, strides, offset, vector_axis)");
      }
    }
  }

  void add_temporaries(Range r) {
    ExprParser p(src_, frontend::tokenize(src_, r.begin, r.end), nullptr);
    while (!p.at_end()) {
      size_t off = p.peek().offset;
      Temporary t;
      t.name = p.expect_ident("a temporary name");
      p.expect(":", "after the temporary name");
      std::string tn = p.expect_ident("a dtype");
      // auto (loopy's dtype=None): the promotion of what the instructions assign to it
      auto ty = tn == "auto" ? std::optional<Type>(types::unknown) : Type::parse(tn);
      if (!ty) src_.fail(off, "unknown dtype '" + tn + "'" + did_you_mean(tn, Type::names()));
      t.dtype = *ty;
      if (p.accept("[")) {
        do {
          t.shape.push_back(p.parse_expr());
        } while (p.accept(","));
        p.expect("]", "to close the shape");
      }
      if (p.peek().kind == Tok::Ident &&
          (p.peek().text == "private" || p.peek().text == "local" || p.peek().text == "global" || p.peek().text == "auto")) {
        std::string sp = p.next().text;
        t.space = sp == "private" ? AddressSpace::Private
                  : sp == "local" ? AddressSpace::Local
                  : sp == "global" ? AddressSpace::Global
                                   : AddressSpace::Auto;
      }
      if (kernel_.temporaries.count(t.name)) src_.fail(off, "temporary '" + t.name + "' declared twice");
      kernel_.temporaries.edit()[t.name] = t;
      p.accept(",");
    }
  }

  void add_assumptions(Range r) {
    std::string text = src_.text().substr(r.begin, r.end - r.begin);
    // comments blanked (not removed, so positions in isl's errors stay the file's)
    for (size_t c = text.find('#'); c != std::string::npos; c = text.find('#', c))
      for (; c < text.size() && text[c] != '\n'; ++c) text[c] = ' ';
    auto b = text.find_first_not_of(" \t\r\n");
    if (b == std::string::npos) return;
    if (text[b] != '{' && text[b] != '[') text = "{ : " + text + " }";
    Domain a;
    try {
      a = Domain::parse(text);
    } catch (const DomainSyntaxError& e) {
      src_.fail(r.begin, std::string("bad assumptions: ") + e.what());
    }
    if (!a.inames().empty()) src_.fail(r.begin, "assumptions constrain parameters only (no set dimensions)");
    kernel_.assumptions = a;
  }

  void add_instructions(Range r) {
    for (auto& line : logical_lines(src_, r)) lines_.push_back(line);
  }

  LoopKernel finish(const std::string& name) {
    kernel_.name = name;
    std::set<std::string> inames;
    for (auto& n : kernel_.all_inames()) inames.insert(n);
    parse_instruction_lines(inames);
    frontend::assign_ids(kernel_);
    for (auto& insn : kernel_.instructions.edit()) frontend::infer_within_inames(kernel_, insn, inames);
    frontend::propagate_inames_from_writers(kernel_, inames);
    frontend::check_bounded_inames(kernel_);
    frontend::size_temporaries_by_accesses(kernel_, sized_by_accesses_);
    frontend::infer_arguments(kernel_, infer_rest_);
    frontend::check_names(kernel_);
    frontend::infer_written_dtypes(kernel_);
    frontend::record_original(kernel_);
    return std::move(kernel_);
  }

  LoopKernel& kernel() { return kernel_; }

 private:
  struct OptionValue {
    size_t offset;
    std::vector<Range> parts;  // colon-separated
  };

  // Parses "{key=value, ...}" tokens starting at '{' (already consumed).
  std::map<std::string, OptionValue> parse_options(ExprParser& p) {
    std::map<std::string, OptionValue> opts;
    while (!p.accept("}")) {
      if (p.at_end()) p.fail_here("'}' to close the options");
      size_t koff = p.peek().offset;
      std::string key = p.expect_ident("an option name (id, dep, inames, if, priority, nosync, tags, atomic, async)");
      if ((key == "atomic" || key == "async") && (p.is(",") || p.is("}"))) {  // a flag, without a value
        if (opts.count(key)) src_.fail(koff, "option '" + key + "' given twice");
        opts[key] = OptionValue{koff, {}};
        p.accept(",");
        continue;
      }
      p.expect("=", ("after option '" + key + "'").c_str());
      OptionValue v{koff, {}};
      size_t part_begin = p.peek().offset;
      int depth = 0;
      for (;;) {
        if (p.at_end()) p.fail_here("'}' to close the options");
        if (depth == 0 && (p.is(",") || p.is("}") || p.is(":"))) {
          size_t end = p.peek().offset;
          if (end == part_begin) p.fail_here("a value for option '" + key + "'");
          v.parts.push_back({part_begin, end});
          if (p.is(":")) {
            p.next();
            part_begin = p.peek().offset;
            continue;
          }
          break;
        }
        if (p.is("(") || p.is("[")) ++depth;
        if (p.is(")") || p.is("]")) --depth;
        p.next();
      }
      if (opts.count(key)) src_.fail(koff, "option '" + key + "' given twice");
      opts[key] = v;
      p.accept(",");
    }
    return opts;
  }

  std::string text_of(Range r) const {
    std::string s = src_.text().substr(r.begin, r.end - r.begin);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    return s;
  }

  // loopy's blocks around instruction lines: `for i[, j]` ... `end` adds its
  // inames to every instruction inside (to those inferred); `if c` ... `elif d`
  // ... `else` ... `end` adds the branch's condition as a predicate.
  struct Block {
    size_t offset;                // where it opened (errors)
    bool is_if = false;
    std::vector<std::string> inames;
    std::vector<Expr> earlier;    // if-chains: the conditions of the branches before this one
    Expr condition;               // this branch's (undefined after else)
    bool after_else = false;
  };

  void parse_instruction_lines(const std::set<std::string>& inames) {
    std::vector<Block> blocks;
    for (auto& line : lines_) {
      auto toks = frontend::tokenize(src_, line.begin, line.end);
      const std::string word = !toks.empty() && toks[0].kind == Tok::Ident ? toks[0].text : "";
      bool block_word = word == "for" || word == "if" || word == "elif" || word == "else" || word == "end";
      if (!block_word || (toks.size() > 1 && toks[1].kind == Tok::Punct && (toks[1].text == "=" || toks[1].text == "["))) {
        size_t before = kernel_.instructions.size();
        parse_instruction(line, inames);
        // (none: a substitution rule; two: a multi-output reduction)
        for (size_t n = before; n < kernel_.instructions.size(); ++n) {
          Instruction& insn = kernel_.instructions.edit()[n];
          for (auto& b : blocks) {
            insn.within_inames.insert(b.inames.begin(), b.inames.end());
            for (auto& c : b.earlier) insn.predicates.push_back(make_unary(UnOp::Not, c));
            if (b.condition.defined()) insn.predicates.push_back(b.condition);
          }
        }
        continue;
      }
      ExprParser p(src_, std::move(toks), &inames);
      size_t off = p.next().offset;
      if (word == "for") {
        Block b{off};
        do {
          size_t at = p.peek().offset;
          b.inames.push_back(p.expect_ident("an iname after 'for'"));
          if (!inames.count(b.inames.back())) src_.fail(at, "for: '" + b.inames.back() + "' is not an iname of any domain");
        } while (p.accept(","));
        blocks.push_back(b);
      } else if (word == "if") {
        Block b{off};
        b.is_if = true;
        b.condition = p.parse_expr();
        blocks.push_back(b);
      } else if (word == "elif" || word == "else") {
        if (blocks.empty() || !blocks.back().is_if || blocks.back().after_else)
          src_.fail(off, "'" + word + "' without an open 'if' block");
        Block& b = blocks.back();
        b.earlier.push_back(b.condition);
        b.condition = word == "elif" ? p.parse_expr() : Expr();
        b.after_else = word == "else";
      } else {  // end
        if (blocks.empty()) src_.fail(off, "'end' without an open 'for' or 'if' block");
        blocks.pop_back();
      }
      if (!p.at_end()) p.fail_here("end of the '" + word + "' line");
    }
    if (!blocks.empty())
      src_.fail(blocks.back().offset, std::string("this '") + (blocks.back().is_if ? "if" : "for") + "' block has no 'end'");
  }

  void parse_instruction(Range line, const std::set<std::string>& inames) {
    ExprParser p(src_, frontend::tokenize(src_, line.begin, line.end), &inames);
    Instruction insn;
    insn.loc = src_.loc(line.begin);
    std::optional<Type> declared;
    bool is_temp_decl = false;
    if (p.accept("...")) {
      size_t off = p.peek().offset;
      std::string what = p.expect_ident("'lbarrier', 'gbarrier' or 'nop' after '...'");
      if (what == "lbarrier" || what == "barrier") insn.kind = Instruction::Barrier;
      else if (what == "gbarrier") insn.kind = Instruction::GlobalBarrier;
      else if (what == "nop") insn.kind = Instruction::NoOp;
      else src_.fail(off, "expected 'lbarrier', 'gbarrier' or 'nop' after '...'");
    } else {
      is_temp_decl = parse_declaration(p, declared);
      size_t lhs_off = p.peek().offset;
      Expr lhs = p.parse_expr();
      if (p.accept(":=")) {
        if (is_temp_decl) src_.fail(lhs_off, "a substitution rule cannot declare a temporary");
        add_substitution(lhs, p.parse_expr(), lhs_off);
        if (!p.at_end()) p.fail_here("end of the substitution rule");
        return;
      }
      if (!lhs.as<Var>() && !lhs.as<Subscript>())
        src_.fail(lhs_off, "the left-hand side must be a variable or an array element, e.g. out[i]");
      if (p.accept(",")) {
        if (is_temp_decl) declare_temporary(lhs, lhs_off, declared);  // (loopy's `<> v, <> i = argmax(...)`)
        return parse_multi_output(p, lhs, inames);
      }
      if (!p.accept("=")) p.fail_here("'=' after the left-hand side");
      insn.lhs = lhs;
      insn.rhs = p.parse_expr();
      if (is_temp_decl) declare_temporary(lhs, lhs_off, declared);
    }
    if (p.accept("{")) apply_options(insn, parse_options(p), inames);
    if (!p.at_end()) p.fail_here("end of instruction (options go in {...})");
    kernel_.instructions.edit().push_back(std::move(insn));
  }

  // A temporary's declaration before a left-hand side, `<>` or `<dtype>`
  // (its dtype into `declared`); whether there is one.
  bool parse_declaration(ExprParser& p, std::optional<Type>& declared) {
    if (p.accept("<>")) return true;
    if (!p.is("<")) return false;
    p.next();
    size_t off = p.peek().offset;
    std::string tn = p.expect_ident("a dtype inside <...>");
    declared = Type::parse(tn);
    if (!declared) src_.fail(off, "unknown dtype '" + tn + "'" + did_you_mean(tn, Type::names()));
    p.expect(">", "to close the type declaration");
    return true;
  }

  // `<> t = ...` / `<dtype> t = ...` (a scalar) or `<> arr[k] = ...` (loopy's:
  // an array temporary sized by its accesses once all are read).
  void declare_temporary(const Expr& lhs, size_t lhs_off, const std::optional<Type>& declared) {
    // `<> arr[k] = ...` (loopy's): an array temporary sized by its accesses once all are read
    const std::string& n = lhs.as<Var>() ? lhs.as<Var>()->name : lhs.as<Subscript>()->name;
    auto it = kernel_.temporaries.find(n);
    if (lhs.as<Subscript>() && (it == kernel_.temporaries.end() || it->second.shape.empty())) sized_by_accesses_.insert(n);
    if (lhs.as<Var>() && sized_by_accesses_.count(n))
      src_.fail(lhs_off, "temporary '" + n + "' is declared as an array elsewhere (<> " + n + "[...]) and here as a scalar");
    Type t = declared ? *declared : types::unknown;
    if (it != kernel_.temporaries.end() && declared && it->second.dtype.known() && it->second.dtype != t)
      src_.fail(lhs_off, "temporary '" + n + "' declared with two dtypes");
    if (it == kernel_.temporaries.end() || (declared && !it->second.dtype.known()))
      kernel_.temporaries.edit()[n] = Temporary{n, t, {}, AddressSpace::Auto, {}, {}};
  }

  // loopy's multi-output reductions, `v, i = argmax(j, value, index)`: two
  // instructions over one reduction, `v = argmax_value(...)` (id ID_value)
  // and `i = argmax(...)` (id ID, waiting for the first), which
  // realize_reductions computes once. Options apply to both.
  void parse_multi_output(ExprParser& p, const Expr& first, const std::set<std::string>& inames) {
    std::optional<Type> second_declared;
    bool second_is_temp = parse_declaration(p, second_declared);
    size_t off = p.peek().offset;
    Expr second = p.parse_expr();
    if (!second.as<Var>() && !second.as<Subscript>())
      src_.fail(off, "the left-hand side must be a variable or an array element, e.g. out[i]");
    if (second_is_temp) declare_temporary(second, off, second_declared);
    if (p.is(",")) p.fail_here("'=': a multi-output reduction has two outputs (value, index)");
    if (!p.accept("=")) p.fail_here("'=' after the left-hand side");
    size_t rhs_off = p.peek().offset;
    Expr rhs = p.parse_expr();
    auto r = rhs.as<Reduce>();
    if (!r || !is_arg_reduction(r->op) || is_arg_value_reduction(r->op))
      src_.fail(rhs_off, "two outputs need a reduction that gives two: argmax(i, value, index) or argmin(...)");
    Instruction value, index;
    value.loc = index.loc = src_.loc(off);
    value.lhs = first;
    value.rhs = make_reduce(r->op == ReduceOp::ArgMax ? ReduceOp::ArgMaxValue : ReduceOp::ArgMinValue, r->inames, r->body);
    index.lhs = second;
    index.rhs = rhs;
    if (p.accept("{")) {
      auto opts = parse_options(p);
      apply_options(value, opts, inames);
      apply_options(index, opts, inames);
    }
    if (!p.at_end()) p.fail_here("end of instruction (options go in {...})");
    std::string base = index.id;
    if (base.empty()) {
      auto taken = [&](const std::string& id) {
        for (auto& i : kernel_.instructions)
          if (i.id == id || i.id == id + "_value") return true;
        return false;
      };
      int n = 0;
      do base = std::string(to_string(r->op)) + "_" + std::to_string(n++);
      while (taken(base));
    }
    value.id = base + "_value";
    index.id = base;
    index.depends_on.insert(value.id);
    kernel_.instructions.edit().push_back(std::move(value));
    kernel_.instructions.edit().push_back(std::move(index));
  }

  void apply_options(Instruction& insn, const std::map<std::string, OptionValue>& opts,
                     const std::set<std::string>& inames) {
    for (auto& option : opts) {
      const std::string& key = option.first;
      const OptionValue& v = option.second;  // (not a structured binding: lambdas below capture it)
      auto words = [&] {
        std::vector<std::string> w;
        for (auto& r : v.parts) w.push_back(text_of(r));
        return w;
      };
      if (key == "id") {
        if (v.parts.size() != 1) src_.fail(v.offset, "id= takes one name");
        insn.id = text_of(v.parts[0]);
      } else if (key == "dep") {
        // loopy: a leading '*' makes the list final (no dependencies inferred
        // beyond it: `dep=*` alone is none). Loom still orders what the data flow
        // needs, so the marker only drops itself; `dep=*` is never the glob of
        // every id (two such instructions would depend on each other).
        auto w = words();
        if (!w.empty() && w[0].size() > 1 && w[0][0] == '*' && w[0].find_first_of("*?[", 1) == std::string::npos) w[0].erase(0, 1);
        else if (!w.empty() && w[0] == "*") w.erase(w.begin());
        for (auto& d : w) insn.depends_on.insert(d);
      } else if (key == "nosync") {
        for (auto& w : words()) insn.no_sync_with.insert(w);
      } else if (key == "tags") {
        for (auto& w : words()) insn.tags.insert(w);
      } else if (key == "inames") {
        insn.inames_given = true;
        for (auto& w : words()) {
          if (!inames.count(w)) src_.fail(v.offset, "inames=: '" + w + "' is not an iname of any domain");
          insn.within_inames.insert(w);
        }
      } else if (key == "if") {
        for (auto& r : v.parts) {
          ExprParser ep(src_, frontend::tokenize(src_, r.begin, r.end), &inames);
          insn.predicates.push_back(ep.parse_expr());
          if (!ep.at_end()) ep.fail_here("end of the predicate");
        }
      } else if (key == "priority") {
        try {
          insn.priority = std::stoi(text_of(v.parts.at(0)));
        } catch (...) {
          src_.fail(v.offset, "priority= takes an integer");
        }
      } else if (key == "atomic") {
        if (!v.parts.empty()) src_.fail(v.offset, "atomic takes no value");
        insn.atomic = true;
      } else if (key == "async") {
        if (!v.parts.empty()) src_.fail(v.offset, "async takes no value");
        insn.async_copy = true;
      } else {
        src_.fail(v.offset, "unknown option '" + key + "' (known: id, dep, inames, if, priority, nosync, tags, atomic, async)");
      }
    }
  }

  void add_substitution(const Expr& lhs, const Expr& body, size_t off) {
    auto c = lhs.as<Call>();
    SubstitutionRule rule;
    if (c) {
      rule.name = c->name;
      for (auto& a : c->args) {
        auto v = a.as<Var>();
        if (!v) src_.fail(off, "substitution rule parameters must be plain names");
        rule.params.push_back(v->name);
      }
    } else if (auto v = lhs.as<Var>()) {
      rule.name = v->name;
    } else {
      src_.fail(off, "a substitution rule looks like f(x, y) := expression");
    }
    if (kernel_.substitutions.count(rule.name)) src_.fail(off, "substitution rule '" + rule.name + "' defined twice");
    rule.body = body;
    kernel_.substitutions.edit()[rule.name] = rule;
  }



  const Source& src_;
  LoopKernel kernel_;
  std::vector<Range> lines_;
  bool infer_rest_ = false;
  std::set<std::string> sized_by_accesses_;  // `<> arr[k] = ...` temporaries: shapes from their accesses
};

struct Section {
  std::string name;
  Range body;
  size_t header;
};

const char* kSectionNames[] = {"domains", "domain", "arguments", "args", "temporaries", "assumptions",
                               "instructions", "transforms", "defaults"};

std::vector<Section> split_sections(const Source& src, std::string& kernel_name) {
  const std::string& s = src.text();
  std::vector<Section> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t eol = s.find('\n', i);
    if (eol == std::string::npos) eol = s.size();
    // a header starts at column 1 with a section name and ':' (or "kernel NAME")
    bool header = false;
    if (i < eol && std::isalpha(static_cast<unsigned char>(s[i]))) {
      size_t w = i;
      while (w < eol && (std::isalnum(static_cast<unsigned char>(s[w])) || s[w] == '_')) ++w;
      std::string word = s.substr(i, w - i);
      if (word == "kernel") {
        std::string rest = s.substr(w, eol - w);
        auto b = rest.find_first_not_of(" \t:");
        auto e = rest.find_last_not_of(" \t\r");
        if (b == std::string::npos) src.fail(w, "expected a kernel name after 'kernel'");
        kernel_name = rest.substr(b, e - b + 1);
        for (char c : kernel_name)
          if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') src.fail(w + b, "a kernel name is a C identifier");
        // the name is the generated function's: a math function's name would clash in CUDA C and C
        if (find_math_function(kernel_name))
          src.fail(w + b, "kernel name '" + kernel_name + "' is the name of a math function, which the generated code calls; choose another");
        header = true;
        if (!out.empty()) out.back().body.end = i;
      } else {
        size_t c = w;
        while (c < eol && (s[c] == ' ' || s[c] == '\t')) ++c;
        if (c < eol && s[c] == ':' && !(c + 1 < eol && s[c + 1] == '=')) {
          // only known names start a section: "a: float32[n]" at column 1 is an argument
          bool known = std::find_if(std::begin(kSectionNames), std::end(kSectionNames),
                                    [&](const char* n) { return word == n; }) != std::end(kSectionNames);
          if (known) {
            if (!out.empty()) out.back().body.end = i;
            out.push_back({word, {c + 1, s.size()}, i});
            header = true;
          }
        }
      }
    }
    if (!header && out.empty()) {
      size_t b = i;
      while (b < eol && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
      if (b < eol && s[b] != '#')
        src.fail(b, "expected a section header ('kernel NAME', 'domains:', 'arguments:', 'instructions:', ...)");
    }
    i = eol + 1;
  }
  return out;
}

}  // namespace

std::string read_text_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

KernelFile parse_kernel_text(const std::string& text, const std::string& filename) {
  Source src(text, filename);
  std::string name = "loom_kernel";
  auto sections = split_sections(src, name);
  KernelBuilder b(src);
  KernelFile out;
  bool have_domains = false, have_insns = false;
  // domains first: instructions need the inames to recognize reductions
  for (auto& s : sections)
    if (s.name == "domains" || s.name == "domain") {
      b.add_domains(s.body);
      have_domains = true;
    }
  for (auto& s : sections) {
    if (s.name == "arguments" || s.name == "args") b.add_arguments(s.body);
    else if (s.name == "temporaries") b.add_temporaries(s.body);
    else if (s.name == "assumptions") b.add_assumptions(s.body);
    else if (s.name == "instructions") {
      b.add_instructions(s.body);
      have_insns = true;
    } else if (s.name == "transforms") {
      auto steps = frontend::parse_transform_lines(src, s.body.begin, s.body.end);
      out.transforms.insert(out.transforms.end(), steps.begin(), steps.end());
    } else if (s.name == "defaults") {
      ExprParser p(src, frontend::tokenize(src, s.body.begin, s.body.end));
      while (!p.at_end()) {
        std::string n = p.expect_ident("a parameter name");
        p.expect("=", "after the parameter name");
        bool neg = p.accept("-");
        if (p.peek().kind != Tok::Int) p.fail_here("an integer value");
        Token tok = p.next();
        errno = 0;
        int64_t v = std::strtoll(tok.text.c_str(), nullptr, 10);
        if (errno == ERANGE) src.fail(tok.offset, "value of '" + n + "' out of the range of a 64-bit integer");
        out.defaults[n] = neg ? -v : v;
        p.accept(",");
      }
    }
  }
  if (!have_domains) src.fail(0, "missing 'domains:' section");
  if (!have_insns) src.fail(0, "missing 'instructions:' section");
  out.kernel = b.finish(name);
  return out;
}

KernelFile parse_kernel_file(const std::string& path) { return parse_kernel_text(read_text_file(path), path); }

LoopKernel make_kernel(const std::vector<std::string>& domains, const std::string& instructions,
                       const std::vector<std::string>& arguments, const std::string& name) {
  std::string text = "kernel " + name + "\ndomains:\n";
  for (auto& d : domains) text += "  " + d + "\n";
  text += "arguments:\n";
  for (auto& a : arguments) text += "  " + a + ",\n";
  text += "instructions:\n" + instructions + "\n";
  return parse_kernel_text(text, "<make_kernel>").kernel;
}

}  // namespace loom
