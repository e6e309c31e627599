// structural_key / structural_hash / structurally_equal: a kernel's identity
// by content, so caches (compiled code, isl answers, a tuner's measured
// variants) are keyed by what a kernel is, not by where it lives. The key is
// a canonical text of every field: the kernel-language dump (domains as isl
// prints them, arguments, temporaries, tags, instructions with their
// options) and what the dump leaves out (rules, priorities, slabs,
// assumptions, options, inference flags, origins, the kernel as written).
// Two scripts that produce the same kernel produce the same key; the hash is
// FNV-1a over it, the same in every run and on every machine.
#include <sstream>

#include "loom/kernel.h"

namespace loom {

namespace {

void write_key(std::ostream& os, const LoopKernel& k) {
  os << k.str() << "\n--\n";
  for (auto& [n, r] : k.substitutions) {
    os << "rule " << n << "(";
    for (auto& p : r.params) os << p << ",";
    os << ") := " << (r.body.defined() ? r.body.str() : "<none>") << "\n";
  }
  for (auto& chain : k.loop_priority) {
    os << "priority";
    for (auto& i : chain) os << " " << i;
    os << "\n";
  }
  for (auto& [i, s] : k.slabs) os << "slabs " << i << " " << s.first << " " << s.second << "\n";
  os << "assumptions " << k.assumptions.str() << "\n";
  os << "index_dtype " << k.options.index_dtype.name() << "\n";
  for (auto& p : k.options.do_not_specialize) os << "do_not_specialize " << p << "\n";
  if (k.options.trust_unproven_accesses) os << "trust_unproven_accesses\n";
  if (k.options.block_group != 1) os << "block_group " << k.options.block_group << "\n";
  for (auto& a : k.arguments) os << "argument " << a.name << " " << a.kind << a.shape_inferred << a.dtype_inferred << (a.stand_in ? " " + a.stand_in.str() : "") << "\n";
  for (auto& [n, t] : k.temporaries) os << "temporary " << n << " " << t.zero_fill_of << " " << t.double_buffered_in << " " << t.swizzle_bytes << " " << t.double_buffer_ahead << (t.bulk_copy ? " bulk" : "") << (t.stand_in ? " " + t.stand_in.str() : "") << "\n";
  for (auto& insn : k.instructions) {
    os << "instruction " << insn.id << " " << insn.inames_given << " " << insn.origin_of << (insn.origin_part ? " part" : "");
    if (insn.origin)
      for (auto& [n, e] : *insn.origin) os << " " << n << "=" << (e.defined() ? e.str() : "<none>");
    os << "\n";
  }
  if (k.original) {
    os << "original {\n";
    write_key(os, *k.original);
    os << "}\n";
  }
}

}  // namespace

std::string structural_key(const LoopKernel& k) {
  std::ostringstream os;
  write_key(os, k);
  return os.str();
}

uint64_t structural_hash(const LoopKernel& k) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (unsigned char c : structural_key(k)) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool structurally_equal(const LoopKernel& a, const LoopKernel& b) { return &a == &b || structural_key(a) == structural_key(b); }

}  // namespace loom
