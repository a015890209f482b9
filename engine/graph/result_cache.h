// Node results kept between runs, keyed by the node's input signature, so a workflow run
// again with only the seed changed re-runs the sampler and what follows, not the loaders
// or the prompt encoding. Bounded in bytes; the least recently used results go first.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/workflow.h"

namespace kiln::graph {

// One value on a link: its type and the node's object behind a type-erased pointer.
struct Value {
  ValueType type = ValueType::Invalid;
  std::shared_ptr<const void> data;
  int64_t bytes = 0;  // memory it holds of its own (0 for handles to cached models)
};

using NodeOutputs = std::vector<Value>;  // in the order of the schema's outputs

class ResultCache {
 public:
  explicit ResultCache(int64_t max_bytes) : max_bytes_(max_bytes) {}

  // The results stored under `signature` (now the most recently used), if any.
  std::optional<NodeOutputs> find(const std::string& signature);
  // Stores results, then drops the least recently used ones while over the limit (a
  // result larger than the whole limit is not kept).
  void put(const std::string& signature, NodeOutputs outputs);
  void clear();
  void setLimit(int64_t max_bytes);

  int64_t bytes() const;
  std::size_t size() const;

 private:
  struct Entry {
    std::string signature;
    NodeOutputs outputs;
    int64_t bytes = 0;
  };
  void evictLocked();

  mutable std::mutex mutex_;
  int64_t max_bytes_;
  int64_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace kiln::graph
