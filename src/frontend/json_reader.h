// A checked view of a parsed JSON document for Loom's readers: each value
// knows its JSON pointer, and every accessor checks the value's type, so a
// reader states what it expects and a wrong document gets a JsonError
// naming the path (never an nlohmann exception or a crash).
#pragma once
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "loom/expr.h"
#include "loom/parser.h"

namespace loom::frontend {

class JsonValue {
 public:
  JsonValue(const nlohmann::json* v, std::string path, const std::string* file)
      : v_(v), path_(std::move(path)), file_(file) {}

  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
  [[noreturn]] void fail(const std::string& msg) const;

  bool is_null() const { return v_->is_null(); }
  bool is_string() const { return v_->is_string(); }
  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  std::string string() const;
  std::string identifier() const;  // a string that is a name ([A-Za-z_][A-Za-z0-9_]*)
  bool boolean() const;
  int64_t integer(int64_t lo, int64_t hi) const;
  Expr expr(const std::set<std::string>& inames) const;  // kernel-language text
  std::vector<JsonValue> items() const;                    // an array's elements
  std::vector<std::pair<std::string, JsonValue>> members() const;  // an object's fields, in order
  bool has(const std::string& name) const;                 // an object with this field
  JsonValue field(const std::string& name) const;          // a field that must be there
  // Refuses a field not in the list (with a did-you-mean), or a value that is not an object.
  void allow_fields(const std::vector<std::string>& names) const;
  const nlohmann::json& raw() const { return *v_; }

 private:
  [[noreturn]] void expected(const char* what) const;
  const nlohmann::json* v_;
  std::string path_;
  const std::string* file_;
};

// Owns the parsed document. Malformed JSON is a ParseError with line and column.
class JsonReader {
 public:
  JsonReader(const std::string& text, std::string filename);
  JsonValue root() const { return JsonValue(&doc_, "", &file_); }
  // The document's "format" must be `format` and its "version" kJsonVersion.
  void check_format(const std::string& format) const;

 private:
  nlohmann::json doc_;
  std::string file_;
};

// The steps of a "transforms" array, each checked against the registry's schema.
std::vector<TransformStep> read_transform_steps(const JsonValue& v);
// The "transforms" array of steps, their arguments by parameter name.
nlohmann::ordered_json transform_steps_to_json(const std::vector<TransformStep>& steps);

}  // namespace loom::frontend
