// bench/cpu: the CPU target on the untransformed examples vector_add, matvec
// and matmul (the loops as written, one thread) against the same loops
// compiled by g++ -O3 -march=native, side by side; median of repeated runs.
// Goal (issue 3): within 1.5x of g++ -O3 on each. Also shows the tagged
// (GPU-scheduled) versions run on all cores, for reference.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "loom/cpu.h"
#include "loom/parser.h"
#include "loom/transforms.h"

void ref_vector_add(const float* a, const float* b, float* out, int n);
void ref_matvec(const float* A, const float* x, float* y, int n, int m);
void ref_matmul(const float* a, const float* b, float* c, int n, int m, int l);

using namespace loom;

namespace {
double median_ms(const std::function<void()>& f, int reps) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Case {
  const char* example;
  std::map<std::string, int64_t> params;
  std::function<void(std::map<std::string, HostArray>&)> reference;
  int reps;
};
}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "examples";
  std::vector<Case> cases = {
      {"vector_add", {{"n", 1 << 24}},
       [](auto& a) { ref_vector_add((float*)a.at("a").bytes.data(), (float*)a.at("b").bytes.data(), (float*)a.at("out").bytes.data(), 1 << 24); },
       20},
      {"matvec", {{"n", 4096}, {"m", 4096}},
       [](auto& a) { ref_matvec((float*)a.at("A").bytes.data(), (float*)a.at("x").bytes.data(), (float*)a.at("y").bytes.data(), 4096, 4096); },
       10},
      {"matmul", {{"n", 512}, {"m", 512}, {"l", 512}},
       [](auto& a) {
         ref_matmul((float*)a.at("a").bytes.data(), (float*)a.at("b").bytes.data(), (float*)a.at("c").bytes.data(), 512, 512, 512);
       },
       5},
  };
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  std::printf("CPU target vs g++ -O3 -march=native, same loops, one thread (ms, median)\n");
  std::printf("%-11s %-24s %10s %10s %7s | %s\n", "kernel", "size", "g++ -O3", "Loom", "ratio", "Loom tagged version, all cores");
  for (auto& c : cases) {
    KernelFile f = parse_kernel_file(dir + "/" + c.example + ".loom");
    auto arrays = make_host_arrays(f.kernel, c.params, 1);
    ArgMap args;
    for (auto& [n, a] : arrays) args[n] = ArgValue::of(a.ref());
    cpu::CpuKernel plain(f.kernel);
    cpu::CpuKernel tagged(apply_transforms(f.kernel, f.transforms));
    double gcc = median_ms([&] { c.reference(arrays); }, c.reps);
    double loom = median_ms([&] { plain.call(args, 1); }, c.reps);
    double par = median_ms([&] { tagged.call(args, int(cores)); }, c.reps);
    std::string size;
    for (auto& [k, v] : c.params) size += (size.empty() ? "" : ",") + k + "=" + std::to_string(v);
    std::printf("%-11s %-24s %10.3f %10.3f %6.2fx | %.3f ms on %u threads\n", c.example, size.c_str(), gcc, loom, loom / gcc, par,
                cores);
  }
  std::printf("goal: ratio <= 1.5 on each\n");
  return 0;
}
