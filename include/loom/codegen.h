// Code generation: a transformed LoopKernel to a GeneratedKernel, which holds
// the preprocessed kernel, its loop nest as a codegen AST (built by isl's AST
// generator from a schedule tree), and the launch geometry: which inames are
// blockIdx/threadIdx, their lower bounds, and the grid and block sizes as
// expressions in the parameters. Targets print or lower a GeneratedKernel.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "loom/ast.h"
#include "loom/kernel.h"
#include "loom/preprocess.h"
#include "loom/schedule.h"
#include "loom/target_info.h"

namespace loom {

struct HardwareIname {
  std::string name;
  InameTag tag;
  Expr lower;  // iname = lower + blockIdx/threadIdx.<axis>
};


// A local tile the tensor memory accelerator fills (tma_copy), planned by
// codegen/bulk_copies.cpp: the tensor map the runtime makes at launch and
// the mbarriers (one per copy of the tile) the fills complete on.
struct BulkCopy {
  std::string temporary, array;
  Type dtype;
  // The box, its last axis first (the tensor map's order): elements per axis,
  // the array axis each runs along, and for an array axis the tile splits in
  // two (fine + extent(fine) * coarse: a tile stored [n / 64, k, n mod 64])
  // how many of its elements one step moves (1: the fine one), else 0; an
  // axis of the tile of one element runs along none (-1).
  std::vector<int64_t> box;
  std::vector<int> array_axes;
  std::vector<int64_t> multipliers;
  int swizzle = 0;             // 128: the tensor map's 128-byte swizzle (a swizzle_array tile)
  int64_t stages = 0;          // copies of the tile, one mbarrier each
  std::string loop;            // the double-buffered loop: iteration t reads copy t mod stages, filled for the (t / stages)-th time
  int64_t first_barrier = 0;   // its mbarriers' place among the kernel's
  int64_t box_bytes() const;
};

// One fill of such a tile, issued by one thread: the instruction, the inames
// one copy replaces (the fill's own), and in the inames around it the copy
// of the tile it fills, the box's first element in the temporary (flat) and
// in the array (its last axis first).
struct BulkFill {
  std::string insn_id, temporary;
  std::set<std::string> tile_inames;
  Expr copy, destination;
  std::vector<Expr> coordinates;
};

struct GeneratedKernel {
  LoopKernel kernel;  // preprocessed
  TargetInfo target;  // what the code was generated for (its limits and features)
  Linearization linearization;
  StmtPtr body;
  std::vector<HardwareIname> hardware_inames;
  std::array<Expr, 3> grid;               // blocks per axis, in the parameters (1 when unused)
  std::array<int64_t, 3> block{1, 1, 1};  // threads per axis (constant)
  // The loops a target keeps rolled that the schedule would unroll (the CPU
  // target: unr, ilp and the tensor-core tile's k loops; generate.cpp).
  std::set<std::string> rolled_loops;
  // Bytes each array argument's address must be a multiple of: the vector
  // width of its vector accesses (`vec` inames); checked at launch.
  std::map<std::string, int64_t> argument_alignment;
  // The accesses the bounds proof left to the run time (UnprovenAccesses).
  UnprovenAccessSet unproven_accesses;
  // A kernel with global barriers or global temporaries runs as several
  // launches in order (split_global_barriers): each generated on its own and
  // listed here, with the global temporaries as extra array arguments that
  // the runtimes allocate for each call. Such a kernel's own body is empty
  // and `kernel` is the kernel as given (its arguments are the call's).
  // host_steps: the order to run them in, with the sequential loops around
  // global barriers as host loops (for_each_launch walks it).
  std::vector<GeneratedKernel> launches;
  std::vector<Argument> global_temporaries;
  std::vector<HostStep> host_steps;
  // Tiles the tensor memory accelerator fills (CUDA with sm_90+ only): each
  // a tensor map parameter after the others, and its mbarriers in local
  // memory after the temporaries.
  std::vector<BulkCopy> bulk_copies;
  std::vector<BulkFill> bulk_fills;
  const BulkFill* bulk_fill(const std::string& insn_id) const;
  const BulkCopy* bulk_copy(const std::string& temporary) const;
  int64_t bulk_barriers() const;  // mbarriers (8 bytes each)
  bool is_program() const { return !launches.empty(); }
  bool fast_path = false;     // loops read from constraints (else isl's AST generator)
  std::string isl_reason;     // why the fast path did not apply
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
  // Bytes of local (shared) memory per block, each temporary 16-byte aligned.
  // Above the target's static_shared_bytes (TargetInfo, 48 KiB) the CUDA
  // target allocates it dynamically (and opts in to more when the kernel is loaded).
  int64_t local_bytes() const;
  bool uses_hardware() const { return !hardware_inames.empty(); }
};

// Seconds spent in each stage of generate() (bench/codegen reports them).
struct StageTimes {
  double preprocess = 0, linearize = 0, hardware_axes = 0, loop_nest = 0;
  double legality = 0;  // check_reorderings (the dataflow of the kernel as written against this one)
};

// How loops and guards are produced: Auto takes the fast path where the
// domains allow it and isl's AST generator elsewhere; Isl always uses isl
// (the reference the fast path is tested against).
enum class CodegenPath { Auto, Isl };

// Runs preprocess, linearize and codegen.
GeneratedKernel generate(const LoopKernel& k, StageTimes* times = nullptr, CodegenPath path = CodegenPath::Auto,
                         const TargetInfo& target = TargetInfo::generic_cuda());
inline GeneratedKernel generate(const LoopKernel& k, const TargetInfo& target) { return generate(k, nullptr, CodegenPath::Auto, target); }

// Launch geometry for concrete parameter values (grid entries may be 0 when
// the domain is empty for these values: then there is nothing to launch).
struct LaunchDims {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  bool empty() const { return grid[0] <= 0 || grid[1] <= 0 || grid[2] <= 0; }
};
LaunchDims launch_dims(const GeneratedKernel& g, const std::map<std::string, int64_t>& params);

// Index width (codegen/index_width.cpp): whether 32-bit index arithmetic is
// exact, by interval arithmetic over the generated loop nest. Each returns
// the first integer the code computes that may leave the index dtype's
// range ("`128*i_outer + i_inner` can reach 2147483699"), "" when none can:
// for one call's parameter values, or for every value the kernel's
// assumptions allow (isl bounds each parameter; "" proves every call safe).
std::string index_overflow(const GeneratedKernel& g, const std::map<std::string, int64_t>& params);
std::string index_overflow_under_assumptions(const GeneratedKernel& g);
// For a launch: throws ArgumentError naming the expression, the values and
// set_index_dtype int64 when 32-bit indices could wrap around. Remembered
// per kernel: a kernel proven for all sizes, or values checked before, cost
// a lookup.
void check_index_width(const GeneratedKernel& g, const std::map<std::string, int64_t>& params);

// Accesses checked at run time (codegen/checked_accesses.cpp): those to an
// array argument that check_bounds could not prove (GeneratedKernel::
// unproven_accesses: a subscript isl cannot read, i*i, idx[i], a
// temporary's value, or one in an iname bounded by a value the kernel
// computes). The CPU target and the CUDA target check exactly these (none
// when the kernel trusts them), numbering each as an entry of a table that
// names its instruction and array.
class UnprovenAccesses {
 public:
  explicit UnprovenAccesses(const GeneratedKernel& g);
  // The argument index of s's array when s, in instruction insn_id, is
  // checked; -1 otherwise. In a condition that names no instruction (an
  // instruction's predicate that a codegen pass moved into a guard of its
  // own), s is checked where any instruction's access to the array is.
  int argument(const Subscript& s, const std::string& insn_id) const;

 private:
  const GeneratedKernel& g_;
};
struct CheckedAccess {
  std::string instruction, array;
};
// The message both targets raise (ArgumentError) for a failed check.
std::string checked_access_failure(const LoopKernel& k, const CheckedAccess& a, int64_t index, int64_t extent);

}  // namespace loom
