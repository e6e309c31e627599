// The compile cache on disk (loom/disk_cache.h): entries survive the
// process; several processes writing one entry at once, a writer killed
// mid-write, a corrupted or truncated entry, an unwritable or full folder and
// the size limit each leave a cache that never hands out a wrong entry.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "loom/cuda.h"
#include "loom/disk_cache.h"

using namespace loom;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/loom-cache-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A value large enough that a write takes many system calls.
std::string big_value(char seed, size_t bytes) {
  std::string v(bytes, '\0');
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>(seed + i * 131);
  return v;
}

}  // namespace

TEST(DiskCache, StoresAndLoadsAcrossInstances) {
  TempDir d;
  DiskCache a(d.path, 1 << 20);
  EXPECT_FALSE(a.get("key").has_value());
  std::string why;
  ASSERT_TRUE(a.put("key", "value\0with nul", &why)) << why;
  DiskCache b(d.path, 1 << 20);  // a later process
  ASSERT_TRUE(b.get("key").has_value());
  EXPECT_EQ(*b.get("key"), std::string("value\0with nul"));
  EXPECT_FALSE(b.get("other key").has_value());
  DiskCache off(d.path, 1 << 20, false);
  EXPECT_FALSE(off.get("key").has_value());
  EXPECT_FALSE(off.put("key", "v", &why));
  EXPECT_NE(why.find("off"), std::string::npos);
}

TEST(DiskCache, ConcurrentWritersOfOneEntry) {
  TempDir d;
  const std::string value = big_value('a', 4 << 20);
  std::vector<pid_t> kids;
  for (int p = 0; p < 8; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      DiskCache c(d.path, 1ull << 30);
      int bad = 0;
      for (int r = 0; r < 5; ++r) {
        c.put("shared", value);
        auto got = c.get("shared");
        if (got && *got != value) ++bad;  // a reader sees the whole entry or none
      }
      ::_exit(bad);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ::waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  DiskCache c(d.path, 1ull << 30);
  ASSERT_TRUE(c.get("shared").has_value());
  EXPECT_EQ(*c.get("shared"), value);
  for (auto& e : fs::directory_iterator(d.path + "/v1"))  // no temporary file left behind
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << e.path();
}

TEST(DiskCache, AWriterKilledMidWriteLeavesNoEntryThatIsUsed) {
  TempDir d;
  const std::string value = big_value('w', 64 << 20);  // ~20 ms a write: kills land inside one
  for (int attempt = 0; attempt < 5; ++attempt) {
    pid_t pid = ::fork();
    if (pid == 0) {
      DiskCache c(d.path, 1ull << 32);
      for (int r = 0;; ++r) c.put("k" + std::to_string(r % 3), value);
    }
    ::usleep(20000 + attempt * 15000);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    DiskCache c(d.path, 1ull << 32);
    for (int r = 0; r < 3; ++r) {
      auto got = c.get("k" + std::to_string(r));
      if (got) EXPECT_TRUE(*got == value);  // whole, or absent
    }
  }
  // the temporaries a killed writer left are not entries, and eviction clears them once old
  DiskCache c(d.path, 1ull << 32);
  std::ofstream(d.path + "/v1/.tmp-deadbeef-1-0") << "half an entry";
  fs::last_write_time(d.path + "/v1/.tmp-deadbeef-1-0", fs::file_time_type::clock::now() - std::chrono::hours(1));
  c.evict();
  EXPECT_FALSE(fs::exists(d.path + "/v1/.tmp-deadbeef-1-0"));
}

TEST(DiskCache, CorruptedOrTruncatedEntriesAreDetectedAndRebuilt) {
  TempDir d;
  DiskCache c(d.path, 1 << 20);
  ASSERT_TRUE(c.put("key", big_value('x', 5000)));
  std::string path = c.entry_path("key");
  {  // flip one byte of the value
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3000);
    f.put('\x7f');
  }
  EXPECT_FALSE(c.get("key").has_value());
  EXPECT_FALSE(fs::exists(path));  // removed, so the caller's put rebuilds it
  ASSERT_TRUE(c.put("key", big_value('x', 5000)));
  fs::resize_file(path, 2000);  // truncated
  EXPECT_FALSE(c.get("key").has_value());
  ASSERT_TRUE(c.put("key", big_value('x', 5000)));
  std::ofstream(path, std::ios::trunc) << "garbage";
  EXPECT_FALSE(c.get("key").has_value());
  ASSERT_TRUE(c.put("key", big_value('x', 5000)));
  EXPECT_EQ(*c.get("key"), big_value('x', 5000));
}

TEST(DiskCache, AnUnwritableFolderSaysWhy) {
  TempDir d;
  std::ofstream(d.path + "/file") << "a file where the folder should be";
  DiskCache c(d.path + "/file/cache", 1 << 20);  // (chmod would not stop root)
  std::string why;
  EXPECT_FALSE(c.put("key", "value", &why));
  EXPECT_NE(why.find("cannot create the cache folder"), std::string::npos) << why;
  EXPECT_FALSE(c.get("key").has_value());
}

TEST(DiskCache, AFullDiskSaysWhyAndLeavesNothing) {
  TempDir d;
  // a file-size limit fails the write as a full disk would (EFBIG instead of ENOSPC)
  pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    DiskCache c(d.path, 1 << 30);
    std::string why;
    bool stored = c.put("key", big_value('f', 100000), &why);
    bool said = why.find("failed") != std::string::npos;
    ::_exit(!stored && said ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  DiskCache c(d.path, 1 << 30);
  EXPECT_FALSE(c.get("key").has_value());
  for (auto& e : fs::directory_iterator(d.path + "/v1")) ADD_FAILURE() << "left behind: " << e.path();
}

TEST(DiskCache, TheSizeLimitEvictsTheLeastRecentlyUsed) {
  TempDir d;
  DiskCache c(d.path, 3 * 1100);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.put("k" + std::to_string(i), big_value(char(i), 1000)));
    fs::last_write_time(c.entry_path("k" + std::to_string(i)), fs::file_time_type::clock::now() - std::chrono::minutes(10 - i));
  }
  ASSERT_TRUE(c.get("k0").has_value());  // used: now the most recent
  ASSERT_TRUE(c.put("k3", big_value(3, 1000)));
  EXPECT_TRUE(c.get("k0").has_value());
  EXPECT_FALSE(c.get("k1").has_value());  // the least recently used went
  EXPECT_TRUE(c.get("k2").has_value());
  EXPECT_TRUE(c.get("k3").has_value());
  std::string why;
  EXPECT_FALSE(c.put("huge", big_value(9, 10000), &why));
  EXPECT_NE(why.find("larger than the cache's limit"), std::string::npos) << why;
}

TEST(DiskCache, NvrtcCompilesAreServedFromDiskInALaterProcess) {
  if (!cuda::nvrtc_available()) GTEST_SKIP() << "no NVRTC";
  TempDir d;
  // each compile in a process of its own, as a later run of a tuner would be
  auto compile_in_child = [&](const std::string& source, int expect_loaded) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("LOOM_CACHE_DIR", d.path.c_str(), 1);
      auto r = cuda::compile(source, "sm_90");
      bool loaded = r.disk_cache.rfind("loaded", 0) == 0;
      ::_exit(loaded == bool(expect_loaded) && !r.cubin.empty() && r.registers > 0 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
  };
  // a source no earlier run stored (the in-memory cache of this process is not the child's concern: it is forked)
  std::string source = "extern \"C\" __global__ void k(float* a) { a[threadIdx.x] *= 2.0f; }\n// " + d.path + "\n";
  // several processes compiling it at once: each gets a whole binary, one entry results
  std::string together = source + "// compiled by four processes at once\n";
  std::vector<pid_t> kids;
  for (int p = 0; p < 4; ++p) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setenv("LOOM_CACHE_DIR", d.path.c_str(), 1);
      auto r = cuda::compile(together, "sm_90");
      ::_exit(!r.cubin.empty() && r.registers > 0 ? 0 : 1);
    }
    kids.push_back(pid);
  }
  for (pid_t k : kids) {
    int status = 0;
    ::waitpid(k, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(compile_in_child(together, 1), 0);
  EXPECT_EQ(compile_in_child(source, 0), 0);  // compiled and stored
  EXPECT_EQ(compile_in_child(source, 1), 0);  // loaded, with the resource report
  EXPECT_EQ(compile_in_child(source + "// another source\n", 0), 0);
}
