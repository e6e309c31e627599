// DiskCache (loom/disk_cache.h). An entry file is
//   "LOOMCACHE1\n", key length (u64), value length (u64), checksum (u64), key, value
// little-endian, the checksum an FNV-1a hash of key and value. Entries live in
// DIR/v1/<hash>.bin; writers build DIR/v1/.tmp-* files and rename them.
#include "loom/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

namespace loom {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "LOOMCACHE1\n";
constexpr size_t kMagicSize = sizeof(kMagic) - 1;
constexpr size_t kHeaderSize = kMagicSize + 3 * 8;

uint64_t fnv1a(const std::string& s, uint64_t h = 0xcbf29ce484222325ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

void put_u64(std::string& out, uint64_t x) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((x >> (8 * i)) & 0xff);
}

uint64_t get_u64(const std::string& in, size_t at) {
  uint64_t x = 0;
  for (int i = 0; i < 8; ++i) x |= uint64_t(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return x;
}

uint64_t checksum(const std::string& key, const std::string& value) { return fnv1a(value, fnv1a(key)); }

bool read_file(const std::string& path, std::string& out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0;
  if (ok) {
    out.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (ok && got < out.size()) {
      ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n <= 0) ok = false;
      else got += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

// Writes all of data to fd; false with errno set on a short or failed write.
bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string default_dir() {
  if (const char* d = std::getenv("LOOM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/loom";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/loom";
  return "/tmp/loom-cache-" + std::to_string(::getuid());
}

}  // namespace

DiskCache::DiskCache(std::string dir, uint64_t max_bytes, bool enabled)
    : dir_(std::move(dir)), max_bytes_(max_bytes), enabled_(enabled) {}

DiskCache DiskCache::process_cache() {
  // read at every call, so a change of the variables (os.environ in Python) applies at once
  const char* off = std::getenv("LOOM_CACHE");
  bool enabled = !(off && (std::strcmp(off, "off") == 0 || std::strcmp(off, "0") == 0));
  uint64_t mb = 1024;
  if (const char* m = std::getenv("LOOM_CACHE_MAX_MB"); m && *m) mb = std::strtoull(m, nullptr, 10);
  return DiskCache(default_dir(), mb << 20, enabled);
}

std::string DiskCache::entry_path(const std::string& key) const {
  return dir_ + "/v1/" + hex(fnv1a(key)) + hex(fnv1a(key, 0x84222325cbf29ce4ull)) + ".bin";
}

std::optional<std::string> DiskCache::get(const std::string& key) const {
  if (!enabled_) return std::nullopt;
  std::string path = entry_path(key), data;
  if (!read_file(path, data)) return std::nullopt;
  bool whole = data.size() >= kHeaderSize && data.compare(0, kMagicSize, kMagic) == 0;
  uint64_t klen = whole ? get_u64(data, kMagicSize) : 0, vlen = whole ? get_u64(data, kMagicSize + 8) : 0;
  whole = whole && klen <= data.size() && vlen <= data.size() && kHeaderSize + klen + vlen == data.size();
  if (whole) {
    std::string stored_key = data.substr(kHeaderSize, klen);
    std::string value = data.substr(kHeaderSize + klen);
    if (checksum(stored_key, value) == get_u64(data, kMagicSize + 16)) {
      if (stored_key != key) return std::nullopt;  // another key with the same hash: a miss
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // recently used (fails harmlessly when read-only)
      return value;
    }
  }
  ::unlink(path.c_str());  // truncated or corrupted: rebuilt by the caller's put
  return std::nullopt;
}

bool DiskCache::put(const std::string& key, const std::string& value, std::string* why) const {
  auto fail = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  if (!enabled_) return fail("the disk cache is off (LOOM_CACHE=off)");
  if (kHeaderSize + key.size() + value.size() > max_bytes_)
    return fail("the entry (" + std::to_string(key.size() + value.size()) + " bytes) is larger than the cache's limit");
  std::error_code ec;
  fs::create_directories(dir_ + "/v1", ec);
  if (ec) return fail("cannot create the cache folder " + dir_ + "/v1: " + ec.message());
  static std::atomic<uint64_t> counter{0};
  std::string path = entry_path(key);
  std::string tmp = dir_ + "/v1/.tmp-" + hex(fnv1a(key)) + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return fail("cannot write in the cache folder " + dir_ + ": " + std::strerror(errno));
  std::string entry(kMagic, kMagicSize);
  put_u64(entry, key.size());
  put_u64(entry, value.size());
  put_u64(entry, checksum(key, value));
  entry += key;
  entry += value;
  bool ok = write_all(fd, entry);
  int err = errno;
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail("writing a cache entry in " + dir_ + " failed: " + std::strerror(err ? err : EIO));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return fail("cannot rename a cache entry into place in " + dir_ + ": " + std::strerror(err));
  }
  evict();
  return true;
}

void DiskCache::evict() const {
  struct Entry {
    std::string path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir_ + "/v1", ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e2;
    uint64_t bytes = it->file_size(e2);
    auto used = it->last_write_time(e2);
    if (e2) continue;  // removed meanwhile by another process
    std::string name = it->path().filename().string();
    if (name.rfind(".tmp-", 0) == 0) {  // a writer's: removed once it is clearly abandoned
      if (now - used > std::chrono::minutes(1)) fs::remove(it->path(), e2);
      continue;
    }
    entries.push_back({it->path().string(), bytes, used});
    total += bytes;
  }
  if (total <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (auto& e : entries) {
    if (total <= max_bytes_) break;
    std::error_code e2;
    if (fs::remove(e.path, e2)) total -= e.bytes;
  }
}

}  // namespace loom
