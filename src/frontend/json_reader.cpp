// JsonValue and JsonReader: typed, path-carrying access to a JSON document
// (json_reader.h).
#include "json_reader.h"

#include <algorithm>

#include "loom/json.h"

namespace loom::frontend {

namespace {

const char* type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

// A field name as a JSON pointer token (RFC 6901: ~ is ~0, / is ~1).
std::string pointer_token(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

void JsonValue::fail(const std::string& msg) const { throw JsonError(*file_, path_, msg); }

void JsonValue::expected(const char* what) const { fail(std::string("expected ") + what + ", got " + type_name(*v_)); }

std::string JsonValue::string() const {
  if (!v_->is_string()) expected("a string");
  return v_->get<std::string>();
}

std::string JsonValue::identifier() const {
  std::string s = string();
  if (!is_identifier(s)) fail("'" + s + "' is not a name (letters, digits and _, not starting with a digit)");
  return s;
}

bool JsonValue::boolean() const {
  if (!v_->is_boolean()) expected("true or false");
  return v_->get<bool>();
}

int64_t JsonValue::integer(int64_t lo, int64_t hi) const {
  if (v_->is_number_unsigned() && v_->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    fail("the integer is out of the range of a 64-bit integer");
  if (!v_->is_number_integer()) expected("an integer");
  int64_t x = v_->get<int64_t>();
  if (x < lo || x > hi) fail(std::to_string(x) + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

Expr JsonValue::expr(const std::set<std::string>& inames) const {
  std::string text = string();
  for (char c : text)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') fail("an expression holds a control character");
  return parse_expr(text, inames, *file_ + ": " + path_);
}

std::vector<JsonValue> JsonValue::items() const {
  if (!v_->is_array()) expected("an array");
  std::vector<JsonValue> out;
  for (size_t i = 0; i < v_->size(); ++i) out.emplace_back(&(*v_)[i], path_ + "/" + std::to_string(i), file_);
  return out;
}

std::vector<std::pair<std::string, JsonValue>> JsonValue::members() const {
  if (!v_->is_object()) expected("an object");
  std::vector<std::pair<std::string, JsonValue>> out;
  for (auto it = v_->begin(); it != v_->end(); ++it)
    out.emplace_back(it.key(), JsonValue(&it.value(), path_ + "/" + pointer_token(it.key()), file_));
  return out;
}

bool JsonValue::has(const std::string& name) const { return v_->is_object() && v_->contains(name); }

JsonValue JsonValue::field(const std::string& name) const {
  if (!v_->is_object()) expected("an object");
  auto it = v_->find(name);
  if (it == v_->end()) fail("missing field '" + name + "'");
  return JsonValue(&*it, path_ + "/" + pointer_token(name), file_);
}

void JsonValue::allow_fields(const std::vector<std::string>& names) const {
  if (!v_->is_object()) expected("an object");
  for (auto it = v_->begin(); it != v_->end(); ++it)
    if (std::find(names.begin(), names.end(), it.key()) == names.end()) {
      std::string known;
      for (auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw JsonError(*file_, path_ + "/" + pointer_token(it.key()),
                      "unknown field '" + it.key() + "'" + did_you_mean(it.key(), names) + " (fields here: " + known + ")");
    }
}

JsonReader::JsonReader(const std::string& text, std::string filename) : file_(std::move(filename)) {
  try {
    doc_ = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann counts bytes; name the line and column as the kernel parser does
    size_t byte = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    int line = 1, column = 1;
    for (size_t i = 0; i < byte; ++i) {
      if (text[i] == '\n') ++line, column = 1;
      else ++column;
    }
    std::string what = e.what();
    auto colon = what.find(": ", what.find("column"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw ParseError(SourceLoc{file_, line, column}, "malformed JSON: " + what);
  } catch (const nlohmann::json::exception& e) {  // a number too large for any JSON number type (out_of_range.406)
    std::string what = e.what();
    auto bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    throw ParseError(SourceLoc{file_, 0, 0}, "malformed JSON: " + what);
  }
}

void JsonReader::check_format(const std::string& format) const {
  JsonValue r = root();
  if (!r.is_object()) r.fail("a Loom document is a JSON object with \"format\" and \"version\"");
  JsonValue f = r.field("format");
  std::string got = f.string();
  if (got != format) f.fail("this reader takes a '" + format + "' document, not '" + got + "'");
  JsonValue v = r.field("version");
  int64_t version = v.integer(INT64_MIN, INT64_MAX);
  if (version != kJsonVersion)
    v.fail("version " + std::to_string(version) + " is not supported (this Loom reads version " + std::to_string(kJsonVersion) + ")");
}

}  // namespace loom::frontend
