// Kernel statistics (loopy's get_op_map, get_mem_access_map and
// get_synchronization_map): how many operations, memory accesses and
// synchronizations a kernel performs, by kind, as functions of its
// parameters. The counts are what the loopy user reads to reason about a
// schedule and what the tuner's cost model learns from.
//
// A Count is exact. Where Loom can sum the iteration domain in closed form
// (src/statistics/count.cpp: iterated summation of quasi-polynomials over
// affine bounds, which covers boxes, triangles, split inames with partial
// tiles and nested domains) it is an isl piecewise quasi-polynomial in the
// parameters, printed as isl prints one; elsewhere (strides through
// existentials, bounds that are floors of the variable being summed) the
// points are counted for the parameter values given to eval.
//
// The counts are taken on the kernel after preprocessing (reductions
// realized, barriers placed; common subexpressions as written unless
// StatisticsOptions::as_generated) and follow loopy's conventions (docs/statistics.md): operations counted
// once per sub-group, global accesses once per work-item where the l.0
// stride is known and nonzero (else once per sub-group), local accesses once
// per sub-group, synchronizations per work-item.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/expr.h"
#include "loom/kernel.h"
#include "loom/type.h"

struct isl_pw_aff;
struct isl_pw_qpolynomial;
struct isl_set;

namespace loom {

// A number of events as a function of the kernel's parameters.
class Count {
 public:
  Count() = default;  // zero
  // The number of integer points of `set` (an isl_set, borrowed) for each
  // value of its parameters; `params` (borrowed, may be null) is the set of
  // parameter values the count is meant for (the kernel's assumptions):
  // eval refuses values outside it.
  static Count points(isl_set* set, isl_set* params);
  static Count constant(int64_t v);
  // The values of an affine function of the parameters (taken): a grid size.
  static Count from_pw_aff(isl_pw_aff* take);

  Count operator+(const Count& o) const;
  Count operator*(int64_t f) const;
  // Multiplied by a count in closed form (a grid size, a sub-group count).
  Count times(const Count& closed) const;

  // The value for these parameter values; ArgumentError when one it needs is
  // missing or the values lie outside the assumptions.
  int64_t eval(const std::map<std::string, int64_t>& params) const;
  // The parameters the count depends on.
  std::vector<std::string> parameters() const;
  bool closed_form() const { return enumerated_.empty(); }
  bool is_zero() const;
  // "[n, m] -> { (2 * n * m) : n > 0 and m > 0 }" (isl's notation); points
  // counted at evaluation appear as "card { ... }".
  std::string str() const;

 private:
  struct Poly;  // an isl_pw_qpolynomial or an isl_set (shared, immutable)
  // The sum of factor * polynomial terms, kept apart: isl adds piecewise
  // polynomials by intersecting their pieces, which is costly for the many
  // pieces of tiled domains, and evaluating the terms one by one is not.
  std::vector<std::pair<int64_t, std::shared_ptr<const Poly>>> polys_;
  int64_t constant_ = 0;
  struct Enumerated {
    int64_t factor;
    std::shared_ptr<const Count> times;  // a closed form; null: 1
    std::shared_ptr<const Poly> set;
  };
  std::vector<Enumerated> enumerated_;
  std::shared_ptr<const Poly> valid_;  // the assumptions (domain of a Poly), null: all values
};

enum class CountGranularity { WorkItem, SubGroup, WorkGroup };
const char* to_string(CountGranularity g);  // "workitem", "subgroup", "workgroup"

struct StatisticsOptions {
  // Count instructions once per thread that runs them even where the thread
  // axes they do not use repeat the same work (loopy's count_redundant_work).
  bool count_redundant_work = false;
  bool count_within_subscripts = true;  // index arithmetic counts as operations
  int subgroup_size = 32;
  // Every key at this granularity instead of loopy's choice per kind (the
  // instrumented-run tests and the tuner's per-thread features use WorkItem).
  std::optional<CountGranularity> granularity;
  // Count the kernel as Loom generates it, a subexpression repeated in an
  // instruction computed (and its loads made) once, instead of as written
  // (loopy's counts). The GeneratedKernel overloads always count so.
  bool as_generated = false;
  // Only instructions this match selects (loopy's `within`); empty: all.
  std::string within;
};

struct OpKey {
  Type dtype;
  std::string name;  // add, mul, div, pow, shift, bw, maxmin, func:<name>
  CountGranularity granularity;
  std::string kernel;
  bool operator<(const OpKey& o) const;
  std::string str() const;
};

struct MemAccessKey {
  std::string mtype;  // global, local
  Type dtype;
  // The stride (in elements) of the flat index along each thread axis
  // l.<axis> / g.<axis> the index uses; a null Expr where it is not affine.
  std::map<int, Expr> lid_strides, gid_strides;
  std::string direction;  // load, store
  std::string variable;
  CountGranularity granularity;
  std::string kernel;
  bool operator<(const MemAccessKey& o) const;
  std::string str() const;
};

struct SyncKey {
  std::string kind;  // barrier_local, barrier_global, kernel_launch
  std::string kernel;
  bool operator<(const SyncKey& o) const { return kind != o.kind ? kind < o.kind : kernel < o.kernel; }
  std::string str() const;
};

template <class Key>
using CountMap = std::map<Key, Count>;

// The counts of the kernel after its transformations; each generates the
// kernel (generate()) and throws what generation throws.
CountMap<OpKey> op_map(const LoopKernel& k, const StatisticsOptions& options = {});
CountMap<MemAccessKey> mem_access_map(const LoopKernel& k, const StatisticsOptions& options = {});
CountMap<SyncKey> synchronization_map(const LoopKernel& k, const StatisticsOptions& options = {});

// The same from a kernel already generated (the tuner has one per candidate).
CountMap<OpKey> op_map(const GeneratedKernel& g, const StatisticsOptions& options = {});
CountMap<MemAccessKey> mem_access_map(const GeneratedKernel& g, const StatisticsOptions& options = {});
CountMap<SyncKey> synchronization_map(const GeneratedKernel& g, const StatisticsOptions& options = {});

// Features of a generated kernel for cost models (the tuner logs them with
// each trial): totals over all threads at these parameter values, counted
// per work-item with the redundant work, as the code runs: flops (float
// operations), int_ops, global_load_bytes, global_store_bytes,
// local_load_bytes, local_store_bytes, strided_global_bytes (accesses whose
// l.0 stride is neither 0 nor 1, or not affine), barriers (per thread),
// launches, threads_per_block. A count without a closed form is left out
// rather than enumerated (that could take minutes at tuning sizes).
std::map<std::string, double> kernel_features(const GeneratedKernel& g, const std::map<std::string, int64_t>& params);

// All three as text, one key per line ("Op(float32, add, subgroup, k): ...");
// with `params`, each count evaluated there (loom stats).
std::string statistics_report(const LoopKernel& k, const StatisticsOptions& options,
                              const std::map<std::string, int64_t>* params);

}  // namespace loom
