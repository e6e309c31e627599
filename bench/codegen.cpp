// bench/codegen: time from kernel text through the transforms to CUDA C for
// each example, per stage, median of repeated runs in one process (isl's
// context and other one-time set-up are warmed up first and excluded).
// Peers: loopy 2025.2 on this class of machine (caches off) needs 20 ms for
// a split/tagged vector add and 240 ms for a tiled matrix product with two
// prefetches; Loom's goal is 100x less (<= 0.2 ms for the vector add).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/transforms.h"

using namespace loom;
using Clock = std::chrono::steady_clock;

namespace {
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double since(Clock::time_point& t) {
  auto now = Clock::now();
  double s = std::chrono::duration<double>(now - t).count();
  t = now;
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "examples";
  int reps = argc > 2 ? std::atoi(argv[2]) : 200;
  std::vector<std::string> files;
  for (auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".loom") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());

  std::printf("Loom code generation, text -> CUDA C, median of %d runs (ms)\n", reps);
  std::printf("%-18s %8s %9s %10s %9s %8s %9s %7s | %8s\n", "kernel", "parse", "transform", "preprocess", "linearize",
              "hw axes", "loop nest", "print", "total");
  for (auto& f : files) {
    std::string text = read_text_file(f);
    std::vector<double> parse, transform, pre, lin, hw, nest, print, total;
    for (int r = 0; r < reps + 5; ++r) {
      auto t0 = Clock::now(), t = t0;
      KernelFile kf = parse_kernel_text(text, f);
      double tp = since(t);
      LoopKernel k = apply_transforms(kf.kernel, kf.transforms);
      double tt = since(t);
      StageTimes st;
      GeneratedKernel g = generate(k, &st);
      since(t);
      std::string src = cuda::print_source(g);
      double tpr = since(t);
      double all = std::chrono::duration<double>(Clock::now() - t0).count();
      if (r < 5) continue;  // warm-up
      parse.push_back(tp);
      transform.push_back(tt);
      pre.push_back(st.preprocess);
      lin.push_back(st.linearize);
      hw.push_back(st.hardware_axes);
      nest.push_back(st.loop_nest);
      print.push_back(tpr);
      total.push_back(all);
    }
    std::string name = std::filesystem::path(f).stem().string();
    std::printf("%-18s %8.3f %9.3f %10.3f %9.3f %8.3f %9.3f %7.3f | %8.3f\n", name.c_str(), median(parse) * 1e3,
                median(transform) * 1e3, median(pre) * 1e3, median(lin) * 1e3, median(hw) * 1e3, median(nest) * 1e3,
                median(print) * 1e3, median(total) * 1e3);
  }
  std::printf("\npeers (loopy 2025.2, caches off): vector add 20 ms, tiled matmul with two prefetches 240 ms;\n"
              "goal: 100x less than loopy (vector add <= 0.2 ms).\n");
  return 0;
}
