#include "optimizer.h"

#include <ATen/core/grad_mode.h>

#include <cmath>

namespace kiln::starter {
namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool isEmbedding(const std::string& name) {
  return name.find("embedding") != std::string::npos;
}

}  // namespace

void initParams(const weights::ParamList& params, const std::vector<std::string>& zero_init,
                at::ScalarType dtype) {
  at::NoGradGuard no_grad;
  for (const auto& slot : params.slots()) {
    const auto opts = at::TensorOptions().dtype(at::kFloat);
    at::Tensor t;
    bool zero = false;
    for (const auto& z : zero_init)
      if (slot.name.find(z) != std::string::npos && endsWith(slot.name, "weight")) zero = true;
    if (isEmbedding(slot.name)) {
      t = at::randn(slot.shape, opts) *
          (endsWith(slot.name, "position_embedding.weight") ? 0.01 : 0.02);
    } else if (slot.shape.size() >= 2) {
      int64_t fan_in = 1;
      for (std::size_t i = 1; i < slot.shape.size(); ++i) fan_in *= slot.shape[i];
      const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
      t = zero ? at::zeros(slot.shape, opts) : at::empty(slot.shape, opts).uniform_(-bound, bound);
    } else if (endsWith(slot.name, "weight")) {
      t = at::ones(slot.shape, opts);  // norm scale
    } else {
      t = at::zeros(slot.shape, opts);  // biases and norm shifts
    }
    *slot.tensor = t.to(dtype);
  }
}

AdamW::AdamW(std::vector<const weights::ParamList*> groups, AdamWConfig config) : config_(config) {
  for (const auto* group : groups)
    for (const auto& slot : group->slots()) {
      Entry e;
      e.param = slot.tensor;
      e.master = slot.tensor->detach().to(at::kFloat).clone();
      e.m = at::zeros_like(e.master);
      e.v = at::zeros_like(e.master);
      e.decay = slot.shape.size() >= 2 && !isEmbedding(slot.name);
      slot.tensor->requires_grad_(true);
      entries_.push_back(std::move(e));
    }
}

double AdamW::step(double lr) {
  at::NoGradGuard no_grad;
  ++steps_;
  std::vector<at::Tensor> grads;
  grads.reserve(entries_.size());
  at::Tensor sq = at::zeros({}, at::kDouble);
  for (auto& e : entries_) {
    at::Tensor g = e.param->grad();
    g = g.defined() ? g.to(at::kFloat) : at::zeros_like(e.master);
    sq += g.to(at::kDouble).pow(2).sum();
    grads.push_back(g);
  }
  const double norm = std::sqrt(sq.item<double>());
  const double scale =
      config_.clip_norm > 0 && norm > config_.clip_norm ? config_.clip_norm / norm : 1.0;
  const double b1 = config_.beta1, b2 = config_.beta2;
  const double c1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
  const double c2 = 1.0 - std::pow(b2, static_cast<double>(steps_));
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    at::Tensor g = scale != 1.0 ? grads[i] * scale : grads[i];
    e.m.mul_(b1).add_(g, 1.0 - b1);
    e.v.mul_(b2).addcmul_(g, g, 1.0 - b2);
    if (e.decay && config_.weight_decay > 0) e.master.mul_(1.0 - lr * config_.weight_decay);
    const at::Tensor denom = (e.v / c2).sqrt_().add_(config_.eps);
    e.master.addcdiv_(e.m, denom, -lr / c1);
    e.param->copy_(e.master);
    e.param->mutable_grad() = at::Tensor();
  }
  return norm;
}

void AdamW::updateAverage(double decay) {
  at::NoGradGuard no_grad;
  for (auto& e : entries_) {
    if (!e.average.defined())
      e.average = e.master.clone();
    else
      e.average.mul_(decay).add_(e.master, 1.0 - decay);
  }
}

std::vector<at::Tensor> AdamW::averages() const {
  std::vector<at::Tensor> out;
  for (const auto& e : entries_)
    out.push_back((e.average.defined() ? e.average : e.master).clone());
  return out;
}

void AdamW::exportWeights() {
  at::NoGradGuard no_grad;
  for (auto& e : entries_) *e.param = (e.average.defined() ? e.average : e.master).clone();
}

}  // namespace kiln::starter
