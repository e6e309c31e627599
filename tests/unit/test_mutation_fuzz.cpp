// A short mutation fuzzing run inside `make test` (Reliability II): every
// example and conformance kernel file, as kernel text and as a JSON
// document, mutated at the text level (lines
// dropped or doubled, numbers replaced by edge values, names swapped,
// punctuation inserted), goes through parse, transforms, code generation
// and — where it still makes a kernel — a run of the transformed kernel
// against the kernel as written on small random inputs. A mutant may be
// refused with a Loom error; it may not crash, leak a raw isl message
// ("isl: ..."), or compute something else than the kernel as written.
// Transformation arguments are also mutated by their declared types (one
// argument of one step of each file's script given a hostile value).
// LOOM_MUTANTS sets the mutants per file (default 12); tools/fuzz-kernels.sh
// and the libFuzzer targets run longer.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
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

// Runs `step` and says what is wrong with how it failed, if anything: a
// Loom error or a domain syntax error is a refusal (counted); a raw isl
// message inside one, or any other exception, is a failure.
template <typename Step>
bool refused(Step step, Outcome& o, std::string& why) {
  try {
    step();
    return false;
  } catch (const Error& e) {
    std::string w = e.what();
    ++o.refused;
    // (isl's syntax errors come with Loom's line and column: those are fine)
    bool leak = w.find("isl: ") != std::string::npos && w.find("isl: syntax error") == std::string::npos;
    why = leak ? "a raw isl message: " + w : "";
  } catch (const DomainSyntaxError&) {
    ++o.refused;
    why = "";
  } catch (const std::exception& e) {
    why = std::string("an exception that is not a Loom error: ") + e.what();
  }
  return true;
}

std::string try_kernel_file(const KernelFile& f, Outcome& o);

// "" or what is wrong with how Loom took the mutant (kernel text, or a JSON document)
std::string try_mutant(const std::string& text, Outcome& o, bool json = false) {
  KernelFile f;
  std::string why;
  if (refused([&] { f = json ? kernel_file_from_json(text, "mutant.json") : parse_kernel_text(text, "mutant.loom"); }, o, why)) return why;
  return try_kernel_file(f, o);
}

// The same for a kernel file read: its transforms, code generation, and a
// run against the kernel as written.
std::string try_kernel_file(const KernelFile& f, Outcome& o) {
  LoopKernel t;
  std::string why;
  if (refused([&] {
        t = apply_transforms(f.kernel, f.transforms);
        generate(t);
      }, o, why))
    return why;
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

// The .loom files of these folders of the source tree, sorted.
std::vector<std::string> kernel_files(std::initializer_list<const char*> dirs) {
  std::vector<std::string> files;
  for (const char* dir : dirs)
    for (auto& e : std::filesystem::directory_iterator(loom::testing::source_dir() + "/" + dir))
      if (e.path().extension() == ".loom") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A hostile value for a transformation parameter, by its declared type:
// edge numbers, names of the wrong kind (an array for an iname, an iname
// that is not there), tags no hardware has, malformed lists and text.
std::string hostile_value(const TransformParam& p, const LoopKernel& k, std::mt19937& rng) {
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  std::vector<std::string> inames = k.all_inames(), arrays;
  for (auto& a : *k.arguments) arrays.push_back(a.name);
  for (auto& [n, t] : *k.temporaries) arrays.push_back(n);
  if (inames.empty()) inames.push_back("i");
  if (arrays.empty()) arrays.push_back("a");
  const std::vector<std::string> numbers = {"0", "-1", "1", "2", "3", "7", "1024", "2147483648", "9223372036854775807", "-9223372036854775808",
                                            "99999999999999999999", "1.5", "x", ""};
  const std::vector<std::string> tags = {"g.0", "g.2", "g.3", "l.0", "l.2", "l.3", "g.-1", "l.99", "ilp", "unr", "vec", "for", "l.auto", "x", ""};
  using T = TransformParam::Type;
  switch (p.type) {
    case T::Int: {
      std::vector<std::string> v = numbers;
      if (p.min != INT64_MIN) v.push_back(std::to_string(p.min - 1));
      if (p.max != INT64_MAX) v.push_back(std::to_string(p.max + 1));
      return pick(v);
    }
    case T::Float: return pick({"0", "-1", "nan", "inf", "1e308", "-0", "abc"});
    case T::Bool: return pick({"true", "false", "maybe", "1", ""});
    case T::Dtype: return pick({"float32", "int8", "bool", "uint64", "float16", "bfloat16", "float128", "int", ""});
    case T::Iname: return pick({pick(inames), pick(inames), pick(arrays), "nosuch", "", pick(inames) + "," + pick(inames)});
    case T::Inames: {
      std::string all;
      for (auto& n : inames) all += (all.empty() ? "" : ",") + n;
      return pick({pick(inames), pick(inames) + "," + pick(inames), all, pick(arrays), "nosuch", "", ",,", all + "," + all});
    }
    case T::Tag:
    case T::FetchTag: return pick(tags);
    case T::TagMap: return pick(inames) + ":" + pick(tags) + (rng() % 2 ? "," + pick(inames) + ":" + pick(tags) : "");
    case T::Array:
    case T::Temporary: return pick({pick(arrays), pick(arrays), pick(inames), "nosuch", ""});
    case T::Arrays:
    case T::Temporaries: return pick({pick(arrays) + "," + pick(arrays), pick(inames), "nosuch", ""});
    case T::Choice: {
      std::vector<std::string> v = p.choices;
      v.push_back("nosuch");
      v.push_back("");
      return pick(v);
    }
    case T::Expression: return pick({pick(inames) + " * " + pick(inames), "1 // 0", "n mod 0", "((", "9223372036854775807 + 1", "", pick(arrays)});
    case T::Constraints:
      return pick({"n mod 0 = 0", "n >= 9223372036854775807", "n < 0", "1 = 0", "((", "", pick(inames) + " >= 2", "nosuch > 3"});
    case T::Match: return pick({"id:nosuch", "*", "writes:" + pick(arrays), "", "not", "id:" + pick(inames), "tag:x"});
    default: return pick({pick(inames), pick(arrays), "nosuch", "", "a b c", std::string(300, 'x'), "k=v,=,", "1"});
  }
}

}  // namespace

// Transformation arguments mutated by their declared types (every example
// and conformance kernel's own script, one argument of one step replaced by
// a hostile value): each mutant is refused with a Loom error or computes
// what the kernel as written computes.
TEST(MutationFuzz, HostileTransformationArgumentsAreRefusedOrRunRight) {
  const char* env = std::getenv("LOOM_MUTANTS");
  int per_file = env ? std::atoi(env) : loom::testing::scaled(8);
  std::vector<std::string> files = kernel_files({"examples", "tests/conformance"});
  const char* seed = std::getenv("LOOM_RANDOM_SEED");
  std::mt19937 rng(seed ? unsigned(std::atoi(seed)) : 4321u);
  Outcome o;
  int failures = 0, mutants = 0;
  for (auto& path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    KernelFile f;
    try {
      f = parse_kernel_text(ss.str(), path);
    } catch (const Error&) {
      continue;
    }
    if (f.transforms.empty()) continue;
    for (int m = 0; m < per_file; ++m) {
      KernelFile g = f;
      TransformStep& step = g.transforms[rng() % g.transforms.size()];
      const TransformInfo* info = transform_registry().find(step.name);
      if (!info || info->params.empty()) continue;
      std::map<std::string, std::string> bound;
      try {
        bound = bind_transform_arguments(step);
      } catch (const Error&) {
        continue;
      }
      const TransformParam& p = info->params[rng() % info->params.size()];
      bound[p.name] = hostile_value(p, f.kernel, rng);
      step.positional.clear();
      step.keyword = bound;
      ++mutants;
      auto started = std::chrono::steady_clock::now();
      std::string why = try_kernel_file(g, o);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      if (seconds > 2 && std::getenv("LOOM_FUZZ_VERBOSE"))
      {
        std::string args;
        for (auto& [n, v] : bound) args += " " + n + "=" + v;
        std::fprintf(stderr, "%.1f s: %s: %s%s (mutated: %s)\n", seconds, path.c_str(), step.name.c_str(), args.c_str(), p.name.c_str());
      }
      // (a dtype or an expression asked of a transformation is a value the
      // user chose: buffer_array's store_expression says what is stored, a
      // precompute's dtype may round; neither may crash or leak isl)
      if ((p.type == TransformParam::Type::Dtype || p.type == TransformParam::Type::Expression) && why.rfind("a wrong result", 0) == 0)
        why.clear();
      if (!why.empty() && ++failures <= 10)
        ADD_FAILURE() << path << ": " << step.name << " " << p.name << "=\"" << bound[p.name] << "\": " << why;
    }
  }
  std::printf("transformation-argument fuzzing: %d mutants: %d ran and matched, %d refused\n", mutants, o.ran, o.refused);
  EXPECT_EQ(failures, 0);
  EXPECT_GT(o.ran, loom::testing::scaled(20));
  EXPECT_GT(o.refused, loom::testing::scaled(20));
}

TEST(MutationFuzz, MutantsOfEveryKernelFileAreRefusedOrRunRight) {
  const char* env = std::getenv("LOOM_MUTANTS");
  int per_file = env ? std::atoi(env) : loom::testing::scaled(12);
  std::vector<std::string> files = kernel_files({"examples", "tests/conformance", "tests/conformance/loopy"});
  const char* seed = std::getenv("LOOM_RANDOM_SEED");
  std::mt19937 rng(seed ? unsigned(std::atoi(seed)) : 1234u);
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
  EXPECT_GT(o.ran, loom::testing::scaled(int(files.size())));  // mutants that still make kernels are run, not only refused
}
