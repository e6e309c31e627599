// The `loom` command line tool's commands (`loom --help`; options and help
// texts in options.cpp; the program's main() in loom_main.cpp):
//   loom show FILE       print a stage (CUDA C by default; --emit STAGE)
//   loom compile FILE    compile with NVRTC (or LLVM), report registers/spills/shared memory
//   loom run FILE        run on random or .npy inputs, check against the
//                        reference interpreter, report the time
//   loom bench FILE      time it without the check
//   loom tune FILE       search a space of schedules for the fastest correct one
//   loom best LOG        the fastest trial of a tuning log, as a script
//   loom transforms      list the registered transformations
// FILE is the kernel language or a loom-kernel JSON document.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>
#include <unistd.h>

#include "loom/codegen.h"
#include "loom/cpu.h"
#include "loom/cuda.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/interpreter.h"
#include "loom/runtime.h"
#include "loom/stages.h"
#include "loom/statistics.h"
#include "loom/transforms.h"
#include "loom/tuner.h"
#include "cli.h"
#include "options.h"

using namespace loom;
using loom::cli::Options;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool is_json_path(const std::string& path, const std::string& text) {
  return (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0) || looks_like_json(text);
}

// The file as written, and every step to apply: the file's, then each --transform script's.
struct Loaded {
  KernelFile file;
  std::vector<TransformStep> steps;
  LoopKernel kernel;  // after the steps
};

Loaded load(const Options& o) {
  Loaded l;
  std::string text = read_text_file(o.file);
  l.file = is_json_path(o.file, text) ? kernel_file_from_json(text, o.file) : parse_kernel_text(text, o.file);
  if (!o.as_written) l.steps = l.file.transforms;
  for (auto& tf : o.transform_files) {
    std::string script = read_text_file(tf);
    auto more = is_json_path(tf, script) ? transform_script_from_json(script, tf) : parse_transform_script(script, tf);
    l.steps.insert(l.steps.end(), more.begin(), more.end());
  }
  l.kernel = apply_transforms(l.file.kernel, l.steps);
  return l;
}

// Writes the --emit stage to -o FILE or standard output.
void emit(const Options& o, const Loaded& l, const CompileStages& s) {
  std::string text;
  if (o.emit == "json") {  // a runnable document: the transformed kernel and the file's defaults
    KernelFile f;
    f.kernel = l.kernel;
    f.defaults = l.file.defaults;
    text = kernel_file_to_json(f);
  } else {
    text = s.get(o.emit);
  }
  if (o.output.empty()) {
    if (o.emit == "cubin" && isatty(STDOUT_FILENO)) throw Error("the cubin stage is binary: write it to a file with -o FILE");
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  std::ofstream f(o.output, std::ios::binary);
  if (!f || !f.write(text.data(), text.size())) throw Error("cannot write '" + o.output + "'");
  std::fprintf(stderr, "wrote the %s stage to %s (%zu bytes)\n", o.emit.c_str(), o.output.c_str(), text.size());
}

CompileStages stages_for(const Options& o, const Loaded& l, const std::string& target) {
  StageOptions so;
  so.target = target;
  so.arch = o.arch;
  so.wanted = {o.emit};
  return compile_stages(l.kernel, {}, so);
}

// A value argument that is no parameter: a scalar such as alpha, given with -D or --in.
bool is_scalar_argument(const LoopKernel& k, const std::string& name) {
  const Argument* a = k.find_argument(name);
  if (!a || a->kind != Argument::Value) return false;
  auto ps = k.parameters();
  return std::find(ps.begin(), ps.end(), name) == ps.end();
}

std::map<std::string, int64_t> parameter_values(const Options& o, const Loaded& l, const LoopKernel& k,
                                                 const std::map<std::string, HostArray>& inputs) {
  std::map<std::string, int64_t> params = l.file.defaults;
  // parameters that are a dimension of an input file's shape follow the file
  for (auto& [name, a] : inputs) {
    const Argument* arg = k.find_argument(name);
    if (!arg || arg->shape.size() != a.shape.size()) continue;
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (auto v = arg->shape[d].as<Var>()) params[v->name] = a.shape[d];
  }
  // a -D that names nothing would be silently ignored: a typo of a size
  std::set<std::string> known;
  for (const LoopKernel* kk : {&k, &l.kernel, &l.file.kernel})
    for (auto& p : kk->parameters()) known.insert(p);
  for (auto& [name, v] : o.params)
    if (!known.count(name) && !is_scalar_argument(k, name)) {
      std::string list;
      for (auto& p : known) list += (list.empty() ? "" : ", ") + p;
      throw Error("-D " + name + "=" + std::to_string(v) + ": kernel '" + k.name + "' has no parameter '" + name + "'" +
                  (list.empty() ? std::string(" (it has none)") : " (its parameters: " + list + ")"));
    }
  for (auto& [name, v] : o.scalars)
    if (known.count(name)) throw Error("-D " + name + "=" + std::to_string(v) + ": parameter '" + name + "' takes an integer");
  for (auto& [name, v] : o.params)
    if (known.count(name)) params[name] = v;
  for (auto& p : k.parameters())
    if (!params.count(p)) throw Error("no value for parameter '" + p + "': pass -D " + p + "=VALUE or add it to the file's defaults:");
  return params;
}

// The values of float value arguments (alpha, beta): -D alpha=1.5 (or =2),
// or --in alpha=alpha.npy (a 0-d or one-element array); others take 1.5.
std::map<std::string, double> scalar_values(const Options& o, const LoopKernel& k) {
  std::map<std::string, double> out;
  for (auto& [name, v] : o.params)
    if (is_scalar_argument(k, name)) out[name] = double(v);
  for (auto& [name, v] : o.scalars) {
    if (!is_scalar_argument(k, name))
      throw Error("-D " + name + "=" + std::to_string(v) + ": kernel '" + k.name + "' has no float value argument '" + name +
                  "' (a parameter takes an integer)");
    out[name] = v;
  }
  for (auto& [name, path] : o.inputs) {
    if (!is_scalar_argument(k, name)) continue;
    HostArray a = read_npy(path);
    if (a.size() != 1) throw Error("--in " + name + "=" + path + ": '" + name + "' is a scalar, but the file holds " + std::to_string(a.size()) + " elements");
    out[name] = a.get(0);
  }
  return out;
}

std::map<std::string, HostArray> read_inputs(const Options& o, const LoopKernel& k) {
  std::map<std::string, HostArray> out;
  for (auto& [name, path] : o.inputs) {
    if (is_scalar_argument(k, name)) continue;  // (scalar_values reads it)
    const Argument* a = k.find_argument(name);
    if (!a || a->kind != Argument::Array) throw Error("--in " + name + ": the kernel has no array argument '" + name + "'");
    out[name] = read_npy(path);
  }
  return out;
}

// Random arrays for every argument, with the --in files in place of theirs (checked against the kernel).
std::map<std::string, HostArray> make_arrays(const LoopKernel& k, const std::map<std::string, int64_t>& params,
                                             const std::map<std::string, HostArray>& inputs, const Options& o) {
  std::string largest;
  int64_t bytes = host_bytes(k, params, &largest);
  if (double(bytes) > o.max_memory_gib * double(1 << 30)) {
    char size[64], limit[64];
    std::snprintf(size, sizeof size, "%.3g GiB", double(bytes) / double(1 << 30));
    std::snprintf(limit, sizeof limit, "%g GiB", o.max_memory_gib);
    throw Error("kernel '" + k.name + "': its arrays take " + size + " of host memory for these parameters (the largest is '" + largest +
                "'), beyond the limit of " + limit + "; --max-memory GIB raises it (run keeps three copies: inputs, reference and result)");
  }
  auto arrays = make_host_arrays(k, params, 42);
  for (auto& [name, a] : inputs) {
    HostArray& want = arrays.at(name);
    auto shape_str = [](const std::vector<int64_t>& s) {
      std::string r = "(";
      for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
      return r + ")";
    };
    const std::string& path = o.inputs.at(name);
    if (a.shape != want.shape)
      throw Error("--in " + name + "=" + path + ": shape " + shape_str(a.shape) + ", but the kernel's '" + name + "' is " +
                  shape_str(want.shape) + " for these parameters");
    if (a.dtype != want.dtype)
      throw Error("--in " + name + "=" + path + ": dtype " + a.dtype.name() + ", but the kernel's '" + name + "' is " +
                  want.dtype.name());
    const Argument& arg = *k.find_argument(name);
    if (has_layout(arg)) into_layout(a, arg, params, want);  // (the .npy holds the values; the layout says where they go)
    else want = a;
  }
  return arrays;
}

void write_outputs(const Options& o, const LoopKernel& k, const std::map<std::string, int64_t>& params,
                   std::map<std::string, HostArray>& arrays) {
  for (auto& [name, path] : o.outputs) {
    auto it = arrays.find(name);
    if (it == arrays.end()) throw Error("--out " + name + ": the kernel has no array argument '" + name + "'");
    const Argument& arg = *k.find_argument(name);
    write_npy(path, has_layout(arg) ? out_of_layout(it->second, arg, params) : it->second);
    std::printf("wrote %s to %s\n", name.c_str(), path.c_str());
  }
}


// Checks the written arrays of `got` against `want`; prints one line each.
bool check_outputs(const LoopKernel& k, std::map<std::string, HostArray>& want, std::map<std::string, HostArray>& got) {
  bool ok = true;
  for (auto& a : k.arguments) {
    if (a.kind != Argument::Array || !k.is_written(a.name)) continue;
    Comparison c = compare(want.at(a.name), got.at(a.name));
    std::printf("check %s: %s\n", a.name.c_str(), c.str().c_str());
    ok &= c.ok;
  }
  return ok;
}

// The reference: the untransformed kernel in the interpreter, on copies of the inputs.
bool check_against_reference(const Loaded& l, const std::map<std::string, int64_t>& params, const std::map<std::string, double>& scalars,
                             std::map<std::string, HostArray> reference, std::map<std::string, HostArray>& got) {
  auto t0 = std::chrono::steady_clock::now();
  interpret(generate(reference_kernel(l.file.kernel, l.steps, l.kernel)), host_arguments(l.kernel, reference, params, scalars));
  std::printf("reference interpreter (untransformed kernel): %.2f s\n", seconds_since(t0));
  return check_outputs(l.kernel, reference, got);
}

void print_params(const char* where, const std::map<std::string, int64_t>& params) {
  std::printf("%s with", where);
  for (auto& [k, v] : params) std::printf(" %s=%lld", k.c_str(), (long long)v);
  std::printf("\n");
}

#ifdef LOOM_HAS_CPU_TARGET
int run_cpu(const Options& o, const Loaded& l) {
  if (o.command == "show") {
    emit(o, l, stages_for(o, l, "cpu"));
    return 0;
  }
  auto t0 = std::chrono::steady_clock::now();
  cpu::CpuKernel ck(l.kernel);
  const auto& st = ck.stats();
  std::printf("compiled '%s' for the host CPU with LLVM: lower %.1f ms, optimize %.1f ms, machine code %.1f ms (%.1f ms in all)\n",
              l.kernel.name.c_str(), st.lower_seconds * 1e3, st.optimize_seconds * 1e3, st.jit_seconds * 1e3,
              seconds_since(t0) * 1e3);
  if (!o.emit.empty()) emit(o, l, stages_for(o, l, "cpu"));
  if (o.command == "compile") return 0;
  auto inputs = read_inputs(o, l.kernel);
  auto params = parameter_values(o, l, ck.generated().kernel, inputs);
  char where[64];
  std::snprintf(where, sizeof where, "running on the CPU (%u threads)", std::max(1u, std::thread::hardware_concurrency()));
  print_params(where, params);
  auto arrays = make_arrays(l.kernel, params, inputs, o);
  auto scalars = scalar_values(o, l.kernel);  // (once: --in files are read here, not per repetition)
  auto reference = arrays;
  auto t1 = std::chrono::steady_clock::now();
  ck.call(host_arguments(l.kernel, arrays, params, scalars));
  double first = seconds_since(t1);
  bool ok = true;
  if (o.check && o.command == "run") ok = check_against_reference(l, params, scalars, reference, arrays);
  write_outputs(o, l.kernel, params, arrays);
  auto timing = arrays;
  std::vector<double> times;
  for (int r = 0; r < o.reps; ++r) {
    auto t = std::chrono::steady_clock::now();
    ck.call(host_arguments(l.kernel, timing, params, scalars));
    times.push_back(seconds_since(t));
  }
  std::sort(times.begin(), times.end());
  std::printf("%.3f ms per call (median of %d; first call %.3f ms)\n", times[times.size() / 2] * 1e3, o.reps, first * 1e3);
  if (!ok) std::printf("FAILED: the CPU result differs from the reference\n");
  return ok ? 0 : 1;
}
#else
int run_cpu(const Options&, const Loaded&) {
  throw Error("this build of Loom has no CPU target (configure with -DLOOM_WITH_LLVM=ON and llvm-19-dev installed)");
}
#endif

int list_transforms(const Options& o) {
  if (o.json) {  // the declarations as a JSON schema (types, defaults, choices, ranges, search domains)
    std::cout << transform_schema_json() << "\n";
    return 0;
  }
  for (auto& t : transform_registry().all()) {
    std::cout << t.name;
    for (auto& p : t.params)
      std::cout << (p.required ? " " : " [") << p.name << (p.required ? "" : "=" + (p.default_value.empty() ? "..." : p.default_value) + "]");
    std::cout << "\n    " << t.doc << "\n";
    for (auto& p : t.params) std::cout << "      " << p.name << ": " << p.type_name() << ". " << p.help << "\n";
  }
  return 0;
}

int run_cuda(const Options& o, const Loaded& l, bool gpu, const std::string& why) {
  if (o.command == "show") {
    emit(o, l, stages_for(o, l, "cuda"));
    return 0;
  }
  const LoopKernel& kernel = l.kernel;
  std::string arch = !o.arch.empty() ? o.arch : gpu ? cuda::device().arch() : TargetInfo::generic_cuda().arch;
  cuda::CudaKernel ck(kernel, arch);
  const auto& bin = ck.binary();
  int registers = bin.registers;
  std::string local = std::to_string(bin.spill_bytes) + " bytes spilled";
  if (gpu && arch == cuda::device().arch()) {  // the driver knows for sure (NVRTC's log can be empty)
    auto at = ck.attributes();
    registers = at.registers;
    local = std::to_string(at.local_bytes) + " bytes of local memory per thread";
  }
  std::string regs = registers >= 0 ? std::to_string(registers) + " registers" : "registers unknown (no ptxas report)";
  std::printf("compiled '%s' for %s with NVRTC %s: %zu bytes of CUBIN, %s, %s, %lld bytes of shared memory per block, %.1f ms%s\n",
              kernel.name.c_str(), arch.c_str(), cuda::nvrtc_version().c_str(), bin.cubin.size(), regs.c_str(), local.c_str(),
              (long long)ck.generated().local_bytes(), bin.seconds * 1e3,
              bin.disk_cache.empty() ? (bin.cached ? " (in memory)" : "") : ("; disk cache: " + bin.disk_cache).c_str());
  if (o.verbose) {
    const auto& g = ck.generated();
    std::printf("loop nests: %s\n", g.fast_path ? "Loom's direct generator" : ("isl's AST generator (" + g.isl_reason + ")").c_str());
    std::string unproven = g.kernel.options.index_dtype.bytes() >= 8 ? "" : index_overflow_under_assumptions(g);
    std::printf("index arithmetic: %s\n", g.kernel.options.index_dtype.bytes() >= 8 ? "64-bit"
                                          : unproven.empty() ? "32-bit, proven for every size the assumptions allow"
                                                             : ("32-bit, checked at each launch (for some sizes " + unproven + ")").c_str());
    std::printf("target: %s\n", ck.generated().target.str().c_str());
    std::printf("NVRTC log:\n%s\n", bin.log.c_str());
  }
  if (!o.emit.empty()) {
    Options at_arch = o;
    at_arch.arch = arch;
    emit(at_arch, l, stages_for(at_arch, l, "cuda"));
  }
  if (o.command == "compile") return 0;

  if (!gpu) {
    std::printf("%s; kernel '%s' was compiled but not run\n", why.c_str(), kernel.name.c_str());
    return o.fallback_compile ? 0 : 3;
  }
  auto inputs = read_inputs(o, kernel);
  auto params = parameter_values(o, l, ck.generated().kernel, inputs);
  print_params(("running on " + cuda::device().name + " (" + arch + ")").c_str(), params);
  auto arrays = make_arrays(kernel, params, inputs, o);
  auto scalars = scalar_values(o, kernel);
  auto args_for = [&](std::map<std::string, HostArray>& arrs) { return host_arguments(kernel, arrs, params, scalars); };
  bool ok = true;
  if (o.command == "run") {
    auto reference = arrays;
    auto gpu_arrays = arrays;
    ck.call_host(args_for(gpu_arrays));
    if (o.check) ok = check_against_reference(l, params, scalars, reference, gpu_arrays);
    write_outputs(o, kernel, params, gpu_arrays);
  }
  // timing on device buffers
  std::map<std::string, cuda::DeviceBuffer> bufs;
  ArgMap dev = args_for(arrays);
  double bytes = 0;  // each array read once and written once, at least
  for (auto& [n, a] : arrays) {
    cuda::DeviceBuffer b(a.bytes.size());
    b.upload(a.bytes.data(), a.bytes.size());
    dev[n].array.data = b.ptr();
    bytes += double(a.bytes.size()) * ((kernel.is_read(n) ? 1 : 0) + (kernel.is_written(n) ? 1 : 0));
    bufs.emplace(n, std::move(b));
  }
  double ms = ck.time(dev, o.reps);
  // the geometry of each launch (several for a kernel with global barriers)
  std::string geometry;
  const GeneratedKernel& g = ck.generated();
  std::vector<const GeneratedKernel*> launches{&g};
  if (g.is_program()) {
    launches.clear();
    for (auto& l : g.launches) launches.push_back(&l);
  }
  for (const GeneratedKernel* l : launches) {
    LaunchDims d = launch_dims(*l, params);
    geometry += (geometry.empty() ? "" : ", then ") + std::string("grid ") + std::to_string(d.grid[0]) + "x" + std::to_string(d.grid[1]) + "x" +
                std::to_string(d.grid[2]) + ", block " + std::to_string(d.block[0]) + "x" + std::to_string(d.block[1]) + "x" +
                std::to_string(d.block[2]);
  }
  std::printf("%s: %.3f us per call (median of %d), %.1f GB/s (arrays read + written once)\n", geometry.c_str(), ms * 1e3, o.reps,
              bytes / (ms * 1e-3) / 1e9);
  if (!ok) {
    std::printf("FAILED: the GPU result differs from the reference\n");
    return 1;
  }
  return 0;
}

// 32-bit index arithmetic (the default) cannot address this call's sizes:
// the kernel is generated with 64-bit indices instead (as Python's per-call
// variants do), with a note, rather than refused. The sizes alone say so for
// arrays beyond 2^31 - 1 elements; otherwise the generated code is checked
// (index_overflow: a split loop's tail near 2^31, say). Only the -D values
// and the file's defaults are looked at; sizes taken from --in files alone
// meet the launch's refusal, which names set_index_dtype int64.
void widen_index_if_needed(const Options& o, Loaded& l) {
  std::map<std::string, int64_t> params = l.file.defaults;
  for (auto& [name, v] : o.params) params[name] = v;
  for (auto& p : l.kernel.parameters())
    if (!params.count(p)) return;  // (sizes from --in files: the launch decides)
  if (l.kernel.options.index_dtype.bytes() >= 8) return;
  std::string why = beyond_32_bit_indices(l.kernel, params);
  if (!why.empty()) {
    why += ", beyond 2^31 - 1";
  } else {
    if (!assumptions_hold(l.kernel, params)) return;  // (refused later, with the reason)
    // (for the target that will run it: a kernel may need the named architecture, wgmma sm_90a say)
    bool cpu = o.target == "cpu" || (o.target == "auto" && (o.emit == "llvm" || ((o.command == "run" || o.command == "bench") && !cuda::gpu_available())));
    why = index_overflow(generate(l.kernel, cpu ? TargetInfo::cpu("") : cuda::target_info(o.arch)), params);
    if (why.empty()) return;
  }
  std::fprintf(stderr, "loom: note: %s: 64-bit index arithmetic (set_index_dtype int64)\n", why.c_str());
  l.kernel = apply_transforms(l.kernel, parse_transform_script("set_index_dtype int64"));
}

// At most n characters of a message, cut at a word with "..." (a progress line
// stays one line; the log keeps the whole message).
std::string shortened(const std::string& m, size_t n) {
  std::string one = m.substr(0, m.find('\n'));
  if (one.size() <= n) return one;
  size_t cut = one.rfind(' ', n);
  return one.substr(0, cut == std::string::npos || cut < n / 2 ? n : cut) + " ...";
}

// loom tune: the kernel as written (the file's transforms: left out), the
// space (auto or a file), one line per trial, the best five at the end.
int run_tune(const Options& o, const cli::RayHook& ray) {
  std::string text = read_text_file(o.file);
  KernelFile file = is_json_path(o.file, text) ? kernel_file_from_json(text, o.file) : parse_kernel_text(text, o.file);
  tune::Options to;
  to.target = o.target;  // (auto: the measuring worker looks for the GPU; this process never opens it)
  to.worker_command = {"/proc/self/exe", "tune-worker"};
  to.strategy = o.strategy;
  to.feature_model = o.feature_model;
  to.trials = o.trials;
  to.seed = o.seed;
  to.log = o.log;
  to.resume = o.resume;
  to.settle = o.settle;
  to.seed_logs = o.seed_logs;
  to.arch = o.arch;
  to.trial_timeout_seconds = o.trial_timeout;
  to.time_limit_seconds = o.time_limit;
  to.rtol = o.rtol;
  to.atol = o.atol;
  to.check_parameters = o.check_sizes;
  for (auto& [name, path] : o.check_inputs) {  // (the worker reads them: an absolute path, wherever it runs)
    if (!std::filesystem::exists(path)) throw Error("--check-input " + name + "=" + path + ": no such file");
    to.check_inputs[name] = std::filesystem::absolute(path).string();
  }
  to.gpus = o.gpus;
  to.parameters = file.defaults;
  for (auto& [n, v] : o.params) {
    auto ps = file.kernel.parameters();
    if (std::find(ps.begin(), ps.end(), n) == ps.end()) throw Error("-D " + n + ": kernel '" + file.kernel.name + "' has no parameter '" + n + "'");
    to.parameters[n] = v;
  }
  tune::Space space;
  if (o.space == "auto") {
    space = tune::auto_space(file.kernel, to.target, to.parameters);
  } else {
    std::string s = read_text_file(o.space);
    space = is_json_path(o.space, s) ? tune::Space::from_json(s, o.space) : tune::Space::parse(s, o.space);
  }
  if (!o.restrictions.empty()) to.restrict = tune::restriction_of(space, o.restrictions);
  if (!o.ray.empty()) {
    if (!ray) throw Error("--ray: this program cannot reach a Ray cluster");
    ray(to, file.kernel, o.ray);
  }
  std::printf("tuning '%s'%s: %s", file.kernel.name.c_str(), o.ray.empty() ? "" : (" on the Ray cluster at " + o.ray).c_str(), space.str().c_str());
  to.progress = [verbose = o.verbose](const tune::Trial& t, const std::optional<tune::Trial>& best, int done, int total) {
    std::string what = t.status == tune::TrialStatus::Ok ? [&] {
      char b[96];
      std::snprintf(b, sizeof b, "%.4f ms (%.4f-%.4f)", t.median_seconds * 1e3, t.min_seconds * 1e3, t.max_seconds * 1e3);
      return std::string(b);
    }() : std::string(to_string(t.status)) + ": " + shortened(t.error, 300);
    // (a configuration the checks refused is no trial: it takes no place in the count)
    std::string place = t.status == tune::TrialStatus::Illegal ? "[refused]" : "[" + std::to_string(done) + "/" + std::to_string(total) + "]";
    std::printf("%s %-12s %s%s\n", place.c_str(), t.key.c_str(), what.c_str(),
                best && best->key == t.key && t.status == tune::TrialStatus::Ok ? "  (best so far)" : "");
    if (verbose) {  // where the trial's time went, and what its check found
      std::printf("           generate %.3f s, compile %.3f s", t.generate_seconds, t.compile_seconds);
      if (t.reps) std::printf(", %d runs", t.reps);
      if (!t.check.empty()) std::printf("; check %s at %s against %s, largest error %.3g", t.check.c_str(), t.check_sizes.c_str(),
                                        t.check_against.empty() ? "the interpreter" : t.check_against.c_str(), t.check_error);
      std::printf("\n");
    }
    std::fflush(stdout);
  };
  // trial 0, the kernel as written, and trial 1, the file's own transforms: (the winner is never slower)
  to.references = true;
  for (auto& step : file.transforms) to.own_schedule += step_text(step) + "\n";
  tune::Result r = tune::tune(file.kernel, space, to);
  to.target = r.best->target;
  std::vector<tune::Trial> ok;  // (this run's and the log's it reused: "best" is over both)
  for (auto* set : {&r.trials, &r.resumed})
    for (auto& t : *set)
      if (t.status == tune::TrialStatus::Ok) ok.push_back(t);
  std::sort(ok.begin(), ok.end(), [](auto& a, auto& b) { return a.median_seconds < b.median_seconds; });
  std::map<std::string, int> count;
  for (auto& t : r.trials) ++count[to_string(t.status)];
  std::printf("\n%zu trials in %.1f s", r.trials.size() - size_t(r.refused), r.seconds);
  for (auto& [s, n] : count)
    if (s != "illegal") std::printf(", %d %s", n, s.c_str());
  if (count.count("illegal"))
    std::printf(", %d illegal%s", count["illegal"],
                r.refused ? (" (" + std::to_string(r.refused) + " refused by the checks before running, not counted)").c_str() : "");
  if (r.skipped) std::printf(", %d already in the log", r.skipped);
  if (r.restricted) std::printf(", %d left out by --restrict", r.restricted);
  if (r.seeded) std::printf(", %d seeded by the fastest measured elsewhere", r.seeded);
  if (r.unmeasured) std::printf(", %d more screened and left unmeasured by the feature model", r.unmeasured);
  if (r.other_workloads) std::printf(" (which learnt first from %d trials of other kernels)", r.other_workloads);
  std::printf("\nfastest (%s, %s):\n", to.target.c_str(), r.best->device.c_str());
  auto from_log = [&](const tune::Trial& t) {
    return std::any_of(r.resumed.begin(), r.resumed.end(), [&](auto& x) { return x.key == t.key && x.script == t.script; });
  };
  for (size_t i = 0; i < std::min<size_t>(5, ok.size()); ++i)
    std::printf("  %10.4f ms  %s%s\n", ok[i].median_seconds * 1e3, ok[i].key.c_str(), from_log(ok[i]) ? "  (from the log)" : "");
  auto reference = [&](const char* what, const std::optional<tune::Trial>& t) {
    if (!t) return;
    if (t->status == tune::TrialStatus::Ok)
      std::printf("%s: %.4f ms; the best is %.2fx faster\n", what, t->median_seconds * 1e3, t->median_seconds / r.best->median_seconds);
    else
      std::printf("%s: %s (%s)\n", what, to_string(t->status), shortened(t->error, 200).c_str());
  };
  if (!r.settled.empty()) std::printf("%s\n", r.settled.c_str());
  reference("the kernel as written (trial 0)", r.as_written);
  reference("the file's own transforms (trial 1)", r.own_schedule);
  if (r.best->key == "as written")
    std::printf("best: the kernel as written, %.4f ms: no configuration tried is faster\n", r.best->median_seconds * 1e3);
  else
    std::printf("best: %.4f ms (%s)\n%s", r.best->median_seconds * 1e3, r.best->key.c_str(), r.best->script.c_str());
  return 0;
}

int run_stats(const Options& o) {
  Loaded l = load(o);
  StatisticsOptions so;
  so.count_redundant_work = o.redundant;
  so.subgroup_size = o.subgroup_size;
  if (o.granularity == "workitem") so.granularity = CountGranularity::WorkItem;
  if (o.granularity == "subgroup") so.granularity = CountGranularity::SubGroup;
  if (o.granularity == "workgroup") so.granularity = CountGranularity::WorkGroup;
  std::map<std::string, int64_t> params = l.file.defaults;
  for (auto& [n, v] : o.params) params[n] = v;
  std::cout << statistics_report(l.kernel, so, o.params.empty() ? nullptr : &params);
  return 0;
}

int run(const Options& o, const cli::RayHook& ray) {
  if (o.command == "transforms") return list_transforms(o);
  if (o.command == "tune") return run_tune(o, ray);
  if (o.command == "best") {
    tune::LogFilter f{o.kernel, o.params, o.target, o.device};
    std::string picked;
    tune::Trial b = tune::best_in_log(o.file, f, &picked);
    std::printf("# from %s\n# %.4f ms, trial %s\n%s", picked.c_str(), b.median_seconds * 1e3, b.key.c_str(), b.script.c_str());
    return 0;
  }
  if (!o.emit.empty()) check_stage_name(o.emit);
  if (o.command == "stats") return run_stats(o);
  Loaded l = load(o);
  widen_index_if_needed(o, l);
  std::string why;
  bool gpu = cuda::gpu_available(&why);
  bool timed = o.command == "run" || o.command == "bench";
#ifdef LOOM_HAS_CPU_TARGET
  if (o.target == "auto" && timed && !gpu) {
    std::printf("%s: running on the CPU target\n", why.c_str());
    return run_cpu(o, l);
  }
#endif
  if (o.target == "cpu" || (o.target == "auto" && o.emit == "llvm")) return run_cpu(o, l);
  return run_cuda(o, l, gpu, why);
}

}  // namespace

int loom::cli::cli_main(int argc, char** argv, const RayHook& ray) {
  Options o = loom::cli::parse_args(argc, argv);
  try {
    return run(o, ray);
  } catch (const std::exception& e) {
    std::cerr << "loom: error: " << e.what() << "\n";
    return 1;
  }
}
