// Hardware axes: for each iname tagged g.N / l.N, its lower bound and extent
// over the domain (isl dim_min/dim_max, as functions of the parameters); per
// axis the grid/block size is the largest extent of its inames. Block sizes
// must be constants. The result also gives the AST generator's context: each
// hardware iname, now a parameter, lies in [lower, lower + axis size).
#include "hardware_axes.h"

#include "loom/isl_util.h"

namespace loom::codegen {

namespace {

isl::pw_aff on_params(isl_pw_aff* pa, isl_space* params) {
  return isl::manage(isl_pw_aff_align_params(pa, isl_space_copy(params)));
}

// pa where defined, 0 elsewhere.
isl::pw_aff total(isl::pw_aff pa, isl_space* params) {
  isl_set* universe = isl_set_universe(isl_space_copy(params));
  isl_pw_aff* zero = isl_pw_aff_zero_on_domain(isl_local_space_from_space(isl_set_get_space(universe)));
  isl_set_free(universe);
  return isl::manage(isl_pw_aff_union_max(pa.release(), zero));
}

}  // namespace

HardwareAxes compute_hardware_axes(const LoopKernel& k, const std::vector<std::string>& hw_inames,
                                   const isl::set& assumptions, const TargetInfo& target) {
  HardwareAxes out;
  isl_ctx* ctx = isl_context();
  // one parameter space for everything: the kernel's parameters and the hardware inames
  isl_space* params = isl_space_params_alloc(ctx, 0);
  auto add_param = [&](const std::string& n) {
    if (isl_space_find_dim_by_name(params, isl_dim_param, n.c_str()) >= 0) return;
    unsigned pos = isl_space_dim(params, isl_dim_param);
    params = isl_space_add_dims(params, isl_dim_param, 1);
    params = isl_space_set_dim_id(params, isl_dim_param, pos, isl_id_alloc(ctx, n.c_str(), nullptr));
  };
  for (auto& p : k.parameters()) add_param(p);
  for (auto& h : hw_inames) add_param(h);
  for (auto& p : islu::dim_names(assumptions.get(), isl_dim_param)) add_param(p);

  isl::set context = isl::manage(isl_set_align_params(assumptions.copy(), isl_space_copy(params)));
  const isl::set expr_context = context;  // the assumptions only: grid sizes and bounds simplify under them

  // A thread axis longer than CUDA allows is refused before the piecewise
  // extents are computed (for some splits those take isl many seconds).
  const int64_t kMaxBlock[3] = {target.max_threads_per_block, target.max_threads_per_block, target.max_block_z};  // per block dimension
  int64_t most[3] = {1, 1, 1};  // the largest constant extent along each thread axis
  for (auto& h : hw_inames) {
    InameTag tag = k.tag_of(h);
    if (tag.kind != InameTag::Local) continue;
    auto r = islu::constant_range(k, h);
    if (!r) continue;
    int64_t extent = r->second - r->first + 1;
    if (extent > kMaxBlock[tag.axis])
      throw KernelError("kernel '" + k.name + "': " + std::to_string(extent) + " threads along l." + std::to_string(tag.axis) +
                        " (iname '" + h + "'); CUDA allows at most " + std::to_string(kMaxBlock[tag.axis]) + " on " + target.arch);
    most[tag.axis] = std::max(most[tag.axis], extent);
  }
  if (most[0] * most[1] * most[2] > target.max_threads_per_block)
    throw KernelError("kernel '" + k.name + "': " + std::to_string(most[0] * most[1] * most[2]) + " threads per block (" +
                      std::to_string(most[0]) + "x" + std::to_string(most[1]) + "x" + std::to_string(most[2]) +
                      "); CUDA allows at most " + std::to_string(target.max_threads_per_block) + " on " + target.arch);
  struct Extent {
    isl::pw_aff lo, size;
  };
  std::map<std::string, Extent> ext;
  std::map<std::pair<int, int>, isl::pw_aff> axis_size;  // (is_local, axis) -> size
  for (auto& h : hw_inames) {
    isl::set dom = islu::iteration_domain(k, {h});
    isl::pw_aff lo = on_params(islu::check(isl_set_dim_min(dom.copy(), 0), "dim_min"), params);
    isl::pw_aff hi = on_params(islu::check(isl_set_dim_max(dom.copy(), 0), "dim_max"), params);
    isl::pw_aff size = isl::manage(isl_pw_aff_add_constant_val(isl_pw_aff_sub(hi.release(), lo.copy()), isl_val_one(ctx)));
    size = total(size, params);
    // a domain empty for every parameter value the assumptions allow has no
    // lowest value: nothing runs on the axis for them, so 0 stands in (isl
    // cannot print a void expression)
    isl::pw_aff allowed = isl::manage(isl_pw_aff_intersect_params(lo.copy(), expr_context.copy()));
    if (isl_pw_aff_n_piece(allowed.get()) == 0) lo = total(allowed, params);
    ext[h] = {lo, size};
    InameTag tag = k.tag_of(h);
    auto key = std::make_pair(tag.kind == InameTag::Local ? 1 : 0, tag.axis);
    auto it = axis_size.find(key);
    axis_size[key] = it == axis_size.end() ? size : isl::manage(isl_pw_aff_max(it->second.release(), size.copy()));
  }

  for (int a = 0; a < 3; ++a) out.grid[a] = make_int(1, k.options.index_dtype);
  for (auto& [key, size] : axis_size) {
    auto [local, axis] = key;
    isl::pw_aff s = isl::manage(isl_pw_aff_gist(size.copy(), context.copy()));
    if (local) {
      // a block size is a constant: the largest extent over all parameter values
      std::string names;
      for (auto& h : hw_inames)
        if (k.tag_of(h) == InameTag{InameTag::Local, axis}) names += std::string(names.empty() ? "" : ", ") + "'" + h + "'";
      // (isl may bound a quasi-affine extent, floor(n/4) under n mod 4 = 0,
      // by a rational value: its floor bounds the integer extent too)
      // (over the parameter values the assumptions allow: a gist would drop n <= N)
      isl_val* mx = isl_pw_aff_max_val(isl_pw_aff_intersect_params(size.copy(), isl_set_params(context.copy())));
      if (!mx) {  // isl cannot bound a rational piece (n/4 where the context makes n a multiple of 4): ask without the context
        isl_ctx_reset_error(ctx);
        mx = isl_pw_aff_max_val(size.copy());
      }
      bool finite = mx && isl_val_is_rat(mx);
      if (finite) mx = isl_val_floor(mx);
      int64_t v = finite ? isl_val_get_num_si(mx) : 0;
      isl_val_free(mx);
      if (!finite)
        throw KernelError("kernel '" + k.name + "': the extent of local axis l." + std::to_string(axis) + " (iname " + names +
                          ") is unbounded, and a block size is a compile-time constant; split the iname with a constant inner length for l." +
                          std::to_string(axis) + ", or bound the parameters it depends on (assume n <= 1024)");
      if (v < 1) throw KernelError("kernel '" + k.name + "': local axis l." + std::to_string(axis) + " (iname " + names + ") is empty");
      out.block[axis] = v;
    } else {
      out.grid[axis] = islu::expr_from_pw_aff(s, expr_context, k.options.index_dtype);
    }
  }
  int64_t threads = out.block[0] * out.block[1] * out.block[2];
  for (int a = 0; a < 3; ++a)
    if (out.block[a] > kMaxBlock[a])
      throw KernelError("kernel '" + k.name + "': " + std::to_string(out.block[a]) + " threads along l." + std::to_string(a) +
                        "; CUDA allows at most " + std::to_string(kMaxBlock[a]) + " on " + target.arch);
  if (threads > target.max_threads_per_block)
    throw KernelError("kernel '" + k.name + "': " + std::to_string(threads) + " threads per block (" +
                      std::to_string(out.block[0]) + "x" + std::to_string(out.block[1]) + "x" + std::to_string(out.block[2]) +
                      "); CUDA allows at most " + std::to_string(target.max_threads_per_block) + " on " + target.arch);

  // context: lower <= h < lower + axis size, for each hardware iname
  for (auto& h : hw_inames) {
    InameTag tag = k.tag_of(h);
    isl::pw_aff size = axis_size[{tag.kind == InameTag::Local ? 1 : 0, tag.axis}];
    if (tag.kind == InameTag::Local) {
      // threads are launched for the whole block: the context is the launch
      // box (constant lower bound, constant block size), not the domain's
      // parametric extent, or isl would drop guards the launch does not ensure
      isl_val* lo_min = isl_pw_aff_min_val(ext[h].lo.copy());
      if (!lo_min || !isl_val_is_int(lo_min)) {
        isl_val_free(lo_min);
        throw KernelError("kernel '" + k.name + "': thread iname '" + h + "' has no constant lower bound");
      }
      isl_space* ps = isl_space_copy(params);
      ext[h].lo = isl::manage(isl_pw_aff_val_on_domain(isl_set_universe(isl_space_copy(ps)), isl_val_copy(lo_min)));
      size = isl::manage(isl_pw_aff_val_on_domain(isl_set_universe(ps), isl_val_int_from_si(ctx, long(out.block[tag.axis]))));
      isl_val_free(lo_min);
    }
    isl_pw_aff* hv = isl_pw_aff_param_on_domain_id(isl_set_universe(isl_space_copy(params)),
                                                   isl_id_alloc(ctx, h.c_str(), nullptr));
    isl_set* ge = isl_pw_aff_le_set(ext[h].lo.copy(), isl_pw_aff_copy(hv));
    isl_pw_aff* upper = isl_pw_aff_sub(isl_pw_aff_add(ext[h].lo.copy(), size.copy()), isl_pw_aff_copy(hv));
    isl_set* lt = isl_pw_aff_pos_set(upper);  // lower + size - h > 0
    isl_pw_aff_free(hv);
    context = isl::manage(isl_set_intersect(context.release(), isl_set_intersect(ge, lt)));
    HardwareIname hi{h, tag, islu::expr_from_pw_aff(ext[h].lo, expr_context, k.options.index_dtype)};
    out.inames.push_back(hi);
  }
  out.context = context;
  out.params = isl::manage(params);
  return out;
}

}  // namespace loom::codegen
