// Prints the random-kernel generator's kernels (tests/common/random_kernel.h)
// as JSON lines, {"case": N, "text": "..."}, so tests outside C++ can run the
// same kernels: the differential test against loopy
// (tests/python/test_loopy_oracle.py, tools/loopy-differential.py) hands each
// text, as written, to loopy and to Loom.
//   loom_random_kernels COUNT [SEED]
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "random_kernel.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s COUNT [SEED]\n", argv[0]);
    return 2;
  }
  const int count = std::atoi(argv[1]);
  std::mt19937 rng(argc > 2 ? unsigned(std::atoi(argv[2])) : 2026u);
  for (int c = 0; c < count; ++c) {
    loom::testing::RandomKernel rk = loom::testing::random_kernel(rng);
    std::cout << nlohmann::json{{"case", c}, {"text", rk.text}}.dump() << "\n";
  }
  return 0;
}
