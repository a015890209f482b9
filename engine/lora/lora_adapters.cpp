#include "lora/lora_adapters.h"

#include "kiln/error.h"

namespace kiln::lora {

Adapter makeAdapter(const LoraModule& m, const std::vector<int64_t>& shape) {
  if (m.kind != LoraKind::Full || m.has("diff")) checkLoraFits(m, shape);  // before any reshape
  Adapter a;
  const bool conv = shape.size() == 4;
  if (m.kind == LoraKind::LowRank) {
    const int64_t rank = m.at("down").size(0);
    const int64_t out = shape[0], in = shape[1];
    if (m.has("alpha")) a.scale = m.at("alpha").item<double>() / static_cast<double>(rank);
    if (conv) {
      a.up = m.at("up").reshape({out, rank, 1, 1});
      if (m.has("mid")) {
        a.down = m.at("down").reshape({rank, in, 1, 1});
        a.mid = m.at("mid");
      } else {
        a.down = m.at("down").reshape({rank, in, shape[2], shape[3]});
      }
    } else {
      a.up = m.at("up").reshape({out, rank});
      a.down = m.at("down").reshape({rank, in});
    }
  } else if (m.kind != LoraKind::Full || m.has("diff")) {
    a.dense = loraDelta(m, shape);
  }
  if (m.kind == LoraKind::Full && m.has("diff_b")) a.bias = m.at("diff_b").reshape({shape[0]});
  return a;
}

void LoraAdapters::add(const at::Tensor* weight, Adapter adapter) {
  by_weight_[weight].push_back(std::move(adapter));
}

int64_t LoraAdapters::bytes() const {
  int64_t n = 0;
  for (const auto& [w, list] : by_weight_)
    for (const Adapter& a : list)
      for (const at::Tensor* t : {&a.down, &a.mid, &a.up, &a.dense, &a.bias})
        if (t->defined()) n += static_cast<int64_t>(t->nbytes());
  return n;
}

int64_t LoraAdapters::castBytes() const {
  std::lock_guard lock(cast_mutex_);
  int64_t n = 0;
  for (const auto& [key, t] : cast_) n += static_cast<int64_t>(t.nbytes());
  return n;
}

void LoraAdapters::releaseCasts() {
  std::map<std::tuple<const void*, int, int, int>, at::Tensor> dropped;
  {
    std::lock_guard lock(cast_mutex_);
    dropped.swap(cast_);
  }  // freed outside the lock
}

at::Tensor LoraAdapters::like(const at::Tensor& t, const at::Tensor& x) const {
  if (t.scalar_type() == x.scalar_type() && t.device() == x.device()) return t;
  const auto key = std::make_tuple(
      static_cast<const void*>(t.unsafeGetTensorImpl()), static_cast<int>(x.scalar_type()),
      static_cast<int>(x.device().type()), static_cast<int>(x.device().index()));
  std::lock_guard lock(cast_mutex_);
  auto it = cast_.find(key);
  if (it == cast_.end()) it = cast_.emplace(key, t.to(x.device(), x.scalar_type())).first;
  return it->second;
}

at::Tensor LoraAdapters::term(const Adapter& a, const at::Tensor& x,
                              const weights::LayerCall& call) const {
  at::Tensor d;
  if (a.dense.defined()) {
    d = call.conv ? at::conv2d(x, like(a.dense, x), {}, {call.stride, call.stride},
                               {call.padding, call.padding})
                  : at::linear(x, like(a.dense, x));
  } else if (a.up.defined()) {
    at::Tensor h;
    if (call.conv) {
      if (a.mid.defined()) {
        h = at::conv2d(x, like(a.down, x));
        h = at::conv2d(h, like(a.mid, x), {}, {call.stride, call.stride},
                       {call.padding, call.padding});
      } else {
        h = at::conv2d(x, like(a.down, x), {}, {call.stride, call.stride},
                       {call.padding, call.padding});
      }
      d = at::conv2d(h, like(a.up, x));
    } else {
      d = at::linear(at::linear(x, like(a.down, x)), like(a.up, x));
    }
    if (a.scale != 1.0) d = d * a.scale;
  }
  if (a.bias.defined()) {
    const at::Tensor b = call.conv ? like(a.bias, x).view({1, -1, 1, 1}) : like(a.bias, x);
    d = d.defined() ? d + b : b;
  }
  return d;
}

at::Tensor LoraAdapters::adapt(const at::Tensor* weight, const at::Tensor& x, const at::Tensor& y,
                               const weights::LayerCall& call) const {
  const auto it = by_weight_.find(weight);
  if (it == by_weight_.end()) return y;
  const double progress = progress_.load();
  at::Tensor out = y;
  bool owned = false;
  for (const Adapter& a : it->second) {
    const double strength = a.text ? a.text_strength : a.spec.unetStrengthAt(progress);
    if (strength == 0) continue;  // costs nothing
    const at::Tensor d = term(a, x, call) * strength;
    if (a.rows >= 0) {
      if (!owned) out = out.clone();
      out.narrow(-1, a.row_offset, a.rows).add_(d);
    } else {
      out = out + d;
    }
    owned = true;
  }
  return out;
}

}  // namespace kiln::lora
