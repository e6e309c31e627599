// compile_variants (loom/variants.h): a fork-based pool. Forking after the
// kernel is built gives each worker its own copy of everything (the isl
// context, the caches), so code generation needs no locks and one worker's
// crash cannot corrupt another's state (one worker is forked too, so the
// caller's process never runs a variant); each worker writes one framed
// record per variant to its pipe as soon as
// it is done, and the parent reads all pipes with poll(). Workers take the
// next variant from a counter in shared memory, so a crash costs exactly the
// variant its worker was on.
#include "loom/variants.h"

#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <new>
#include <cstring>
#include <functional>
#include <thread>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/statistics.h"
#include "loom/transforms.h"

namespace loom {

namespace {

// Records: index, then the fields as length-prefixed strings.
void put(std::string& out, const std::string& s) {
  uint64_t n = s.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += s;
}

std::string encode(size_t index, const VariantResult& r) {
  std::string body;
  put(body, r.ok ? "1" : "0");
  put(body, r.error);
  put(body, std::to_string(r.hash));
  put(body, r.cuda);
  put(body, r.cubin);
  put(body, std::to_string(r.registers));
  put(body, std::to_string(r.spill_bytes));
  put(body, std::to_string(r.shared_bytes));
  put(body, std::to_string(r.threads));
  put(body, std::to_string(r.generate_seconds));
  put(body, std::to_string(r.compile_seconds));
  std::string features;
  for (auto& [n, v] : r.features) {
    char num[64];
    std::snprintf(num, sizeof num, "%.17g", v);
    features += n + "=" + num + ";";
  }
  put(body, features);
  std::string rec;
  uint64_t idx = index, len = body.size();
  rec.append(reinterpret_cast<const char*>(&idx), sizeof idx);
  rec.append(reinterpret_cast<const char*>(&len), sizeof len);
  return rec + body;
}

// "Worker starts variant index": a record without a body, so the parent
// knows which variant a worker is on (and how long it has been at it).
constexpr uint64_t kStarted = ~uint64_t(0);
std::string encode_start(size_t index) {
  std::string rec;
  uint64_t idx = index, len = kStarted;
  rec.append(reinterpret_cast<const char*>(&idx), sizeof idx);
  rec.append(reinterpret_cast<const char*>(&len), sizeof len);
  return rec;
}

// 0: no whole record yet; 1: a result for index; 2: a worker started index.
int decode(std::string& buf, size_t& index, VariantResult& r) {
  if (buf.size() < 16) return 0;
  uint64_t idx, len;
  std::memcpy(&idx, buf.data(), 8);
  std::memcpy(&len, buf.data() + 8, 8);
  if (len == kStarted) {
    index = size_t(idx);
    buf.erase(0, 16);
    return 2;
  }
  if (buf.size() < 16 + len) return 0;
  size_t at = 16;
  auto get = [&]() {
    uint64_t n;
    std::memcpy(&n, buf.data() + at, 8);
    std::string s = buf.substr(at + 8, n);
    at += 8 + n;
    return s;
  };
  r.ok = get() == "1";
  r.error = get();
  r.hash = std::stoull(get());
  r.cuda = get();
  r.cubin = get();
  r.registers = std::stoi(get());
  r.spill_bytes = std::stoi(get());
  r.shared_bytes = std::stoll(get());
  r.threads = std::stoll(get());
  r.generate_seconds = std::stod(get());
  r.compile_seconds = std::stod(get());
  std::string features = get();
  for (size_t at_f = 0; at_f < features.size();) {
    size_t eq = features.find('=', at_f), end = features.find(';', at_f);
    if (eq == std::string::npos || end == std::string::npos) break;
    r.features[features.substr(at_f, eq - at_f)] = std::stod(features.substr(eq + 1, end - eq - 1));
    at_f = end + 1;
  }
  index = size_t(idx);
  buf.erase(0, 16 + len);
  return 1;
}

void write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

VariantResult one_variant(const std::function<LoopKernel()>& make, const TargetInfo& target, const VariantOptions& o) {
  VariantResult r;
  try {
    auto t0 = std::chrono::steady_clock::now();
    LoopKernel k = make();
    r.hash = structural_hash(k);
    GeneratedKernel g = generate(k, target);
    r.cuda = cuda::print_source(g);
    r.shared_bytes = g.local_bytes();
    r.threads = g.threads_per_block();
    for (auto& l : g.launches) r.threads = std::max(r.threads, l.threads_per_block());
    r.generate_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!o.feature_parameters.empty()) {
      try {
        r.features = kernel_features(g, o.feature_parameters);
      } catch (const std::exception&) {
        r.features.clear();  // (features are for the model: a kernel they cannot describe still runs)
      }
    }
    if (o.compile) {
      cuda::CompileResult c = cuda::compile(r.cuda, target.arch);
      r.cubin = c.cubin;
      r.registers = c.registers;
      r.spill_bytes = c.spill_bytes;
      r.compile_seconds = c.seconds;
    }
    r.ok = true;
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = e.what();
  }
  return r;
}

std::vector<VariantResult> run_pool(size_t n, const std::function<LoopKernel(size_t)>& make, const VariantOptions& o) {
  std::vector<VariantResult> out(n);
  if (n == 0) return out;
  TargetInfo target = o.target ? *o.target : cuda::target_info(o.arch);  // (asks the driver here, once, not in the workers)
  int workers = o.workers > 0 ? o.workers : int(std::max(1u, std::thread::hardware_concurrency()));
  workers = int(std::min<size_t>(size_t(workers), n));
  // the next variant to take, shared by the workers (variants differ in cost:
  // a worker takes the next one when it is done, so none waits on another's share)
  void* page = mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw Error("compile_variants: mmap failed");
  auto* next = new (page) std::atomic<uint64_t>(0);
  struct Worker {
    pid_t pid = -1;
    int fd = -1;
    std::string buf;
    long current = -1;  // the variant it is on, and since when
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Worker> ws(static_cast<size_t>(workers));
  std::vector<bool> done(n, false);
  std::fflush(stdout);
  std::fflush(stderr);
  for (int w = 0; w < workers; ++w) {
    int p[2];
    if (pipe(p) != 0) throw Error("compile_variants: pipe failed");
    pid_t pid = fork();
    if (pid < 0) throw Error("compile_variants: fork failed");
    if (pid == 0) {
      ::close(p[0]);
      for (size_t i; (i = size_t(next->fetch_add(1))) < n;) {
        write_all(p[1], encode_start(i));
        write_all(p[1], encode(i, one_variant([&] { return make(i); }, target, o)));
      }
      ::close(p[1]);
      _exit(0);
    }
    ::close(p[1]);
    ws[size_t(w)].pid = pid;
    ws[size_t(w)].fd = p[0];
  }
  // read every pipe until each worker closes it (or is stopped for taking too long)
  auto now = [] { return std::chrono::steady_clock::now(); };
  for (size_t open = ws.size(); open > 0;) {
    std::vector<pollfd> fds;
    int wait_ms = -1;
    for (auto& w : ws) {
      if (w.fd < 0) continue;
      fds.push_back({w.fd, POLLIN, 0});
      if (o.seconds_per_variant > 0 && w.current >= 0) {
        double left = o.seconds_per_variant - std::chrono::duration<double>(now() - w.since).count();
        int ms = std::max(0, int(left * 1000) + 1);
        wait_ms = wait_ms < 0 ? ms : std::min(wait_ms, ms);
      }
    }
    int ready = poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) continue;
    for (auto& w : ws)  // past its time: stopped; its variant says so, the others go on
      if (o.seconds_per_variant > 0 && w.fd >= 0 && w.current >= 0 &&
          std::chrono::duration<double>(now() - w.since).count() > o.seconds_per_variant) {
        kill(w.pid, SIGKILL);
        VariantResult& r = out[size_t(w.current)];
        r.ok = false;
        r.stopped = true;
        char buf[128];
        std::snprintf(buf, sizeof buf, "generating and compiling it took longer than %g s: stopped", o.seconds_per_variant);
        r.error = buf;
        done[size_t(w.current)] = true;
        w.current = -1;
      }
    if (ready == 0) continue;
    for (auto& f : fds) {
      if (!(f.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Worker& w = *std::find_if(ws.begin(), ws.end(), [&](auto& x) { return x.fd == f.fd; });
      char chunk[65536];
      ssize_t got = ::read(w.fd, chunk, sizeof chunk);
      if (got > 0) {
        w.buf.append(chunk, size_t(got));
        size_t idx;
        VariantResult r;
        for (int got_record; (got_record = decode(w.buf, idx, r)) != 0;) {
          if (got_record == 2) {
            w.current = long(idx);
            w.since = now();
            continue;
          }
          out[idx] = std::move(r);
          done[idx] = true;
          w.current = -1;
          r = VariantResult{};
        }
        continue;
      }
      ::close(w.fd);
      w.fd = -1;
      --open;
    }
  }
  // a variant without a result was the one its worker was on when it died
  std::string why;
  for (int w = 0; w < workers; ++w) {
    int status = 0;
    waitpid(ws[size_t(w)].pid, &status, 0);
    if (WIFSIGNALED(status)) why = "the worker generating this variant died (signal " + std::to_string(WTERMSIG(status)) + ")";
    else if (WEXITSTATUS(status) != 0 && why.empty())
      why = "the worker generating this variant exited without a result (status " + std::to_string(WEXITSTATUS(status)) + ")";
  }
  munmap(page, sizeof(std::atomic<uint64_t>));
  for (size_t i = 0; i < n; ++i)
    if (!done[i]) {
      out[i].ok = false;
      out[i].stopped = true;
      out[i].error = why.empty() ? "the worker generating this variant stopped without a result" : why;
    }
  return out;
}

}  // namespace

std::vector<VariantResult> compile_variants(const LoopKernel& k, const std::vector<std::vector<TransformStep>>& scripts,
                                            const VariantOptions& options) {
  return run_pool(scripts.size(), [&](size_t i) { return apply_transforms(k, scripts[i]); }, options);
}

std::vector<VariantResult> compile_variants(size_t n, const std::function<LoopKernel(size_t)>& make, const VariantOptions& options) {
  return run_pool(n, make, options);
}

std::vector<VariantResult> compile_variants(const std::vector<LoopKernel>& kernels, const VariantOptions& options) {
  return run_pool(kernels.size(), [&](size_t i) { return kernels[i]; }, options);
}

}  // namespace loom
