// Domain: a parametric integer set over inames ({[i,j]: 0<=i<n and 0<=j<i}),
// held as an isl_set. A small owning handle keeps isl's heavy C++ header out
// of Loom's public headers; code that computes with sets includes
// "isl_util.h" and works with isl::set directly.
//
// All Loom isl objects live in one process-wide isl context (isl_context()).
// isl contexts are not thread-safe; Loom's entry points are therefore not
// re-entrant across threads yet (the tuner will compile in processes).
#pragma once
#include <mutex>
#include <stdexcept>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct isl_set;
struct isl_ctx;

namespace loom {

isl_ctx* isl_context();
// Launching compiled kernels from several threads at once is supported, and
// a launch may ask isl (the assumptions of a call, the index width): those
// checks hold this one lock while they use the shared context.
std::mutex& isl_launch_mutex();

// A domain string isl could not read; line/column are 1-based within the text.
struct DomainSyntaxError : std::runtime_error {
  int line, column;
  DomainSyntaxError(const std::string& msg, int l, int c) : std::runtime_error(msg), line(l), column(c) {}
};

// Refuses, with DomainSyntaxError, domain text that isl's parser cannot survive:
// a division or modulo by a constant zero (GMP raises SIGFPE) and nesting
// deeper than 64 levels. Domain::parse calls it before isl sees the text.
void check_domain_text(const std::string& text);

// The common form of a domain, one conjunction of affine comparisons over
// named inames ({[i, j]: 0 <= i < n and 0 <= j <= i}), built through isl's
// constraint API without its parser; null where the text is not of that form
// (Domain::parse then gives it to isl's parser).
isl_set* read_affine_domain(isl_ctx* ctx, const std::string& text);

// True for a word isl's tokenizer reads as a keyword ("and", "min", "floord",
// ...), in any letter case as isl does: never an iname, parameter or name.
bool is_isl_keyword(const std::string& word);

class Domain {
 public:
  Domain() = default;
  explicit Domain(isl_set* take);  // takes ownership
  Domain(const Domain& o);
  Domain(Domain&& o) noexcept : set_(o.set_), inames_(std::move(o.inames_)), id_(o.id_) { o.set_ = nullptr; }
  Domain& operator=(Domain o) noexcept {
    std::swap(set_, o.set_);
    std::swap(inames_, o.inames_);
    std::swap(id_, o.id_);
    return *this;
  }
  ~Domain();

  // Parses isl syntax. Identifiers that are neither set dimensions nor
  // isl keywords become parameters (true parameters, or inames of other
  // domains), as in loopy: "{[i]: 0 <= i < n}" means "[n] -> {[i]: ...}".
  // Throws DomainSyntaxError with isl's message and position on bad syntax.
  static Domain parse(const std::string& text);
  // The same through isl's parser always (tests compare the two readers).
  static Domain parse_with_isl(const std::string& text);
  // {[iname]: 0 <= iname < extent}, built through isl's API (parsing the
  // same text costs 30 times more, and transformations make many of these).
  static Domain interval(const std::string& iname, int64_t extent);

  isl_set* get() const { return set_; }  // borrowed
  isl_set* copy() const;                  // new reference
  bool defined() const { return set_ != nullptr; }
  // Never reused: one per set taken (copies share it), so an index of a
  // kernel's domains can tell that a domain was replaced.
  uint64_t id() const { return id_; }

  std::vector<std::string> inames() const;  // set dimensions in order
  std::vector<std::string> params() const;
  bool has_iname(const std::string& n) const;
  bool has_param(const std::string& n) const;
  std::string str() const;

 private:
  isl_set* set_ = nullptr;
  // The set dimensions' names, read once when the set is taken: a domain is
  // never changed in place (every change makes a new Domain), and asking
  // isl by name for every has_iname made kernels with hundreds of domains
  // (a warp reduction per instruction) quadratic in isl's string compares.
  std::shared_ptr<const std::vector<std::string>> inames_;
  uint64_t id_ = 0;
};

}  // namespace loom
