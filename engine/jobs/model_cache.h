// Loaded pipelines kept between jobs, least recently used first out. A pipeline enters
// the cache only once it is completely loaded, so an interrupted load leaves nothing.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <list>
#include <memory>
#include <string>

#include "nodes/sd_pipeline.h"

namespace kiln::jobs {

class ModelCache {
 public:
  explicit ModelCache(int capacity) : capacity_(capacity) {}

  // Identifies a model file as loaded: path, size and modification time, dtype.
  static std::string keyFor(const std::string& path, at::ScalarType dtype);

  std::shared_ptr<nodes::SdPipeline> find(const std::string& key);
  // Makes room for one more model (before loading it, so two never coexist needlessly).
  void makeRoom();
  void insert(const std::string& key, std::shared_ptr<nodes::SdPipeline> pipeline);
  void clear() { entries_.clear(); }

  int size() const noexcept { return static_cast<int>(entries_.size()); }
  int64_t weightBytes() const noexcept;

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<nodes::SdPipeline> pipeline;
    int64_t bytes = 0;
  };
  int capacity_ = 1;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace kiln::jobs
