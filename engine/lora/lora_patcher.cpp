#include "lora/lora_patcher.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "kiln/error.h"

namespace kiln::lora {
namespace {

// What identifies a file's contents: its size and modification time.
std::string stampOf(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto time = std::filesystem::last_write_time(path, ec);
  return std::to_string(size) + "@" + std::to_string(time.time_since_epoch().count());
}

std::string strengthText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", s);
  return buf;
}

struct Contribution {
  const LoraModule* module = nullptr;
  double strength = 0;
  int64_t row_offset = 0, rows = -1;
  bool bias = false;  // a full difference's diff_b
};

std::vector<int64_t> targetShape(const at::Tensor& t, int64_t rows) {
  std::vector<int64_t> s = t.sizes().vec();
  if (rows >= 0) s[0] = rows;
  return s;
}

at::Tensor deltaFor(const Contribution& c, const at::Tensor& target) {
  const std::vector<int64_t> shape = targetShape(target, c.rows);
  if (!c.bias) return loraDelta(*c.module, shape);
  const at::Tensor& d = c.module->at("diff_b");
  if (d.numel() != target.numel() && (c.rows < 0 || d.numel() != c.rows))
    throw Error(ErrorKind::ShapeMismatch,
                "LoRA module '" + c.module->file_name + "' has a bias difference of shape " +
                    tensor_io::shapeToString(d.sizes().vec()) + " for a bias of shape " +
                    tensor_io::shapeToString(shape));
  return d.reshape(shape);
}

}  // namespace

// ------------------------------------------------------------------------- targets

void TargetMap::add(const std::string& alias, const LoraTarget& target) {
  targets_.emplace(alias, target);
}

const LoraTarget* TargetMap::find(const std::string& normalised_name) const {
  const auto it = targets_.find(normalised_name);
  return it == targets_.end() ? nullptr : &it->second;
}

// ------------------------------------------------------------------------- patcher

LoraPatcher::LoraPatcher(LoraTargets targets) : model_(std::move(targets)) {}

LoraPatcher::~LoraPatcher() {
  setAdapters(nullptr);
}

void LoraPatcher::setAdapters(std::unique_ptr<LoraAdapters> adapters) {
  for (const auto* list : model_.components)
    list->setAdapters(adapters && !adapters->empty() ? adapters.get() : nullptr);
  adapters_ = std::move(adapters);
}

std::set<const at::Tensor*> LoraPatcher::touchedBy(const std::vector<LoraSpec>& stack) {
  std::set<const at::Tensor*> touched;
  for (const auto& [weight, patch] : patched_) touched.insert(weight);
  for (const LoraSpec& spec : stack)
    for (const LoraModule& m : load(spec.path)->modules)
      if (const LoraTarget* t = model_.targets.find(m.name)) {
        touched.insert(t->weight);
        if (t->bias) touched.insert(t->bias);
      }
  return touched;
}

std::shared_ptr<const LoraFile> LoraPatcher::load(const std::string& path) {
  const std::string stamp = stampOf(path);
  if (const auto it = files_.find(path); it != files_.end() && it->second.first == stamp)
    return it->second.second;
  auto file = std::make_shared<const LoraFile>(readLoraFile(path));
  files_[path] = {stamp, file};
  return file;
}

void LoraPatcher::forgetFilesOutside(
    const std::map<std::string, std::shared_ptr<const LoraFile>>& stack) {
  // Parsed files stay cached only while they are in the stack.
  for (auto it = files_.begin(); it != files_.end();)
    it = stack.count(it->first) ? std::next(it) : files_.erase(it);
}

// What a stack does to which weights, read and checked before any weight changes.
struct LoraPatcher::StackPlan {
  std::vector<LoraReport> reports;
  std::map<at::Tensor*, std::vector<Contribution>> parts;  // merge: what lands on each weight
  std::map<at::Tensor*, std::string> signatures;           // which files at which strengths
  std::map<std::string, std::shared_ptr<const LoraFile>> used;
};

std::vector<LoraReport> LoraPatcher::apply(const std::vector<LoraSpec>& stack, LoraMode mode) {
  if (mode != LoraMode::Merge && mode != LoraMode::Hook)
    throw Error(ErrorKind::InvalidArgument,
                std::string("LoRA mode must be merge or hook here, got ") + loraModeName(mode));
  last_rebuilt_ = 0;
  StackPlan p = plan(stack, mode);
  if (mode == LoraMode::Hook) {
    applyHooks(stack, p);
  } else {
    applyMerged(p);
  }
  current_ = stack;
  forgetFilesOutside(p.used);
  return std::move(p.reports);
}

LoraPatcher::StackPlan LoraPatcher::plan(const std::vector<LoraSpec>& stack, LoraMode mode) {
  StackPlan p;
  std::vector<std::string> mismatches;
  for (const LoraSpec& spec : stack) {
    for (double s : {spec.unet_strength, spec.text_strength})
      if (!std::isfinite(s))
        throw Error(ErrorKind::InvalidArgument,
                    "LoRA strength for '" + spec.path + "' is not a finite number");
    if (!spec.keyframes.empty() && mode == LoraMode::Merge)
      throw Error(ErrorKind::InvalidArgument,
                  "LoRA '" + spec.path +
                      "' changes strength over the steps, which needs hook mode, not merge");
    const std::shared_ptr<const LoraFile> file = load(spec.path);
    p.used[spec.path] = file;
    const std::string stamp = files_.at(spec.path).first;
    LoraReport report;
    report.path = spec.path;
    report.format = file->format;
    report.mode = mode;
    report.modules = static_cast<int>(file->modules.size());
    report.unrecognised = file->unrecognised;
    for (const LoraModule& m : file->modules) {
      const LoraTarget* t = model_.targets.find(m.name);
      if (!t) {
        report.unmatched.push_back(m.file_name);
        continue;
      }
      ++report.applied;
      const double strength = t->text ? spec.text_strength : spec.unet_strength;
      std::vector<Contribution> parts;
      if (m.kind != LoraKind::Full || m.has("diff"))
        parts.push_back({&m, strength, t->row_offset, t->rows, false});
      if (m.kind == LoraKind::Full && m.has("diff_b")) {
        if (!t->bias) {
          mismatches.push_back("LoRA module '" + m.file_name + "' changes a bias that " + t->key +
                               " does not have");
          continue;
        }
        parts.push_back({&m, strength, t->row_offset, t->rows, true});
      }
      for (const Contribution& c : parts) {
        at::Tensor* target = c.bias ? t->bias : t->weight;
        try {
          (void)deltaFor(c, *target);  // the shape check
        } catch (const Error& e) {
          if (e.kind() != ErrorKind::ShapeMismatch) throw;
          mismatches.push_back(std::string(e.what()) + " (" + t->key + ")");
          continue;
        }
        if (strength == 0) continue;  // costs nothing
        p.parts[target].push_back(c);
        p.signatures[target] += spec.path + "|" + stamp + "|" + m.file_name +
                                (c.bias ? "|b|" : "|w|") + strengthText(strength) + ";";
      }
    }
    if (report.applied == 0) {
      std::string names;
      for (std::size_t i = 0; i < std::min<std::size_t>(3, report.unmatched.size()); ++i)
        names += (i ? ", " : "") + report.unmatched[i];
      throw Error(ErrorKind::UnsupportedModel,
                  "no module of LoRA '" + spec.path + "' fits this " + model_.model_name +
                      " model's weights (first: " + names +
                      "); it was probably made for another architecture");
    }
    p.reports.push_back(std::move(report));
  }
  if (!mismatches.empty()) {
    std::string text = "LoRA shapes do not fit this model:";
    for (const auto& m : mismatches) text += "\n  " + m;
    throw Error(ErrorKind::ShapeMismatch, text);
  }
  return p;
}

void LoraPatcher::applyHooks(const std::vector<LoraSpec>& stack, const StackPlan& p) {
  // Originals back in place, then a hook per patched layer.
  auto adapters = std::make_unique<LoraAdapters>();
  for (const LoraSpec& spec : stack) {
    const auto& file = p.used.at(spec.path);
    const bool keyed = std::any_of(spec.keyframes.begin(), spec.keyframes.end(),
                                   [](const LoraKeyframe& k) { return k.strength != 0; });
    for (const LoraModule& m : file->modules) {
      const LoraTarget* t = model_.targets.find(m.name);
      if (!t) continue;
      if ((t->text ? spec.text_strength : spec.unet_strength) == 0 && (t->text || !keyed)) continue;
      Adapter a = makeAdapter(m, targetShape(*t->weight, t->rows));
      a.row_offset = t->row_offset;
      a.rows = t->rows;
      a.text = t->text;
      a.text_strength = spec.text_strength;
      a.spec = spec;
      adapters->add(t->weight, std::move(a));
    }
  }
  for (auto& [target, patched] : patched_) *target = patched.original;
  last_rebuilt_ = static_cast<int64_t>(patched_.size());
  patched_.clear();
  setAdapters(std::move(adapters));
  mode_ = LoraMode::Hook;
}

void LoraPatcher::applyMerged(const StackPlan& p) {
  setAdapters(nullptr);
  mode_ = LoraMode::Merge;
  // Rebuild what changed; on any failure put every original back.
  try {
    for (auto it = patched_.begin(); it != patched_.end();) {
      if (p.parts.count(it->first) != 0) {
        ++it;
        continue;
      }
      *it->first = it->second.original;
      it = patched_.erase(it);
      ++last_rebuilt_;
    }
    for (const auto& [target, parts] : p.parts) {
      const std::string& signature = p.signatures.at(target);
      auto it = patched_.find(target);
      if (it != patched_.end() && it->second.signature == signature) continue;
      const at::Tensor original = it != patched_.end() ? it->second.original : *target;
      at::Tensor merged = original.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
      for (const Contribution& c : parts) {
        const at::Tensor delta = deltaFor(c, original) * c.strength;
        if (c.rows >= 0)
          merged.narrow(0, c.row_offset, c.rows).add_(delta.to(merged.device()));
        else
          merged.add_(delta.to(merged.device()));
      }
      *target = merged.to(original.scalar_type());
      patched_[target] = {original, signature};
      ++last_rebuilt_;
    }
  } catch (...) {
    restore();
    throw;
  }
}

void LoraPatcher::restore() {
  setAdapters(nullptr);
  for (auto& [target, p] : patched_) *target = p.original;
  last_rebuilt_ = static_cast<int64_t>(patched_.size());
  patched_.clear();
  current_.clear();
  files_.clear();
}

int64_t LoraPatcher::backupBytes() const {
  int64_t n = 0;
  for (const auto& [target, p] : patched_) n += static_cast<int64_t>(p.original.nbytes());
  return n;
}

}  // namespace kiln::lora
