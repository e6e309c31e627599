// Bad input gets a clear error, never a crash: the inputs that crashed Loom
// on a fresh machine or under a mutation fuzzer (stack overflow in the
// parser, SIGFPE inside isl, isl errors on empty domains, negative extents),
// each with the line and column or the kernel and array it names.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/parser.h"
#include "loom/runtime.h"
#include "loom/transforms.h"
#include "oracle.h"

using namespace loom;

namespace {

// The error `text` (a kernel file with its transforms) gives, or "no error".
std::string error_of(const std::string& text) {
  try {
    KernelFile f = parse_kernel_text(text, "k.loom");
    generate(apply_transforms(f.kernel, f.transforms));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

std::string kernel_with_domain(const std::string& domain) {
  return "kernel k\ndomains:\n  " + domain + "\narguments:\n  ...\ninstructions:\n  out[i] = a[i]\n";
}

std::string kernel_with_instruction(const std::string& rhs) {
  return "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = " + rhs + "\n";
}

std::string repeat(const std::string& s, int n) {
  std::string r;
  for (int i = 0; i < n; ++i) r += s;
  return r;
}

}  // namespace

TEST(BadInput, TenThousandNestedParenthesesAreRefusedNotAStackOverflow) {
  std::string e = error_of(kernel_with_instruction(repeat("(", 10000) + "a[i]" + repeat(")", 10000)));
  EXPECT_NE(e.find("k.loom:7:"), std::string::npos) << e;
  EXPECT_NE(e.find("nested more than 256 levels"), std::string::npos) << e;
  // the source line shown is a window, not the whole 20,000-character line
  EXPECT_LT(e.size(), 600u) << e.size();
  // moderate nesting still parses
  EXPECT_EQ(error_of(kernel_with_instruction(repeat("(", 200) + "a[i]" + repeat(")", 200))), "no error");
}

TEST(BadInput, LongUnaryChainsAndNotChainsAreRefused) {
  EXPECT_NE(error_of(kernel_with_instruction(repeat("-", 100000) + "a[i]")).find("nested more than"), std::string::npos);
  EXPECT_NE(error_of(kernel_with_instruction("if_then_else(" + repeat("not ", 100000) + "a[i] > 0, 1, 2)")).find("nested more than"),
            std::string::npos);
}

TEST(BadInput, ExpressionTreesDeeperThanTheLimitAreRefused) {
  // no recursion while parsing, but every later pass would recurse 100,000 levels
  std::string sum = "a[i]";
  for (int t = 0; t < 100000; ++t) sum += "+a[i]";
  std::string e = error_of(kernel_with_instruction(sum));
  EXPECT_NE(e.find("expression too deep"), std::string::npos) << e.substr(0, 300);
  // a long but legal sum still works
  std::string ok = "a[i]";
  for (int t = 0; t < 500; ++t) ok += "+a[i]";
  EXPECT_EQ(error_of(kernel_with_instruction(ok)), "no error");
}

TEST(BadInput, DivisionByZeroInADomainIsRefusedBeforeIslSeesIt) {
  // isl's parser would reach GMP's divide-by-zero handler (SIGFPE)
  std::string e = error_of(kernel_with_domain("{[i, j]: 0 <= i, j < 1//0}"));
  EXPECT_NE(e.find("k.loom:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;
  for (const char* d : {"{[i]: 0 <= i < n mod 0}", "{[i]: 0 <= i < floord(n, 2 - 2)}", "{[i]: 0 <= i < n / (n - n)}",
                        "{[i]: 0 <= i < 7 // (2 // 3)}", "{[i]: 0 <= i < ceild(n, 0)}", "{[i]: 0 <= i < n % (0)}"})
    EXPECT_NE(error_of(kernel_with_domain(d)).find("division by zero"), std::string::npos) << d;
  // legal divisions are untouched
  for (const char* d : {"{[i]: 0 <= i < floord(n, 4)}", "{[i]: 0 <= i < n and i mod 2 = 0}", "{[i]: 0 <= i < n // 3}"})
    EXPECT_EQ(error_of(kernel_with_domain(d)), "no error") << d;
}

TEST(BadInput, DeeplyNestedDomainsAreRefusedBeforeIsl) {
  std::string e = error_of(kernel_with_domain("{[i]: 0 <= i < " + repeat("(", 10000) + "n" + repeat(")", 10000) + "}"));
  EXPECT_NE(e.find("domain nested more than 64 levels"), std::string::npos) << e.substr(0, 300);
}

TEST(BadInput, ADomainEmptyForEveryParameterGivesAKernelThatDoesNothing) {
  std::string text = kernel_with_domain("{[i]: 0 <= i < n and i > n}");
  EXPECT_EQ(error_of(text), "no error");
  KernelFile f = parse_kernel_text(text, "k.loom");
  // inferred arrays are never touched: extent 0
  EXPECT_EQ(f.kernel.find_argument("a")->str(), "a: float32[0]");
  std::map<std::string, int64_t> params{{"n", 7}};
  auto arrays = make_host_arrays(f.kernel, params, 1);
  interpret(generate(f.kernel), loom::testing::args_of(f.kernel, arrays, params));
}

TEST(BadInput, FixingAParameterToANegativeExtentIsRefusedWithTheArrayNamed) {
  std::string text =
      "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n], out: float32[n]\ninstructions:\n"
      "  out[i] = a[i]\ntransforms:\n  fix_parameters n=-5\n";
  std::string e = error_of(text);
  EXPECT_NE(e.find("k.loom:9:3"), std::string::npos) << e;
  EXPECT_NE(e.find("array 'a' would have the negative extent -5"), std::string::npos) << e;
  // values beyond 32 bits are kept exactly (isl takes them as values, not ints)
  KernelFile f = parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = a[i]\n");
  LoopKernel big = fix_parameters(f.kernel, {{"n", int64_t(1) << 33}});
  EXPECT_NE(big.domains[0].str().find("8589934591"), std::string::npos) << big.domains[0].str();
}

TEST(BadInput, ANegativeExtentAtCallTimeIsRefusedWithTheArrayNamed) {
  KernelFile f = parse_kernel_text(
      "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n - 10], out: float32[n]\ninstructions:\n"
      "  out[i] = a[i + 10]\n");
  try {
    make_host_arrays(f.kernel, {{"n", 5}}, 1);
    FAIL() << "no error";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'a' would have a negative extent"), std::string::npos) << e.what();
  }
}
