// EncoderCache: image embeddings by image identity (vLLM v1's EncoderCacheManager idea): an image
// a chat sends again, or another pane sends too, is encoded once. Entries are shared with the
// requests using them; the cache itself keeps the most recently used up to a byte budget.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "engine/vision/vision_encoder.h"

namespace pagedchat {

class EncoderCache {
 public:
  explicit EncoderCache(std::size_t max_bytes = std::size_t(256) << 20) : max_bytes_(max_bytes) {}

  /// The embeddings stored under `identity` (marked most recently used), or null.
  std::shared_ptr<const ImageEmbeddings> find(const std::string& identity) {
    auto it = index_.find(identity);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
  }
  /// Stores `e` under `identity`, dropping the least recently used entries past the budget.
  void insert(const std::string& identity, std::shared_ptr<const ImageEmbeddings> e) {
    if (index_.count(identity)) return;
    bytes_ += bytes_of(*e);
    lru_.emplace_front(identity, std::move(e));
    index_[identity] = lru_.begin();
    while (bytes_ > max_bytes_ && lru_.size() > 1) {
      bytes_ -= bytes_of(*lru_.back().second);
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  std::size_t size() const { return lru_.size(); }
  std::size_t bytes() const { return bytes_; }

 private:
  static std::size_t bytes_of(const ImageEmbeddings& e) { return e.data.size() * sizeof(float); }
  using Entry = std::pair<std::string, std::shared_ptr<const ImageEmbeddings>>;
  std::size_t max_bytes_, bytes_ = 0;
  std::list<Entry> lru_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace pagedchat
