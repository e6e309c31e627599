// The measuring worker: a process forked from the tuner that applies a
// trial's script, compiles it for the target, checks it against the kernel
// as written (the reference interpreter, at small sizes that are not
// multiples of the tiles) and times it (median of repetitions over rotated
// copies of the inputs). A trial that faults, hangs or aborts kills only
// this worker: the tuner sees it die (or times it out), records the trial as
// crashed or failed, and starts a fresh worker for the next one. The
// tuner's own process never opens the GPU.
#include "measure.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "loom/codegen.h"
#include "loom/cpu.h"
#include "loom/cuda.h"
#include "loom/interpreter.h"
#include "loom/isl_util.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/runtime.h"
#include "loom/transforms.h"

namespace loom::tune::detail {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Framed messages over a pipe: a 4-byte length, then the bytes.
bool write_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w, n -= size_t(w);
  }
  return true;
}
bool read_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n) {
    ssize_t r = ::read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r, n -= size_t(r);
  }
  return true;
}
bool send_message(int fd, const std::string& s) {
  uint32_t n = uint32_t(s.size());
  return write_all(fd, &n, 4) && write_all(fd, s.data(), s.size());
}
bool receive_message(int fd, std::string& s) {
  uint32_t n = 0;
  if (!read_all(fd, &n, 4)) return false;
  s.resize(n);
  return read_all(fd, s.data(), n);
}


// The sizes a trial is checked at: the caller's, else small and odd (not
// multiples of any tile), then powers of two, then the timed sizes, the
// first the schedule's assumptions allow (`assume m mod 4 = 0`: not 67).
std::map<std::string, int64_t> check_sizes(const LoopKernel& k, const Options& o) {
  if (!o.check_parameters.empty() && assumptions_hold(k, o.check_parameters)) return o.check_parameters;
  std::vector<std::string> names = k.parameters();
  for (int64_t base : {67, 37, 128, 256, 512, 1024}) {
    std::map<std::string, int64_t> p;
    int64_t v = base;
    for (auto& n : names) {
      p[n] = std::min(v, o.parameters.count(n) ? std::max<int64_t>(o.parameters.at(n), 1) : v);
      if (base < 100) v += 2;  // (distinct odd sizes: a transposition shows)
    }
    if (assumptions_hold(k, p)) return p;
  }
  return o.parameters;
}

// A script that fixes a parameter the trial is timed at to another value
// (a space's `fix_parameters n=choice(1024|4096)` timed at n=4096) would be
// timed on another problem, and would win by doing less work: such a
// schedule is illegal for these sizes. Returns why, or "".
std::string fixes_timed_parameter(const std::vector<TransformStep>& steps, const Options& o) {
  auto check = [&](std::string name, std::string value) -> std::string {
    auto trim = [](std::string x) {
      auto b = x.find_first_not_of(" \t"), e = x.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : x.substr(b, e - b + 1);
    };
    name = trim(name), value = trim(value);
    auto timed = o.parameters.find(name);
    if (timed == o.parameters.end() || value == std::to_string(timed->second)) return "";
    return "the schedule fixes " + name + "=" + value + " but the trial is timed at " + name + "=" + std::to_string(timed->second) +
           ": it would time another problem";
  };
  for (auto& s : steps) {
    if (s.name != "fix_parameters") continue;
    for (auto& [n, v] : s.keyword)
      if (auto why = check(n, v); !why.empty()) return why;
    for (auto& item_list : s.positional)
      for (size_t b = 0, e; b < item_list.size(); b = e + 1) {
        e = item_list.find(',', b);
        if (e == std::string::npos) e = item_list.size();
        std::string item = item_list.substr(b, e - b);
        auto eq = item.find_first_of("=:");
        if (eq == std::string::npos) continue;  // (fix_parameters itself refuses it)
        if (auto why = check(item.substr(0, eq), item.substr(eq + 1)); !why.empty()) return why;
      }
  }
  return "";
}

// A written array's tolerance: its own, else the one for every array ("" key), else -1 (by dtype).
double tolerance(const std::map<std::string, double>& per_array, const std::string& name) {
  auto it = per_array.find(name);
  if (it == per_array.end()) it = per_array.find("");
  return it == per_array.end() ? -1 : it->second;
}

// The check's inputs the user gave (.npy files), in place of the random
// ones: each must have the shape and dtype the check sizes give its array.
void place_check_inputs(const LoopKernel& k, const std::map<std::string, int64_t>& sizes, const Options& o,
                        std::map<std::string, HostArray>& arrays) {
  for (auto& [name, path] : o.check_inputs) {
    auto it = arrays.find(name);
    if (it == arrays.end()) throw Error("check input '" + name + "': kernel '" + k.name + "' has no array '" + name + "'");
    HostArray given = read_npy(path);
    const Argument& arg = *k.find_argument(name);
    std::vector<int64_t> want = expected_shape(arg, sizes);
    if (given.shape != want || given.dtype != arg.dtype) {
      std::string w, g;
      for (auto s : want) w += (w.empty() ? "" : ", ") + std::to_string(s);
      for (auto s : given.shape) g += (g.empty() ? "" : ", ") + std::to_string(s);
      throw Error("check input '" + name + "' (" + path + ") is " + given.dtype.name() + " (" + g + "), but the check sizes give " +
                  arg.dtype.name() + " (" + w + "): give the check sizes its arrays were made for (check_parameters, --check-size)");
    }
    if (has_layout(arg)) into_layout(given, arg, sizes, it->second);
    else it->second = std::move(given);
  }
}

// The kernel's arrays as made for these sizes (names, types, elements): the
// key under which host arrays made for one trial serve the next.
std::string arrays_key(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  std::string key;
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array) key += a.name + ":" + a.dtype.name() + ":" + std::to_string(storage_elements(a, params)) + ";";
  return key;
}

// The inputs the trials are timed on: copies enough that together they
// outgrow the caches (64 MiB), at most 8. Made once per worker and kept
// while the trials' arrays have the same names, types and storage (random
// gigabytes per trial would cost more than the trials).
int timing_sets_made = 0;  // (the device copies follow the host sets they were made from)
std::vector<std::map<std::string, HostArray>>& timing_sets(const LoopKernel& k, const std::map<std::string, int64_t>& params) {
  static std::string key;
  static std::vector<std::map<std::string, HostArray>> sets;
  std::string now = arrays_key(k, params);
  if (now != key || sets.empty()) {
    sets.clear();
    int64_t bytes = std::max<int64_t>(1, host_bytes(k, params));
    size_t copies = size_t(std::clamp<int64_t>((int64_t(64) << 20) / bytes, 1, 8));
    for (size_t i = 0; i < copies; ++i) sets.push_back(make_host_arrays(k, params, 11 + i));
    key = now;
    ++timing_sets_made;
  }
  return sets;
}

// Runs one kernel on the target, for checking (on host arrays) and timing.
struct Runner {
  virtual ~Runner() = default;
  virtual void run(const ArgMap& host) = 0;
  // median and minimum seconds over the rotated sets
  virtual void time(const LoopKernel& k, std::vector<std::map<std::string, HostArray>>& sets, const std::map<std::string, int64_t>& params,
                    const Options& o, Trial& t) = 0;
};

#ifdef LOOM_HAS_CPU_TARGET
struct CpuRunner : Runner {
  CpuRunner(GeneratedKernel g, Trial& t) {
    auto t0 = Clock::now();
    ck = std::make_unique<cpu::CpuKernel>(std::move(g));
    t.compile_seconds = since(t0);
  }
  void run(const ArgMap& host) override { ck->call(host); }
  void time(const LoopKernel& k, std::vector<std::map<std::string, HostArray>>& sets, const std::map<std::string, int64_t>& params,
            const Options& o, Trial& t) override {
    std::vector<ArgMap> args;
    for (auto& s : sets) args.push_back(host_arguments(k, s, params));
    ck->call(args[0]);  // warm-up
    std::vector<double> times;
    auto start = Clock::now();
    for (size_t i = 0; int(times.size()) < o.max_reps && (times.size() < 3 || since(start) < o.min_time_seconds); ++i) {
      auto t0 = Clock::now();
      ck->call(args[i % args.size()]);
      times.push_back(since(t0));
    }
    std::sort(times.begin(), times.end());
    t.median_seconds = times[times.size() / 2];
    t.min_seconds = times.front();
    t.max_seconds = times.back();
    t.reps = int(times.size());
  }
  std::unique_ptr<cpu::CpuKernel> ck;
};
#endif

struct CudaRunner : Runner {
  CudaRunner(GeneratedKernel g, const std::string& arch, Trial& t) {
    ck = std::make_unique<cuda::CudaKernel>(std::move(g), arch);
    t.compile_seconds = ck->binary().seconds;
    t.registers = ck->attributes().registers;
    t.shared_bytes = ck->generated().local_bytes();
  }
  void run(const ArgMap& host) override { ck->call_host(host); }
  void time(const LoopKernel& k, std::vector<std::map<std::string, HostArray>>& sets, const std::map<std::string, int64_t>& params,
            const Options& o, Trial& t) override {
    // the device copies of the inputs stay in the worker from trial to trial (uploading
    // a gigabyte per trial would cost more than the trial): the same host sets, the same buffers
    static int uploaded_from = 0;
    static std::vector<std::map<std::string, cuda::DeviceBuffer>> buffers;
    if (uploaded_from != timing_sets_made) {
      buffers.clear();
      buffers.resize(sets.size());
      for (size_t i = 0; i < sets.size(); ++i)
        for (auto& [n, h] : sets[i]) {
          cuda::DeviceBuffer b(h.bytes.size());
          b.upload(h.bytes.data(), h.bytes.size());
          buffers[i].emplace(n, std::move(b));
        }
      uploaded_from = timing_sets_made;
    }
    std::vector<ArgMap> dev;
    for (size_t i = 0; i < sets.size(); ++i) {
      ArgMap a = host_arguments(k, sets[i], params);
      for (auto& [n, h] : sets[i]) a[n].array.data = buffers[i].at(n).ptr();
      dev.push_back(a);
    }
    // a first estimate, then as many repetitions as min_time allows
    auto first = ck->time_each(dev, 3);
    int reps = int(std::clamp(o.min_time_seconds / std::max(first.median * 1e-3, 1e-7), 5.0, double(o.max_reps)));
    auto timing = ck->time_each(dev, reps);
    t.median_seconds = timing.median * 1e-3;
    t.min_seconds = timing.min * 1e-3;
    t.max_seconds = timing.max * 1e-3;
    t.reps = timing.reps;
  }
  std::unique_ptr<cuda::CudaKernel> ck;
};

// The code the trial runs, generated once: Loom's checks refuse an illegal
// schedule here (legality, races, bounds), with the target's limits.
GeneratedKernel generate_for(const LoopKernel& k, const Options& o) {
  return o.target == "cuda" ? generate(k, cuda::target_info(o.arch)) : generate(k);
}

std::unique_ptr<Runner> make_runner(GeneratedKernel g, const Options& o, Trial& t) {
  if (o.target == "cuda") return std::make_unique<CudaRunner>(std::move(g), o.arch, t);
#ifdef LOOM_HAS_CPU_TARGET
  if (o.target == "cpu") return std::make_unique<CpuRunner>(std::move(g), t);
#endif
  throw Error("the tuner has no target '" + o.target + "' in this build (cpu needs LLVM; cuda a GPU)");
}

// Statement instances a kernel runs at these sizes, from above: per
// instruction, the product of its inames' (and reductions') ranges there (their bounding box).
// nullopt where a range is not a number (loops bounded by computed values).
std::optional<double> instances_at(const LoopKernel& k, const std::map<std::string, int64_t>& sizes) {
  double total = 0;
  for (auto& insn : k.instructions) {
    std::set<std::string> inames = insn.within_inames;
    collect_reduction_inames(insn.rhs, inames);  // (a reduction's terms are instances too)
    isl::set d = islu::iteration_domain(k, {inames.begin(), inames.end()});
    isl_set* s = d.copy();
    for (int p = int(isl_set_dim(s, isl_dim_param)) - 1; p >= 0; --p) {
      auto v = sizes.find(isl_set_get_dim_name(s, isl_dim_param, unsigned(p)));
      if (v == sizes.end()) {
        isl_set_free(s);
        return std::nullopt;
      }
      s = isl_set_fix_si(s, isl_dim_param, unsigned(p), int(v->second));
    }
    double points = isl_set_is_empty(s) == isl_bool_true ? 0 : 1;
    for (int i = 0; i < int(isl_set_dim(s, isl_dim_set)) && points > 0; ++i) {
      isl_val* lo = isl_set_dim_min_val(isl_set_copy(s), i);
      isl_val* hi = isl_set_dim_max_val(isl_set_copy(s), i);
      bool known = lo && hi && isl_val_is_int(lo) && isl_val_is_int(hi);
      if (known) points *= double(isl_val_get_num_si(hi) - isl_val_get_num_si(lo) + 1);
      isl_val_free(lo);
      isl_val_free(hi);
      if (!known) {
        isl_set_free(s);
        return std::nullopt;
      }
    }
    isl_set_free(s);
    total += points;
  }
  return total;
}

// The check's expected outputs: the kernel as written (with the script's
// declarations, reference_kernel) run on the check's inputs once per
// reference and sizes, and kept for the worker's later trials, which
// mostly share it. It runs in the reference interpreter, the oracle
// independent of code generation, where that is cheap (at most
// kInterpretedInstances statement instances); else compiled for the tuned
// target as the kernel as written: a heat-3d checked at 67 x 69^3 (44
// million instances, seconds in the interpreter) then costs one compiled
// run per tuning run instead of seconds per trial.
constexpr double kInterpretedInstances = 2e6;
struct CheckReference {
  std::map<std::string, HostArray> inputs, want;
  std::string against;  // "the interpreter", "the kernel as written compiled for cuda"
};
const CheckReference& check_reference(const LoopKernel& reference, const LoopKernel& k, const std::map<std::string, int64_t>& sizes,
                                      const Options& o) {
  static std::string key;
  static CheckReference ref;
  std::string now = std::to_string(structural_hash(reference)) + "|";
  for (auto& [n, v] : sizes) now += n + "=" + std::to_string(v) + " ";
  now += arrays_key(k, sizes);  // (the arrays are made for the transformed kernel's interface)
  if (now == key) return ref;
  key.clear();
  ref = CheckReference{};
  ref.inputs = make_host_arrays(k, sizes, 7);
  place_check_inputs(k, sizes, o, ref.inputs);
  ref.want = ref.inputs;
  std::optional<double> work = instances_at(reference, sizes);
  if (work && *work > kInterpretedInstances) {
    Trial unused;
    make_runner(generate_for(reference, o), o, unused)->run(host_arguments(k, ref.want, sizes));
    ref.against = "the kernel as written compiled for " + o.target;
  } else {
    interpret(generate(reference), host_arguments(k, ref.want, sizes));
    ref.against = "the interpreter";
  }
  key = now;
  return ref;
}

// Fault injection for the tuner's own tests: LOOM_TUNE_FAULT=TEXT=crash|hang|wrong
// makes the worker die, hang or spoil the result of every trial whose script
// contains TEXT (no legal schedule should do any of these, so the paths that
// handle them are tested this way).
std::string injected_fault(const std::string& script) {
  const char* f = std::getenv("LOOM_TUNE_FAULT");
  if (!f) return "";
  std::string spec = f;
  size_t eq = spec.rfind('=');
  if (eq == std::string::npos || script.find(spec.substr(0, eq)) == std::string::npos) return "";
  return spec.substr(eq + 1);
}

// One trial, in the worker: its status, figures and error, as a log line.
std::string measure(const LoopKernel& as_written, const std::string& script, const Options& o) {
  Trial t;
  t.status = TrialStatus::Ok;
  std::string fault = injected_fault(script);
  if (fault == "crash") std::raise(SIGSEGV);
  if (fault == "hang")
    for (;;) pause();
  auto fail = [&](TrialStatus status, const std::string& why) {
    t.status = status;
    t.error = why;
  };
  try {
    auto t0 = Clock::now();
    std::vector<TransformStep> steps = parse_transform_script(script, "<trial>");
    LoopKernel k;
    GeneratedKernel g;
    try {
      if (std::string why = fixes_timed_parameter(steps, o); !why.empty()) throw Error(why);
      k = apply_transforms(as_written, steps);
      g = generate_for(k, o);  // (an illegal schedule is refused here, never run)
      // a grid CUDA cannot launch at the timed sizes (a large axis on g.1),
      // or offsets 32-bit indices cannot reach there, is refused before the
      // trial is run (it would fail at the launch)
      auto params = k.parameters();
      bool sized = std::all_of(params.begin(), params.end(), [&](auto& p) { return o.parameters.count(p) > 0; });
      if (sized) check_index_width(g, o.parameters);
      if (o.target == "cuda" && sized) cuda::check_grid(k.name, launch_dims(g, o.parameters));
    } catch (const Error& e) {
      fail(TrialStatus::Illegal, e.what());
    }
    t.generate_seconds = since(t0);
    if (t.status == TrialStatus::Ok) {
      t.variant_hash = structural_hash(k);
      std::unique_ptr<Runner> runner = make_runner(std::move(g), o, t);
      // the check: the kernel as written (with the script's declarations)
      auto small = check_sizes(k, o);
      const CheckReference& ref = check_reference(reference_kernel(as_written, steps, k), k, small, o);
      const auto& want = ref.want;
      auto got = ref.inputs;
      runner->run(host_arguments(k, got, small));
      if (fault == "wrong")
        for (auto& [n, a] : got)
          if (k.is_written(n) && a.size() > 0) a.set(a.size() / 2, a.get(a.size() / 2) + 1);
      std::string sizes;
      for (auto& [n, v] : small) sizes += (sizes.empty() ? "" : " ") + n + "=" + std::to_string(v);
      t.check = "passed";
      t.check_sizes = sizes;
      t.check_against = ref.against;
      for (auto& a : k.arguments) {
        if (a.kind != Argument::Array || !k.is_written(a.name)) continue;
        Comparison c = compare(want.at(a.name), got.at(a.name), tolerance(o.rtol, a.name), tolerance(o.atol, a.name));
        t.check_error = std::max(t.check_error, c.max_abs_error);
        if (!c.ok && t.status == TrialStatus::Ok) {
          t.check = "failed";
          fail(TrialStatus::Wrong, "'" + a.name + "' differs from the kernel as written at " + sizes + ": " + c.str());
        }
      }
      if (t.status == TrialStatus::Ok) {
        if (!assumptions_hold(k, o.parameters)) throw Error("the timed sizes break the schedule's assumptions");
        runner->time(k, timing_sets(k, o.parameters), o.parameters, o, t);
      }
    }
  } catch (const std::exception& e) {
    if (t.status == TrialStatus::Ok) fail(TrialStatus::Failed, e.what());
  }
  return t.to_json();  // (the log's form: the tuner reads it back with Trial::from_json)
}

std::string signal_name(int sig) {
  const char* s = strsignal(sig);
  return std::string(s ? s : "signal") + " (signal " + std::to_string(sig) + ")";
}

// The device this worker runs trials on, resolving target "auto".
nlohmann::json hello(Options& o) {
  nlohmann::json h;
  std::string why;
  if (o.target == "auto") {
    o.target = cuda::gpu_available(&why) ? "cuda" : "cpu";
#ifndef LOOM_HAS_CPU_TARGET
    if (o.target == "cpu") throw Error("no GPU (" + why + ") and no CPU target in this build: nothing to tune on");
#endif
  }
  h["target"] = o.target;
  if (o.target == "cuda") {
    if (!cuda::gpu_available(&why)) throw Error("tuning for the cuda target needs a GPU (" + why + "); --target cpu tunes on the CPU");
    const auto& d = cuda::device();
    if (o.arch.empty()) o.arch = d.arch();
    h["device"] = d.name;
    h["arch"] = o.arch;
    h["max_shared_bytes"] = o.arch.rfind(d.arch(), 0) == 0 ? d.max_shared_optin : 0;
  } else {
#ifdef LOOM_HAS_CPU_TARGET
    h["device"] = "CPU " + cpu::target_cpu() + ", " + std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
#else
    throw Error("the cpu target is not in this build (it needs LLVM 19)");
#endif
  }
  return h;
}

std::string setup_message(const LoopKernel& k, const Options& o) {
  nlohmann::json j;
  j["kernel"] = kernel_to_json(k, -1);
  j["target"] = o.target;
  j["arch"] = o.arch;
  j["parameters"] = o.parameters;
  j["check_parameters"] = o.check_parameters;
  j["min_time_seconds"] = o.min_time_seconds;
  j["max_reps"] = o.max_reps;
  j["check_inputs"] = o.check_inputs;
  j["rtol"] = o.rtol;
  j["atol"] = o.atol;
  return j.dump();
}

}  // namespace

int serve_trials(int in, int out) {
  std::string setup, script;
  if (!receive_message(in, setup)) return 1;
  LoopKernel k;
  Options o;
  try {
    auto j = nlohmann::json::parse(setup);
    k = kernel_from_json(j["kernel"].get<std::string>(), "<the tuned kernel>");
    o.target = j["target"];
    o.arch = j["arch"];
    o.parameters = j["parameters"].get<std::map<std::string, int64_t>>();
    o.check_parameters = j["check_parameters"].get<std::map<std::string, int64_t>>();
    o.min_time_seconds = j["min_time_seconds"];
    o.max_reps = j["max_reps"];
    o.check_inputs = j.value("check_inputs", std::map<std::string, std::string>{});
    o.rtol = j.value("rtol", std::map<std::string, double>{});
    o.atol = j.value("atol", std::map<std::string, double>{});
    nlohmann::json h = hello(o);
    if (!send_message(out, h.dump())) return 1;
  } catch (const std::exception& e) {
    nlohmann::json h;
    h["error"] = e.what();
    send_message(out, h.dump());
    return 1;
  }
  while (receive_message(in, script))
    if (!send_message(out, measure(k, script, o))) break;
  return 0;
}

MeasureWorker::MeasureWorker(const LoopKernel& k, const Options& o, std::string gpu) : kernel_(k), options_(o), gpu_(std::move(gpu)) {}
MeasureWorker::~MeasureWorker() { stop(); }

void MeasureWorker::start() {
  int request[2], reply[2];
  if (pipe(request) != 0 || pipe(reply) != 0) throw Error("tuner: cannot create the worker's pipes");
  std::vector<std::string> argv_strings = options_.worker_command;
  std::fflush(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw Error("tuner: cannot fork the measuring worker");
  if (pid_ == 0) {
    ::close(request[1]);
    ::close(reply[0]);
    if (!gpu_.empty()) setenv("CUDA_VISIBLE_DEVICES", gpu_.c_str(), 1);  // (before anything opens the driver)
    // the pipes on fds 3 and 4, and no other descriptor of the tuner's: a copy
    // of a screening worker's pipe kept open here would keep its reader
    // waiting for an end that never comes
    int in = fcntl(request[0], F_DUPFD, 5), out = fcntl(reply[1], F_DUPFD, 5);
    if (in < 0 || out < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0) _exit(127);
    close_range(5, ~0U, 0);
    if (argv_strings.empty()) _exit(serve_trials(3, 4));
    std::vector<char*> argv;
    for (auto& a : argv_strings) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  ::close(request[0]);
  ::close(reply[1]);
  to_ = request[1];
  from_ = reply[0];
  std::string h;
  if (!send_message(to_, setup_message(kernel_, options_)) || !receive_message(from_, h)) {
    stop();
    std::string cmd;
    for (auto& a : argv_strings) cmd += (cmd.empty() ? "" : " ") + a;
    throw Error("tuner: the measuring worker did not start" + (cmd.empty() ? std::string() : " ('" + cmd + "')"));
  }
  auto j = nlohmann::json::parse(h);
  if (j.contains("error")) {
    stop();
    throw Error(j["error"].get<std::string>());
  }
  info_ = {j["target"], j.value("device", ""), j.value("arch", ""), j.value("max_shared_bytes", 0)};
}

const WorkerInfo& MeasureWorker::info() {
  if (pid_ <= 0) start();
  return info_;
}

void MeasureWorker::stop() {
  if (pid_ <= 0) return;
  ::close(to_);
  ::close(from_);
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool MeasureWorker::begin(const Trial& t) {
  if (pid_ <= 0) start();
  started_ = std::chrono::steady_clock::now();
  busy_ = true;
  return send_message(to_, t.script);
}

double MeasureWorker::seconds_left() const {
  return options_.trial_timeout_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

void MeasureWorker::finish(Trial& t, bool sent) {
  busy_ = false;
  auto fail = [&](TrialStatus status, const std::string& why) {
    t.status = status;
    t.error = why;
  };
  if (!sent) {
    stop();
    return fail(TrialStatus::Crashed, "the measuring worker had exited");
  }
  pollfd p{from_, POLLIN, 0};
  int ready = poll(&p, 1, std::max(0, int(seconds_left() * 1000)));
  std::string reply;
  if (ready <= 0) {
    stop();
    char buf[96];
    std::snprintf(buf, sizeof buf, "no result within %.0f s: the worker was killed", options_.trial_timeout_seconds);
    return fail(TrialStatus::Failed, buf);
  }
  if (!receive_message(from_, reply)) {  // the worker died on this trial
    ::close(to_);
    ::close(from_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    ++restarts_;
    return fail(TrialStatus::Crashed, WIFSIGNALED(status) ? "the measuring worker died of " + signal_name(WTERMSIG(status))
                                               : "the measuring worker exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  t.adopt(Trial::from_json(reply));
}

void MeasureWorker::measure(Trial& t) { finish(t, begin(t)); }

static int visible_gpus() {
  // counted without the driver (this process must not initialize CUDA):
  // CUDA_VISIBLE_DEVICES when set, else the /dev/nvidiaN nodes
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string s = v;
    if (s.empty() || s == "-1") return 0;
    return int(std::count(s.begin(), s.end(), ',')) + 1;
  }
  int n = 0;
  while (access(("/dev/nvidia" + std::to_string(n)).c_str(), F_OK) == 0) ++n;
  return n;
}

std::vector<std::string> visible_gpu_ids() {
  std::vector<std::string> ids;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string s = v;
    for (size_t b = 0; !s.empty() && s != "-1";) {
      size_t c = s.find(',', b);
      ids.push_back(s.substr(b, c == std::string::npos ? std::string::npos : c - b));
      if (c == std::string::npos) break;
      b = c + 1;
    }
    return ids;
  }
  for (int i = 0, n = visible_gpus(); i < n; ++i) ids.push_back(std::to_string(i));
  return ids;
}

}  // namespace loom::tune::detail

namespace loom::tune {
int worker_main(int in_fd, int out_fd) { return detail::serve_trials(in_fd, out_fd); }
}  // namespace loom::tune

namespace loom::tune {
Measurer::Measurer(const LoopKernel& as_written, const Options& o) : worker_(std::make_unique<detail::MeasureWorker>(as_written, o)) {}
Measurer::~Measurer() = default;
std::string Measurer::target() { return worker_->info().target; }
std::string Measurer::device() { return worker_->info().device; }
std::string Measurer::arch() { return worker_->info().arch; }
int Measurer::max_shared_bytes() { return worker_->info().max_shared_bytes; }
Trial Measurer::measure(const std::string& script) {
  Trial t;
  t.script = script;
  t.target = target();
  t.device = device();
  worker_->measure(t);
  return t;
}
}  // namespace loom::tune
