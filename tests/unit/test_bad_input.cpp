// Bad input gets a clear error, never a crash: the inputs that crashed Loom
// on a fresh machine or under a mutation fuzzer (stack overflow in the
// parser, SIGFPE inside isl, isl errors on empty domains, negative extents),
// each with the line and column or the kernel and array it names.
#include <gtest/gtest.h>

#include "loom/codegen.h"
#include "loom/json.h"
#include "loom/parser.h"
#include "loom/interpreter.h"
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

TEST(BadInput, ACatalogueOfBadInputsEachGetsItsReasonAndWhereNeverACrash) {
  // each: a kernel file, and what the error must say; every message also names the place
  // (k.loom:line:col) or the kernel ('k'), and every input ends in a Loom error
  struct Case {
    const char* name;
    const char* text;
    const char* says;
  };
  const Case cases[] = {
      {"domain missing brace",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
)LOOM",
       "domain is missing its closing '}'"},
      {"domain unknown operator",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i <<< n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
)LOOM",
       "bad domain: isl: syntax error"},
      {"domain without dims",
       R"LOOM(kernel k
domains:
  { : n > 0 }
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
)LOOM",
       "unknown name 'i' in instruction 'insn_0'"},
      {"two domains one iname",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
  {[i]: 0 <= i < m}
arguments:
  ...
instructions:
  out[i] = 1
)LOOM",
       "iname 'i' is defined by two domains"},
      {"instruction without assignment",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] a[i]
)LOOM",
       "expected '=' after the left-hand side"},
      {"unbalanced parens",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = (a[i] + 1
)LOOM",
       "expected ')' to close the parenthesis"},
      {"unbalanced brackets",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i = a[i]
)LOOM",
       "expected ']' to close the subscript"},
      {"empty right side",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] =
)LOOM",
       "expected an expression, found end of input"},
      {"unknown function",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = frobnicate(a[i])
)LOOM",
       "unknown function 'frobnicate'"},
      {"unknown array",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = b[i]
)LOOM",
       "unknown array 'b' in instruction 'insn_0'"},
      {"wrong index count",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i, i]
)LOOM",
       "'a' has 1 dimension(s) but is subscripted with 2"},
      {"unknown iname in reduction",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = sum(q, a[i])
)LOOM",
       "reduction over 'q', which is not an iname"},
      {"reduction over a non-iname",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = sum(n, a[i])
)LOOM",
       "reduction over 'n', which is not an iname"},
      {"bad option",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i] {bogus=1}
)LOOM",
       "unknown option 'bogus'"},
      {"dep on unknown id",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i] {dep=nothere}
)LOOM",
       "no instruction with id 'nothere'"},
      {"duplicate id",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i] {id=x}
  out[i] = 2 {id=x}
)LOOM",
       "instruction id 'x' is used twice"},
      {"unknown dtype",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float33[n], out: float32[n]
instructions:
  out[i] = a[i]
)LOOM",
       "unknown dtype 'float33'; did you mean 'float32'?"},
      {"shape not an expression",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n +], out: float32[n]
instructions:
  out[i] = a[i]
)LOOM",
       "expected an expression, found ']'"},
      {"unknown section",
       R"LOOM(kernel k
domainz:
  {[i]: 0 <= i < n}
)LOOM",
       "expected a section header"},
      {"no kernel line",
       R"LOOM(domains:
  {[i]: 0 <= i < n}
)LOOM",
       "missing 'instructions:' section"},
      {"no instructions",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  ...
)LOOM",
       "missing 'instructions:' section"},
      {"out of bounds read",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i + 1]
)LOOM",
       "accesses a[i + 1] out of bounds"},
      {"out of bounds write",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i + 1] = a[i]
)LOOM",
       "accesses out[i + 1] out of bounds"},
      {"out of bounds read in a condition",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = 1  {if=a[i + 1] > 0}
)LOOM",
       "accesses a[i + 1] out of bounds"},
      {"negative index",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i - 1]
)LOOM",
       "accesses a[i - 1] out of bounds"},
      {"write race",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[0] = a[i]
transforms:
  tag_inames i:l.0
)LOOM",
       "write race: instruction 'insn_0' writes one element of array 'out'"},
      {"unknown tag",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  tag_inames i:q.7
)LOOM",
       "unknown tag 'q.7'"},
      {"tag unknown iname",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  tag_inames zz:g.0
)LOOM",
       "no iname 'zz'"},
      {"two inames one axis",
       R"LOOM(kernel k
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  a: float32[n, n], out: float32[n, n]
instructions:
  out[i, j] = a[i, j]
transforms:
  tag_inames i:g.0 j:g.0
)LOOM",
       "both tagged g.0"},
      {"split non-positive",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i 0
)LOOM",
       "argument 'inner_length' must be at least 1, got 0 (inner_length: int >= 1)"},
      {"split unknown iname",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname q 4
)LOOM",
       "split_iname('q', 4) on kernel 'k': no iname 'q'"},
      {"split length not integer",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i four
)LOOM",
       "argument 'inner_length' must be an integer, got 'four'"},
      {"unknown transform",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  splitt_iname i 4
)LOOM",
       "unknown transform 'splitt_iname'; did you mean 'split_iname'?"},
      {"missing argument",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i
)LOOM",
       "missing argument 'inner_length'"},
      {"too many arguments",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i 4 g.0 l.0 x y z w v u
)LOOM",
       "split_iname takes at most 8 arguments"},
      {"unknown keyword",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i 4 bogus=1
)LOOM",
       "unknown argument 'bogus'"},
      {"rename to existing",
       R"LOOM(kernel k
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  a: float32[n, n], out: float32[n, n]
instructions:
  out[i, j] = a[i, j]
transforms:
  rename_iname i j
)LOOM",
       "the name 'j' is already used"},
      {"join non-constant",
       R"LOOM(kernel k
domains:
  {[i, j]: 0 <= i < n and 0 <= j < n}
arguments:
  a: float32[n, n], out: float32[n, n]
instructions:
  out[i, j] = a[i, j]
transforms:
  join_inames i,j
)LOOM",
       "the range of 'j' depends on the parameters"},
      {"join an iname with itself",  // (found by mutation fuzzing under ASan: isl's raw "position or range out of bounds")
       R"LOOM(kernel k
domains:
  {[i, j]: 0 <= i < n and 0 <= j < 8}
arguments:
  a: float32[n, 8]
instructions:
  a[i, j] = 1
transforms:
  split_iname i 4
  join_inames i_inner,i_inner new_iname=x
)LOOM",
       "'i_inner' is named twice; join distinct inames"},
      {"unroll parametric",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  tag_inames i:unr
)LOOM",
       "iname 'i' is tagged 'unr' but its range depends on the parameters"},
      {"too many threads",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  split_iname i 2048 inner_tag=l.0
)LOOM",
       "2048 threads along l.0 (iname 'i_inner'); CUDA allows at most 1024"},
      {"assume contradiction",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  assume n > 5 and n < 3
)LOOM",
       "the assumptions contradict each other"},
      {"assume non-parameter",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  assume q > 1
)LOOM",
       "'q' is not a parameter of the kernel"},
      {"fix unknown parameter",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  fix_parameters q=3
)LOOM",
       "'q' is not a parameter"},
      {"fix not integer",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  fix_parameters n=abc
)LOOM",
       "expected name=integer, got 'n=abc'"},
      {"prefetch written array",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  add_prefetch out i
)LOOM",
       "array 'out' is written by the kernel"},
      {"prefetch parametric sweep",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  add_prefetch a i
)LOOM",
       "sweep iname 'i' has a range that depends on the parameters"},
      {"too much shared memory",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
temporaries:
  big: float64[30000] local
instructions:
  big[i] = a[i]
  out[i] = big[i]
transforms:
  split_iname i 32 inner_tag=l.0
)LOOM",
       "local temporary 'big' takes 240000 bytes; a block's local (shared) memory holds at most 232448 bytes"},
      {"temporary non-constant shape",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
temporaries:
  t: float32[n] local
instructions:
  t[i] = a[i]
  out[i] = t[i]
)LOOM",
       "temporary 't' needs a constant shape, got n"},
      {"barrier under condition",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < 32}
arguments:
  a: float32[32], out: float32[32]
temporaries:
  t: float32[32] local
instructions:
  t[i] = a[i] {id=w}
  ... lbarrier {id=b, dep=w, if=i < 16}
  out[i] = t[31 - i] {dep=b}
transforms:
  tag_inames i:l.0
)LOOM",
       "barrier 'b' has a condition"},
      {"dependency cycle",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i] {id=x, dep=y}
  out[i] = 2 {id=y, dep=x}
)LOOM",
       "their dependencies form a cycle"},
      {"remove nothing",
       R"LOOM(kernel k
domains:
  {[i]: 0 <= i < n}
arguments:
  a: float32[n], out: float32[n]
instructions:
  out[i] = a[i]
transforms:
  remove_instructions id:nothere
)LOOM",
       "no instruction matches 'id:nothere'"}};
  int n = 0;
  for (const Case& c : cases) {
    std::string e = error_of(c.text);
    EXPECT_NE(e.find(c.says), std::string::npos) << c.name << ": " << e;
    EXPECT_TRUE(e.find("k.loom:") != std::string::npos || e.find("kernel 'k'") != std::string::npos) << c.name << ": " << e;
    ++n;
  }
  EXPECT_GE(n, 50);
}

TEST(BadInput, ControlCharactersAreRefusedWhereTheyAreNotLoopedOn) {
  // found by libFuzzer: a NUL inside an iname made split_iname look for a fresh name forever
  std::string text = kernel_with_instruction("a[i]") + "transforms:\n  split_iname i";
  text += std::string(3, '\0') + " 4\n";
  std::string e = error_of(text);
  EXPECT_NE(e.find("k.loom:9:16: control character 0x00 in the input"), std::string::npos) << e;
  LoopKernel k = make_kernel({"{[i]: 0 <= i < n}"}, "out[i] = a[i]");
  TransformStep step;
  step.name = "split_iname";
  step.positional = {std::string("i\0\0", 3), "4"};
  try {
    apply_transform(k, step);
    FAIL() << "accepted";
  } catch (const TransformError& err) {
    EXPECT_NE(std::string(err.what()).find("control character"), std::string::npos) << err.what();
  }
}

TEST(BadInput, AnOutOfRangeDefaultIsAParseErrorNotAnEscapedException) {
  // found by libFuzzer: std::stoll's out_of_range escaped the front end
  std::string text = kernel_with_instruction("a[i]") + "defaults:\n  n = 300111111111111111111111111111\n";
  std::string e = error_of(text);
  EXPECT_NE(e.find("k.loom:9:7: value of 'n' out of the range of a 64-bit integer"), std::string::npos) << e;
}

TEST(BadInput, HugeNumbersInDomainsAndDtypesGetLoomErrors) {
  // std::stold / std::stoi would throw their own exceptions, which are no Loom errors
  std::string big = "1" + std::string(6000, '9');
  std::string e = error_of(kernel_with_domain("{[i]: 0 <= i < n // " + big + "}"));
  EXPECT_EQ(e.find("stold"), std::string::npos) << e.substr(0, 200);
  e = error_of("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32x99999999999999[n], out: float32[n]\n"
               "instructions:\n  out[i] = a[i]\n");
  EXPECT_NE(e.find("unknown dtype 'float32x99999999999999'"), std::string::npos) << e;
}

// ---- Reliability II: what mutation fuzzing and hostile inputs broke ----

TEST(BadInput, AGlobalBarrierFirstOrLastGeneratesOneLaunch) {
  // (the barrier reached the printers as an instruction without an expression: SIGSEGV)
  for (const char* order : {"out[i] = a[i]\n  ... gbarrier\n", "... gbarrier\n  out[i] = a[i]\n"}) {
    KernelFile f = parse_kernel_text(std::string("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  ") + order,
                                     "k.loom");
    GeneratedKernel g = generate(f.kernel);
    EXPECT_FALSE(g.is_program()) << order;
    EXPECT_EQ(g.kernel.instructions.size(), 1u) << order;
    EXPECT_EQ(loom::testing::compare_kernels(f.kernel, f.kernel, {{"n", 37}}), "") << order;
  }
}

TEST(BadInput, ARuleCalledWithTooFewArgumentsFromJsonIsRefused) {
  // the text reader refused it; the JSON reader let precompute read past the call's arguments (heap-use-after-free)
  const char* doc = R"J({"format": "loom-kernel", "version": 1, "kernel": {"name": "e",
    "domains": ["[n] -> { [i] : 0 <= i < n }"],
    "arguments": [{"name": "out", "kind": "array", "dtype": "float32", "shape": ["n"]},
                  {"name": "a", "kind": "array", "dtype": "float32", "shape": ["n + 1"]}],
    "substitutions": [{"name": "f", "params": ["x", "y"], "body": "3 * a[x] - y"}],
    "instructions": [{"id": "s", "kind": "assign", "assignee": "out[i]", "expression": "f(i) * f(i + 1)"}]},
    "transforms": [{"transform": "precompute", "subst_use": "f", "sweep_inames": "i"}]})J";
  try {
    kernel_file_from_json(doc, "e.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("substitution rule 'f' takes 2 argument(s), called with 1 in instruction 's'"), std::string::npos)
        << e.what();
  }
  // the same inside another rule's body
  std::string nested = std::string(doc);
  nested.replace(nested.find("\"f(i) * f(i + 1)\""), 17, "\"g(i)\"");
  nested.replace(nested.find("\"substitutions\": ["), 18, "\"substitutions\": [{\"name\": \"g\", \"params\": [\"z\"], \"body\": \"f(z) + 1\"}, ");
  try {
    kernel_file_from_json(nested, "e.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes 2 argument(s), called with 1 in the body of rule 'g'"), std::string::npos) << e.what();
  }
}

TEST(BadInput, PrecomputeRefusesUsesShorterThanTheRuleWhateverBuiltTheKernel) {
  // a kernel built in C++ skips the front ends' check: the footprint refuses instead of reading past the call
  KernelFile f = parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  f(x) := 3 * a[x]\n  out[i] = f(i)\n",
                                   "k.loom");
  LoopKernel k = f.kernel;
  k.substitutions.edit().at("f").params.push_back("y");
  try {
    precompute(k, "f", "i", {});
    ADD_FAILURE() << "accepted";
  } catch (const TransformError& e) {
    EXPECT_NE(std::string(e.what()).find("has 1 argument(s), which does not match the storage axes"), std::string::npos) << e.what();
  }
}

TEST(BadInput, HugeTemporariesAreRefusedWithTheirSize) {
  auto with_temp = [](const std::string& decl) {
    return "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  out: float32[n]\ntemporaries:\n  " + decl +
           "\ninstructions:\n  t[0, 0] = 1 {id=w}\n  out[i] = t[0, 0] {dep=w}\n";
  };
  std::string e = error_of(with_temp("t: float32[2147483647, 2147483647] private"));
  EXPECT_NE(e.find("temporary 't' takes more than 2^63 - 1 bytes"), std::string::npos) << e;
  e = error_of(with_temp("t: float32[4611686018427387904, 4] private"));
  EXPECT_NE(e.find("temporary 't' has more than 2^63 - 1 elements"), std::string::npos) << e;
  e = error_of(with_temp("t: float32[1024, 1024] private"));
  EXPECT_NE(e.find("private temporary 't' takes 4194304 bytes per thread"), std::string::npos) << e;
  e = error_of(with_temp("t: float32[1024, 1024] local"));
  EXPECT_NE(e.find("local temporary 't' takes 4194304 bytes"), std::string::npos) << e;
  EXPECT_EQ(error_of(with_temp("t: float32[16, 16] private")), "no error");
}

TEST(BadInput, DomainsThatAreNotOneSetSayWhatTheyAre) {
  // (isl's own message was an assertion on its object type)
  EXPECT_NE(error_of(kernel_with_domain("{}")).find("the domain is an empty set without inames"), std::string::npos);
  EXPECT_NE(error_of(kernel_with_domain("[n] -> { }")).find("the domain is an empty set without inames"), std::string::npos);
  std::string e = error_of(kernel_with_domain("{[i] -> [j]: 0 <= i < 4 and j = i}"));
  EXPECT_NE(e.find("the domain is a map"), std::string::npos) << e;
  EXPECT_EQ(e.find("Assertion"), std::string::npos) << e;
}

TEST(BadInput, ConstantsBeyondTheIndexRangeAreRefusedNotCut) {
  // (the inferred shape of `out` silently became 0)
  for (const char* d : {"{[i]: 0 <= i < 9223372036854775808}", "{[i]: 0 <= i < 1000000000000000000000000000000}",
                        "{[i]: 0 <= i < n + 99999999999999999999}"}) {
    std::string e = error_of(kernel_with_domain(d));
    EXPECT_NE(e.find("k.loom:3:"), std::string::npos) << e;
    EXPECT_NE(e.find("is beyond Loom's index range"), std::string::npos) << e;
  }
  EXPECT_EQ(error_of(kernel_with_domain("{[i]: 0 <= i < 4611686018427387904}")), "no error");
}

TEST(BadInput, ShapesNearTwoToTheSixtyThreeAreRefusedWhenBound) {
  KernelFile f = parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < 4}\narguments:\n  a: float32[4, 9223372036854775807]\n  out: float32[4]\n"
                                   "instructions:\n  out[i] = a[i, 0]\n",
                                   "k.loom");
  try {
    make_host_arrays(f.kernel, {}, 1);
    ADD_FAILURE() << "allocated";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("array 'a': an array of shape (4, 9223372036854775807) has more than 2^63 - 1 elements"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(element_count({1LL << 40, 1LL << 40}), ArgumentError);
  EXPECT_EQ(element_count({1LL << 31, 1LL << 31}), 1LL << 62);
  std::string largest;
  EXPECT_EQ(host_bytes(parse_kernel_text("kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  a: float32[n, 4294967296]\n  out: float64[n]\n"
                                         "instructions:\n  out[i] = a[i, 0]\n",
                                         "k.loom")
                           .kernel,
                       {{"n", 4}}, &largest),
            4LL * 4294967296 * 4 + 4 * 8);
  EXPECT_EQ(largest, "a");
}

TEST(BadInput, AnInameWithoutBothEndsIsRefusedNamingIt) {
  // (found by the mutation fuzzer: isl's AST generator stopped with "unbounded optimum")
  std::string e = error_of("kernel k\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= i < 5}\narguments:\n  a: float32[n]\n  ...\n"
                           "instructions:\n  b[i] = sum(j, a[(i + j) % n])\n");
  EXPECT_NE(e.find("k.loom:8:3: instruction 'insn_0' runs over iname 'j', which has no lower or upper bound in its domain"), std::string::npos) << e;
  e = error_of(kernel_with_domain("{[i]: i < n}"));
  EXPECT_NE(e.find("runs over iname 'i', which has no lower bound"), std::string::npos) << e;
}

TEST(BadInput, AnExtentInAParameterNoDomainUsesIsStillProved) {
  // x: float32[q] read at x[b] with b < nb: the bounds proof skipped the access
  // (q is not a parameter of the domain's space), and the GPU would read past x;
  // found by the mutation fuzzer (a shape that became `float32[float32, 16]`)
  std::string e = error_of("kernel t\ndomains:\n  {[b, k]: 0 <= b < nb and 0 <= k < 16}\narguments:\n  x: float32[q, 16]\n"
                           "  c: float32[nb, 16]\ninstructions:\n  c[b, k] = 2 * x[b, k]\n");
  EXPECT_NE(e.find("accesses x[b, k] out of bounds: index 0 (b) leaves [0, q) for nb = 1, q = 0"), std::string::npos) << e;
  // and proved when the assumptions relate them
  EXPECT_EQ(error_of("kernel t\ndomains:\n  {[b, k]: 0 <= b < nb and 0 <= k < 16}\narguments:\n  x: float32[q, 16]\n"
                     "  c: float32[nb, 16]\nassumptions:\n  q >= nb\ninstructions:\n  c[b, k] = 2 * x[b, k]\n"),
            "no error");
}

TEST(BadInput, ASumOverAnAxisTheLeftSideUsesIsRefusedBeforeArgumentInference) {
  // found by the mutation fuzzer: with inferred arguments, isl's shape
  // inference met the iname twice first ("isl: arrange_dims: position or range out of bounds")
  std::string e = error_of("kernel k\ndomains:\n  {[i, j, k]: 0 <= i < n and 0 <= j < m and 0 <= k < l}\narguments:\n  ...\n"
                           "instructions:\n  c[k, j] = sum(k, a[i, k] * b[k, j])\n");
  EXPECT_NE(e.find("k.loom:7:3: instruction 'insn_0' reduces over 'k', but the instruction already runs within 'k'"), std::string::npos) << e;
  EXPECT_EQ(e.find("isl"), std::string::npos) << e;
}

// Found by the transformation-argument fuzzing: a new iname named "1" made
// the split's domain text read the outer iname as the number 1 (a wrong
// result), and names with spaces reached isl's parser; names are now
// checked where a transformation's arguments are bound.
TEST(BadInput, NewInameNamesThatAreNoIdentifiersAreRefused) {
  const std::string k = "kernel k\ndomains:\n  {[i]: 0 <= i < n}\narguments:\n  ...\ninstructions:\n  out[i] = 2 * a[i]\ntransforms:\n";
  for (std::string name : {"1", "a b c", "i-1", "and", "Min", "k=v"}) {
    std::string e = error_of(k + "  split_iname i 4 outer_iname=\"" + name + "\"\n");
    EXPECT_NE(e.find("outer_iname"), std::string::npos) << name << ": " << e;
    EXPECT_NE(e.find("must be a name"), std::string::npos) << name << ": " << e;
  }
  EXPECT_EQ(error_of(k + "  split_iname i 4 outer_iname=io inner_iname=_ii2\n"), "no error");
}

// Assumptions no size of the kernel's arrays can meet (n < 0 for arrays of
// n elements) left the grid's lower bound without a value, and isl's "cannot
// handle void expression" came out; the kernel now generates, and a call
// with any size is refused as breaking the assumptions.
TEST(BadInput, AssumptionsThatLeaveNoIterationGiveAKernelThatRefusesEveryCall) {
  const std::string text =
      "kernel k\ndomains:\n  {[i, j]: 0 <= i < n and 0 <= j < m}\narguments:\n  a: float32[n, m], out: float32[n]\n"
      "instructions:\n  out[i] = sum(j, a[i, j])\ntransforms:\n  assume n < 0\n  split_iname j 32 inner_tag=l.0\n"
      "  split_iname i 64 outer_tag=g.0\n  split_iname i_inner 2 outer_tag=l.1 inner_tag=ilp\n";
  EXPECT_EQ(error_of(text), "no error");
}
