// The proof that 32-bit index arithmetic is exact: interval arithmetic over
// the generated loop nest, the code every target prints or lowers. Loop
// variables range over their bounds (a split loop's last block runs past the
// iname's end: 128*o + t reaches n + 126 before its guard), hardware inames
// over the grid and the block, parameters over a call's values or over what
// the kernel's assumptions allow (isl gives each parameter's range). Every
// integer that index arithmetic computes (loop bounds and steps, guards,
// each array access's flattened offset and its partial sums) must fit the
// index dtype. Values read from memory are the user's arithmetic, not index
// arithmetic: a subscript computed from them is assumed inside its array's
// extent (as every in-bounds access is), so a gather keeps 32-bit offsets.
#include <functional>
#include <algorithm>
#include <list>
#include <unordered_map>
#include <mutex>
#include <optional>

#include <isl/ilp.h>
#include <isl/set.h>
#include <isl/val.h>

#include "loom/codegen.h"
#include "loom/error.h"

namespace loom {

namespace {

using Wide = __int128;
// Beyond any 64-bit value, and small enough that a product of two stays
// inside 128 bits: "unbounded".
constexpr Wide kHuge = Wide(1) << 62;
Wide saturate(Wide v) { return v > kHuge ? kHuge : v < -kHuge ? -kHuge : v; }

struct Range {
  Wide lo = -kHuge, hi = kHuge;
  bool data = false;  // depends on memory or a variable without a range: not index arithmetic
  static Range of(Wide a, Wide b) { return {saturate(std::min(a, b)), saturate(std::max(a, b)), false}; }
  static Range point(Wide v) { return of(v, v); }
  static Range memory() { return {-kHuge, kHuge, true}; }
  Wide magnitude() const { return std::max(-lo, hi); }
};

Range join(const Range& a, const Range& b) {
  Range r = Range::of(std::min(a.lo, b.lo), std::max(a.hi, b.hi));
  r.data = a.data || b.data;
  return r;
}

Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// (a value from an unbounded parameter is printed as what it is)
std::string wide_str(Wide v) {
  constexpr Wide kFar = Wide(1) << 40;
  if (v >= kFar) return "beyond 2^40";
  if (v <= -kFar) return "below -2^40";
  return std::to_string(int64_t(v));
}

using FlatMemo = std::unordered_map<const Subscript*, Expr>;

class IndexRanges {
 public:
  // Flattened offsets are remembered by access node in `flat_memo`
  // (building them is most of the work; the loop nest holds the nodes).
  IndexRanges(const GeneratedKernel& g, const std::map<std::string, Range>& params, FlatMemo* flat_memo)
      : g_(g), env_(params), flat_memo_(flat_memo) {
    Type it = g.kernel.options.index_dtype;
    limit_hi_ = (Wide(1) << (it.bits() - 1)) - 1;
    limit_lo_ = -(Wide(1) << (it.bits() - 1));
  }

  // The values e may take (a host loop's bound).
  Range range_of(const Expr& e) {
    checking_ = false;  // (host loops' bounds are computed on the host, in 64 bits)
    Range r = eval(e);
    checking_ = true;
    return r;
  }

  // The first expression that may leave the index dtype's range, "" if none.
  std::string first_overflow() {
    static const char* axes = "xyz";
    for (auto& h : g_.hardware_inames) {
      int a = h.tag.axis;
      // (the grid is computed on the host, in 64 bits: not checked)
      checking_ = false;
      Range count = h.tag.kind == InameTag::Group ? eval(g_.grid[a]) : Range::point(g_.block[a]);
      checking_ = true;
      Range lower = eval(h.lower);
      Range r = Range::of(lower.lo, lower.hi + std::max<Wide>(count.hi, 1) - 1);
      r.data = lower.data || count.data;
      check(r, std::string(h.name) + " (" + (h.tag.kind == InameTag::Group ? "blockIdx." : "threadIdx.") + axes[a] + ")");
      env_[h.name] = r;
    }
    if (g_.body) stmt(*g_.body);
    return failure_;
  }

 private:
  void check(const Range& r, const std::string& what) {
    if (!failure_.empty() || r.data || !checking_) return;
    if (r.hi > limit_hi_) failure_ = what + " can reach " + wide_str(r.hi);
    else if (r.lo < limit_lo_) failure_ = what + " can reach " + wide_str(r.lo);
  }
  void check(const Range& r, const Expr& e) {
    if (failure_.empty() && checking_ && !r.data && e.type().is_signed_int() && (r.hi > limit_hi_ || r.lo < limit_lo_))
      check(r, std::string("`").append(e.str()).append("`"));  // (not "`" + ...: a false -Wrestrict in GCC 12)
  }

  void stmt(const Stmt& s) {
    if (!failure_.empty()) return;
    switch (s.kind) {
      case Stmt::Block:
        for (auto& c : s.children) stmt(*c);
        return;
      case Stmt::If:
        eval(s.cond);
        for (auto& c : s.children) stmt(*c);
        return;
      case Stmt::Assign:
        if (auto sub = s.lhs.as<Subscript>()) access(*sub);
        eval(s.rhs);
        return;
      case Stmt::Barrier: return;
      case Stmt::For: loop(s); return;
    }
  }

  // The loop variable ranges from the first value to the largest its
  // condition lets through; the last test (and increment) sees one step more.
  void loop(const Stmt& s) {
    Range init = eval(s.init);
    std::optional<Range> last = upper_bound(s.cond, s.var);
    Range body;
    if (!last) {
      body = Range::of(init.lo, kHuge);
      body.data = init.data;
      check(body, "the loop over " + s.var + " (no upper bound in `" + s.cond.str() + "`)");
    } else {
      body = Range::of(init.lo, std::max(init.lo, last->hi));
      body.data = init.data || last->data;
    }
    Range exit = Range::of(body.lo, body.hi + s.step);
    exit.data = body.data;
    check(exit, "the loop variable " + s.var + " (after its last iteration)");
    auto saved = env_.find(s.var) == env_.end() ? std::optional<Range>() : std::optional<Range>(env_[s.var]);
    env_[s.var] = exit;
    eval(s.cond);
    env_[s.var] = body;
    for (auto& c : s.children) stmt(*c);
    if (saved) env_[s.var] = *saved;
    else env_.erase(s.var);
  }

  // The largest value `var` takes while `cond` holds: from `var < e`,
  // `var <= e` and conjunctions of them.
  std::optional<Range> upper_bound(const Expr& cond, const std::string& var) {
    auto b = cond.as<Binary>();
    if (!b) return std::nullopt;
    if (b->op == BinOp::And) {
      auto l = upper_bound(b->a, var), r = upper_bound(b->b, var);
      if (l && r && l->data != r->data) return l->data ? r : l;  // (either bound holds alone)
      if (l && r) return Range{std::min(l->lo, r->lo), std::min(l->hi, r->hi), l->data};
      return l ? l : r;
    }
    auto v = b->a.as<Var>();
    if (!v || v->name != var || (b->op != BinOp::Lt && b->op != BinOp::Le)) return std::nullopt;
    Range e = eval(b->b);
    if (b->op == BinOp::Lt) e = Range{saturate(e.lo - 1), saturate(e.hi - 1), e.data};
    return e;
  }

  // An access's indices, then its flattened offset as the targets compute it
  // (LoopKernel::flat_index). An index that depends on memory stands for any
  // value inside the array's extent on that axis.
  void access(const Subscript& s) {
    std::vector<Expr> indices = s.indices;
    std::vector<std::string> placeholders;
    for (size_t d = 0; d < indices.size(); ++d) {
      Range r = eval(indices[d]);
      if (!r.data) continue;
      std::string name = "loom_index_" + std::to_string(d) + "_of_" + s.name;
      Range extent = extent_of(s.name, d);
      env_[name] = extent.data ? Range::memory() : Range::of(0, std::max<Wide>(extent.hi - 1, 0));
      indices[d] = make_var(name, g_.kernel.options.index_dtype);
      placeholders.push_back(name);
    }
    Subscript flat_of(s.name, indices, s.type);
    Expr& flat = (*flat_memo_)[&s];  // (a pure function of the access: kept between calls)
    if (!flat.defined()) flat = g_.kernel.flat_index(flat_of);
    eval(flat);
    for (auto& p : placeholders) env_.erase(p);
  }

  Range extent_of(const std::string& array, size_t d) {
    if (auto a = g_.kernel.find_argument(array); a && d < a->shape.size()) return eval(a->shape[d]);
    if (auto t = g_.kernel.find_temporary(array); t && d < t->shape.size()) return eval(t->shape[d]);
    return Range::memory();
  }

  Range eval(const Expr& e) {
    Range r = eval_node(e);
    check(r, e);
    return r;
  }

  Range eval_node(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Int: return Range::point(e.as<IntImm>()->value);
      case ExprKind::Var: {
        auto it = env_.find(e.as<Var>()->name);
        return it == env_.end() ? Range::memory() : it->second;
      }
      case ExprKind::Subscript: access(*e.as<Subscript>()); return Range::memory();
      case ExprKind::Unary: {
        auto u = e.as<Unary>();
        Range a = eval(u->a);
        Range r = u->op == UnOp::Not ? Range::of(0, 1) : u->op == UnOp::Neg ? Range::of(-a.hi, -a.lo) : Range::of(-a.hi - 1, -a.lo - 1);
        r.data = a.data && u->op != UnOp::Not;
        return r;
      }
      case ExprKind::Binary: return binary(*e.as<Binary>());
      case ExprKind::Call: {
        auto c = e.as<Call>();
        std::vector<Range> args;
        for (auto& a : c->args) args.push_back(eval(a));
        if (!e.type().is_int() || as_warp_reduce(e)) return Range::memory();
        if ((c->name == "min" || c->name == "max") && args.size() == 2) {
          bool mn = c->name == "min";
          Range r = Range::of(mn ? std::min(args[0].lo, args[1].lo) : std::max(args[0].lo, args[1].lo),
                              mn ? std::min(args[0].hi, args[1].hi) : std::max(args[0].hi, args[1].hi));
          r.data = args[0].data || args[1].data;
          return r;
        }
        if (c->name == "abs" && args.size() == 1) {
          Wide m = args[0].magnitude();
          Range r = Range::of(args[0].lo >= 0 ? args[0].lo : args[0].hi <= 0 ? -args[0].hi : 0, m);
          r.data = args[0].data;
          return r;
        }
        return Range::memory();
      }
      case ExprKind::Select: {
        auto s = e.as<Select>();
        Range c = eval(s->cond);
        Range r = join(eval(s->t), eval(s->f));
        r.data = r.data || c.data;
        return r;
      }
      case ExprKind::Cast: {
        Range v = eval(e.as<Cast>()->value);
        if (!e.type().is_int() || !e.as<Cast>()->value.type().is_int()) return Range::memory();
        return v;
      }
      default: return Range::memory();  // floats, reductions (none after preprocessing)
    }
  }

  Range binary(const Binary& b) {
    Range x = eval(b.a), y = eval(b.b);
    if (is_comparison(b.op) || is_logical(b.op)) return Range::of(0, 1);
    bool data = x.data || y.data;
    auto out = [&](Range r) {
      r.data = data;
      return r;
    };
    auto corners = [&](Wide (*f)(Wide, Wide)) {
      Wide v[4] = {f(x.lo, y.lo), f(x.lo, y.hi), f(x.hi, y.lo), f(x.hi, y.hi)};
      return out(Range::of(std::min({v[0], v[1], v[2], v[3]}), std::max({v[0], v[1], v[2], v[3]})));
    };
    switch (b.op) {
      case BinOp::Add: return out(Range::of(x.lo + y.lo, x.hi + y.hi));
      case BinOp::Sub: return out(Range::of(x.lo - y.hi, x.hi - y.lo));
      case BinOp::Mul: return corners([](Wide p, Wide q) { return p * q; });
      case BinOp::FloorDiv:
      case BinOp::TruncDiv:
        // monotone in each operand while the divisor keeps its sign (the
        // extremes are at the corners); a divisor that may be zero or change
        // sign: at most |x|
        if (y.lo > 0 || y.hi < 0)
          return b.op == BinOp::FloorDiv ? corners([](Wide p, Wide q) { return floor_div(p, q); })
                                         : corners([](Wide p, Wide q) { return p / q; });
        return out(Range::of(-x.magnitude(), x.magnitude()));
      case BinOp::Mod:
      case BinOp::TruncRem: {
        Wide m = std::max<Wide>(y.magnitude() - 1, 0);
        if (b.op == BinOp::Mod && y.lo > 0) return out(Range::of(0, m));
        if (b.op == BinOp::TruncRem && x.lo >= 0) return out(Range::of(0, std::min(m, x.hi)));
        return out(Range::of(-m, m));
      }
      case BinOp::BitAnd:
        if (x.lo >= 0 || y.lo >= 0)
          return out(Range::of(0, x.lo >= 0 && y.lo >= 0 ? std::min(x.hi, y.hi) : x.lo >= 0 ? x.hi : y.hi));
        return out(Range{});
      case BinOp::BitOr:
      case BinOp::BitXor:
        if (x.lo >= 0 && y.lo >= 0) {
          Wide p = 1;
          while (p <= std::max(x.hi, y.hi) && p < kHuge) p <<= 1;
          return out(Range::of(0, p - 1));
        }
        return out(Range{});
      case BinOp::Shl:
        if (y.lo >= 0 && y.hi < 62) return corners([](Wide p, Wide q) { return p * (Wide(1) << int(q)); });
        return out(Range{});
      case BinOp::Shr:
        if (y.lo >= 0 && y.hi < 62) return corners([](Wide p, Wide q) { return floor_div(p, Wide(1) << int(q)); });
        return out(Range{});
      default: return Range::memory();  // true division, powers: not index arithmetic
    }
  }

  const GeneratedKernel& g_;
  std::map<std::string, Range> env_;
  Wide limit_lo_ = 0, limit_hi_ = 0;
  FlatMemo* flat_memo_;
  std::string failure_;
  bool checking_ = true;
};

std::string first_overflow(const GeneratedKernel& g, const std::map<std::string, Range>& params, FlatMemo& memo) {
  if (g.kernel.options.index_dtype.bits() >= 64) return "";
  if (g.is_program()) {
    // a host loop's iname takes the values of its bounds
    std::map<std::string, Range> ranges = params;
    std::function<void(const std::vector<HostStep>&)> add = [&](const std::vector<HostStep>& steps) {
      for (auto& s : steps) {
        if (s.kind != HostStep::Loop) continue;
        IndexRanges r(g, ranges, &memo);
        Range lo = r.range_of(s.lower), hi = r.range_of(s.upper);
        ranges[s.iname] = Range::of(lo.lo, std::max(hi.hi, lo.lo));
        add(s.body);
      }
    };
    add(g.host_steps);
    for (auto& l : g.launches)
      if (std::string f = first_overflow(l, ranges, memo); !f.empty()) return f;
  }
  return IndexRanges(g, params, &memo).first_overflow();
}

std::map<std::string, Range> point_ranges(const std::map<std::string, int64_t>& params) {
  std::map<std::string, Range> ranges;
  for (auto& [p, v] : params) ranges[p] = Range::point(v);
  return ranges;
}

std::string call_str(const std::map<std::string, int64_t>& params) {
  std::string s;
  for (auto& [p, v] : params) s += (s.empty() ? "" : ", ") + p + "=" + std::to_string(v);
  return s;
}

}  // namespace

std::string index_overflow(const GeneratedKernel& g, const std::map<std::string, int64_t>& params) {
  FlatMemo memo;
  return first_overflow(g, point_ranges(params), memo);
}

std::string index_overflow_under_assumptions(const GeneratedKernel& g) {
  const LoopKernel& k = g.kernel;
  std::map<std::string, Range> ranges;
  for (auto& p : k.parameters()) ranges[p] = Range::of(-kHuge, kHuge);
  // an extent given by a bare parameter is never negative (bind_parameters)
  for (auto& a : k.arguments)
    for (auto& d : a.shape)
      if (auto v = d.as<Var>(); v && ranges.count(v->name)) ranges[v->name].lo = std::max<Wide>(ranges[v->name].lo, 0);
  if (k.assumptions.defined()) {
    std::lock_guard<std::mutex> lock(isl_launch_mutex());
    std::vector<std::string> names = k.assumptions.params();
    for (size_t i = 0; i < names.size(); ++i) {
      if (!ranges.count(names[i])) continue;
      isl_set* s = isl_set_from_params(k.assumptions.copy());
      s = isl_set_move_dims(s, isl_dim_set, 0, isl_dim_param, unsigned(i), 1);
      for (int side = 0; side < 2; ++side) {
        isl_val* v = side ? isl_set_dim_max_val(isl_set_copy(s), 0) : isl_set_dim_min_val(isl_set_copy(s), 0);
        if (!v) {
          isl_set_free(s);
          throw Error("kernel '" + k.name + "': isl failed to bound parameter '" + names[i] + "'");
        }
        if (isl_val_is_int(v)) {  // (not for an unbounded side or an empty set)
          long x = isl_val_get_num_si(v);
          Range& r = ranges[names[i]];
          if (side) r.hi = std::min<Wide>(r.hi, x);
          else r.lo = std::max<Wide>(r.lo, x);
        }
        isl_val_free(v);
      }
      isl_set_free(s);
    }
  }
  FlatMemo memo;
  std::string failure = first_overflow(g, ranges, memo);
  std::string unbounded;
  for (auto& [p, r] : ranges)
    if (r.hi >= kHuge) unbounded += (unbounded.empty() ? "" : ", ") + p;
  if (!failure.empty() && !unbounded.empty()) failure += "; no upper bound assumed for " + unbounded;
  return failure;
}

void check_index_width(const GeneratedKernel& g, const std::map<std::string, int64_t>& params) {
  if (g.kernel.options.index_dtype.bits() >= 64) return;
  // Remembered per loop nest (held, so that its address is not reused):
  // whether the assumptions prove every call safe, the last values that were
  // checked, and the flattened offsets. A repeated launch compares a few
  // integers; new sizes cost a walk of the loop nest. Checks are serialized
  // (they share the memo; launches with new sizes are rare).
  struct Entry {
    StmtPtr body;
    bool proven = false;
    std::vector<std::map<std::string, int64_t>> checked;
    FlatMemo memo;
  };
  static std::mutex mutex;
  static std::list<Entry> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const StmtPtr& held = g.body || g.launches.empty() ? g.body : g.launches.front().body;
  auto e = std::find_if(cache.begin(), cache.end(), [&](const Entry& c) { return c.body == held; });
  if (e == cache.end()) {
    if (cache.size() >= 64) cache.pop_front();
    cache.push_back({held, index_overflow_under_assumptions(g).empty(), {}, {}});
    e = std::prev(cache.end());
  }
  if (e->proven || std::find(e->checked.begin(), e->checked.end(), params) != e->checked.end()) return;
  std::string failure = first_overflow(g, point_ranges(params), e->memo);
  if (!failure.empty())
    throw ArgumentError("kernel '" + g.kernel.name + "': index arithmetic is 32-bit and " + failure + " for " + call_str(params) +
                        ": set_index_dtype int64 (loopy's index_dtype=np.int64) for sizes beyond 2^31 - 1");
  if (e->checked.size() >= 16) e->checked.erase(e->checked.begin());
  e->checked.push_back(params);
}

}  // namespace loom
