// NVRTC through dlopen: libnvrtc.so.13, then libnvrtc.so, then the CUDA
// toolkit's lib64 folder ($CUDA_HOME, /usr/local/cuda). Compiles CUDA C to
// CUBIN with ptxas' verbose report, caches results in memory, and turns a
// failed compile into a CudaError showing the log with the offending lines.
// Sources that include the toolkit's headers (cuda_fp16.h for float16) get
// the toolkit's include folder, found beside the loaded NVRTC or in the usual
// places.
#include <dlfcn.h>
#include <sys/stat.h>

#include <filesystem>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <unordered_map>

#include "loom/cuda.h"
#include "loom/disk_cache.h"

namespace loom::cuda {

namespace {

using nvrtcProgram = struct _nvrtcProgram*;

struct Nvrtc {
  void* lib = nullptr;
  std::string error;
  int (*CreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*CompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  int (*GetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  int (*GetProgramLog)(nvrtcProgram, char*) = nullptr;
  int (*GetCUBINSize)(nvrtcProgram, size_t*) = nullptr;
  int (*GetCUBIN)(nvrtcProgram, char*) = nullptr;
  int (*GetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  int (*GetPTX)(nvrtcProgram, char*) = nullptr;
  int (*DestroyProgram)(nvrtcProgram*) = nullptr;
  const char* (*GetErrorString)(int) = nullptr;
  int (*Version)(int*, int*) = nullptr;

  Nvrtc() {
    std::vector<std::string> candidates = {"libnvrtc.so.13", "libnvrtc.so"};
    for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
      if (const char* h = std::getenv(env)) candidates.push_back(std::string(h) + "/lib64/libnvrtc.so.13");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so.13");
    candidates.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    for (auto& c : candidates)
      if ((lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      error = "NVRTC not found (tried libnvrtc.so.13, libnvrtc.so, $CUDA_HOME/lib64, /usr/local/cuda/lib64): install the CUDA toolkit's NVRTC";
      return;
    }
    bool ok = sym(CreateProgram, "nvrtcCreateProgram") && sym(CompileProgram, "nvrtcCompileProgram") &&
              sym(GetProgramLogSize, "nvrtcGetProgramLogSize") && sym(GetProgramLog, "nvrtcGetProgramLog") &&
              sym(GetCUBINSize, "nvrtcGetCUBINSize") && sym(GetCUBIN, "nvrtcGetCUBIN") &&
              sym(DestroyProgram, "nvrtcDestroyProgram") && sym(GetErrorString, "nvrtcGetErrorString") &&
              sym(Version, "nvrtcVersion");
    if (!ok) {
      error = "libnvrtc lacks " + missing + " (too old an NVRTC?)";
      lib = nullptr;
    }
    if (lib) {  // PTX (compiled.asm["ptx"]) only; the CUBIN path needs none of these
      GetPTXSize = reinterpret_cast<decltype(GetPTXSize)>(dlsym(lib, "nvrtcGetPTXSize"));
      GetPTX = reinterpret_cast<decltype(GetPTX)>(dlsym(lib, "nvrtcGetPTX"));
    }
  }
  template <class F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    if (!f) missing = name;
    return f != nullptr;
  }
  std::string missing;
};

const Nvrtc& api() {
  static Nvrtc n;
  return n;
}

// The folder holding cuda_fp16.h: $CUDA_HOME, $CUDA_PATH, the toolkit the
// loaded libnvrtc belongs to (lib64/../include, or targets/<arch>/lib/../include),
// /usr/local/cuda, /usr/include. Empty when none has it.
std::string toolkit_include_dir() {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* h = std::getenv(env)) candidates.push_back(fs::path(h) / "include");
  void* create = api().lib ? dlsym(api().lib, "nvrtcCreateProgram") : nullptr;
  Dl_info info{};
  if (create && dladdr(create, &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::canonical(info.dli_fname, ec).parent_path();
    candidates.push_back(lib.parent_path() / "include");
    candidates.push_back(lib.parent_path().parent_path() / "include");
  }
  candidates.push_back("/usr/local/cuda/include");
  candidates.push_back("/usr/include");
  for (auto& c : candidates) {
    std::error_code ec;
    if (fs::exists(c / "cuda_fp16.h", ec)) return c.string();
  }
  return "";
}

// Each "kernel.cu(LINE): ..." line of the log, followed by that source line.
std::string annotate(const std::string& log, const std::string& source) {
  std::vector<std::string> lines;
  std::stringstream ss(source);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  std::ostringstream out;
  std::regex where(R"(\((\d+)\):)");
  std::stringstream ls(log);
  for (std::string l; std::getline(ls, l);) {
    out << "  " << l << "\n";
    std::smatch m;
    if (std::regex_search(l, m, where)) {
      size_t n = std::stoul(m[1]);
      if (n >= 1 && n <= lines.size()) out << "    " << n << " | " << lines[n - 1] << "\n";
    }
  }
  return out.str();
}

// Creates and compiles a program (arch_opt: --gpu-architecture=sm_XX or
// compute_XX); on failure raises CudaError with the log and the source lines.
nvrtcProgram compile_program(const Nvrtc& n, const std::string& source, const std::string& arch_opt, const std::string& arch,
                             std::string& log) {
  nvrtcProgram prog = nullptr;
  int rc = n.CreateProgram(&prog, source.c_str(), "kernel.cu", 0, nullptr, nullptr);
  if (rc != 0) throw CudaError(std::string("nvrtcCreateProgram: ") + n.GetErrorString(rc));
  std::string include_opt;
  std::vector<const char*> opts = {arch_opt.c_str(), "-std=c++17", "--ptxas-options=-v"};
  if (source.find("#include <cuda_") != std::string::npos) {
    static const std::string dir = toolkit_include_dir();  // the loaded NVRTC does not change
    if (dir.empty()) {
      n.DestroyProgram(&prog);
      throw CudaError("the kernel uses float16/bfloat16, which need the CUDA toolkit's cuda_fp16.h: none found "
                      "(set CUDA_HOME; tried $CUDA_HOME/include, $CUDA_PATH/include, beside libnvrtc, "
                      "/usr/local/cuda/include, /usr/include)");
    }
    include_opt = "--include-path=" + dir;
    opts.push_back(include_opt.c_str());
  }
  rc = n.CompileProgram(prog, int(opts.size()), opts.data());
  size_t log_size = 0;
  n.GetProgramLogSize(prog, &log_size);
  log.assign(log_size, '\0');
  if (log_size) n.GetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (rc != 0) {
    n.DestroyProgram(&prog);
    throw CudaError(std::string("NVRTC failed to compile the generated CUDA C for ") + arch + " (" + n.GetErrorString(rc) +
                    "):\n" + annotate(log, source));
  }
  return prog;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  if (api().lib) return true;
  if (why) *why = api().error;
  return false;
}

std::string nvrtc_version() {
  if (!api().lib) return "none";
  int a = 0, b = 0;
  api().Version(&a, &b);
  return std::to_string(a) + "." + std::to_string(b);
}

namespace {

// What decides which libnvrtc and libcuda the loader picks: the variables
// it and Loom read, /etc/ld.so.cache, and each candidate file's identity.
std::string library_fingerprint() {
  std::string fp;
  std::vector<std::string> files = {"/etc/ld.so.cache", "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so",
                                    "/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"};
  for (const char* env : {"LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(env);
    fp += std::string(env) + "=" + (v ? v : "") + "\n";
    if (!v) continue;
    std::stringstream dirs(v);
    std::string dir;
    while (std::getline(dirs, dir, ':'))
      for (const char* lib : {"libnvrtc.so.13", "libnvrtc.so", "libcuda.so.1", "lib64/libnvrtc.so.13"})
        files.push_back(dir + "/" + lib);
  }
  for (auto& f : files) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0) continue;
    fp += f + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec) + "\n";
  }
  return fp;
}

// NVRTC's and the driver's versions, for the disk cache's keys. Loading
// libnvrtc costs 6-9 ms, more than a whole cache hit may, so the answer is
// kept in the cache under the fingerprint of the libraries the loader would
// pick: a later process with the same fingerprint loads neither library.
std::string toolchain_versions(const DiskCache& disk) {
  static const std::string versions = [&] {
    std::string key = "loom-toolchain\n" + library_fingerprint();
    if (auto v = disk.get(key)) return *v;
    std::string v = "nvrtc " + nvrtc_version() + "\ndriver " + driver_version();
    disk.put(key, v);
    return v;
  }();
  return versions;
}

// Everything a CUBIN depends on besides the source: what the disk cache's key names.
std::string binary_key(const DiskCache& disk, const std::string& source, const std::string& arch) {
  std::string include = source.find("#include <cuda_") != std::string::npos ? toolkit_include_dir() : "";
  return "loom-cubin\nloom " LOOM_VERSION "\n" + toolchain_versions(disk) + "\narch " + arch +
         "\noptions -std=c++17 --ptxas-options=-v " + include + "\n" + source;
}

// A CompileResult as a cache value: registers, spills, the log's length, the log, the CUBIN.
std::string serialize(const CompileResult& r) {
  return std::to_string(r.registers) + "\n" + std::to_string(r.spill_bytes) + "\n" + std::to_string(r.log.size()) + "\n" +
         r.log + r.cubin;
}

std::optional<CompileResult> deserialize(const std::string& v, const std::string& arch) {
  CompileResult r;
  r.arch = arch;
  size_t a = v.find('\n'), b = a == std::string::npos ? a : v.find('\n', a + 1);
  size_t c = b == std::string::npos ? b : v.find('\n', b + 1);
  if (c == std::string::npos) return std::nullopt;
  try {
    r.registers = std::stoi(v.substr(0, a));
    r.spill_bytes = std::stoi(v.substr(a + 1, b - a - 1));
    size_t log_size = std::stoull(v.substr(b + 1, c - b - 1));
    if (c + 1 + log_size > v.size()) return std::nullopt;
    r.log = v.substr(c + 1, log_size);
    r.cubin = v.substr(c + 1 + log_size);
  } catch (...) {
    return std::nullopt;
  }
  return r;
}

}  // namespace

CompileResult compile(const std::string& source, const std::string& arch) {
  static std::mutex mu;
  static std::unordered_map<std::string, CompileResult> cache;  // (one NVRTC per process)
  const std::string key = arch + "\n" + source;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      CompileResult r = it->second;
      r.cached = true;
      return r;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  const DiskCache& disk = DiskCache::process_cache();
  std::string disk_key = disk.enabled() ? binary_key(disk, source, arch) : "";
  if (disk.enabled())
    if (auto v = disk.get(disk_key))
      if (auto hit = deserialize(*v, arch)) {
        CompileResult r = *hit;
        r.disk_cache = "loaded from " + disk.dir();
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard<std::mutex> lock(mu);
        cache[key] = r;
        r.cached = true;
        return r;
      }
  const Nvrtc& n = api();  // loaded only now: a hit above needs no NVRTC
  if (!n.lib) throw CudaError(n.error);
  std::string log;
  nvrtcProgram prog = compile_program(n, source, "--gpu-architecture=" + arch, arch, log);
  size_t size = 0;
  n.GetCUBINSize(prog, &size);
  CompileResult r;
  r.cubin.resize(size);
  n.GetCUBIN(prog, r.cubin.data());
  n.DestroyProgram(&prog);
  r.log = log;
  r.arch = arch;
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Used (\d+) registers)"))) r.registers = std::stoi(m[1]);
  if (std::regex_search(log, m, std::regex(R"((\d+) bytes spill stores)"))) r.spill_bytes = std::stoi(m[1]);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string why;
  if (!disk.enabled()) r.disk_cache = "off (LOOM_CACHE=off)";
  else if (disk.put(disk_key, serialize(r), &why)) r.disk_cache = "stored in " + disk.dir();
  else r.disk_cache = "not stored: " + why;
  std::lock_guard<std::mutex> lock(mu);
  cache[key] = r;
  return r;
}

std::string compile_ptx(const std::string& source, const std::string& arch) {
  const Nvrtc& n = api();
  if (!n.lib) throw CudaError(n.error);
  if (!n.GetPTX || !n.GetPTXSize) throw CudaError("this libnvrtc has no nvrtcGetPTX");
  std::string virt = arch.rfind("sm_", 0) == 0 ? "compute_" + arch.substr(3) : arch;
  std::string log;
  nvrtcProgram prog = compile_program(n, source, "--gpu-architecture=" + virt, virt, log);
  size_t size = 0;
  n.GetPTXSize(prog, &size);
  std::string ptx(size, '\0');
  n.GetPTX(prog, ptx.data());
  n.DestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace loom::cuda
