// read_affine_domain against isl's parser: every domain text written in the
// repository (examples, conformance kernels, JSON and Python tests, the C++
// tests) and a list of hand-written forms must give, where the fast reader
// accepts them, the set isl reads — equal as sets and printed alike (how a
// domain prints reaches `loom show` and how later transformations write
// their domains) — and forms outside the reader's subset must be left to isl.
#include <gtest/gtest.h>
#include <isl/set.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <fstream>
#include <set>
#include <sstream>

#include "loom/domain.h"
#include "oracle.h"

using namespace loom;

namespace {

// Every "{[...] ...}" (balanced braces) in the repository's kernels and tests.
std::set<std::string> domain_texts_in_repository() {
  std::set<std::string> out;
  const std::string root = loom::testing::source_dir();
  for (const char* dir : {"examples", "tests/conformance", "tests/unit", "tests/python", "tests/cli", "tests/gpu"}) {
    if (!std::filesystem::exists(root + "/" + dir)) continue;
    for (auto& e : std::filesystem::recursive_directory_iterator(root + "/" + dir)) {
      if (!e.is_regular_file()) continue;
      std::string ext = e.path().extension().string();
      if (ext != ".loom" && ext != ".json" && ext != ".py" && ext != ".cpp" && ext != ".sh") continue;
      std::ifstream in(e.path());
      std::stringstream s;
      s << in.rdbuf();
      std::string text = s.str();
      for (size_t at = text.find("{["); at != std::string::npos; at = text.find("{[", at + 1)) {
        int depth = 0;
        for (size_t j = at; j < text.size() && j < at + 400; ++j) {
          if (text[j] == '{') ++depth;
          if (text[j] == '}' && --depth == 0) {
            std::string d = text.substr(at, j - at + 1);
            if (d.find('\n') == std::string::npos && d.find('"') == std::string::npos && d.find('\\') == std::string::npos)
              out.insert(d);
            break;
          }
        }
      }
    }
  }
  return out;
}

// True when the fast reader accepted the text; then it must agree with isl.
bool check_against_isl(const std::string& text) {
  isl_set* fast = read_affine_domain(isl_context(), text);
  if (!fast) return false;
  Domain slow;
  try {
    slow = Domain::parse_with_isl(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << text << ": the fast reader accepted what isl refuses: " << e.what();
    isl_set_free(fast);
    return true;
  }
  Domain quick(fast);
  EXPECT_EQ(quick.str(), slow.str()) << text;
  EXPECT_EQ(isl_set_is_equal(quick.get(), slow.get()), isl_bool_true) << text;
  EXPECT_EQ(quick.inames(), slow.inames()) << text;
  EXPECT_EQ(quick.params(), slow.params()) << text;
  return true;
}

}  // namespace

TEST(DomainReader, AgreesWithIslOnEveryDomainInTheRepository) {
  auto texts = domain_texts_in_repository();
  size_t accepted = 0;
  for (auto& t : texts) accepted += check_against_isl(t);
  std::printf("the fast reader took %zu of %zu domain texts\n", accepted, texts.size());
  // Most domains are of the common form; if the reader stopped accepting
  // them this would pass vacuously.
  EXPECT_GT(texts.size(), 100u);
  EXPECT_GT(accepted * 2, texts.size()) << accepted << " of " << texts.size();
}

TEST(DomainReader, AgreesWithIslOnHandWrittenForms) {
  const char* accepted[] = {
      "{[i]: 0 <= i < n}",
      "{[i,j]: 0<=i<n and 0<=j<=i}",
      "{ [i, j] : 0 <= i < 16 and 0 <= j < 16 }",
      "{[i]: 0 <= i <= n - 1}",
      "{[k]: k = i + 5 and k < n}",
      "{[i]: i >= 0 and n > i}",
      "{[i]: 2i + 3 <= 5n - 1}",
      "{[i]: 2 * i <= n}",
      "{[i]: -i >= -n + 1 and i >= -3}",
      "{[i, j]: 0 <= i < n and 0 <= j < m and i + j < n + m - 2}",
      "{[i]: 0 <= i < 0}",
      "{[i]: 5 <= i < 3}",
      "{[i]: 0 <= i < 10 and i = 3}",
      "{[i, j]: i = j and 0 <= i < n}",
      "{[i]: 0 <= i < n and 0 <= i < m}",
      "{[i]: 0 <= i < n and i < n}",
      "{[i]: 1 <= 1 and 0 <= i < 4}",
      "{[i]: 0 <= i < 1000000000}",
      "{[i]: 0 <= 2i < 7}",
      "{[i]: 4i >= n and 4i <= n + 3}",
      "{[i_0, j_outer]: 0 <= i_0 < n_1 and 0 <= j_outer < 3}",
      "{[i]}",
  };
  for (auto t : accepted) EXPECT_TRUE(check_against_isl(t)) << t << " was left to isl";

  const char* left_to_isl[] = {
      "[n] -> {[i]: 0 <= i < n}",
      "{[i]: 0 <= i < n or i = 2n}",
      "{[i]: exists (a: i = 2a) and 0 <= i < n}",
      "{[i]: 0 <= i < floor(n / 2)}",
      "{[i]: i mod 2 = 0 and 0 <= i < n}",
      "{[i]: 0 <= i < min(n, 8)}",
      "{[i]: 0 <= i < (n)}",
      "{[i]: 0 <= i < 99999999999999999999}",
      "{ S[i]: 0 <= i < n }",
      "{[i, i]: 0 <= i < n}",
      "{[i]: 0 <= i' < n}",
      "{[i]: 0 <= i == n}",
      "{[]: }",
      "{[i] -> [j]: 0 <= i < n}",
      "{[i]: 0 <= i < n",
      "{[i]: 0 <= i < n} trailing",
      "{[i]: not (i < 0) and i < n}",
      "{[i]: 0 <= i < n AND i < 4}",
      "{[i]: 0 <= i < Min}",
      "{[Infinity]: 0 <= Infinity < 4}",
  };
  for (auto t : left_to_isl) {
    isl_set* s = read_affine_domain(isl_context(), t);
    EXPECT_EQ(s, nullptr) << t;
    isl_set_free(s);
  }
}

// Random conjunctions of comparison chains (coefficients, constants, chains
// of two to four sides, equalities, parameters and dimensions mixed, spaces
// or none): whatever isl's intersections make of them, the fast reader must
// make the same.
TEST(DomainReader, AgreesWithIslOnRandomForms) {
  std::mt19937 rng(20261126);
  auto pick = [&](int n) { return int(rng() % unsigned(n)); };
  const char* names[] = {"i", "j", "k", "n", "m", "t0"};
  const char* ops[] = {"<", "<=", ">", ">=", "="};
  size_t accepted = 0;
  for (int trial = 0; trial < 600; ++trial) {
    int dims = 1 + pick(3);
    std::string text = "{[";
    for (int d = 0; d < dims; ++d) text += std::string(d ? ", " : "") + names[d];
    text += "]: ";
    auto side = [&] {
      std::string e;
      int terms = 1 + pick(3);
      for (int t = 0; t < terms; ++t) {
        int coefficient = pick(5) - 2, which = pick(7);
        std::string sign = coefficient < 0 ? "-" : (t ? "+" : "");
        int magnitude = coefficient < 0 ? -coefficient : coefficient;
        if (which == 6 || magnitude == 0) e += (t ? " + " : "") + std::to_string(pick(40));
        else e += (t || sign == "-" ? " " + sign + " " : "") + (magnitude == 1 ? "" : std::to_string(magnitude) + (pick(2) ? "*" : "")) + names[which];
      }
      return e;
    };
    int chains = 1 + pick(4);
    for (int c = 0; c < chains; ++c) {
      if (c) text += " and ";
      text += side();
      int links = 1 + pick(3);
      for (int l = 0; l < links; ++l) text += std::string(" ") + ops[pick(5)] + " " + side();
    }
    text += "}";
    accepted += check_against_isl(text);
  }
  EXPECT_GT(accepted, 500u);
}

// isl's keywords are exactly what isl refuses as a name, in any case: "div",
// "xor", "domain" and "range" are names to it, and were once kept out of
// the parameters Domain::parse names for isl (a kernel with a size named
// div could not be read).
TEST(DomainReader, IslKeywordsAreWhatIslRefusesAsNames) {
  for (const char* w : {"and", "AND", "Min", "floord", "Infinity", "NaN", "exists", "implies"}) EXPECT_TRUE(is_isl_keyword(w)) << w;
  for (const char* w : {"div", "xor", "domain", "range", "n", "i_inner"}) EXPECT_FALSE(is_isl_keyword(w)) << w;
  EXPECT_EQ(Domain::parse("{[i]: 0 <= i < div or i = xor}").params(), (std::vector<std::string>{"div", "xor"}));
  EXPECT_EQ(Domain::parse("{[i]: 0 <= i < range}").params(), (std::vector<std::string>{"range"}));
}
