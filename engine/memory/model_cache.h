// Loaded models kept between jobs under a device budget and a host budget. Unlocked models
// leave least recently used first; models in use are locked by a Lease and never touched.
// makeRoom() frees device memory for work outside the cache. The cache knows models only
// through CachedModel: sizes, and "give your device memory back".
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/device.h"
#include "memory/placement_plan.h"

namespace kiln::memory {

class CachedModel {
 public:
  virtual ~CachedModel() = default;
  // For messages and logs: "kiln-starter (sd1, bf16)".
  virtual std::string describe() const = 0;
  virtual int64_t hostBytes() const = 0;    // weights in host memory
  virtual int64_t deviceBytes() const = 0;  // weights in the device's memory
  // Moves every weight on the device back to host memory (device bytes become 0).
  virtual void offload() = 0;
  // One line per component saying where its weights live (empty when not placed).
  virtual std::vector<std::string> placementSummary() const { return {}; }
  // Why the weights no longer stand for their files ("" while they do): a file read
  // through a memory map that changed on disk. The cache then loads the model again
  // instead of handing out weights that may view a file cut short (SIGBUS).
  virtual std::string staleReason() const { return {}; }
  // The memory map of this model under `settings` in `room` (kiln/memory_plan.h), with
  // the working memory of a width x height picture or clip (0: its native size). Called
  // under the cache's lock from any thread: reads only what never changes.
  virtual ModelMemoryPlan planMemory(const OffloadSettings& /*settings*/, const PlanRoom& /*room*/,
                                     int64_t /*width*/, int64_t /*height*/,
                                     int64_t /*frames*/) const {
    ModelMemoryPlan plan;
    plan.model = describe();
    return plan;
  }
};

struct CacheBudget {
  int64_t device_bytes = 0;  // most device memory Kiln may use; 0: all of it
  int64_t host_bytes = 0;    // most host memory cached models may hold; 0: no limit
  int max_models = -1;       // most models kept when not in use; -1: no limit
};

struct MakeRoomResult {
  int64_t freed_bytes = 0;      // device bytes freed, measured after emptying the allocator cache
  int64_t available_bytes = 0;  // device bytes available afterwards, within the budget
  std::vector<std::string> offloaded;  // models whose weights left the device
  std::vector<std::string> warnings;
};

struct CacheEntryInfo {
  std::string key, description;
  std::vector<std::string> placements;
  int64_t host_bytes = 0, device_bytes = 0;
  int locks = 0;
};

struct CacheCounters {
  int64_t loads = 0, hits = 0, evictions = 0, offloads = 0, failed_loads = 0;
};

class ModelCache {
 public:
  ModelCache(Device& device, CacheBudget budget);
  ~ModelCache();
  ModelCache(const ModelCache&) = delete;
  ModelCache& operator=(const ModelCache&) = delete;

  // A model in use: locked (never offloaded or evicted) until the lease ends.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    ~Lease();
    explicit operator bool() const noexcept { return model_ != nullptr; }
    CachedModel& model() const noexcept { return *model_; }
    const std::shared_ptr<CachedModel>& shared() const noexcept { return model_; }

   private:
    friend class ModelCache;
    Lease(ModelCache* cache, std::string key, std::shared_ptr<CachedModel> model);
    void release() noexcept;
    ModelCache* cache_ = nullptr;
    std::string key_;
    std::shared_ptr<CachedModel> model_;
  };

  using Loader = std::function<std::shared_ptr<CachedModel>()>;
  // The cached model for `key`, loaded by `load` if absent. The load runs without the
  // cache's lock, so other keys' loads and every other call go on meanwhile; a second
  // acquire of a key that is loading waits for that load. A load that throws leaves
  // nothing in the cache (the loader's own RAII frees what it allocated) and rethrows to
  // every waiter. Afterwards unlocked models leave until the budget holds.
  Lease acquire(const std::string& key, const Loader& load);

  // Frees device memory until `bytes + working_bytes` are available within the budget,
  // offloading unlocked models least recently used first (one that fails to move is
  // named in the warnings, and the sweep goes on). Throws kiln::Error(OutOfMemory)
  // naming what holds the memory when that cannot be reached; a request for zero bytes
  // (a failed size estimate) does nothing and says so in the warnings.
  MakeRoomResult makeRoom(int64_t bytes, int64_t working_bytes = 0);

  bool contains(const std::string& key) const;
  // Calls `visit` with each cached model, most recently used first, under the cache's
  // lock (so none is dropped meanwhile): `visit` must be quick, must not call the cache,
  // and may read only what never changes in a model another thread may be using. Returns
  // false at once, visiting none, while another thread holds the lock (making room can
  // hold it for as long as moving a model takes), so a caller on a GUI thread never waits.
  bool tryForEachModel(const std::function<void(const CachedModel&)>& visit) const;
  // The cached model for `key`, locked like acquire()'s, without loading, counting a hit
  // or changing the eviction order; an empty lease when it is not cached.
  Lease find(const std::string& key);

  // Device bytes available to new work: the device's free memory, capped by the budget.
  int64_t availableDeviceBytes() const;

  // Drops one unlocked model (false when absent; throws kiln::Error(InvalidArgument) when
  // it is in use). clear() drops every unlocked model.
  bool unload(const std::string& key);
  void clear();

  void setBudget(CacheBudget budget);
  CacheBudget budget() const;
  std::vector<CacheEntryInfo> entries() const;  // most recently used first
  CacheCounters counters() const;
  int64_t hostBytes() const;
  int64_t deviceBytes() const;
  Device& device() const noexcept { return device_; }

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<CachedModel> model;
    int locks = 0;
  };
  struct Loading;

  void unlock(const std::string& key) noexcept;
  // Destroys models dropped from the cache (outside the lock) and gives the memory the
  // device's allocators kept of them back at once.
  void dropModels(std::vector<std::shared_ptr<CachedModel>>& dropped) noexcept;
  void enforceBudgetLocked(std::vector<std::shared_ptr<CachedModel>>& dropped);
  int64_t availableLocked() const;
  std::list<Entry>::iterator findLocked(const std::string& key);
  // Takes an unused entry whose model is stale (staleReason) out of the cache.
  std::shared_ptr<CachedModel> dropIfStaleLocked(const std::string& key);

  Device& device_;
  mutable std::mutex mutex_;
  std::condition_variable loaded_;
  CacheBudget budget_;
  std::list<Entry> entries_;  // most recently used first
  std::map<std::string, std::shared_ptr<Loading>> loading_;
  CacheCounters counters_;
};

}  // namespace kiln::memory
