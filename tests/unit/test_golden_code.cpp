// The CUDA C of every example and conformance kernel against a stored copy
// (tests/golden/): a refactoring of the core must leave the generated code
// as it was, and a change that means to change it shows the kernels it
// touches. After a deliberate change, regenerate the copies with
//   LOOM_UPDATE_GOLDEN=1 build/loom_unit_tests --gtest_filter='GoldenCode.*'
// and say why in the commit. A kernel that is refused stores its error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "loom/codegen.h"
#include "loom/cuda.h"
#include "loom/parser.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {

std::string read(const std::string& path);

// (parsed under its path in the source tree, so an error reads the same wherever the tree is)
std::string cuda_of(const std::string& rel) {
  try {
    KernelFile f = parse_kernel_text(read(loom::testing::source_dir() + "/" + rel), rel);
    return cuda::print_source(generate(apply_transforms(f.kernel, f.transforms)));
  } catch (const std::exception& e) {
    return std::string("error: ") + e.what() + "\n";
  }
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every .loom file of the folders, as (golden file name, kernel path).
std::vector<std::pair<std::string, std::string>> kernels() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* dir : {"examples", "tests/conformance", "tests/conformance/loopy"}) {
    std::string prefix = std::string(dir) == "examples" ? "examples_" : std::string(dir) == "tests/conformance" ? "conformance_" : "loopy_";
    for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/" + dir))
      if (e.path().extension() == ".loom") out.push_back({prefix + e.path().stem().string() + ".cu", std::string(dir) + "/" + e.path().filename().string()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(GoldenCode, EveryKernelPrintsTheStoredCuda) {
  const std::string golden = loom::testing::source_dir() + "/tests/golden/";
  bool update = std::getenv("LOOM_UPDATE_GOLDEN") != nullptr;
  auto all = kernels();
  ASSERT_GT(all.size(), 100u);
  int changed = 0;
  for (auto& [name, path] : all) {
    std::string now = cuda_of(path);
    if (update) {
      std::ofstream(golden + name) << now;
      continue;
    }
    std::string stored = read(golden + name);
    if (now != stored) {
      ++changed;
      ADD_FAILURE() << path << ": the CUDA C differs from tests/golden/" << name
                    << (stored.empty() ? " (no stored copy)" : "") << "; if the change is meant, regenerate the copies "
                    << "(LOOM_UPDATE_GOLDEN=1 build/loom_unit_tests --gtest_filter='GoldenCode.*') and say why in the commit";
    }
  }
  // no stored copy without its kernel
  for (auto& e : std::filesystem::directory_iterator(golden)) {
    bool known = std::any_of(all.begin(), all.end(), [&](auto& k) { return k.first == e.path().filename().string(); });
    EXPECT_TRUE(known) << e.path() << " has no kernel; remove it";
  }
  EXPECT_EQ(changed, 0);
}
