// Part<T>: one immutable, shared part of a kernel value (its instructions,
// its domains, its temporaries, ...). Copying a Part copies a pointer, so
// copying a LoopKernel copies a handful of pointers and a transformation
// that changes the tags shares the instructions, domains and arguments of
// the kernel it was given (the tuner holds thousands of variants of one
// kernel). Reading looks like reading the container (size, begin, [], at,
// find, count; a `const T&` where one is asked for); changing goes through
// edit(), which copies the part first unless this handle is its only owner
// (copy on write), so no other kernel ever sees the change.
#pragma once
#include <memory>
#include <utility>

namespace loom {

template <class T>
class Part {
 public:
  Part() = default;
  Part(T value) : p_(std::make_shared<const T>(std::move(value))) {}
  Part& operator=(T value) {
    p_ = std::make_shared<const T>(std::move(value));
    return *this;
  }

  const T& get() const { return p_ ? *p_ : empty_value(); }
  operator const T&() const { return get(); }
  const T& operator*() const { return get(); }
  const T* operator->() const { return &get(); }

  // The part to change in place: this handle's own copy (made now unless
  // nothing else shares it). Do not keep the reference across a copy of the
  // kernel: the copy would share what is then changed.
  T& edit() {
    if (!p_)
      p_ = std::make_shared<const T>();
    else if (p_.use_count() != 1)
      p_ = std::make_shared<const T>(*p_);
    return const_cast<T&>(*p_);
  }
  // Whether two handles share one part (the kernel-sharing test asks this).
  bool shares(const Part& other) const { return p_ == other.p_ && p_ != nullptr; }
  const void* identity() const { return p_.get(); }

  // Read-only container access, forwarded.
  auto begin() const { return get().begin(); }
  auto end() const { return get().end(); }
  auto rbegin() const { return get().rbegin(); }
  auto rend() const { return get().rend(); }
  auto size() const { return get().size(); }
  bool empty() const { return get().empty(); }
  decltype(auto) front() const { return get().front(); }
  decltype(auto) back() const { return get().back(); }
  template <class K>
  decltype(auto) operator[](const K& k) const
    requires requires(const T& t, const K& key) { t[key]; }
  {
    return get()[k];
  }
  template <class K>
  decltype(auto) at(const K& k) const { return get().at(k); }
  template <class K>
  auto find(const K& k) const { return get().find(k); }
  template <class K>
  auto count(const K& k) const { return get().count(k); }
  template <class K>
  bool contains(const K& k) const { return get().contains(k); }

  friend bool operator==(const Part& a, const Part& b) { return a.p_ == b.p_ || a.get() == b.get(); }

 private:
  static const T& empty_value() {
    static const T e{};
    return e;
  }
  std::shared_ptr<const T> p_;
};

}  // namespace loom
