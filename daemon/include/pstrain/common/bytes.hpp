#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "pstrain/common/error.hpp"

namespace pstrain {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian and copied as is");

// Appends fixed-width little-endian fields to a byte buffer.
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}

  template <typename T>
  ByteWriter& put(T value) {
    static_assert(std::is_arithmetic_v<T>);
    auto at = out_.size();
    out_.resize(at + sizeof(T));
    std::memcpy(out_.data() + at, &value, sizeof(T));
    return *this;
  }

  // `values` may be null for none (the shard of a ps out of the run).
  ByteWriter& putFloats(const float* values, size_t count) {
    if (count == 0) return *this;
    auto at = out_.size();
    out_.resize(at + count * sizeof(float));
    std::memcpy(out_.data() + at, values, count * sizeof(float));
    return *this;
  }

  ByteWriter& putText(const std::string& text) {
    out_.insert(out_.end(), text.begin(), text.end());
    return *this;
  }

 private:
  std::vector<std::uint8_t>& out_;
};

// Reads fixed-width fields from untrusted bytes; reading past the end throws DecodeError.
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <typename T>
  T get() {
    static_assert(std::is_arithmetic_v<T>);
    need(sizeof(T));
    T value;
    std::memcpy(&value, data_ + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }

  void getFloats(float* values, size_t count) {
    if (count == 0) return;
    need(count * sizeof(float));
    std::memcpy(values, data_ + at_, count * sizeof(float));
    at_ += count * sizeof(float);
  }

  std::string getText(size_t count) {
    need(count);
    std::string text(reinterpret_cast<const char*>(data_) + at_, count);
    at_ += count;
    return text;
  }

  bool atEnd() const { return at_ == size_; }

  std::string rest() {
    std::string text(reinterpret_cast<const char*>(data_) + at_, size_ - at_);
    at_ = size_;
    return text;
  }

  // Fields must fill the message exactly: trailing bytes are as wrong as missing ones.
  void expectEnd() const {
    if (at_ != size_) throw DecodeError(std::to_string(size_ - at_) + " unexpected trailing bytes");
  }

 private:
  void need(size_t bytes) const {
    if (size_ - at_ < bytes) throw DecodeError("shorter than its fields");
  }

  const std::uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace pstrain
