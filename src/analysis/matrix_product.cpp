// The operands of a warp matrix instruction's product: which factor of a
// sum's summand feeds the instruction's A (rows m) and which its B (columns
// n). tensor_core checks the form when it tags the inames; code generation
// asks again for the preprocessed update, whose operands may since have
// become reads of fetched tiles.
#include "loom/analysis.h"

namespace loom {

namespace {

bool is_16bit_float(Type t) { return t.lanes == 1 && (t.kind == ScalarKind::Float16 || t.kind == ScalarKind::BFloat16); }

bool mentions(const Expr& e, const std::string& v) {
  std::set<std::string> vars;
  collect_free_vars(e, vars);
  return vars.count(v) > 0;
}

// Orders the factors (x, y) as A (over m, not n) and B (over n, not m).
bool sides(Expr& x, Expr& y, const Expr& summand, const std::string& m, const std::string& n, std::string& why) {
  if (mentions(x, n) || mentions(y, m)) std::swap(x, y);
  if (!mentions(x, m) || mentions(x, n) || !mentions(y, n) || mentions(y, m)) {
    why = "in " + summand.str() + " one factor must depend on '" + m + "' and not on '" + n + "', the other on '" + n + "' and not on '" + m + "'";
    return false;
  }
  return true;
}

}  // namespace

std::optional<MatrixProduct> matrix_product(const Expr& summand, const std::string& m, const std::string& n, std::string& why) {
  auto mul = summand.as<Binary>();
  if (!mul || mul->op != BinOp::Mul) {
    why = "the summed value " + summand.str() + " is not a product of two factors";
    return std::nullopt;
  }
  // (before types are inferred, the product's type is its factors')
  Type t = mul->type.known() ? mul->type : promote(mul->a.type(), mul->b.type());
  if (t == types::float64) {  // (m8n8k4: float64 factors as they are, each any expression of its own side)
    Expr x = mul->a, y = mul->b;
    if (!(x.type() == types::float64) || !(y.type() == types::float64)) {
      why = "the factors of " + summand.str() + " must both be float64 values (the FP64 tensor cores multiply float64 by float64)";
      return std::nullopt;
    }
    if (!sides(x, y, summand, m, n, why)) return std::nullopt;
    return MatrixProduct{x, y, types::float64, false, false};
  }
  if (!(t == types::float32)) {
    why = "the product " + summand.str() + " is computed in " + t.name() +
          "; the tensor core multiplies exactly and accumulates in float32 (write float32(x) * float32(y) with x, y float16 or bfloat16), "
          "or multiplies and accumulates float64 (m8n8k4)";
    return std::nullopt;
  }
  auto tf32 = [](const Expr& f) {
    auto c = f.as<Call>();
    return c && (c->name == "round_tf32" || c->name == "trunc_tf32") && c->args.size() == 1 && c->args[0].type() == types::float32;
  };
  auto operand = [&](const Expr& f) -> Expr {
    if (tf32(f)) return f;
    auto c = f.as<Cast>();
    Expr v = c ? c->value : f;
    return is_16bit_float(v.type()) ? v : Expr();
  };
  Expr x = operand(mul->a), y = operand(mul->b);
  if (!x.defined() || !y.defined()) {
    why = "the factors of " + summand.str() +
          " must be float16 or bfloat16 values (each converted to float32), or float32 values run as TF32 (tensor_core tf32=true)";
    return std::nullopt;
  }
  if (tf32(x) != tf32(y)) {
    why = "in " + summand.str() + " one factor is rounded to TF32 and the other is not";
    return std::nullopt;
  }
  if (tf32(x) && x.as<Call>()->name != y.as<Call>()->name) {
    why = "in " + summand.str() + " one factor is rounded to TF32 to nearest (round_tf32), the other toward zero (trunc_tf32)";
    return std::nullopt;
  }
  if (!(x.type() == y.type())) {
    why = "the factors of " + summand.str() + " have different types (" + x.type().name() + ", " + y.type().name() + ")";
    return std::nullopt;
  }
  if (!sides(x, y, summand, m, n, why)) return std::nullopt;
  return MatrixProduct{x, y, x.type(), tf32(x), tf32(x) && x.as<Call>()->name == "trunc_tf32"};
}

std::vector<Expr> summed_terms(const Expr& e) {
  std::vector<Expr> terms{e};
  for (size_t t = 0; t < terms.size();) {
    auto add = terms[t].as<Binary>();
    if (!add || add->op != BinOp::Add) {
      ++t;
      continue;
    }
    Expr a = add->a, b = add->b;
    terms[t] = a;
    terms.insert(terms.begin() + long(t) + 1, b);
  }
  return terms;
}

std::optional<std::vector<MatrixProduct>> matrix_products(const Expr& summand, const std::string& m, const std::string& n, std::string& why) {
  std::vector<MatrixProduct> out;
  for (auto& term : summed_terms(summand)) {
    auto p = matrix_product(term, m, n, why);
    if (!p) return std::nullopt;
    if (!out.empty() && (!(p->input == out[0].input) || p->tf32 != out[0].tf32 || p->tf32_truncated != out[0].tf32_truncated)) {
      why = "the products summed in " + summand.str() + " have different input types";
      return std::nullopt;
    }
    out.push_back(*p);
  }
  return out;
}

}  // namespace loom
