// lower_to_llvm: a GeneratedKernel as an LLVM module. The entry function
//   void NAME(void** args, int64 first_block, int64 end_block)
// unpacks the arguments (args[i] points at argument i's value, as CUDA's
// kernel parameters do) and runs blocks [first_block, end_block) of the grid.
// In each block the body runs with GPU semantics: each maximal barrier-free
// region becomes a loop nest over the block's threads (local inames), loops
// and ifs that contain barriers run once per block (their bounds must not
// depend on the thread; those around warp reductions only may, and each
// thread runs them for itself), and when the kernel has barriers every private
// temporary has one slot per thread, so values survive from region to region.
#include "lowering.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <functional>
#include <optional>
#include <set>

#include "loom/constraints.h"
#include "loom/preprocess.h"

namespace loom::cpu {

namespace {

using llvm::Value;

class Lowering {
 public:
  Lowering(const GeneratedKernel& g, llvm::LLVMContext& ctx, const std::string& name)
      : g_(g), k_(g.kernel), ctx_(ctx), b_(ctx), name_(name) {
    module_ = std::make_unique<llvm::Module>(name, ctx);
    barriers_ = has_sync(g.body);  // private values live across barriers and collectives
    threads_ = g.block[0] * g.block[1] * g.block[2];
  }

  std::unique_ptr<llvm::Module> run() {
    build_body_function();
    build_entry_function();
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*module_, &os))
      throw KernelError("kernel '" + k_.name + "': internal error, invalid LLVM IR: " + os.str());
    return std::move(module_);
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw KernelError("kernel '" + k_.name + "' (cpu target): " + why); }

  // ---- types ----
  llvm::Type* reg_type(Type t) const {
    if (t.lanes != 1) fail("vector types are not supported yet");
    switch (t.kind) {
      case ScalarKind::Bool: return b_.getInt1Ty();
      case ScalarKind::Int8: case ScalarKind::UInt8: return b_.getInt8Ty();
      case ScalarKind::Int16: case ScalarKind::UInt16: return b_.getInt16Ty();
      case ScalarKind::Int32: case ScalarKind::UInt32: return b_.getInt32Ty();
      case ScalarKind::Int64: case ScalarKind::UInt64: return b_.getInt64Ty();
      case ScalarKind::Float16: return b_.getHalfTy();
      case ScalarKind::BFloat16: return b_.getBFloatTy();
      case ScalarKind::Float32: return b_.getFloatTy();
      case ScalarKind::Float64: return b_.getDoubleTy();
      case ScalarKind::Unknown: break;
    }
    fail("untyped value (internal error)");
  }
  llvm::Type* mem_type(Type t) const { return t.is_bool() ? b_.getInt8Ty() : reg_type(t); }
  llvm::Type* index_type() const { return reg_type(k_.options.index_dtype); }

  Value* to_mem(Value* v, Type t) { return t.is_bool() ? b_.CreateZExt(v, b_.getInt8Ty()) : v; }
  Value* from_mem(Value* v, Type t) { return t.is_bool() ? b_.CreateICmpNE(v, b_.getInt8(0)) : v; }

  // ---- variables ----
  struct Slot {
    Value* ptr = nullptr;    // alloca (or pointer) holding the value(s)
    Value* value = nullptr;  // or an SSA value (parameters)
    Type type;
    int64_t size = 1;        // elements per thread (temporary arrays)
    bool per_thread = false;
  };

  llvm::AllocaInst* entry_alloca(llvm::Type* t, int64_t count, const std::string& name) {
    llvm::IRBuilder<> eb(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    return eb.CreateAlloca(t, count == 1 ? nullptr : eb.getInt64(uint64_t(count)), name);
  }

  Value* thread_offset(const Slot& s) {
    if (!s.per_thread) return nullptr;
    return b_.CreateMul(b_.CreateLoad(b_.getInt64Ty(), tid_), b_.getInt64(uint64_t(s.size)));
  }

  Value* load_var(const std::string& n) {
    auto it = vars_.find(n);
    if (it == vars_.end()) fail("no value for '" + n + "'");
    const Slot& s = it->second;
    if (s.value) return s.value;
    Value* p = s.ptr;
    if (Value* off = thread_offset(s)) p = b_.CreateGEP(mem_type(s.type), p, off);
    return from_mem(b_.CreateLoad(mem_type(s.type), p, n), s.type);
  }

  // A loop variable that is not an iname (isl's own, in some slabs) gets a slot when first met.
  void ensure_loop_var(const std::string& n) {
    if (!vars_.count(n)) vars_[n] = Slot{entry_alloca(index_type(), 1, n), nullptr, k_.options.index_dtype};
  }

  void store_var(const std::string& n, Value* v) {
    const Slot& s = vars_.at(n);
    Value* p = s.ptr;
    if (Value* off = thread_offset(s)) p = b_.CreateGEP(mem_type(s.type), p, off);
    b_.CreateStore(to_mem(v, s.type), p);
  }

  // ---- the body function: typed parameters, noalias pointers ----
  void build_body_function() {
    std::vector<llvm::Type*> params;
    for (auto& a : k_.arguments) params.push_back(a.kind == Argument::Array ? (llvm::Type*)b_.getPtrTy() : reg_type(a.dtype));
    params.push_back(b_.getInt64Ty());
    params.push_back(b_.getInt64Ty());
    params.push_back(b_.getPtrTy());  // the bounds record (BoundsRecord in lowering.h)
    auto* ft = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    fn_ = llvm::Function::Create(ft, llvm::Function::InternalLinkage, name_ + "_body", module_.get());
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry);
    bounds_record_ = fn_->getArg(unsigned(k_.arguments.size() + 2));
    size_t i = 0;
    for (auto& a : k_.arguments) {
      llvm::Argument* arg = fn_->getArg(unsigned(i++));
      arg->setName(a.name);
      Slot s;
      s.type = a.dtype;
      if (a.kind == Argument::Array) {
        arg->addAttr(llvm::Attribute::NoAlias);
        arrays_[a.name] = {arg, a.dtype, a.shape};
      } else {
        s.value = arg;
        vars_[a.name] = s;
      }
    }
    Value* first = fn_->getArg(unsigned(i));
    Value* end = fn_->getArg(unsigned(i + 1));
    tid_ = entry_alloca(b_.getInt64Ty(), 1, "tid");
    b_.CreateStore(b_.getInt64(0), tid_);
    for (auto& n : k_.all_inames()) vars_[n] = Slot{entry_alloca(index_type(), 1, n), nullptr, k_.options.index_dtype};
    for (auto& [n, t] : k_.temporaries) {
      int64_t size = 1;
      for (auto& d : t.shape) size *= eval_int(d, {});
      bool per_thread = barriers_ && t.space != AddressSpace::Local && threads_ > 1;
      int64_t count = size * (per_thread ? threads_ : 1);
      Value* p = entry_alloca(mem_type(t.dtype), count, n);
      if (t.shape.empty()) vars_[n] = Slot{p, nullptr, t.dtype, 1, per_thread};
      else {
        arrays_[n] = {p, t.dtype, t.shape};
        temp_arrays_[n] = Slot{p, nullptr, t.dtype, size, per_thread};
      }
    }
    // the blocks of this call: the first block's coordinates once, then
    // stepped (x fastest) from block to block. (A division by the grid's
    // runtime sizes in every block let LLVM 19's loop vectorizer hoist a
    // udiv by its own, wrong, rewriting of a size out of a stride-versioned
    // branch: a division by zero in a right-looking Cholesky's update.)
    Value* grid_x = b_.CreateSExt(expr(g_.grid[0]), b_.getInt64Ty());
    Value* grid_y = b_.CreateSExt(expr(g_.grid[1]), b_.getInt64Ty());
    llvm::AllocaInst* blk = entry_alloca(b_.getInt64Ty(), 1, "block");
    llvm::AllocaInst* coord[3] = {entry_alloca(b_.getInt64Ty(), 1, "block_x"), entry_alloca(b_.getInt64Ty(), 1, "block_y"),
                                  entry_alloca(b_.getInt64Ty(), 1, "block_z")};
    b_.CreateStore(first, blk);
    {
      // (called with first < end only, so the grid's sizes are positive)
      auto* start = llvm::BasicBlock::Create(ctx_, "blocks", fn_);
      auto* none = llvm::BasicBlock::Create(ctx_, "no_blocks", fn_);
      b_.CreateCondBr(b_.CreateICmpSLT(first, end), start, none);
      b_.SetInsertPoint(none);
      b_.CreateRetVoid();
      b_.SetInsertPoint(start);
      Value* rest = b_.CreateUDiv(first, grid_x);
      b_.CreateStore(b_.CreateURem(first, grid_x), coord[0]);
      b_.CreateStore(b_.CreateURem(rest, grid_y), coord[1]);
      b_.CreateStore(b_.CreateUDiv(rest, grid_y), coord[2]);
    }
    loop(
        [&] { return b_.CreateICmpSLT(b_.CreateLoad(b_.getInt64Ty(), blk), end); },
        [&] {
          for (auto& h : g_.hardware_inames)
            if (h.tag.kind == InameTag::Group) {
              Value* c = b_.CreateLoad(b_.getInt64Ty(), coord[h.tag.axis]);
              store_var(h.name, b_.CreateAdd(expr(h.lower), b_.CreateTrunc(c, index_type())));
            }
          block_body(g_.body);
        },
        [&] {
          b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), blk), b_.getInt64(1)), blk);
          // x + 1, carried into y and z
          Value* x = b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), coord[0]), b_.getInt64(1));
          Value* wrap_x = b_.CreateICmpEQ(x, grid_x);
          Value* y = b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), coord[1]), b_.CreateZExt(wrap_x, b_.getInt64Ty()));
          Value* wrap_y = b_.CreateICmpEQ(y, grid_y);
          Value* z = b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), coord[2]), b_.CreateZExt(wrap_y, b_.getInt64Ty()));
          b_.CreateStore(b_.CreateSelect(wrap_x, b_.getInt64(0), x), coord[0]);
          b_.CreateStore(b_.CreateSelect(wrap_y, b_.getInt64(0), y), coord[1]);
          b_.CreateStore(z, coord[2]);
        });
    b_.CreateRetVoid();
  }

  void build_entry_function() {
    auto* ft = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto* f = llvm::Function::Create(ft, llvm::Function::ExternalLinkage, name_, module_.get());
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
    std::vector<Value*> call_args;
    for (size_t i = 0; i < k_.arguments.size(); ++i) {
      const Argument& a = k_.arguments[i];
      Value* slot = b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), f->getArg(0), b_.getInt64(i)));
      llvm::Type* t = a.kind == Argument::Array ? (llvm::Type*)b_.getPtrTy() : mem_type(a.dtype);
      Value* v = b_.CreateLoad(t, slot, a.name);
      if (a.kind == Argument::Value) v = from_mem(v, a.dtype);
      call_args.push_back(v);
    }
    call_args.push_back(f->getArg(1));
    call_args.push_back(f->getArg(2));
    call_args.push_back(b_.CreateLoad(b_.getPtrTy(), b_.CreateGEP(b_.getPtrTy(), f->getArg(0), b_.getInt64(k_.arguments.size()))));
    b_.CreateCall(fn_, call_args);
    b_.CreateRetVoid();
  }

  // ---- control flow helpers ----
  // keep_rolled: LLVM may not unroll it (a GPU schedule's unrolled or ILP
  // loop, which codegen kept as a loop on the CPU: see generate.cpp)
  void loop(const std::function<Value*()>& cond, const std::function<void()>& body, const std::function<void()>& step,
            bool keep_rolled = false) {
    auto* head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* bodyb = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    b_.CreateCondBr(cond(), bodyb, exit);
    b_.SetInsertPoint(bodyb);
    body();
    step();
    auto* back = b_.CreateBr(head);
    if (keep_rolled) {
      llvm::MDNode* disable = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
      llvm::MDNode* self = llvm::MDNode::getDistinct(ctx_, {nullptr, disable});
      self->replaceOperandWith(0, self);
      back->setMetadata(llvm::LLVMContext::MD_loop, self);
    }
    b_.SetInsertPoint(exit);
  }

  void if_then(Value* c, const std::function<void()>& then_f, const std::function<void()>& else_f) {
    auto* tb = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto* eb = else_f ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
    auto* join = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    b_.CreateCondBr(c, tb, eb ? eb : join);
    b_.SetInsertPoint(tb);
    then_f();
    b_.CreateBr(join);
    if (eb) {
      b_.SetInsertPoint(eb);
      else_f();
      b_.CreateBr(join);
    }
    b_.SetInsertPoint(join);
  }

  // ---- GPU semantics: regions between barriers run for every thread ----
  void thread_loops(const std::function<void()>& body) {
    std::vector<const HardwareIname*> locals;
    for (auto& h : g_.hardware_inames)
      if (h.tag.kind == InameTag::Local) locals.push_back(&h);
    if (threads_ == 1) {
      b_.CreateStore(b_.getInt64(0), tid_);
      for (auto* h : locals) store_var(h->name, expr(h->lower));
      guarded(body);
      return;
    }
    llvm::AllocaInst* t = entry_alloca(b_.getInt64Ty(), 1, "t");
    b_.CreateStore(b_.getInt64(0), t);
    int64_t bx = g_.block[0], by = g_.block[1];
    loop(
        [&] { return b_.CreateICmpSLT(b_.CreateLoad(b_.getInt64Ty(), t), b_.getInt64(uint64_t(threads_))); },
        [&] {
          Value* id = b_.CreateLoad(b_.getInt64Ty(), t);
          b_.CreateStore(id, tid_);
          Value* idx[3] = {b_.CreateURem(id, b_.getInt64(uint64_t(bx))),
                           b_.CreateURem(b_.CreateUDiv(id, b_.getInt64(uint64_t(bx))), b_.getInt64(uint64_t(by))),
                           b_.CreateUDiv(id, b_.getInt64(uint64_t(bx * by)))};
          for (auto* h : locals)
            store_var(h->name, b_.CreateAdd(expr(h->lower), b_.CreateTrunc(idx[h->tag.axis], index_type())));
          guarded(body);
        },
        [&] { b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), t), b_.getInt64(1)), t); });
  }

  // body under the conditions around the collectives being lowered that
  // differ from thread to thread (each thread tests them for itself).
  void guarded(const std::function<void()>& body) {
    if (thread_guards_.empty()) return body();
    Value* all = nullptr;
    for (auto& guard : thread_guards_) {
      Value* c = guard();
      all = all ? b_.CreateAnd(all, c) : c;
    }
    if_then(all, body, nullptr);
  }

  // A loop around collectives only (no barrier) whose bounds differ from
  // thread to thread (codegen's sync check proved each group of lanes
  // agrees): each thread has its own loop variable and a flag that says
  // whether it is still in the loop; the block runs the body while any
  // thread is, each thread region inside tested by the flag.
  void per_thread_loop(const Stmt& s) {
    auto saved = vars_.find(s.var) == vars_.end() ? std::optional<Slot>() : std::optional<Slot>(vars_.at(s.var));
    vars_[s.var] = Slot{entry_alloca(index_type(), threads_, s.var), nullptr, k_.options.index_dtype, 1, true};
    llvm::AllocaInst* in_loop = entry_alloca(b_.getInt8Ty(), threads_, s.var + "_in_loop");
    auto flag = [&] { return b_.CreateGEP(b_.getInt8Ty(), in_loop, b_.CreateLoad(b_.getInt64Ty(), tid_)); };
    auto test = [&] { b_.CreateStore(b_.CreateZExt(expr(s.cond), b_.getInt8Ty()), flag()); };
    auto outside = [&] { b_.CreateStore(b_.getInt8(0), flag()); };
    {  // every thread out first (the guards around keep some out of the loop), then those they let in test it
      auto around = std::move(thread_guards_);
      thread_guards_.clear();
      thread_loops(outside);
      thread_guards_ = std::move(around);
    }
    thread_loops([&] {
      store_var(s.var, expr(s.init));
      test();
    });
    auto any_in_loop = [&] {
      llvm::AllocaInst* any = entry_alloca(b_.getInt8Ty(), 1, s.var + "_any");
      llvm::AllocaInst* t = entry_alloca(b_.getInt64Ty(), 1, "t");
      b_.CreateStore(b_.getInt8(0), any);
      b_.CreateStore(b_.getInt64(0), t);
      loop([&] { return b_.CreateICmpSLT(b_.CreateLoad(b_.getInt64Ty(), t), b_.getInt64(uint64_t(threads_))); },
           [&] {
             Value* f = b_.CreateLoad(b_.getInt8Ty(), b_.CreateGEP(b_.getInt8Ty(), in_loop, b_.CreateLoad(b_.getInt64Ty(), t)));
             b_.CreateStore(b_.CreateOr(b_.CreateLoad(b_.getInt8Ty(), any), f), any);
           },
           [&] { b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt64Ty(), t), b_.getInt64(1)), t); });
      return b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), any), b_.getInt8(0));
    };
    loop(any_in_loop,
         [&] {
           thread_guards_.push_back([&] { return b_.CreateICmpNE(b_.CreateLoad(b_.getInt8Ty(), flag()), b_.getInt8(0)); });
           block_body(s.children[0]);
           thread_loops([&] {
             store_var(s.var, b_.CreateAdd(load_var(s.var), llvm::ConstantInt::get(index_type(), uint64_t(s.step))));
             test();
           });
           thread_guards_.pop_back();
         },
         [] {});
    if (saved) vars_[s.var] = *saved;
    else vars_.erase(s.var);
  }

  // The thread-dependent name e reads ("" when it reads none).
  std::string thread_dependence(const Expr& e) const {
    std::set<std::string> vars;
    collect_free_vars(e, vars);
    for (auto& v : vars) {
      bool local = false;
      for (auto& h : g_.hardware_inames) local |= h.name == v && h.tag.kind == InameTag::Local;
      if (local || (k_.find_temporary(v) && k_.find_temporary(v)->space != AddressSpace::Local)) return v;
    }
    return "";
  }

  void check_uniform(const Expr& e, const char* what) {
    std::string v = thread_dependence(e);
    if (!v.empty())
      fail(std::string("a barrier inside ") + what + " whose condition depends on the thread ('" + v +
           "'): every thread of a block must reach the same barriers");
  }


  // A warp reduction: every thread's value first, then each thread combines its group's.
  void collective(const StmtPtr& s) {
    const WarpReduce& w = *as_warp_reduce(s->rhs);
    Type t = w.value.type();
    llvm::AllocaInst* vals = entry_alloca(mem_type(t), threads_, "warp_values");
    thread_loops([&] {
      b_.CreateStore(to_mem(expr(w.value), t), b_.CreateGEP(mem_type(t), vals, b_.CreateLoad(b_.getInt64Ty(), tid_)));
    });
    thread_loops([&] {
      Value* tid = b_.CreateLoad(b_.getInt64Ty(), tid_);
      Value* base = b_.CreateSub(tid, b_.CreateURem(tid, b_.getInt64(uint64_t(w.width))));
      auto lane = [&](int64_t q) {
        return from_mem(b_.CreateLoad(mem_type(t), b_.CreateGEP(mem_type(t), vals, b_.CreateAdd(base, b_.getInt64(uint64_t(q))))), t);
      };
      Value* acc = lane(0);
      for (int64_t q = 1; q < w.width; ++q) {
        Value* x = lane(q);
        bool fl = t.is_float(), sg = t.is_signed_int();
        switch (w.op) {
          case ReduceOp::Sum: acc = fl ? b_.CreateFAdd(acc, x) : b_.CreateAdd(acc, x); break;
          case ReduceOp::Product: acc = fl ? b_.CreateFMul(acc, x) : b_.CreateMul(acc, x); break;
          case ReduceOp::Max: acc = b_.CreateSelect(fl ? b_.CreateFCmpOGT(x, acc) : sg ? b_.CreateICmpSGT(x, acc) : b_.CreateICmpUGT(x, acc), x, acc); break;
          case ReduceOp::Min: acc = b_.CreateSelect(fl ? b_.CreateFCmpOLT(x, acc) : sg ? b_.CreateICmpSLT(x, acc) : b_.CreateICmpULT(x, acc), x, acc); break;
          default: fail("internal: warp reduction operator");
        }
      }
      if (auto v = s->lhs.as<Var>()) store_var(v->name, acc);
      else b_.CreateStore(to_mem(acc, t), address(*s->lhs.as<Subscript>()));  // an ILP-privatized result
    });
  }

  void block_body(const StmtPtr& s) {
    if (!has_sync(s)) {
      thread_loops([&] { stmt(s); });
      return;
    }
    if (is_collective(*s)) return collective(s);
    switch (s->kind) {
      case Stmt::Barrier: return;  // the boundary between two regions
      case Stmt::Block: {
        std::vector<StmtPtr> run;
        auto flush = [&] {
          if (run.empty()) return;
          auto r = make_block(run);
          thread_loops([&] { stmt(r); });
          run.clear();
        };
        for (auto& c : s->children) {
          if (has_sync(c)) {
            flush();
            block_body(c);
          } else {
            run.push_back(c);
          }
        }
        flush();
        return;
      }
      case Stmt::For: {
        if ((!thread_dependence(s->init).empty() || !thread_dependence(s->cond).empty()) && !has_barrier(s) && threads_ > 1)
          return per_thread_loop(*s);
        check_uniform(s->init, "a loop");
        check_uniform(s->cond, "a loop");
        ensure_loop_var(s->var);
        store_var(s->var, expr(s->init));
        loop([&] { return expr(s->cond); }, [&] { block_body(s->children[0]); },
             [&] { store_var(s->var, b_.CreateAdd(load_var(s->var), llvm::ConstantInt::get(index_type(), uint64_t(s->step)))); });
        return;
      }
      case Stmt::If: {
        // Around collectives only (no barrier), a condition may differ
        // between groups of lanes (codegen's sync check proved each group
        // agrees): every thread region inside tests it for its own thread.
        if (!thread_dependence(s->cond).empty() && !has_barrier(s)) {
          for (size_t branch = 0; branch < s->children.size(); ++branch) {
            thread_guards_.push_back([this, st = s.get(), branch] {
              Value* c = condition(*st);
              return branch == 1 ? b_.CreateNot(c) : c;
            });
            block_body(s->children[branch]);
            thread_guards_.pop_back();
          }
          return;
        }
        check_uniform(s->cond, "an if");
        if_then(condition(*s), [&] { block_body(s->children[0]); },
                s->children.size() > 1 ? std::function<void()>([&] { block_body(s->children[1]); }) : nullptr);
        return;
      }
      case Stmt::Assign: return;  // unreachable: an assignment has no barrier
    }
  }

  // ---- statements within a thread ----
  void stmt(const StmtPtr& s) {
    switch (s->kind) {
      case Stmt::Block:
        for (auto& c : s->children) stmt(c);
        return;
      case Stmt::For: {
        if (!s->vector_accesses.empty()) {
          vector_loop(*s);
          return;
        }
        ensure_loop_var(s->var);
        store_var(s->var, expr(s->init));
        loop([&] { return expr(s->cond); }, [&] { stmt(s->children[0]); },
             [&] {
               store_var(s->var, b_.CreateAdd(load_var(s->var), llvm::ConstantInt::get(index_type(), uint64_t(s->step)), "",
                                              false, k_.options.index_dtype.is_signed_int()));
             },
             g_.rolled_loops.count(s->var) > 0);
        return;
      }
      case Stmt::If:
        if_then(condition(*s), [&] { stmt(s->children[0]); },
                s->children.size() > 1 ? std::function<void()>([&] { stmt(s->children[1]); }) : nullptr);
        return;
      case Stmt::Assign: {
        if (is_collective(*s)) fail("internal: a warp reduction inside one thread's code");
        current_insn_ = s->insn_id;
        const Instruction* atomic = atomic_instruction(k_, s->insn_id);
        Value* v = atomic ? nullptr : expr(s->rhs);
        if (auto var = s->lhs.as<Var>()) {
          store_var(var->name, v);
          return;
        }
        auto sub = s->lhs.as<Subscript>();
        if (atomic) {  // blocks run on several worker threads
          Value* inc = expr(atomic_increment(*atomic));
          Type t = sub->type;
          b_.CreateAtomicRMW(t.is_float() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add, address(*sub), inc,
                             llvm::Align(size_t(t.bytes())), llvm::AtomicOrdering::Monotonic);
          return;
        }
        b_.CreateStore(to_mem(v, sub->type), address(*sub));
        return;
      }
      case Stmt::Barrier: fail("internal: barrier inside a thread region");
    }
  }

  // A vec loop with vector accesses, with the CUDA target's meaning (so the
  // CPU oracle checks it): assignment by assignment, each vector access
  // loaded for all lanes first, then the lanes in order with those values,
  // then a vector store's lanes.
  void vector_loop(const Stmt& loop) { vector_assignments(loop, loop.children[0]); }

  void vector_assignments(const Stmt& loop, const StmtPtr& s) {
    if (s->kind == Stmt::Block) {
      for (auto& c : s->children) vector_assignments(loop, c);
      return;
    }
    const Stmt* a = s.get();
    current_insn_ = a->insn_id;
    Type it = k_.options.index_dtype;
    int64_t lo = loop.init.as<IntImm>()->value;
    auto at_lane = [&](const Expr& e, int64_t l) { return simplify(substitute(e, {{loop.var, make_int(lo + l, it)}})); };
    std::vector<std::pair<Expr, Expr>> placeholders;  // access -> its lane's value, by name
    std::vector<std::string> names;
    bool store = false;
    // `x = c ? v[...] : value` with v[...] a vector access: the vector is
    // loaded under the first lane's c (the lanes agree on it), as on CUDA
    const Select* guarded = guarded_vector_load(loop, a->rhs);
    Expr rhs_of_lanes = guarded ? guarded->t : a->rhs;
    for (size_t i = 0; i < loop.vector_accesses.size(); ++i) {
      const Expr& acc = loop.vector_accesses[i];
      bool read = !replace_subscripts(rhs_of_lanes, {{acc, make_int(0)}}).same_as(rhs_of_lanes);
      if (acc.same_as(a->lhs)) store = true;
      if (!read) continue;  // (another assignment's, or only stored: nothing to load)
      std::string name = "loom_vector_" + std::to_string(i) + "_";
      placeholders.emplace_back(acc, make_var(name, acc.type()));
      for (int64_t l = 0; l < loop.vector_lanes; ++l) {
        Expr value = at_lane(acc, l);
        if (guarded && acc.same_as(guarded->t))
          value = make_select(at_lane(guarded->cond, 0), value, make_cast(acc.type(), guarded->f), acc.type());
        vars_[name + std::to_string(l)] = Slot{nullptr, expr(value), acc.type()};
      }
      names.push_back(name);
    }
    std::vector<Value*> stored;
    for (int64_t l = 0; l < loop.vector_lanes; ++l) {
      std::map<std::string, Expr> lane_names;
      for (auto& [acc, var] : placeholders) {
        const std::string& n = var.as<Var>()->name;
        lane_names[n] = make_var(n + std::to_string(l), acc.type());
      }
      Expr rhs = substitute(at_lane(replace_subscripts(rhs_of_lanes, placeholders), l), lane_names);
      Value* v = expr(rhs);
      if (store) {
        stored.push_back(v);
      } else if (auto var = a->lhs.as<Var>()) {
        store_var(var->name, v);
      } else {
        Expr lhs = at_lane(a->lhs, l);
        b_.CreateStore(to_mem(v, lhs.type()), address(*lhs.as<Subscript>()));
      }
    }
    for (int64_t l = 0; l < int64_t(stored.size()); ++l) {
      Expr lhs = at_lane(a->lhs, l);
      b_.CreateStore(to_mem(stored[size_t(l)], lhs.type()), address(*lhs.as<Subscript>()));
    }
    for (auto& n : names)
      for (int64_t l = 0; l < loop.vector_lanes; ++l) vars_.erase(n + std::to_string(l));
  }

  // ---- expressions ----
  struct ArrayInfo {
    Value* base;
    Type dtype;
    std::vector<Expr> shape;
  };

  Value* address(const Subscript& s) {
    auto it = arrays_.find(s.name);
    if (it == arrays_.end()) fail("unknown array '" + s.name + "'");
    const ArrayInfo& a = it->second;
    Value* off = b_.CreateSExt(b_.CreateSExtOrTrunc(expr(k_.flat_index(s)), index_type()), b_.getInt64Ty());
    auto t = temp_arrays_.find(s.name);
    if (t != temp_arrays_.end() && t->second.per_thread) off = b_.CreateAdd(off, thread_offset(t->second));
    Value* base = a.base;
    if (int arg = unproven_argument_access(s); arg >= 0) checked_offset(s, arg, off, base);
    return b_.CreateGEP(mem_type(a.dtype), base, off);
  }

  int unproven_argument_access(const Subscript& s) const { return unproven_.argument(s, current_insn_); }

  // An if's condition, its reads checked as its instruction's (an
  // instruction's predicates) or, naming none, as any instruction's.
  Value* condition(const Stmt& s) {
    std::string saved = current_insn_;
    current_insn_ = s.insn_id;
    Value* v = expr(s.cond);
    current_insn_ = saved;
    return v;
  }

  // Bounds-checked access: an offset outside [0, extent) is recorded in the
  // bounds record (access, index) and redirected to a scratch buffer, so the
  // kernel finishes without touching memory outside the array; CpuKernel::call
  // then raises the error.
  void checked_offset(const Subscript& s, int arg, Value*& off, Value*& base) {
    Value* record = bounds_record_;
    Value* extent = b_.CreateLoad(b_.getInt64Ty(), b_.CreateGEP(b_.getInt64Ty(), record, b_.getInt64(BoundsRecord::kExtents + arg)));
    Value* ok = b_.CreateICmpULT(off, extent);
    int64_t id = int64_t(checked_accesses_.size());
    checked_accesses_.push_back({current_insn_, s.name});
    auto* bad = llvm::BasicBlock::Create(ctx_, "out_of_bounds", fn_);
    auto* cont = llvm::BasicBlock::Create(ctx_, "in_bounds", fn_);
    b_.CreateCondBr(ok, cont, bad, llvm::MDBuilder(ctx_).createBranchWeights(1000000, 1));
    b_.SetInsertPoint(bad);
    auto store = [&](int slot, Value* v) {  // several blocks' threads may fail at once
      auto* st = b_.CreateStore(v, b_.CreateGEP(b_.getInt64Ty(), record, b_.getInt64(slot)));
      st->setAtomic(llvm::AtomicOrdering::Monotonic);
      st->setAlignment(llvm::Align(8));
    };
    store(BoundsRecord::kAccess, b_.getInt64(id));
    store(BoundsRecord::kIndex, off);
    store(BoundsRecord::kFailed, b_.getInt64(1));
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
    if (!scratch_) {
      auto* ty = llvm::ArrayType::get(b_.getInt8Ty(), 256);
      auto* g = new llvm::GlobalVariable(*module_, ty, false, llvm::GlobalValue::InternalLinkage,
                                         llvm::ConstantAggregateZero::get(ty), name_ + "_oob_scratch");
      g->setAlignment(llvm::Align(64));
      scratch_ = g;
    }
    off = b_.CreateSelect(ok, off, b_.getInt64(0));
    base = b_.CreateSelect(ok, base, scratch_);
  }

  Value* expr(const Expr& e) {
    Type t = e.type();
    switch (e.kind()) {
      case ExprKind::Int:
        if (t.is_float()) return llvm::ConstantFP::get(reg_type(t), double(e.as<IntImm>()->value));
        return llvm::ConstantInt::get(reg_type(t), uint64_t(e.as<IntImm>()->value), t.is_signed_int());
      case ExprKind::Float: return llvm::ConstantFP::get(reg_type(t), e.as<FloatImm>()->value);
      case ExprKind::Var: return load_var(e.as<Var>()->name);
      case ExprKind::Subscript: {
        auto s = e.as<Subscript>();
        return from_mem(b_.CreateLoad(mem_type(t), address(*s)), t);
      }
      case ExprKind::Cast: return cast(expr(e.as<Cast>()->value), e.as<Cast>()->value.type(), t);
      case ExprKind::Unary: {
        auto u = e.as<Unary>();
        Value* a = expr(u->a);
        if (u->op == UnOp::Not) return b_.CreateNot(a);
        if (u->op == UnOp::BitNot) return b_.CreateNot(a);
        return t.is_float() ? b_.CreateFNeg(a) : b_.CreateNeg(a, "", t.is_signed_int());
      }
      case ExprKind::Select: {
        auto s = e.as<Select>();
        return branch_value(expr(s->cond), [&] { return expr(s->t); }, [&] { return expr(s->f); }, reg_type(t));
      }
      case ExprKind::Call: return call(*e.as<Call>(), t);
      case ExprKind::Binary: return binary(*e.as<Binary>(), t);
      case ExprKind::Reduce: fail("internal: unrealized reduction");
      case ExprKind::WarpReduce: fail("internal: a warp reduction inside an expression (it is a statement of its own)");
    }
    fail("unsupported expression");
  }

  // C's ?: (and && ||): only the taken side is evaluated, so a guard keeps
  // an out-of-bounds access from happening.
  Value* branch_value(Value* c, const std::function<Value*()>& tf, const std::function<Value*()>& ff, llvm::Type* ty) {
    auto* tb = llvm::BasicBlock::Create(ctx_, "sel.t", fn_);
    auto* fb = llvm::BasicBlock::Create(ctx_, "sel.f", fn_);
    auto* join = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
    b_.CreateCondBr(c, tb, fb);
    b_.SetInsertPoint(tb);
    Value* tv = tf();
    auto* tend = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(fb);
    Value* fv = ff();
    auto* fend = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode* phi = b_.CreatePHI(ty, 2);
    phi->addIncoming(tv, tend);
    phi->addIncoming(fv, fend);
    return phi;
  }

  Value* cast(Value* v, Type from, Type to) {
    if (from == to) return v;
    llvm::Type* tt = reg_type(to);
    if (to.is_bool()) {
      if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0));
      return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
    }
    if (from.is_bool()) return to.is_float() ? b_.CreateUIToFP(v, tt) : b_.CreateZExt(v, tt);
    if (from.is_float() && to.is_float()) {
      // float64 -> float16/bfloat16 goes through float32, as in the interpreter: a direct
      // conversion (AVX512-FP16 has one) could round differently, so results would depend on the CPU
      if (from.kind == ScalarKind::Float64 && to.bytes() == 2) v = b_.CreateFPTrunc(v, b_.getFloatTy());
      // float16 <-> bfloat16: neither holds the other, so through float32 (exact), then rounded once
      if (from.bytes() == 2 && to.bytes() == 2) v = b_.CreateFPExt(v, b_.getFloatTy());
      return b_.CreateFPCast(v, tt);
    }
    // toward zero, clamped to the type's range, NaN to 0: CUDA's cvt.rzi (LLVM's plain fptosi/fptoui are poison there)
    if (from.is_float())
      return b_.CreateIntrinsic(to.is_signed_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat, {tt, v->getType()}, {v});
    if (to.is_float()) return from.is_signed_int() ? b_.CreateSIToFP(v, tt) : b_.CreateUIToFP(v, tt);
    return b_.CreateIntCast(v, tt, from.is_signed_int());
  }

  Value* intrinsic(llvm::Intrinsic::ID id, std::vector<Value*> args) {
    return b_.CreateIntrinsic(id, {args[0]->getType()}, args);
  }

  Value* libm(const std::string& base, Type t, std::vector<Value*> args) {
    std::string n = t.kind == ScalarKind::Float32 ? base + "f" : base;
    if (t.kind != ScalarKind::Float32 && t.kind != ScalarKind::Float64) fail(base + " on " + t.name() + " is not supported yet");
    std::vector<llvm::Type*> ts(args.size(), reg_type(t));
    auto callee = module_->getOrInsertFunction(n, llvm::FunctionType::get(reg_type(t), ts, false));
    return b_.CreateCall(callee, args);
  }

  Value* call(const Call& c, Type t) {
    std::vector<Value*> a;
    for (auto& x : c.args) a.push_back(expr(x));
    const std::string& n = c.name;
    if (!t.is_float()) {
      bool sgn = t.is_signed_int();
      if (n == "abs" || n == "fabs") return sgn ? intrinsic(llvm::Intrinsic::abs, {a[0], b_.getFalse()}) : a[0];
      if (n == "min") return intrinsic(sgn ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a);
      if (n == "max") return intrinsic(sgn ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a);
      fail("integer function '" + n + "'");
    }
    using I = llvm::Intrinsic::ID;
    static const std::pair<const char*, I> direct[] = {
        {"sqrt", llvm::Intrinsic::sqrt},   {"exp", llvm::Intrinsic::exp},     {"exp2", llvm::Intrinsic::exp2},
        {"log", llvm::Intrinsic::log},     {"log2", llvm::Intrinsic::log2},   {"log10", llvm::Intrinsic::log10},
        {"sin", llvm::Intrinsic::sin},     {"cos", llvm::Intrinsic::cos},     {"floor", llvm::Intrinsic::floor},
        {"ceil", llvm::Intrinsic::ceil},   {"round", llvm::Intrinsic::round}, {"trunc", llvm::Intrinsic::trunc},
        {"fabs", llvm::Intrinsic::fabs},   {"abs", llvm::Intrinsic::fabs},    {"pow", llvm::Intrinsic::pow},
        {"min", llvm::Intrinsic::minnum},  {"max", llvm::Intrinsic::maxnum},  {"fmin", llvm::Intrinsic::minnum},
        {"fmax", llvm::Intrinsic::maxnum}, {"fma", llvm::Intrinsic::fma}};
    for (auto& [name, id] : direct)
      if (n == name) return intrinsic(id, a);
    if (n == "rsqrt") return b_.CreateFDiv(llvm::ConstantFP::get(reg_type(t), 1.0), intrinsic(llvm::Intrinsic::sqrt, a));
    if (n == "fmod") return b_.CreateFRem(a[0], a[1]);
    if (n == "round_tf32" || n == "trunc_tf32") {  // (as loom::round_tf32, trunc_tf32: the bits of the float, rounded or cut at bit 13)
      Value* f = t.kind == ScalarKind::Float32 ? a[0] : b_.CreateFPCast(a[0], b_.getFloatTy());
      Value* u = b_.CreateBitCast(f, b_.getInt32Ty());
      Value* special = b_.CreateICmpEQ(b_.CreateAnd(u, b_.getInt32(0x7f800000u)), b_.getInt32(0x7f800000u));
      Value* r = b_.CreateAnd(n == "round_tf32" ? b_.CreateAdd(u, b_.getInt32(0x1000u)) : u, b_.getInt32(0xffffe000u));
      Value* rf = b_.CreateBitCast(b_.CreateSelect(special, u, r), b_.getFloatTy());
      return t.kind == ScalarKind::Float32 ? rf : b_.CreateFPCast(rf, reg_type(t));
    }
    for (const char* m : {"tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "erf", "expm1", "log1p", "atan2"})
      if (n == m) return libm(m, t, a);
    fail("function '" + n + "'");
  }

  Value* ipow(Value* base, Value* exp) {
    // repeated squaring in a loop
    llvm::Type* ty = base->getType();
    llvm::AllocaInst* r = entry_alloca(ty, 1, "pow.r");
    llvm::AllocaInst* bb = entry_alloca(ty, 1, "pow.b");
    llvm::AllocaInst* ee = entry_alloca(ty, 1, "pow.e");
    b_.CreateStore(llvm::ConstantInt::get(ty, 1), r);
    b_.CreateStore(base, bb);
    b_.CreateStore(exp, ee);
    loop([&] { return b_.CreateICmpSGT(b_.CreateLoad(ty, ee), llvm::ConstantInt::get(ty, 0)); },
         [&] {
           Value* e = b_.CreateLoad(ty, ee);
           Value* odd = b_.CreateICmpNE(b_.CreateAnd(e, llvm::ConstantInt::get(ty, 1)), llvm::ConstantInt::get(ty, 0));
           Value* cur = b_.CreateLoad(ty, r);
           b_.CreateStore(b_.CreateSelect(odd, b_.CreateMul(cur, b_.CreateLoad(ty, bb)), cur), r);
         },
         [&] {
           b_.CreateStore(b_.CreateLShr(b_.CreateLoad(ty, ee), llvm::ConstantInt::get(ty, 1)), ee);
           Value* v = b_.CreateLoad(ty, bb);
           b_.CreateStore(b_.CreateMul(v, v), bb);
         });
    return b_.CreateLoad(ty, r);
  }

  Value* binary(const Binary& n, Type t) {
    if (n.op == BinOp::And || n.op == BinOp::Or) {
      Value* a = expr(n.a);
      bool is_and = n.op == BinOp::And;
      return branch_value(a, [&] { return is_and ? expr(n.b) : (Value*)b_.getTrue(); },
                          [&] { return is_and ? (Value*)b_.getFalse() : expr(n.b); }, b_.getInt1Ty());
    }
    Value* a = expr(n.a);
    Value* b = expr(n.b);
    Type ot = n.a.type();
    if (ot.is_float()) {
      switch (n.op) {
        case BinOp::Add: return b_.CreateFAdd(a, b);
        case BinOp::Sub: return b_.CreateFSub(a, b);
        case BinOp::Mul: return b_.CreateFMul(a, b);
        case BinOp::Div: return b_.CreateFDiv(a, b);
        case BinOp::FloorDiv: return intrinsic(llvm::Intrinsic::floor, {b_.CreateFDiv(a, b)});
        case BinOp::Mod: return b_.CreateFSub(a, b_.CreateFMul(b, intrinsic(llvm::Intrinsic::floor, {b_.CreateFDiv(a, b)})));
        case BinOp::Pow: return intrinsic(llvm::Intrinsic::pow, {a, b});
        case BinOp::Lt: return b_.CreateFCmpOLT(a, b);
        case BinOp::Le: return b_.CreateFCmpOLE(a, b);
        case BinOp::Gt: return b_.CreateFCmpOGT(a, b);
        case BinOp::Ge: return b_.CreateFCmpOGE(a, b);
        case BinOp::Eq: return b_.CreateFCmpOEQ(a, b);
        case BinOp::Ne: return b_.CreateFCmpUNE(a, b);
        default: fail(std::string("float operator ") + to_string(n.op));
      }
    }
    bool sgn = ot.is_signed_int();
    switch (n.op) {
      case BinOp::Add: return b_.CreateAdd(a, b, "", false, sgn);
      case BinOp::Sub: return b_.CreateSub(a, b, "", false, sgn);
      case BinOp::Mul: return b_.CreateMul(a, b, "", false, sgn);
      case BinOp::TruncDiv: return sgn ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
      case BinOp::TruncRem: return sgn ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
      case BinOp::FloorDiv: {
        if (!sgn) return b_.CreateUDiv(a, b);
        Value* q = b_.CreateSDiv(a, b);
        Value* r = b_.CreateSRem(a, b);
        Value* zero = llvm::ConstantInt::get(a->getType(), 0);
        Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
        return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
      }
      case BinOp::Mod: {
        if (!sgn) return b_.CreateURem(a, b);
        Value* r = b_.CreateSRem(a, b);
        Value* zero = llvm::ConstantInt::get(a->getType(), 0);
        Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
        return b_.CreateSelect(adjust, b_.CreateAdd(r, b), r);
      }
      case BinOp::Pow: return ipow(a, b);
      case BinOp::Lt: return sgn ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case BinOp::Le: return sgn ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
      case BinOp::Gt: return sgn ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
      case BinOp::Ge: return sgn ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
      case BinOp::Eq: return b_.CreateICmpEQ(a, b);
      case BinOp::Ne: return b_.CreateICmpNE(a, b);
      case BinOp::BitAnd: return b_.CreateAnd(a, b);
      case BinOp::BitOr: return b_.CreateOr(a, b);
      case BinOp::BitXor: return b_.CreateXor(a, b);
      case BinOp::Shl: return b_.CreateShl(a, b);
      case BinOp::Shr: return sgn ? b_.CreateAShr(a, b) : b_.CreateLShr(a, b);
      default: fail(std::string("integer operator ") + to_string(n.op));
    }
  }

  const GeneratedKernel& g_;
  const LoopKernel& k_;
  llvm::LLVMContext& ctx_;
  mutable llvm::IRBuilder<> b_;
  std::string name_;
  std::unique_ptr<llvm::Module> module_;
  llvm::Function* fn_ = nullptr;
  llvm::AllocaInst* tid_ = nullptr;
  bool barriers_ = false;
  int64_t threads_ = 1;
  std::map<std::string, Slot> vars_;
  std::map<std::string, ArrayInfo> arrays_;
  std::map<std::string, Slot> temp_arrays_;
  // bounds-checked accesses (checked_offset)
  Value* bounds_record_ = nullptr;
  llvm::GlobalVariable* scratch_ = nullptr;
  std::string current_insn_;
  std::vector<std::function<Value*()>> thread_guards_;  // see guarded(): a thread's conditions (ifs, per_thread_loop's flags)
  UnprovenAccesses unproven_{g_};  // which accesses are checked (loom/codegen.h)

 public:
  std::vector<CheckedAccess> checked_accesses_;
};

}  // namespace

std::unique_ptr<llvm::Module> lower_to_llvm(const GeneratedKernel& g, llvm::LLVMContext& ctx, const std::string& name,
                                            std::vector<CheckedAccess>* checked) {
  Lowering l(g, ctx, name);
  auto m = l.run();
  if (checked) *checked = l.checked_accesses_;
  return m;
}

}  // namespace loom::cpu
