// The `loom` command line tool:
//   loom show FILE       print the generated CUDA C
//   loom compile FILE    compile it with NVRTC, report registers/size (or the log)
//   loom run FILE        run it on the GPU with random inputs, check it against
//                        the reference interpreter, report the time
//   loom transforms      list the registered transformations
// --target cuda|cpu|auto: cpu runs (and shows the LLVM IR of) the LLVM CPU
// target; auto (the default) is cuda, except that `run` without a GPU uses
// the CPU target.
// Options: --transform SCRIPT (more steps after the file's transforms:),
// --arch sm_XX, -D name=value (parameter values), --reps N, --no-check,
// --fallback-compile (run: without a GPU, compile only and succeed),
// --verbose (print NVRTC's log).
#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "loom/codegen.h"
#include "loom/cpu.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/runtime.h"
#include "loom/transforms.h"

using namespace loom;

namespace {

struct Options {
  std::string command, file, arch, target = "auto";
  std::vector<std::string> transform_files;
  std::map<std::string, int64_t> params;
  int reps = 20;
  bool check = true;
  bool fallback_compile = false;
  bool verbose = false;
};

[[noreturn]] void usage(const std::string& why = "") {
  if (!why.empty()) std::cerr << "loom: " << why << "\n\n";
  std::cerr << "usage: loom show|compile|run FILE [--target cuda|cpu|auto] [--transform SCRIPT] [--arch sm_XX] [-D name=value]...\n"
               "                                [--reps N] [--no-check] [--fallback-compile] [-v]\n"
               "       loom transforms\n";
  std::exit(2);
}

Options parse_args(int argc, char** argv) {
  Options o;
  if (argc < 2) usage();
  o.command = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--transform" || a == "-t") o.transform_files.push_back(value());
    else if (a == "--arch") o.arch = value();
    else if (a == "--target") {
      o.target = value();
      if (o.target != "cuda" && o.target != "cpu" && o.target != "auto") usage("--target is cuda, cpu or auto");
    }
    else if (a == "--reps") o.reps = std::stoi(value());
    else if (a == "--no-check") o.check = false;
    else if (a == "--fallback-compile") o.fallback_compile = true;
    else if (a == "--verbose" || a == "-v") o.verbose = true;
    else if (a == "-D" || a.rfind("-D", 0) == 0) {
      std::string kv = a == "-D" ? value() : a.substr(2);
      auto eq = kv.find('=');
      if (eq == std::string::npos) usage("-D expects name=value, got '" + kv + "'");
      try {
        o.params[kv.substr(0, eq)] = std::stoll(kv.substr(eq + 1));
      } catch (...) {
        usage("-D " + kv + ": the value must be an integer");
      }
    } else if (!a.empty() && a[0] == '-') usage("unknown option " + a);
    else if (o.file.empty()) o.file = a;
    else usage("more than one FILE given");
  }
  if (o.command != "transforms" && o.file.empty()) usage("no FILE given");
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::map<std::string, int64_t> parameter_values(const Options& o, const KernelFile& file, const LoopKernel& k) {
  std::map<std::string, int64_t> params = file.defaults;
  for (auto& [name, v] : o.params) params[name] = v;
  for (auto& p : k.parameters())
    if (!params.count(p)) throw Error("no value for parameter '" + p + "': pass -D " + p + "=VALUE or add it to the file's defaults:");
  return params;
}

ArgMap host_args(const LoopKernel& k, std::map<std::string, HostArray>& arrays, const std::map<std::string, int64_t>& params) {
  ArgMap args;
  for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
  for (auto& a : k.arguments)
    if (a.kind == Argument::Value && !args.count(a.name))
      args[a.name] = params.count(a.name) ? ArgValue::of_int(params.at(a.name)) : ArgValue::of_float(1.5);
  return args;
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

#ifdef LOOM_HAS_CPU_TARGET
int run_cpu(const Options& o, const KernelFile& file, const LoopKernel& kernel) {
  auto t0 = std::chrono::steady_clock::now();
  cpu::CpuKernel ck(kernel);
  if (o.command == "show") {
    std::cout << ck.ir();
    return 0;
  }
  const auto& st = ck.stats();
  std::printf("compiled '%s' for the host CPU with LLVM: lower %.1f ms, optimize %.1f ms, machine code %.1f ms (%.1f ms in all)\n",
              kernel.name.c_str(), st.lower_seconds * 1e3, st.optimize_seconds * 1e3, st.jit_seconds * 1e3, seconds_since(t0) * 1e3);
  if (o.command == "compile") return 0;
  auto params = parameter_values(o, file, ck.generated().kernel);
  std::printf("running on the CPU (%u threads) with", std::max(1u, std::thread::hardware_concurrency()));
  for (auto& [k, v] : params) std::printf(" %s=%lld", k.c_str(), (long long)v);
  std::printf("\n");
  auto arrays = make_host_arrays(kernel, params, 42);
  auto reference = arrays;
  auto t1 = std::chrono::steady_clock::now();
  ck.call(host_args(kernel, arrays, params));
  double first = seconds_since(t1);
  bool ok = true;
  if (o.check) {
    auto t2 = std::chrono::steady_clock::now();
    interpret(generate(file.kernel), host_args(kernel, reference, params));
    std::printf("reference interpreter (untransformed kernel): %.2f s\n", seconds_since(t2));
    ok = check_outputs(kernel, reference, arrays);
  }
  std::vector<double> times;
  for (int r = 0; r < std::max(1, o.reps); ++r) {
    auto t = std::chrono::steady_clock::now();
    ck.call(host_args(kernel, arrays, params));
    times.push_back(seconds_since(t));
  }
  std::sort(times.begin(), times.end());
  std::printf("%.3f ms per call (median of %d; first call %.3f ms)\n", times[times.size() / 2] * 1e3, o.reps, first * 1e3);
  if (!ok) std::printf("FAILED: the CPU result differs from the reference\n");
  return ok ? 0 : 1;
}
#else
int run_cpu(const Options&, const KernelFile&, const LoopKernel&) {
  throw Error("this build of Loom has no CPU target (configure with -DLOOM_WITH_LLVM=ON and llvm-19-dev installed)");
}
#endif

int run(const Options& o) {
  if (o.command == "transforms") {
    for (auto& t : transform_registry().all()) {
      std::cout << t.name;
      for (auto& p : t.params) std::cout << (p.required ? " " : " [") << p.name << (p.required ? "" : "=...]");
      std::cout << "\n    " << t.doc << "\n";
    }
    return 0;
  }
  KernelFile file = parse_kernel_file(o.file);
  std::vector<TransformStep> steps = file.transforms;
  for (auto& tf : o.transform_files) {
    auto more = parse_transform_script(read_text_file(tf), tf);
    steps.insert(steps.end(), more.begin(), more.end());
  }
  LoopKernel kernel = apply_transforms(file.kernel, steps);

  if (o.command != "show" && o.command != "compile" && o.command != "run") usage("unknown command '" + o.command + "'");
  std::string why;
  bool gpu = cuda::gpu_available(&why);
#ifdef LOOM_HAS_CPU_TARGET
  if (o.target == "auto" && o.command == "run" && !gpu) {
    std::printf("%s: running on the CPU target\n", why.c_str());
    return run_cpu(o, file, kernel);
  }
#endif
  if (o.target == "cpu") return run_cpu(o, file, kernel);
  if (o.command == "show") {
    std::cout << cuda::print_source(generate(kernel));
    return 0;
  }

  std::string arch = !o.arch.empty() ? o.arch : gpu ? cuda::device().arch() : "sm_90";
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
  std::printf("compiled '%s' for %s with NVRTC %s: %zu bytes of CUBIN, %s, %s, %.1f ms\n", kernel.name.c_str(),
              arch.c_str(), cuda::nvrtc_version().c_str(), bin.cubin.size(), regs.c_str(), local.c_str(), bin.seconds * 1e3);
  if (o.verbose) std::printf("NVRTC log:\n%s\n", bin.log.c_str());
  if (o.command == "compile") return 0;

  if (!gpu) {
    std::printf("%s; kernel '%s' was compiled but not run\n", why.c_str(), kernel.name.c_str());
    return o.fallback_compile ? 0 : 3;
  }

  auto params = parameter_values(o, file, ck.generated().kernel);
  std::printf("running on %s (%s) with", cuda::device().name.c_str(), arch.c_str());
  for (auto& [k, v] : params) std::printf(" %s=%lld", k.c_str(), (long long)v);
  std::printf("\n");

  auto arrays = make_host_arrays(kernel, params, 42);
  auto args_for = [&](std::map<std::string, HostArray>& arrs) { return host_args(kernel, arrs, params); };
  auto reference = arrays;
  auto gpu_arrays = arrays;
  ck.call_host(args_for(gpu_arrays));

  bool ok = true;
  if (o.check) {
    auto t0 = std::chrono::steady_clock::now();
    interpret(generate(file.kernel), args_for(reference));
    std::printf("reference interpreter (untransformed kernel): %.2f s\n", seconds_since(t0));
    ok = check_outputs(kernel, reference, gpu_arrays);
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
  LaunchDims d = launch_dims(ck.generated(), params);
  std::printf("grid %lldx%lldx%lld, block %lldx%lldx%lld: %.3f us per launch (median of %d), %.1f GB/s (arrays read + written once)\n",
              (long long)d.grid[0], (long long)d.grid[1], (long long)d.grid[2], (long long)d.block[0], (long long)d.block[1],
              (long long)d.block[2], ms * 1e3, o.reps, bytes / (ms * 1e-3) / 1e9);
  if (!ok) {
    std::printf("FAILED: the GPU result differs from the reference\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "loom: error: " << e.what() << "\n";
    return 1;
  }
}
