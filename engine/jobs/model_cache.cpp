#include "jobs/model_cache.h"

#include <filesystem>

namespace kiln::jobs {

std::string ModelCache::keyFor(const std::string& path, at::ScalarType dtype) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  const std::string name = ec ? path : p.string();
  std::string key = name + "|" + at::toString(dtype);
  if (std::filesystem::is_regular_file(p, ec)) {
    key += "|" + std::to_string(std::filesystem::file_size(p, ec));
    key += "|" + std::to_string(std::filesystem::last_write_time(p, ec).time_since_epoch().count());
  }
  return key;
}

std::shared_ptr<nodes::SdPipeline> ModelCache::find(const std::string& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key) {
      entries_.splice(entries_.begin(), entries_, it);
      return entries_.front().pipeline;
    }
  return nullptr;
}

void ModelCache::makeRoom() {
  while (!entries_.empty() && static_cast<int>(entries_.size()) >= std::max(capacity_, 1))
    entries_.pop_back();
  if (capacity_ <= 0) entries_.clear();
}

void ModelCache::insert(const std::string& key, std::shared_ptr<nodes::SdPipeline> pipeline) {
  if (capacity_ <= 0) return;
  makeRoom();
  const int64_t bytes = pipeline->weightBytes();
  entries_.push_front({key, std::move(pipeline), bytes});
}

int64_t ModelCache::weightBytes() const noexcept {
  int64_t total = 0;
  for (const auto& e : entries_) total += e.bytes;
  return total;
}

}  // namespace kiln::jobs
