// CpuKernel: lowers a GeneratedKernel to LLVM IR, optimizes it at O3 for the
// target CPU, and JIT-compiles it with one process-wide ORC LLJIT. The target
// CPU is the host's (its own features, so the loop vectorizer uses AVX where
// there is AVX) unless LOOM_CPU names an LLVM CPU (x86-64, x86-64-v2, ...),
// which pins it so tests can prove that no path depends on the host's
// features. Every libcall the backend may emit is defined by Loom
// (runtime_helpers.cpp). Compiled functions are cached by the kernel's
// content. A call binds arguments by name and spreads the grid's blocks over
// threads.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "loom/cpu.h"
#include "lowering.h"
#include "runtime_helpers.h"

namespace loom::cpu {

namespace {

using EntryFn = void (*)(void**, int64_t, int64_t);

struct Compiled {
  EntryFn fn = nullptr;
  std::string ir;
  std::vector<CheckedAccess> checked;  // the accesses the bounds record's ids name
};

class Jit {
 public:
  static Jit& get() {
    static Jit j;
    return j;
  }

  // Compiles (or finds) the kernel; `key` identifies its content.
  std::shared_ptr<Compiled> compile(const GeneratedKernel& g, const std::string& key, CompileStats& st) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      st.cached = true;
      return it->second;
    }
    using Clock = std::chrono::steady_clock;
    auto t0 = Clock::now();
    auto ctx = std::make_unique<llvm::LLVMContext>();
    std::string name = "loom_" + g.kernel.name + "_" + std::to_string(counter_++);
    auto out = std::make_shared<Compiled>();
    std::unique_ptr<llvm::Module> m = lower_to_llvm(g, *ctx, name, &out->checked);
    m->setDataLayout(tm_->createDataLayout());
    m->setTargetTriple(tm_->getTargetTriple().str());
    auto t1 = Clock::now();
    optimize(*m);
    {
      llvm::raw_string_ostream os(out->ir);
      m->print(os, nullptr);
    }
    auto t2 = Clock::now();
    check(jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))));
    auto sym = jit_->lookup(name);
    if (!sym) throw KernelError("kernel '" + g.kernel.name + "': JIT lookup failed: " + llvm::toString(sym.takeError()));
    out->fn = sym->toPtr<EntryFn>();
    auto t3 = Clock::now();
    st.lower_seconds = std::chrono::duration<double>(t1 - t0).count();
    st.optimize_seconds = std::chrono::duration<double>(t2 - t1).count();
    st.jit_seconds = std::chrono::duration<double>(t3 - t2).count();
    cache_[key] = out;
    return out;
  }

 private:
  Jit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::orc::JITTargetMachineBuilder jtmb = target_machine_builder();
    jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    cpu_ = jtmb.getCPU();
    auto tm = jtmb.createTargetMachine();
    if (!tm) throw Error("LLVM: " + llvm::toString(tm.takeError()));
    tm_ = std::move(*tm);
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create();
    if (!jit) throw Error("LLVM LLJIT: " + llvm::toString(jit.takeError()));
    jit_ = std::move(*jit);
    // libm (tanhf, erf, ...) from the process
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
    if (!gen) throw Error("LLVM: " + llvm::toString(gen.takeError()));
    jit_->getMainJITDylib().addGenerator(std::move(*gen));
    // Loom's own definitions of the backend's libcalls come before the process's
    llvm::orc::MangleAndInterner mangle(jit_->getExecutionSession(), jit_->getDataLayout());
    check(define_runtime_symbols(jit_->getMainJITDylib(), mangle));
    auto hctx = std::make_unique<llvm::LLVMContext>();
    auto helpers = runtime_helper_module(*hctx);
    helpers->setDataLayout(jit_->getDataLayout());
    helpers->setTargetTriple(tm_->getTargetTriple().str());
    check(jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(helpers), std::move(hctx))));
  }

  // The host, or the CPU that LOOM_CPU names (refused if LLVM does not know it).
  static llvm::orc::JITTargetMachineBuilder target_machine_builder() {
    const char* pinned = std::getenv("LOOM_CPU");
    if (!pinned || !*pinned || std::string(pinned) == "host") {
      auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
      if (!jtmb) throw Error("LLVM cannot target this host: " + llvm::toString(jtmb.takeError()));
      return std::move(*jtmb);
    }
    llvm::Triple triple(llvm::sys::getProcessTriple());
    std::string err;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), err);
    if (!target) throw Error("LLVM cannot target " + triple.str() + ": " + err);
    // asked of a generic subtarget: one made for an unknown CPU prints a warning
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple.str(), "", ""));
    if (!sti || !sti->isCPUStringValid(pinned))
      throw Error(std::string("LOOM_CPU='") + pinned + "' is not a CPU LLVM knows for " + triple.str() +
                  " (examples: x86-64, x86-64-v2, x86-64-v3, x86-64-v4, skylake-avx512, znver3; or 'host')");
    llvm::orc::JITTargetMachineBuilder jtmb(triple);
    jtmb.setCPU(pinned);  // the CPU's own features only, none of the host's
    return jtmb;
  }

 public:
  const std::string& cpu() const { return cpu_; }

 private:

  static constexpr size_t kManyBlocks = 1024;  // basic blocks in the module (the examples: under 300)

  void optimize(llvm::Module& m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm_.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // O3's loop passes grow faster than the code with the number of loops (a
    // 256 x 16 fully unrolled reduction around a 4-iteration loop: 4096 loops,
    // 57000 blocks, over four minutes in ScalarEvolution; 600 unrolled copies
    // of a reduction loop: 8 s): beyond kManyBlocks basic blocks the module is
    // compiled unoptimized. The examples have under 300 (sgemm_any's 190000
    // instructions sit in 192 blocks).
    size_t blocks = 0;
    for (auto& f : m) blocks += f.size();
    llvm::ModulePassManager mpm = blocks > kManyBlocks ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0)
                                                       : pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(m, mam);
  }

  static void check(llvm::Error e) {
    if (e) throw Error("LLVM JIT: " + llvm::toString(std::move(e)));
  }

  std::mutex mu_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::unordered_map<std::string, std::shared_ptr<Compiled>> cache_;
  int counter_ = 0;
  std::string cpu_;
};

std::string content_key(const GeneratedKernel& g) {
  std::string key = g.kernel.str() + "\n" + to_string(g.body);
  for (int a = 0; a < 3; ++a) key += "|" + g.grid[a].str() + "x" + std::to_string(g.block[a]);
  for (auto& h : g.hardware_inames) key += "|" + h.name + "=" + h.tag.str() + "+" + h.lower.str();
  return key;
}

}  // namespace

struct CpuKernel::Impl {
  std::shared_ptr<Compiled> compiled;
  // a kernel with global barriers: one kernel per launch, run in order
  std::vector<std::unique_ptr<CpuKernel>> launches;
  std::string ir;  // theirs, one after the other
};

// (the CPU target model: matrix tiles run as their lane code, whatever instructions a GPU has)
CpuKernel::CpuKernel(const LoopKernel& k) : CpuKernel(generate(k, TargetInfo::cpu(""))) {}

CpuKernel::CpuKernel(GeneratedKernel g) : gen_(std::move(g)), impl_(std::make_shared<Impl>()) {
  if (gen_.is_program()) {
    for (auto& l : gen_.launches) {
      impl_->launches.push_back(std::make_unique<CpuKernel>(l));
      const CompileStats& s = impl_->launches.back()->stats();
      stats_.lower_seconds += s.lower_seconds;
      stats_.optimize_seconds += s.optimize_seconds;
      stats_.jit_seconds += s.jit_seconds;
      impl_->ir += "; launch " + std::to_string(impl_->launches.size()) + " of " + std::to_string(gen_.launches.size()) + "\n" +
                   impl_->launches.back()->ir();
    }
    return;
  }
  impl_->compiled = Jit::get().compile(gen_, content_key(gen_), stats_);
}

CpuKernel::~CpuKernel() = default;

std::string target_cpu() { return Jit::get().cpu(); }

std::vector<std::string> runtime_helpers() { return runtime_helper_names(); }

const std::string& CpuKernel::ir() const { return impl_->compiled ? impl_->compiled->ir : impl_->ir; }

void CpuKernel::call(const ArgMap& args, int threads) {
  const LoopKernel& k = gen_.kernel;
  auto params = bind_parameters(k, args);
  check_index_width(gen_, params);
  if (gen_.is_program()) {
    // the global temporaries for this call, then the launches in order
    ArgMap all = args;
    HostScratch scratch = bind_host_global_temporaries(gen_, params, all);
    for_each_program_launch(gen_, params, all, [&](size_t launch, const std::map<std::string, int64_t>&) {
      impl_->launches[launch]->call(all, threads);
    });
    return;
  }
  LaunchDims dims = launch_dims(gen_, params);
  if (dims.empty()) return;
  // args[i] points at argument i's value, as CUDA kernel parameters do
  std::vector<uint64_t> storage(k.arguments.size());
  std::vector<void*> ptrs(k.arguments.size() + 1);
  // the bounds record: extents of the array arguments, then what failed (lowering.h)
  std::vector<int64_t> record(BoundsRecord::kExtents + k.arguments.size(), 0);
  for (size_t i = 0; i < k.arguments.size(); ++i)
    if (k.arguments[i].kind == Argument::Array) record[BoundsRecord::kExtents + i] = storage_elements(k.arguments[i], params);
  ptrs[k.arguments.size()] = record.data();
  for (size_t i = 0; i < k.arguments.size(); ++i) {
    const Argument& a = k.arguments[i];
    if (a.kind == Argument::Array) {
      void* p = args.at(a.name).array.data;
      std::memcpy(&storage[i], &p, sizeof p);
    } else {
      auto pv = params.find(a.name);
      const ArgValue* v = args.count(a.name) ? &args.at(a.name) : nullptr;
      if (pv == params.end() && !v) throw ArgumentError("kernel '" + k.name + "': missing value for argument '" + a.name + "'");
      double f = pv != params.end() ? double(pv->second) : v->kind == ArgValue::Float ? v->f : double(v->i);
      int64_t n = pv != params.end() ? pv->second : v->kind == ArgValue::Float ? int64_t(v->f) : v->i;
      if (a.dtype.kind == ScalarKind::Float32) {
        float x = float(f);
        std::memcpy(&storage[i], &x, sizeof x);
      } else if (a.dtype.kind == ScalarKind::Float64) {
        std::memcpy(&storage[i], &f, sizeof f);
      } else if (a.dtype.is_float()) {
        throw ArgumentError("kernel '" + k.name + "': " + a.dtype.name() + " value arguments are not supported yet");
      } else {
        if (a.dtype.is_bool()) n = n != 0;
        std::memcpy(&storage[i], &n, size_t(a.dtype.bytes()));  // little-endian: the low bytes
      }
    }
    ptrs[i] = &storage[i];
  }
  int64_t blocks = dims.grid[0] * dims.grid[1] * dims.grid[2];
  EntryFn fn = impl_->compiled->fn;
  int64_t workers = threads > 0 ? threads : int64_t(std::max(1u, std::thread::hardware_concurrency()));
  workers = std::min(workers, blocks);
  if (workers <= 1) {
    fn(ptrs.data(), 0, blocks);
  } else {
    std::vector<std::thread> pool;
    for (int64_t w = 0; w < workers; ++w) {
      int64_t lo = blocks * w / workers, hi = blocks * (w + 1) / workers;
      pool.emplace_back([=, &ptrs] { fn(ptrs.data(), lo, hi); });
    }
    for (auto& t : pool) t.join();
  }
  if (__atomic_load_n(&record[BoundsRecord::kFailed], __ATOMIC_ACQUIRE)) {
    const CheckedAccess& a = impl_->compiled->checked.at(size_t(record[BoundsRecord::kAccess]));
    int64_t extent = 0;
    for (size_t i = 0; i < k.arguments.size(); ++i)
      if (k.arguments[i].name == a.array) extent = record[BoundsRecord::kExtents + i];
    throw ArgumentError(checked_access_failure(k, a, record[BoundsRecord::kIndex], extent));
  }
}

}  // namespace loom::cpu
