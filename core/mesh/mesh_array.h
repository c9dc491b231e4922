// A growable array of trivially copyable elements with a 16-byte header (std::vector's is 24),
// which can also point at elements stored elsewhere: the chunk collision cache packs a built
// mesh's and tree's arrays into one allocation per chunk and lets each array borrow its part
// (Borrow). A borrowed array is read in place; any non-const access first copies it into memory
// of its own, so nothing written through this array reaches the lender. A copy constructed from
// another array is exact-size and owned.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace voxcol {

template <typename T>
class MeshArray {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  using value_type = T;

  MeshArray() = default;
  MeshArray(std::initializer_list<T> items) { assign(items.begin(), items.end()); }
  MeshArray(const MeshArray& o) { assign(o.begin(), o.end()); }
  MeshArray& operator=(const MeshArray& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  MeshArray(MeshArray&& o) noexcept { swap(o); }
  MeshArray& operator=(MeshArray&& o) noexcept {
    MeshArray(std::move(o)).swap(*this);
    return *this;
  }
  ~MeshArray() { Free(data_, capacity_); }

  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return data_; }
  T* data() { return Owned(); }  // non-const access: a borrowed array copies out first
  const T& operator[](size_t i) const { return data_[i]; }
  T& operator[](size_t i) { return Owned()[i]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T* begin() { return Owned(); }
  T* end() { return Owned() + size_; }
  const T& back() const { return data_[size_ - 1]; }
  bool borrowed() const { return data_ != nullptr && capacity_ == 0; }

  // Makes room for n elements; a borrowed array becomes an owned copy first.
  void reserve(size_t n) {
    if (n > capacity_ || borrowed()) Reallocate(std::max<size_t>(n, size_));
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    T value(std::forward<Args>(args)...);  // before a reallocation: args may name an element
    if (size_ >= capacity_) Reallocate(std::max<size_t>({8, 2 * size_t(capacity_), size_ + 1}));
    return *new (data_ + size_++) T(value);
  }
  void push_back(const T& v) { emplace_back(v); }
  // Inserts `items` before `at` (std::vector's insert).
  void insert(const T* at, std::initializer_list<T> items) {
    const size_t pos = size_t(at - data_);
    if (size_ + items.size() > capacity_ || borrowed())
      Reallocate(std::max<size_t>({8, 2 * size_t(capacity_), size_ + items.size()}));
    std::memmove(data_ + pos + items.size(), data_ + pos, (size_ - pos) * sizeof(T));
    std::copy(items.begin(), items.end(), data_ + pos);
    size_ += uint32_t(items.size());
  }
  void resize(size_t n, const T& fill_in = T()) {
    const T fill = fill_in;  // before a reallocation: fill_in may name an element
    reserve(n);
    for (size_t i = size_; i < n; ++i) new (data_ + i) T(fill);
    size_ = uint32_t(n);
  }
  template <typename It>
  void assign(It first, It last) {
    const size_t n = size_t(std::distance(first, last));
    if (n > capacity_ || borrowed()) {  // the callers never pass a range of this array
      Free(data_, capacity_);
      data_ = nullptr;
      capacity_ = 0;
      size_ = 0;
      if (n != 0) Reallocate(n);
    }
    std::copy(first, last, data_);
    size_ = uint32_t(n);
  }
  void assign(size_t n, const T& v) {
    clear();
    resize(n, v);
  }
  // Drops the elements; an owned array keeps its capacity, a borrowed one lets go.
  void clear() {
    if (borrowed()) data_ = nullptr;
    size_ = 0;
  }
  // Frees spare capacity (an exact-size copy).
  void shrink_to_fit() {
    if (capacity_ > size_) MeshArray(*this).swap(*this);
  }
  void swap(MeshArray& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
  }
  // Frees what this owns and reads `n` elements at `data` from now on; `data` must outlive this
  // array's reads and is never freed or written here. Borrowing none leaves the array empty.
  void Borrow(const T* data, uint32_t n) {
    Free(data_, capacity_);
    data_ = n != 0 ? const_cast<T*>(data) : nullptr;
    size_ = n;
    capacity_ = 0;
  }

  size_t bytes() const { return size_t(size_) * sizeof(T); }
  // Copies the elements of `from` to `to` (aligned for T, room for from.bytes()) and borrows them
  // there. Returns the end of the copy.
  char* BorrowCopyOf(const MeshArray& from, char* to) {
    assert(reinterpret_cast<uintptr_t>(to) % alignof(T) == 0);
    if (from.size_ != 0) std::memcpy(to, from.data_, from.bytes());
    Borrow(reinterpret_cast<const T*>(to), from.size_);
    return to + from.bytes();
  }

  bool operator==(const MeshArray& o) const {
    return size_ == o.size_ && std::equal(begin(), end(), o.begin());
  }
  bool operator!=(const MeshArray& o) const { return !(*this == o); }

 private:
  static constexpr bool kOverAligned = alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__;
  static T* Allocate(size_t n) {
    if constexpr (kOverAligned) {
      return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    } else {
      return static_cast<T*>(::operator new(n * sizeof(T)));
    }
  }
  static void Free(T* p, uint32_t capacity) {
    if (p == nullptr || capacity == 0) return;  // none, or borrowed
    if constexpr (kOverAligned) {
      ::operator delete(p, std::align_val_t(alignof(T)));
    } else {
      ::operator delete(p);
    }
  }
  T* Owned() {
    if (borrowed()) Reallocate(size_);
    return data_;
  }
  // Moves the elements (the first n of them at most) into an owned allocation of `n` (> 0).
  void Reallocate(size_t n) {
    if (n > UINT32_MAX) throw std::length_error("MeshArray: more than 2^32 - 1 elements");
    T* fresh = Allocate(n);
    size_ = uint32_t(std::min<size_t>(size_, n));
    if (size_ != 0) std::memcpy(static_cast<void*>(fresh), data_, size_ * sizeof(T));
    Free(data_, capacity_);
    data_ = fresh;
    capacity_ = uint32_t(n);
  }

  T* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;  // 0 with data_ set: borrowed
};

}  // namespace voxcol
