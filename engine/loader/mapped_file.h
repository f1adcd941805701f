// MappedFile: a read-only mmap of a whole file (model weights are used in place).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pagedchat {

class MappedFile {
 public:
  /// Maps `path` read-only. Throws std::runtime_error naming the path (missing, unreadable,
  /// a folder, empty).
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& path() const { return path_; }
  /// Whether [p, p + n) lies inside this mapping.
  bool contains(const void* p, std::size_t n) const;
  /// Drops this process's pages of [p, p + n) (the whole pages inside it; madvise
  /// MADV_DONTNEED): they stop counting in the resident set and are read again from the page
  /// cache if touched later. For weights already copied (packed) elsewhere. No-op when the range
  /// is not inside the mapping.
  void release(const void* p, std::size_t n) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace pagedchat
