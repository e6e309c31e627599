// A short mutation fuzzing run inside `make test` (Reliability II): every
// example and conformance kernel file, as kernel text and as a JSON
// document, mutated at the text level (lines
// dropped or doubled, numbers replaced by edge values, names swapped,
// punctuation inserted), goes through parse, transforms, code generation
// and — where it still makes a kernel — a run of the transformed kernel
// against the kernel as written on small random inputs. A mutant may be
// refused with a Loom error; it may not crash, leak a raw isl message
// ("isl: ..."), or compute something else than the kernel as written.
// LOOM_MUTANTS sets the mutants per file (default 12); tools/fuzz-kernels.sh
// and the libFuzzer targets run longer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "loom/codegen.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/runtime.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string mutate(const std::string& text, std::mt19937& rng) {
  auto lines = split_lines(text);
  if (lines.empty()) return text;
  auto pick = [&](size_t n) { return size_t(rng() % n); };
  static const char* numbers[] = {"0", "1", "-1", "2", "3", "17", "64", "1024", "2147483647", "4294967296", "9223372036854775807"};
  static const char* punct[] = {",", ":", "[", "]", "(", ")", "{", "}", "=", "+", "*", "...", " and ", "//"};
  int edits = 1 + int(pick(3));
  for (int e = 0; e < edits; ++e) {
    size_t l = pick(lines.size());
    switch (pick(6)) {
      case 0: lines.erase(lines.begin() + long(l)); break;                 // drop a line
      case 1: lines.insert(lines.begin() + long(l), lines[l]); break;      // double it
      case 2: {                                                            // a number to an edge value
        std::string& s = lines[l];
        std::vector<size_t> at;
        for (size_t i = 0; i < s.size(); ++i)
          if (std::isdigit(static_cast<unsigned char>(s[i])) && (i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1])))) at.push_back(i);
        if (at.empty()) break;
        size_t b = at[pick(at.size())], end = b;
        while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
        s = s.substr(0, b) + numbers[pick(std::size(numbers))] + s.substr(end);
        break;
      }
      case 3: {  // insert punctuation
        std::string& s = lines[l];
        s.insert(pick(s.size() + 1), punct[pick(std::size(punct))]);
        break;
      }
      case 4: {  // swap two identifiers of the file (an iname for another, an array for a tag...)
        std::string& s = lines[l];
        std::vector<std::pair<size_t, size_t>> ids;
        for (size_t i = 0; i < s.size();) {
          if (std::isalpha(static_cast<unsigned char>(s[i])) || s[i] == '_') {
            size_t j = i;
            while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
            ids.push_back({i, j - i});
            i = j;
          } else {
            ++i;
          }
        }
        if (ids.size() < 2) break;
        auto a = ids[pick(ids.size())], b = ids[pick(ids.size())];
        std::string word = s.substr(b.first, b.second);
        s = s.substr(0, a.first) + word + s.substr(a.first + a.second);
        break;
      }
      default: std::swap(lines[l], lines[pick(lines.size())]); break;  // reorder two lines
    }
    if (lines.empty()) break;
  }
  std::string out;
  for (auto& l : lines) out += l + "\n";
  return out;
}

struct Outcome {
  int ran = 0, refused = 0;
};

// "" or what is wrong with how Loom took the mutant (kernel text, or a JSON document)
std::string try_mutant(const std::string& text, Outcome& o, bool json = false) {
  KernelFile f;
  LoopKernel t;
  try {
    f = json ? kernel_file_from_json(text, "mutant.json") : parse_kernel_text(text, "mutant.loom");
    t = apply_transforms(f.kernel, f.transforms);
    generate(t);
  } catch (const Error& e) {
    std::string w = e.what();
    ++o.refused;
    // (isl's syntax errors come with Loom's line and column: those are fine)
    bool leak = w.find("isl: ") != std::string::npos && w.find("isl: syntax error") == std::string::npos;
    return leak ? "a raw isl message: " + w : "";
  } catch (const DomainSyntaxError&) {
    ++o.refused;
    return "";
  } catch (const std::exception& e) {
    return std::string("an exception that is not a Loom error: ") + e.what();
  }
  // run it: small sizes, the transformed kernel against the kernel as written
  // with what the script declares rather than transforms (loom run's reference)
  LoopKernel reference;
  try {
    reference = reference_kernel(f.kernel, f.transforms, t);
  } catch (const Error&) {
    return "";
  }
  std::map<std::string, int64_t> p;
  for (auto& name : reference.parameters()) p[name] = 5;
  for (auto& [name, v] : f.defaults)
    if (p.count(name)) p[name] = std::min<int64_t>(std::max<int64_t>(v, 0), 64);
  try {
    if (host_bytes(reference, p) > (int64_t(64) << 20) || host_bytes(t, p) > (int64_t(64) << 20)) return "";
    std::string problems = loom::testing::compare_kernels(reference, t, p);
    ++o.ran;
    if (!problems.empty() && problems.find("writes no array") == std::string::npos) return "a wrong result: " + problems;
  } catch (const Error& e) {  // sizes the assumptions refuse, a subscript outside its array (checked at run time)
    ++o.refused;
    std::string w = e.what();
    if (w.find("isl: ") != std::string::npos) return "a raw isl message at run time: " + w;
  }
  return "";
}

}  // namespace

TEST(MutationFuzz, MutantsOfEveryKernelFileAreRefusedOrRunRight) {
  const char* env = std::getenv("LOOM_MUTANTS");
  int per_file = env ? std::atoi(env) : 12;
  std::vector<std::string> files;
  for (const char* dir : {"examples", "tests/conformance", "tests/conformance/loopy"})
    for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/" + dir))
      if (e.path().extension() == ".loom") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::mt19937 rng(1234);
  Outcome o;
  int failures = 0;
  for (auto& path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    for (int m = 0; m < per_file; ++m) {
      std::string mutant = mutate(ss.str(), rng);
      std::string why = try_mutant(mutant, o);
      if (!why.empty() && ++failures <= 10) ADD_FAILURE() << path << ", mutant " << m << ": " << why << "\n" << mutant;
    }
    // the same file as a JSON document (the JSON reader checks what the text reader checks), mutated
    std::string doc;
    try {
      doc = kernel_file_to_json(parse_kernel_text(ss.str(), path));
    } catch (const Error&) {
      continue;  // a file whose kernel is refused (the corpus' expect-error kernels)
    }
    for (int m = 0; m < per_file / 3; ++m) {
      std::string mutant = mutate(doc, rng);
      std::string why = try_mutant(mutant, o, true);
      if (!why.empty() && ++failures <= 10) ADD_FAILURE() << path << ", JSON mutant " << m << ": " << why << "\n" << mutant;
    }
  }
  std::printf("mutation fuzzing: %zu files x %d mutants: %d ran and matched, %d refused\n", files.size(), per_file, o.ran, o.refused);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(o.ran, int(files.size()));  // mutants that still make kernels are run, not only refused
}
