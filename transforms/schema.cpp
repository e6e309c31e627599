// The typed declaration of transformation parameters (TransformParam): each
// type's name and check, the values a search may try (search_domain), and
// the whole registry as a JSON schema. One declaration per parameter, in the
// registering file; what reads it is here.
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "loom/domain.h"
#include "loom/isl_util.h"
#include "loom/match.h"
#include "loom/transforms.h"
#include "common.h"

namespace loom {

namespace {

using T = TransformParam::Type;
using S = TransformParam::Search;

// A name Loom's languages and isl's can both write: a letter or '_', then
// letters, digits or '_', and no isl keyword (an iname named "1" or "a b"
// or "and" would be misread when its domain is written out for isl).
bool is_identifier(const std::string& v) {
  if (v.empty() || !(std::isalpha(static_cast<unsigned char>(v[0])) || v[0] == '_')) return false;
  for (char c : v)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return !is_isl_keyword(v);
}

// "" where every word of v (a list: as name_list reads it) is an identifier
// (or v is empty: an optional name given as none), else the first bad word.
std::string first_bad_name(const std::string& v, bool list) {
  if (!list) return v.empty() || is_identifier(v) ? "" : v;
  for (auto& word : transforms::name_list(v))
    if (!is_identifier(word)) return word;
  return "";
}

const char* type_word(T t) {
  switch (t) {
    case T::Text: return "text";
    case T::Int: return "int";
    case T::Bool: return "bool";
    case T::Float: return "float";
    case T::Dtype: return "dtype";
    case T::Iname: return "iname";
    case T::Inames: return "iname list";
    case T::Tag: return "tag";
    case T::FetchTag: return "fetch tag";
    case T::TagMap: return "iname:tag list";
    case T::Array: return "array";
    case T::Arrays: return "array list";
    case T::Temporary: return "temporary";
    case T::Temporaries: return "temporary list";
    case T::Name: return "name";
    case T::Names: return "name list";
    case T::Match: return "instruction match";
    case T::Choice: return "choice";
    case T::Expression: return "expression";
    case T::Constraints: return "constraints";
    case T::KeywordMap: return "name=value list";
  }
  return "text";
}

const char* search_word(S s) {
  switch (s) {
    case S::None: return "";
    case S::PowersOfTwoToExtent: return "powers of two up to the extent of";
    case S::Choices: return "choices";
    case S::Bools: return "false, true";
    case S::BlockTags: return "free block axes";
    case S::ThreadTags: return "free thread axes";
    case S::Inames: return "inames";
  }
  return "";
}

bool parse_int(const std::string& s, int64_t& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (*end || errno == ERANGE) return false;
  v = x;
  return true;
}

}  // namespace

std::string TransformParam::type_name() const {
  std::string s = type_word(type);
  if (type == T::Int && min != INT64_MIN) s += " >= " + std::to_string(min);
  if (type == T::Int && max != INT64_MAX) s += " <= " + std::to_string(max);
  if (type == T::Choice) {
    s = "one of ";
    for (size_t i = 0; i < choices.size(); ++i) s += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  if (type == T::Tag) s += " (g.N, l.N, unr, ilp, ilp.seq, vec, for)";
  if (type == T::FetchTag) s += " (l.auto, for, or a tag)";
  return s;
}

std::string TransformParam::check(const std::string& v) const {
  switch (type) {
    case T::Int: {
      int64_t x = 0;
      if (!parse_int(v, x)) return "must be an integer, got '" + v + "'";
      if (x < min) return "must be at least " + std::to_string(min) + ", got " + v;
      if (x > max) return "must be at most " + std::to_string(max) + ", got " + v;
      return "";
    }
    case T::Bool:
      return v == "true" || v == "True" || v == "1" || v == "false" || v == "False" || v == "0" ? ""
                                                                                                 : "must be true or false, got '" + v + "'";
    case T::Float: {
      char* end = nullptr;
      std::strtod(v.c_str(), &end);
      return !v.empty() && *end == 0 ? "" : "must be a number, got '" + v + "'";
    }
    case T::Dtype: return loom::Type::parse(v) ? "" : "is not a dtype: '" + v + "' (float32, int64, ...)";
    case T::Tag:
      return InameTag::parse(v) ? "" : "unknown tag '" + v + "' (use g.0-2, l.0-2, unr, ilp, ilp.seq, ilp.unr, vec, for)";
    case T::FetchTag:
      return v == "l.auto" || v == "for" || InameTag::parse(v) ? "" : "unknown tag '" + v + "' (l.auto, for, or a tag such as l.0 or unr)";
    case T::Choice:
      return std::find(choices.begin(), choices.end(), v) != choices.end() ? "" : "must be " + type_name() + ", got '" + v + "'";
    case T::Match:
      try {
        InstructionMatch::parse(v);
        return "";
      } catch (const Error& e) {
        return std::string("is not an instruction match: ") + e.what();
      }
    case T::Name:
    case T::Iname:
    case T::Array:
    case T::Temporary:
    case T::Names:
    case T::Inames:
    case T::Arrays:
    case T::Temporaries: {
      if (kind == TagMap || kind == KeywordMap) return "";  // ("n=128, m=64": checked where read)
      bool list = type == T::Names || type == T::Inames || type == T::Arrays || type == T::Temporaries;
      std::string bad = first_bad_name(v, list);
      return bad.empty() ? "" : "must be " + std::string(list ? "names" : "a name") + " (a letter or '_', then letters, digits or '_'; not an isl keyword), got '" + bad + "'";
    }
    default: return "";
  }
}

std::vector<std::string> search_domain(const std::string& transform, const std::string& param, const LoopKernel& k,
                                       const std::map<std::string, std::string>& bound) {
  const TransformInfo* info = transform_registry().find(transform);
  if (!info) throw TransformError("search_domain: unknown transform '" + transform + "'");
  auto p = std::find_if(info->params.begin(), info->params.end(), [&](auto& x) { return x.name == param; });
  if (p == info->params.end()) throw TransformError("search_domain: " + transform + " has no parameter '" + param + "'");
  std::vector<std::string> out;
  switch (p->search) {
    case S::None: break;
    case S::Choices: out = p->choices; break;
    case S::Bools: out = {"false", "true"}; break;
    case S::Inames: out = k.all_inames(); break;
    case S::BlockTags:
    case S::ThreadTags: {
      out.push_back("for");
      InameTag::Kind kind = p->search == S::BlockTags ? InameTag::Group : InameTag::Local;
      for (int a = 0; a < 3; ++a) {
        bool used = std::any_of(k.iname_tags.begin(), k.iname_tags.end(), [&](auto& t) { return t.second == InameTag{kind, a}; });
        if (!used) out.push_back(InameTag{kind, a}.str());
      }
      break;
    }
    case S::PowersOfTwoToExtent: {
      auto of = bound.find(p->search_of);
      if (of == bound.end())
        throw TransformError("search_domain: " + transform + "'s " + param + " needs the value of '" + p->search_of + "'");
      if (!k.has_iname(of->second)) throw TransformError("search_domain: no iname '" + of->second + "'");
      auto r = islu::constant_range(k, of->second);
      int64_t extent = r ? r->second - r->first + 1 : 1024;
      for (int64_t v = std::max<int64_t>(1, p->min == INT64_MIN ? 1 : p->min); v <= extent && v <= 1024; v *= 2) out.push_back(std::to_string(v));
      break;
    }
  }
  return out;
}

std::string transform_schema_json() {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (auto& t : transform_registry().all()) {
    nlohmann::ordered_json params = nlohmann::ordered_json::array();
    for (auto& p : t.params) {
      nlohmann::ordered_json j;
      j["name"] = p.name;
      j["type"] = type_word(p.type);
      j["required"] = p.required;
      if (!p.default_value.empty()) j["default"] = p.default_value;
      if (!p.choices.empty()) j["choices"] = p.choices;
      if (p.min != INT64_MIN) j["minimum"] = p.min;
      if (p.max != INT64_MAX) j["maximum"] = p.max;
      if (p.search != S::None) j["search"] = std::string(search_word(p.search)) + (p.search_of.empty() ? "" : " " + p.search_of);
      j["help"] = p.help;
      params.push_back(j);
    }
    all.push_back({{"name", t.name}, {"doc", t.doc}, {"parameters", params}, {"changes_interface", t.changes_interface}});
  }
  nlohmann::ordered_json doc;
  doc["format"] = "loom-transform-schema";
  doc["version"] = 1;
  doc["transforms"] = all;
  return doc.dump(2);
}

}  // namespace loom
