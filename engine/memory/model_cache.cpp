#include "memory/model_cache.h"

#include <algorithm>

#include "kiln/error.h"
#include "kiln/units.h"

namespace kiln::memory {

struct ModelCache::Loading {
  bool done = false;
  std::exception_ptr error;
  std::shared_ptr<CachedModel> model;
};

// ------------------------------------------------------------------------------- Lease

ModelCache::Lease::Lease(ModelCache* cache, std::string key, std::shared_ptr<CachedModel> model)
    : cache_(cache), key_(std::move(key)), model_(std::move(model)) {}

ModelCache::Lease::Lease(Lease&& other) noexcept
    : cache_(std::exchange(other.cache_, nullptr)),
      key_(std::move(other.key_)),
      model_(std::move(other.model_)) {}

ModelCache::Lease& ModelCache::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    cache_ = std::exchange(other.cache_, nullptr);
    key_ = std::move(other.key_);
    model_ = std::move(other.model_);
  }
  return *this;
}

ModelCache::Lease::~Lease() {
  release();
}

void ModelCache::Lease::release() noexcept {
  if (cache_ != nullptr) cache_->unlock(key_);
  cache_ = nullptr;
  model_.reset();
}

// ------------------------------------------------------------------------------- cache

ModelCache::ModelCache(Device& device, CacheBudget budget) : device_(device), budget_(budget) {}

ModelCache::~ModelCache() {
  std::list<Entry> entries;
  {
    std::lock_guard lock(mutex_);
    entries.swap(entries_);
  }
}

std::list<ModelCache::Entry>::iterator ModelCache::findLocked(const std::string& key) {
  return std::find_if(entries_.begin(), entries_.end(),
                      [&](const Entry& e) { return e.key == key; });
}

std::shared_ptr<CachedModel> ModelCache::dropIfStaleLocked(const std::string& key) {
  const auto it = findLocked(key);
  if (it == entries_.end() || it->locks > 0 || it->model->staleReason().empty()) return {};
  std::shared_ptr<CachedModel> model = std::move(it->model);
  entries_.erase(it);
  ++counters_.evictions;
  return model;  // destroyed by the caller, outside the lock
}

ModelCache::Lease ModelCache::acquire(const std::string& key, const Loader& load) {
  std::unique_lock lock(mutex_);
  std::shared_ptr<CachedModel> stale = dropIfStaleLocked(key);
  if (stale) {
    lock.unlock();
    stale.reset();
    device_.emptyCache();
    lock.lock();
  }
  for (;;) {
    if (auto it = findLocked(key); it != entries_.end()) {
      entries_.splice(entries_.begin(), entries_, it);
      ++it->locks;
      ++counters_.hits;
      return Lease(this, key, it->model);
    }
    auto pending = loading_.find(key);
    if (pending == loading_.end()) break;
    // Someone else is loading this key: wait for them, then look again (or take their error).
    const std::shared_ptr<Loading> loading = pending->second;
    loaded_.wait(lock, [&] { return loading->done; });
    if (loading->error) std::rethrow_exception(loading->error);
  }
  auto loading = std::make_shared<Loading>();
  loading_[key] = loading;
  // Room for one more before loading, so two models over the count never coexist.
  std::vector<std::shared_ptr<CachedModel>> before;
  if (budget_.max_models >= 0) {
    auto count = static_cast<int>(entries_.size());
    for (auto it = entries_.end();
         count + 1 > std::max(budget_.max_models, 1) && it != entries_.begin();) {
      --it;
      if (it->locks > 0) continue;
      before.push_back(std::move(it->model));
      it = entries_.erase(it);
      ++counters_.evictions;
      --count;
    }
  }
  lock.unlock();
  dropModels(before);  // its device and pinned memory back before the next load starts

  std::shared_ptr<CachedModel> model;
  std::exception_ptr error;
  try {
    model = load();
    if (!model) throw Error(ErrorKind::Internal, "loading '" + key + "' produced no model");
  } catch (...) {
    error = std::current_exception();
  }

  std::vector<std::shared_ptr<CachedModel>> dropped;
  lock.lock();
  loading_.erase(key);
  loading->done = true;
  loading->error = error;
  if (error) {
    ++counters_.failed_loads;
    loaded_.notify_all();
    lock.unlock();
    std::rethrow_exception(error);
  }
  ++counters_.loads;
  entries_.push_front({key, model, 1});
  loading->model = model;
  enforceBudgetLocked(dropped);
  loaded_.notify_all();
  lock.unlock();
  dropModels(dropped);  // destroyed outside the lock
  return Lease(this, key, model);
}

void ModelCache::unlock(const std::string& key) noexcept {
  std::vector<std::shared_ptr<CachedModel>> dropped;
  std::unique_lock lock(mutex_);
  if (auto it = findLocked(key); it != entries_.end() && it->locks > 0) --it->locks;
  enforceBudgetLocked(dropped);
  lock.unlock();
  dropModels(dropped);
}

void ModelCache::dropModels(std::vector<std::shared_ptr<CachedModel>>& dropped) noexcept {
  if (dropped.empty()) return;
  dropped.clear();
  device_.emptyCache();
}

void ModelCache::enforceBudgetLocked(std::vector<std::shared_ptr<CachedModel>>& dropped) {
  int64_t total = 0;
  for (const auto& e : entries_) total += e.model->hostBytes();
  auto count = static_cast<int>(entries_.size());
  const auto over = [&] {
    return (budget_.host_bytes > 0 && total > budget_.host_bytes) ||
           (budget_.max_models >= 0 && count > budget_.max_models);
  };
  for (auto it = entries_.end(); over() && it != entries_.begin();) {
    --it;
    if (it->locks > 0) continue;
    total -= it->model->hostBytes();
    --count;
    dropped.push_back(std::move(it->model));
    it = entries_.erase(it);
    ++counters_.evictions;
  }
}

int64_t ModelCache::availableLocked() const {
  const DeviceMemory m = device_.memory();
  int64_t available = m.free_bytes;
  if (budget_.device_bytes > 0)
    available = std::min(available, budget_.device_bytes - m.allocated_bytes);
  return std::max<int64_t>(available, 0);
}

bool ModelCache::tryForEachModel(const std::function<void(const CachedModel&)>& visit) const {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  for (const Entry& e : entries_) visit(*e.model);
  return true;
}

bool ModelCache::contains(const std::string& key) const {
  std::lock_guard lock(mutex_);
  // A model whose files changed is as good as gone: the next acquire loads it again.
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.key == key && (e.locks > 0 || e.model->staleReason().empty());
  });
}

ModelCache::Lease ModelCache::find(const std::string& key) {
  std::unique_lock lock(mutex_);
  if (std::shared_ptr<CachedModel> stale = dropIfStaleLocked(key)) {
    lock.unlock();
    return {};  // the stale model is destroyed here, outside the lock
  }
  const auto it = findLocked(key);
  if (it == entries_.end()) return {};
  ++it->locks;
  return Lease(this, key, it->model);
}

int64_t ModelCache::availableDeviceBytes() const {
  std::lock_guard lock(mutex_);
  return availableLocked();
}

MakeRoomResult ModelCache::makeRoom(int64_t bytes, int64_t working_bytes) {
  if (bytes < 0 || working_bytes < 0)
    throw Error(ErrorKind::InvalidArgument, "cannot make room for a negative number of bytes");
  std::lock_guard lock(mutex_);
  MakeRoomResult result;
  const int64_t needed = bytes + working_bytes;
  if (needed == 0) {
    result.warnings.push_back("asked to make room for 0 bytes on " + device_.name() +
                              ": the memory estimate for this work failed, so nothing was freed "
                              "and it may still run out of memory");
    result.available_bytes = availableLocked();
    return result;
  }
  device_.emptyCache();
  const int64_t before = availableLocked();
  int64_t available = before;
  // Least recently used first: the back of the list.
  for (auto it = entries_.rbegin(); available < needed && it != entries_.rend(); ++it) {
    if (it->locks > 0 || it->model->deviceBytes() == 0) continue;
    try {
      it->model->offload();
      ++counters_.offloads;
      result.offloaded.push_back(it->model->describe());
    } catch (const std::exception& e) {
      // What it could move has left; the sweep goes on with the next model.
      result.warnings.push_back("could not move " + it->model->describe() + " off " +
                                device_.name() + ": " + e.what() + " (" +
                                formatBytes(it->model->deviceBytes()) + " stay there)");
    }
    device_.emptyCache();
    available = availableLocked();
  }
  result.freed_bytes = std::max<int64_t>(available - before, 0);
  result.available_bytes = available;
  if (available >= needed) return result;

  int64_t locked_bytes = 0;
  std::vector<std::string> locked;
  for (const auto& e : entries_)
    if (e.locks > 0 && e.model->deviceBytes() > 0) {
      locked_bytes += e.model->deviceBytes();
      locked.push_back(e.model->describe());
    }
  const DeviceMemory m = device_.memory();
  std::string held = formatBytes(locked_bytes) + " are held by models in use";
  if (!locked.empty()) {
    held += " (";
    for (std::size_t i = 0; i < locked.size(); ++i) held += (i ? ", " : "") + locked[i];
    held += ")";
  }
  held += " and " + formatBytes(std::max<int64_t>(m.allocated_bytes - locked_bytes, 0)) +
          " by other work";
  throw Error(
      ErrorKind::OutOfMemory,
      "not enough memory on " + device_.name() + ": this needs " + formatBytes(needed) +
          " but only " + formatBytes(available) + " can be made available" +
          (budget_.device_bytes > 0 ? " within the " + formatBytes(budget_.device_bytes) + " budget"
                                    : "") +
          "; " + held +
          ". Lower the resolution or batch size, choose an offload mode in Preferences, or raise "
          "the device budget");
}

bool ModelCache::unload(const std::string& key) {
  std::shared_ptr<CachedModel> dropped;
  std::unique_lock lock(mutex_);
  auto it = findLocked(key);
  if (it == entries_.end()) return false;
  if (it->locks > 0)
    throw Error(ErrorKind::InvalidArgument, "cannot unload " + it->model->describe() +
                                                " while a job is using it; stop the job first");
  dropped = std::move(it->model);
  entries_.erase(it);
  ++counters_.evictions;
  lock.unlock();
  dropped.reset();
  device_.emptyCache();
  return true;
}

void ModelCache::clear() {
  std::vector<std::shared_ptr<CachedModel>> dropped;
  std::unique_lock lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->locks > 0) {
      ++it;
      continue;
    }
    dropped.push_back(std::move(it->model));
    it = entries_.erase(it);
    ++counters_.evictions;
  }
  lock.unlock();
  dropModels(dropped);
}

void ModelCache::setBudget(CacheBudget budget) {
  std::vector<std::shared_ptr<CachedModel>> dropped;
  std::unique_lock lock(mutex_);
  budget_ = budget;
  enforceBudgetLocked(dropped);
  lock.unlock();
  dropModels(dropped);
}

CacheBudget ModelCache::budget() const {
  std::lock_guard lock(mutex_);
  return budget_;
}

std::vector<CacheEntryInfo> ModelCache::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<CacheEntryInfo> out;
  for (const auto& e : entries_)
    out.push_back({e.key, e.model->describe(), e.model->placementSummary(), e.model->hostBytes(),
                   e.model->deviceBytes(), e.locks});
  return out;
}

CacheCounters ModelCache::counters() const {
  std::lock_guard lock(mutex_);
  return counters_;
}

int64_t ModelCache::hostBytes() const {
  std::lock_guard lock(mutex_);
  int64_t total = 0;
  for (const auto& e : entries_) total += e.model->hostBytes();
  return total;
}

int64_t ModelCache::deviceBytes() const {
  std::lock_guard lock(mutex_);
  int64_t total = 0;
  for (const auto& e : entries_) total += e.model->deviceBytes();
  return total;
}

}  // namespace kiln::memory
