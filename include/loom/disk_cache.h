// A content-addressed cache of compiled binaries on disk, so a process that
// compiles what an earlier one compiled loads it instead (an NVRTC compile
// costs 17-26 ms; a hit costs a file read). The key is a text naming
// everything the binary depends on (the caller builds it: source, options,
// architecture, compiler and driver versions, Loom's version); entries are
// named by its hash and hold the whole key, so a hash collision is a miss.
//
// Safe under concurrency and crashes: an entry is written to a temporary
// file and renamed into place, so a reader sees a whole entry or none; a
// truncated or corrupted entry fails its checksum, is removed and rebuilt.
// Least-recently-used entries (by modification time, touched on every hit)
// are evicted above the size limit. A cache that cannot be written (a
// read-only or full folder) never fails a compile: put() says why instead.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace loom {

class DiskCache {
 public:
  // dir: the cache folder (created on first put); max_bytes: the size limit.
  DiskCache(std::string dir, uint64_t max_bytes, bool enabled = true);

  // The process's cache, from the environment: LOOM_CACHE_DIR, else
  // $XDG_CACHE_HOME/loom, else ~/.cache/loom; LOOM_CACHE=off (or 0) turns
  // it off; LOOM_CACHE_MAX_MB sets the limit (default 1024). Read at each call.
  static DiskCache process_cache();

  bool enabled() const { return enabled_; }
  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

  // The value stored under key, or nullopt (absent, corrupt: removed, or off).
  std::optional<std::string> get(const std::string& key) const;
  // Stores value under key; false when it could not, with the reason in *why.
  bool put(const std::string& key, const std::string& value, std::string* why = nullptr) const;
  // Removes entries, oldest first, until the folder holds at most max_bytes;
  // also removes temporary files a killed writer left (older than a minute).
  void evict() const;

  // The entry file a key is stored in (tests corrupt it on purpose).
  std::string entry_path(const std::string& key) const;

 private:
  std::string dir_;
  uint64_t max_bytes_;
  bool enabled_;
};

}  // namespace loom
