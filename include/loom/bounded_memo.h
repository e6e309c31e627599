// BoundedMemo: a process-wide answer cache for questions asked about
// immutable kernel parts (domains, their isl sets, a kernel's parts), keyed
// by the parts' addresses. An entry keeps the parts it was asked about alive
// (the value holds them), so an address is never reused by another part
// while its entry exists. Bounded: when full it starts over, since a tuner's
// thousands of variants come and go. One lock guards each memo; the answer
// is computed outside it.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace loom {

template <class Key, class Value, template <class...> class Map = std::unordered_map>
class BoundedMemo {
 public:
  // The answer stored for key, shared (not copied: answers hold constraint
  // lists and isl sets); null when there is none.
  std::shared_ptr<const Value> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end()) return it->second;
    return nullptr;
  }
  // Stores value as the answer for key, and returns it.
  std::shared_ptr<const Value> add(Key key, Value value) {
    auto stored = std::make_shared<const Value>(std::move(value));
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= kLimit) entries_.clear();
    entries_.insert_or_assign(std::move(key), stored);
    return stored;
  }

 private:
  static constexpr size_t kLimit = 4096;
  std::mutex mu_;
  Map<Key, std::shared_ptr<const Value>> entries_;
};

}  // namespace loom
