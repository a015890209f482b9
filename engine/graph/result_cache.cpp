#include "graph/result_cache.h"

namespace kiln::graph {

std::optional<NodeOutputs> ResultCache::find(const std::string& signature) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = index_.find(signature);
  if (it == index_.end()) return std::nullopt;
  entries_.splice(entries_.begin(), entries_, it->second);
  return it->second->outputs;
}

void ResultCache::put(const std::string& signature, NodeOutputs outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (const auto it = index_.find(signature); it != index_.end()) {
    bytes_ -= it->second->bytes;
    entries_.erase(it->second);
    index_.erase(it);
  }
  int64_t bytes = 0;
  for (const Value& v : outputs) bytes += v.bytes;
  if (bytes > max_bytes_) return;
  entries_.push_front({signature, std::move(outputs), bytes});
  index_[signature] = entries_.begin();
  bytes_ += bytes;
  evictLocked();
}

void ResultCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  index_.clear();
  entries_.clear();
  bytes_ = 0;
}

void ResultCache::setLimit(int64_t max_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  max_bytes_ = max_bytes;
  evictLocked();
}

int64_t ResultCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

std::size_t ResultCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void ResultCache::evictLocked() {
  while (bytes_ > max_bytes_ && !entries_.empty()) {
    bytes_ -= entries_.back().bytes;
    index_.erase(entries_.back().signature);
    entries_.pop_back();
  }
}

}  // namespace kiln::graph
