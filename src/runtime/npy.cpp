// NumPy's .npy format, read and written for `loom run --in/--out` (the
// format: numpy.lib.format; a magic string, a version, a Python dict literal
// header with descr, fortran_order and shape, then the raw elements).
#include <cstring>
#include <fstream>
#include <sstream>

#include "loom/runtime.h"

namespace loom {

namespace {

const char kMagic[] = "\x93NUMPY";

struct Descr {
  const char* text;
  ScalarKind kind;
};
const Descr kDescrs[] = {{"|b1", ScalarKind::Bool},    {"|i1", ScalarKind::Int8},    {"<i2", ScalarKind::Int16},
                         {"<i4", ScalarKind::Int32},   {"<i8", ScalarKind::Int64},   {"|u1", ScalarKind::UInt8},
                         {"<u2", ScalarKind::UInt16},  {"<u4", ScalarKind::UInt32},  {"<u8", ScalarKind::UInt64},
                         {"<f2", ScalarKind::Float16}, {"<f4", ScalarKind::Float32}, {"<f8", ScalarKind::Float64}};

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw ArgumentError("'" + path + "' is not an .npy file Loom reads: " + why);
}

// The quoted value after 'key': in the header dict.
std::string header_value(const std::string& header, const std::string& key, const std::string& path) {
  auto at = header.find("'" + key + "'");
  if (at == std::string::npos) bad(path, "its header has no '" + key + "'");
  auto colon = header.find(':', at);
  if (colon == std::string::npos) bad(path, "malformed header");
  size_t b = header.find_first_not_of(" ", colon + 1);
  if (b == std::string::npos) bad(path, "malformed header");
  size_t e = b;
  if (header[b] == '\'') {
    e = header.find('\'', b + 1);
    if (e == std::string::npos) bad(path, "malformed header");
    return header.substr(b + 1, e - b - 1);
  }
  if (header[b] == '(') {
    e = header.find(')', b);
    if (e == std::string::npos) bad(path, "malformed header");
    return header.substr(b, e - b + 1);
  }
  e = header.find_first_of(",}", b);
  return header.substr(b, e - b);
}

std::vector<int64_t> parse_shape(const std::string& tuple, const std::string& path) {
  std::vector<int64_t> shape;
  std::string inner = tuple.substr(1, tuple.size() - 2);
  std::stringstream ss(inner);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" ");
    if (b == std::string::npos) continue;
    try {
      size_t used = 0;
      long long v = std::stoll(item.substr(b), &used);
      if (v < 0) throw std::invalid_argument("negative");
      shape.push_back(v);
    } catch (...) {
      bad(path, "shape " + tuple + " is not a tuple of sizes");
    }
  }
  return shape;
}

}  // namespace

HostArray read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw ArgumentError("cannot open '" + path + "'");
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (data.size() < 10 || data.compare(0, 6, kMagic, 6) != 0) bad(path, "no NUMPY magic string");
  int major = static_cast<unsigned char>(data[6]);
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | static_cast<unsigned char>(data[9]) << 8;
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) bad(path, "truncated header");
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    header_at = 12;
  } else {
    bad(path, "format version " + std::to_string(major) + " (Loom reads 1 to 3)");
  }
  if (header_at + header_len > data.size()) bad(path, "truncated header");
  std::string header = data.substr(header_at, header_len);
  std::string descr = header_value(header, "descr", path);
  std::string order = header_value(header, "fortran_order", path);
  std::vector<int64_t> shape = parse_shape(header_value(header, "shape", path), path);
  const Descr* d = nullptr;
  for (auto& x : kDescrs)
    if (descr == x.text || (descr.size() == 3 && descr[0] == '=' && descr.substr(1) == std::string(x.text).substr(1))) d = &x;
  if (!d) bad(path, "dtype '" + descr + "' (Loom reads little-endian bool, int, uint and float arrays)");
  HostArray a(Type(d->kind), shape);
  size_t bytes = a.bytes.size();
  size_t body = header_at + header_len;
  if (data.size() - body < bytes)
    bad(path, "it holds " + std::to_string(data.size() - body) + " bytes of data for a shape that needs " + std::to_string(bytes));
  if (order.find("True") == std::string::npos) {
    if (bytes) std::memcpy(a.bytes.data(), data.data() + body, bytes);
    return a;
  }
  // Fortran order: the first index varies fastest; copy element by element into C order
  size_t rank = shape.size(), esize = a.dtype.bytes();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t n = 0; n < a.elements; ++n) {
    int64_t c = 0, fo = 0, stride = 1;
    for (size_t r = 0; r < rank; ++r) c = c * shape[r] + idx[r];
    for (size_t r = 0; r < rank; ++r) fo += idx[r] * stride, stride *= shape[r];
    std::memcpy(a.bytes.data() + c * esize, data.data() + body + fo * esize, esize);
    for (size_t r = 0; r < rank; ++r)  // next index, first fastest
      if (++idx[r] < shape[r]) break;
      else idx[r] = 0;
  }
  return a;
}

void write_npy(const std::string& path, const HostArray& a) {
  if (a.elements != element_count(a.shape))
    throw ArgumentError("cannot write '" + path + "': the array's storage (" + std::to_string(a.elements) +
                        " elements) is not its shape's; a strided layout has no .npy form");
  const Descr* d = nullptr;
  for (auto& x : kDescrs)
    if (x.kind == a.dtype.kind && a.dtype.lanes == 1) d = &x;
  if (!d) throw ArgumentError("cannot write '" + path + "': dtype " + a.dtype.name() + " has no .npy form");
  std::string shape = "(";
  for (auto s : a.shape) shape += std::to_string(s) + ", ";
  if (a.shape.size() > 1) shape.resize(shape.size() - 2);
  else if (a.shape.size() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + d->text + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');  // aligned to 64 bytes, as numpy writes it
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  if (!f) throw ArgumentError("cannot write '" + path + "'");
  f.write(kMagic, 6);
  f.put(1);
  f.put(0);
  f.put(static_cast<char>(header.size() & 0xff));
  f.put(static_cast<char>(header.size() >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(a.bytes.data()), a.dtype.bytes() * a.elements);
  if (!f) throw ArgumentError("writing '" + path + "' failed");
}

}  // namespace loom
