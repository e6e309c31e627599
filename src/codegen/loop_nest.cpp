// build_loop_nest: turns a Linearization into an isl schedule tree (one
// statement per instruction, a one-member band per loop, a mark naming the
// iname above each band, sequences in instruction order), asks isl's AST
// generator for loops and guards under the hardware context, and converts
// isl's AST into Loom's. Marks let loop variables keep their iname names.
#include <array>

#include <isl/ast.h>
#include <isl/ast_build.h>
#include <isl/schedule.h>
#include <isl/schedule_node.h>
#include <isl/union_map.h>
#include <isl/union_set.h>

#include "hardware_axes.h"

namespace loom::codegen {

namespace {

class LoopNestBuilder {
 public:
  LoopNestBuilder(const LoopKernel& k, const Linearization& L, const HardwareAxes& hw) : k_(k), L_(L), hw_(hw) {
    std::set<std::string> hw_names;
    for (auto& h : hw.inames) hw_names.insert(h.name);
    for (size_t i = 0; i < k.instructions.size(); ++i) {
      const Instruction& insn = k.instructions[i];
      index_[insn.id] = int(i);
      const auto& loops = L.loop_inames.at(insn.id);
      std::vector<std::string> dims;
      std::vector<std::string> hw_dims;
      for (auto& n : insn.within_inames)
        if (hw_names.count(n)) hw_dims.push_back(n);
      dims = hw_dims;
      dims.insert(dims.end(), loops.begin(), loops.end());
      isl::set d = islu::iteration_domain(k, dims);
      d = islu::dims_to_params(d, hw_dims);
      isl_set* s = isl_set_align_params(d.release(), hw.params.copy());
      s = isl_set_set_tuple_name(s, ("S" + std::to_string(i)).c_str());
      domains_.push_back(isl::manage(islu::check(s, "statement domain")));
    }
  }

  StmtPtr run() {
    isl_schedule* sched = sequence(L_.items);
    if (!sched) return make_block({});
    for (auto& h : hw_.inames)
      if (auto sl = k_.slabs.find(h.name); sl != k_.slabs.end()) sched = block_slabbed(sched, h.name, sl->second);
    isl_ast_build* build = isl_ast_build_from_context(hw_.context.copy());
    isl_ast_node* root = islu::check(isl_ast_build_node_from_schedule(build, sched), "AST generation");
    isl_ast_build_free(build);
    StmtPtr r = convert(root, {}, "");
    isl_ast_node_free(root);
    return r;
  }

 private:
  isl_schedule* statement(int i) {
    return isl_schedule_from_domain(isl_union_set_from_set(domains_[i].copy()));
  }

  isl_schedule* sequence(const std::vector<ScheduleItem>& items) {
    isl_schedule* seq = nullptr;
    for (auto& it : items) {
      isl_schedule* s = it.kind == ScheduleItem::Insn ? statement(index_.at(it.name)) : loop(it);
      seq = seq ? isl_schedule_sequence(seq, s) : s;
    }
    return seq;
  }

  void statements_in(const std::vector<ScheduleItem>& items, std::vector<int>& out) {
    for (auto& it : items) {
      if (it.kind == ScheduleItem::Insn) out.push_back(index_.at(it.name));
      else statements_in(it.body, out);
    }
  }

  isl_schedule* loop(const ScheduleItem& item) {
    isl_schedule* inner = sequence(item.body);
    std::vector<int> stmts;
    statements_in(item.body, stmts);
    isl_union_pw_aff* upa = nullptr;
    for (int i : stmts) {
      const isl::set& d = domains_[i];
      int pos = islu::find_dim(d.get(), isl_dim_set, item.name);
      if (pos < 0) throw KernelError("internal: statement S" + std::to_string(i) + " lacks loop iname " + item.name);
      isl_local_space* ls = isl_local_space_from_space(isl_set_get_space(d.get()));
      isl_pw_aff* pa = isl_pw_aff_from_aff(isl_aff_var_on_domain(ls, isl_dim_set, unsigned(pos)));
      isl_union_pw_aff* u = isl_union_pw_aff_from_pw_aff(pa);
      upa = upa ? isl_union_pw_aff_union_add(upa, u) : u;
    }
    isl_multi_union_pw_aff* mupa = isl_multi_union_pw_aff_from_union_pw_aff(upa);
    isl_schedule* s = isl_schedule_insert_partial_schedule(inner, mupa);
    isl_schedule_node* node = isl_schedule_node_child(isl_schedule_get_root(s), 0);
    isl_schedule_free(s);
    if (item.unroll) node = isl_schedule_node_band_member_set_ast_loop_type(node, 0, isl_ast_loop_unroll);
    node = isl_schedule_node_insert_mark(node, isl_id_alloc(isl_context(), item.name.c_str(), nullptr));
    isl_schedule* r = isl_schedule_node_get_schedule(node);
    isl_schedule_node_free(node);
    islu::check(r, "schedule");
    if (auto sl = k_.slabs.find(item.name); sl != k_.slabs.end()) r = slabbed(r, item.name, stmts, sl->second);
    return r;
  }

  // loopy's slabs: the loop's first `head` and last `tail` iterations, and
  // the ones between, as three loops over disjoint parts of the statements'
  // domains; isl then drops, in the middle part, the guards of a partial tile.
  // The iname's values in three disjoint sets over [iname]: the first `head`
  // ones, the last `tail` ones (not in head) and those between.
  std::array<isl_set*, 3> slab_parts(const std::string& iname, std::pair<int, int> slabs) {
    isl::set dl = islu::iteration_domain(k_, {iname});
    isl_pw_aff* lo = islu::check(isl_set_dim_min(dl.copy(), 0), "slabs");
    isl_pw_aff* hi = islu::check(isl_set_dim_max(dl.copy(), 0), "slabs");
    auto on_iname = [&](isl_pw_aff* pa) {  // a parameter pw_aff as a function on [iname]
      isl_space* sp = isl_space_map_from_domain_and_range(isl_set_get_space(dl.get()), isl_pw_aff_get_domain_space(pa));
      return isl_pw_aff_pullback_multi_aff(pa, isl_multi_aff_zero(sp));
    };
    isl_pw_aff* var = isl_pw_aff_var_on_domain(isl_local_space_from_space(isl_set_get_space(dl.get())), isl_dim_set, 0);
    isl_ctx* ctx = isl_context();
    // head: iname < lo + head; tail: iname > hi - tail (and not head)
    isl_set* head = isl_pw_aff_lt_set(isl_pw_aff_copy(var),
                                      isl_pw_aff_add_constant_val(on_iname(lo), isl_val_int_from_si(ctx, slabs.first)));
    isl_set* tail = isl_pw_aff_gt_set(var, isl_pw_aff_add_constant_val(on_iname(hi), isl_val_int_from_si(ctx, -slabs.second)));
    tail = isl_set_subtract(tail, isl_set_copy(head));
    isl_set* middle = isl_set_subtract(isl_set_universe(isl_set_get_space(head)), isl_set_union(isl_set_copy(head), isl_set_copy(tail)));
    return {head, middle, tail};
  }

  isl_schedule* slabbed(isl_schedule* s, const std::string& iname, const std::vector<int>& stmts, std::pair<int, int> slabs) {
    isl_schedule* seq = nullptr;
    for (isl_set* part : slab_parts(iname, slabs)) {
      isl_union_set* dom = nullptr;
      for (int i : stmts) {
        const isl::set& d = domains_[i];
        int pos = islu::find_dim(d.get(), isl_dim_set, iname);
        // the part, as a condition on the statement's own space
        isl_space* sp = isl_set_get_space(d.get());
        isl_aff* pick = isl_aff_var_on_domain(isl_local_space_from_space(isl_space_copy(sp)), isl_dim_set, unsigned(pos));
        isl_multi_aff* proj = isl_multi_aff_from_aff(pick);
        isl_set* aligned = isl_set_align_params(isl_set_reset_tuple_id(isl_set_copy(part)), isl_space_params(isl_space_copy(sp)));
        isl_set* cond = isl_set_preimage_multi_aff(aligned, proj);
        isl_space_free(sp);
        isl_union_set* u = isl_union_set_from_set(isl_set_intersect(d.copy(), cond));
        dom = dom ? isl_union_set_union(dom, u) : u;
      }
      isl_schedule* piece = isl_schedule_intersect_domain(isl_schedule_copy(s), dom);
      seq = seq ? isl_schedule_sequence(seq, piece) : piece;
      isl_set_free(part);
    }
    isl_schedule_free(s);
    return islu::check(seq, "slabs");
  }

  // Slabs of a hardware iname (a block axis, g.N): the whole kernel body in
  // three copies for the first `head` blocks, the last `tail` ones and those
  // between, as conditions on the block index (a parameter here); in the
  // middle copy isl drops the guards of a partial tile. Thread axes are
  // refused: a barrier under branches that threads take apart hangs.
  isl_schedule* block_slabbed(isl_schedule* s, const std::string& iname, std::pair<int, int> slabs) {
    if (k_.tag_of(iname).kind != InameTag::Group)
      throw KernelError("kernel '" + k_.name + "': slabs of '" + iname + "', which is tagged '" + k_.tag_of(iname).str() +
                        "': slabs need a sequential or block (g.N) iname");
    isl_schedule* seq = nullptr;
    for (isl_set* part : slab_parts(iname, slabs)) {
      // the part as a condition on the parameters (the block index is one)
      isl::set cond = islu::dims_to_params(isl::manage(isl_set_reset_tuple_id(part)), {iname});
      isl_set* params = isl_set_align_params(isl_set_params(cond.release()), hw_.params.copy());
      isl_union_set* dom = isl_schedule_get_domain(s);
      dom = isl_union_set_intersect_params(dom, params);
      isl_schedule* piece = isl_schedule_intersect_domain(isl_schedule_copy(s), dom);
      seq = seq ? isl_schedule_sequence(seq, piece) : piece;
    }
    isl_schedule_free(s);
    return islu::check(seq, "slabs");
  }

  Expr expr(isl_ast_expr* e, const std::map<std::string, std::string>& rename) {
    Expr r = islu::expr_from_ast(e, rename, k_.options.index_dtype);
    isl_ast_expr_free(e);
    return r;
  }

  StmtPtr convert(isl_ast_node* n, std::map<std::string, std::string> rename, const std::string& mark) {
    switch (isl_ast_node_get_type(n)) {
      case isl_ast_node_block: {
        isl_ast_node_list* list = isl_ast_node_block_get_children(n);
        std::vector<StmtPtr> stmts;
        for (isl_size i = 0; i < isl_ast_node_list_n_ast_node(list); ++i) {
          isl_ast_node* c = isl_ast_node_list_get_ast_node(list, i);
          stmts.push_back(convert(c, rename, mark));
          isl_ast_node_free(c);
        }
        isl_ast_node_list_free(list);
        return make_block(stmts);
      }
      case isl_ast_node_mark: {
        isl_id* id = isl_ast_node_mark_get_id(n);
        std::string name = isl_id_get_name(id);
        isl_id_free(id);
        isl_ast_node* c = isl_ast_node_mark_get_node(n);
        StmtPtr r = convert(c, rename, name);
        isl_ast_node_free(c);
        return r;
      }
      case isl_ast_node_for: {
        isl_ast_expr* it = isl_ast_node_for_get_iterator(n);
        isl_id* id = isl_ast_expr_get_id(it);
        std::string iter = isl_id_get_name(id);
        isl_id_free(id);
        isl_ast_expr_free(it);
        // a loop isl made without a band of ours above (a degenerate loop in a slab, say): its own
        // variable, named so that it cannot meet an iname
        std::string var = mark.empty() ? "loom_it_" + iter : mark;
        Expr init = expr(isl_ast_node_for_get_init(n), rename);
        rename[iter] = var;
        Expr cond;
        int64_t step = 1;
        if (isl_ast_node_for_is_degenerate(n)) {
          cond = make_binary(BinOp::Le, make_var(var, k_.options.index_dtype), init, types::boolean);
        } else {
          cond = expr(isl_ast_node_for_get_cond(n), rename);
          isl_ast_expr* inc = isl_ast_node_for_get_inc(n);
          isl_val* v = isl_ast_expr_get_val(inc);
          step = isl_val_get_num_si(v);
          isl_val_free(v);
          isl_ast_expr_free(inc);
        }
        isl_ast_node* body = isl_ast_node_for_get_body(n);
        StmtPtr b = convert(body, rename, "");
        isl_ast_node_free(body);
        return make_for(var, init, cond, step, b);
      }
      case isl_ast_node_if: {
        Expr cond = expr(isl_ast_node_if_get_cond(n), rename);
        if (!cond.type().is_bool()) cond = make_binary(BinOp::Ne, cond, make_int(0, cond.type()), types::boolean);
        isl_ast_node* t = isl_ast_node_if_get_then_node(n);
        StmtPtr then_s = convert(t, rename, mark);
        isl_ast_node_free(t);
        StmtPtr else_s;
        if (isl_ast_node_if_has_else_node(n)) {
          isl_ast_node* e = isl_ast_node_if_get_else_node(n);
          else_s = convert(e, rename, mark);
          isl_ast_node_free(e);
        }
        return make_if(cond, then_s, else_s);
      }
      case isl_ast_node_user: {
        isl_ast_expr* call = isl_ast_node_user_get_expr(n);
        isl_ast_expr* callee = isl_ast_expr_op_get_arg(call, 0);
        isl_id* id = isl_ast_expr_get_id(callee);
        int stmt = std::stoi(isl_id_get_name(id) + 1);
        isl_id_free(id);
        isl_ast_expr_free(callee);
        const Instruction& insn = k_.instructions[stmt];
        const auto& loops = L_.loop_inames.at(insn.id);
        std::map<std::string, Expr> values;
        for (size_t d = 0; d < loops.size(); ++d) {
          Expr v = expr(isl_ast_expr_op_get_arg(call, int(d) + 1), rename);
          if (!(v.as<Var>() && v.as<Var>()->name == loops[d])) values[loops[d]] = v;
        }
        isl_ast_expr_free(call);
        return instruction(insn, values);
      }
      default: islu::fail("unexpected AST node");
    }
  }

  StmtPtr instruction(const Instruction& insn, const std::map<std::string, Expr>& values) {
    if (insn.kind == Instruction::Barrier) return make_barrier();
    if (insn.kind == Instruction::NoOp) return make_block({});
    StmtPtr s = make_assign(insn.id, simplify(substitute(insn.lhs, values)), simplify(substitute(insn.rhs, values)), assignment_op(insn));
    if (!insn.predicates.empty()) {
      Expr c;
      for (auto& p : insn.predicates) {
        Expr q = simplify(substitute(p, values));
        c = c.defined() ? make_binary(BinOp::And, c, q, types::boolean) : q;
      }
      s = make_predicated(c, s, insn.id);  // (its reads are checked as the instruction's)
    }
    return s;
  }

  const LoopKernel& k_;
  const Linearization& L_;
  const HardwareAxes& hw_;
  std::map<std::string, int> index_;
  std::vector<isl::set> domains_;
};

}  // namespace

StmtPtr build_loop_nest(const LoopKernel& k, const Linearization& L, const HardwareAxes& hw) {
  return LoopNestBuilder(k, L, hw).run();
}

}  // namespace loom::codegen
