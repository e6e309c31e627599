// compile_stages: one kernel through every stage, each kept as text
// (loom/stages.h). The target stages are produced only when wanted, so
// `loom show --emit kernel` never waits for NVRTC or LLVM.
#include "loom/stages.h"

#include <algorithm>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/transforms.h"
#ifdef LOOM_HAS_CPU_TARGET
#include "loom/cpu.h"
#endif

namespace loom {

std::vector<std::string> CompileStages::names() {
  return {"input", "kernel", "json", "preprocessed", "schedule", "cuda", "ptx", "cubin", "llvm"};
}

const std::string& CompileStages::get(const std::string& name) const {
  if (name == "input") return transforms.front().second;
  if (name == "kernel") return kernel;
  if (name == "json") return json;
  if (name == "preprocessed") return preprocessed;
  if (name == "schedule") return schedule;
  if (name == "cuda" || name == "ptx" || name == "cubin") {
    if (target != "cuda") throw KernelError("stage '" + name + "' belongs to the cuda target (this is " + target + ")");
    return name == "cuda" ? cuda : name == "ptx" ? ptx : cubin;
  }
  if (name == "llvm") {
    if (target != "cpu") throw KernelError("stage 'llvm' belongs to the cpu target (this is " + target + ")");
    return llvm;
  }
  check_stage_name(name);
  throw KernelError("no stage '" + name + "'");
}

void check_stage_name(const std::string& name) {
  auto names = CompileStages::names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  std::string known;
  for (auto& n : names) known += (known.empty() ? "" : ", ") + n;
  throw KernelError("no stage '" + name + "'" + did_you_mean(name, names) + " (stages: " + known + ")");
}

std::string step_text(const TransformStep& step) {
  std::string s = step.name;
  for (auto& p : step.positional) s += " " + p;
  for (auto& [k, v] : step.keyword) s += " " + k + "=" + v;
  return s;
}

namespace {
// The preprocessed kernel or the schedule of each launch (a kernel with
// global barriers runs as several).
std::string per_launch(const GeneratedKernel& g, std::string (*text)(const GeneratedKernel&)) {
  if (!g.is_program()) return text(g);
  std::string out = "# runs as " + host_steps_text(g.host_steps) + "\n";
  for (size_t i = 0; i < g.launches.size(); ++i)
    out += "# launch " + std::to_string(i + 1) + " of " + std::to_string(g.launches.size()) + "\n" + text(g.launches[i]);
  return out;
}
std::string preprocessed_text(const GeneratedKernel& g) { return per_launch(g, [](const GeneratedKernel& l) { return l.kernel.str(); }); }
std::string schedule_text(const GeneratedKernel& g) { return per_launch(g, [](const GeneratedKernel& l) { return l.linearization.str(); }); }
}  // namespace

CompileStages compile_stages(const LoopKernel& input, const std::vector<TransformStep>& steps, const StageOptions& options) {
  if (options.target != "cuda" && options.target != "cpu")
    throw KernelError("unknown target '" + options.target + "' (cuda or cpu)");
  CompileStages s;
  s.target = options.target;
  s.transforms.emplace_back("input", input.str());
  LoopKernel k = input;
  for (auto& step : steps) {
    k = apply_transform(k, step);
    s.transforms.emplace_back(step_text(step), k.str());
  }
  s.kernel = k.str();
  s.json = kernel_to_json(k);
  auto want = [&](const char* stage) { return options.wanted.empty() || options.wanted.count(stage); };
  if (s.target == "cuda") {
    TargetInfo target = cuda::target_info(options.arch);  // (the named architecture's limits and features, or the GPU's)
    GeneratedKernel g = generate(k, target);
    s.preprocessed = preprocessed_text(g);
    s.schedule = schedule_text(g);
    s.shared_bytes = g.local_bytes();
    s.cuda = cuda::print_source(g);
    s.arch = target.arch;
    if (want("cubin")) {
      cuda::CompileResult bin = cuda::compile(s.cuda, s.arch);
      s.cubin = bin.cubin;
      s.nvrtc_log = bin.log;
      s.registers = bin.registers;
      s.spill_bytes = bin.spill_bytes;
    }
    if (want("ptx")) s.ptx = cuda::compile_ptx(s.cuda, s.arch);
    return s;
  }
#ifdef LOOM_HAS_CPU_TARGET
  if (want("llvm")) {
    cpu::CpuKernel ck(k);
    s.preprocessed = preprocessed_text(ck.generated());
    s.schedule = schedule_text(ck.generated());
    s.llvm = ck.ir();
    return s;
  }
  GeneratedKernel g = generate(k);
  s.preprocessed = preprocessed_text(g);
  s.schedule = schedule_text(g);
  return s;
#else
  throw KernelError("this build of Loom has no CPU target (configure with -DLOOM_WITH_LLVM=ON and llvm-19-dev installed)");
#endif
}

}  // namespace loom
