// The ceiling a VAE sets on the starter model's pictures: the held-out prompts as the
// scene generator draws them (three placements each), encoded to the mean latent and
// decoded, then judged like the model's own pictures. A shape the VAE cannot reproduce
// is one the UNet cannot draw either. Shared by kiln-train-starter (which reports it
// while it trains the VAE) and the starter-model test (which checks the shipped VAE).
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "models/vae/autoencoder_kl.h"
#include "scenes.h"
#include "starter_judge.h"

namespace kiln::testing {

// [B, 3, S, S] in [-1, 1]: the scenes as the generator draws them.
inline at::Tensor scenePictures(const std::vector<starter::Scene>& scenes, int size) {
  at::Tensor out = at::empty({static_cast<int64_t>(scenes.size()), size, size, 3}, at::kFloat);
  float* dst = out.data_ptr<float>();
  for (const auto& s : scenes) {
    const auto px = starter::renderScene(s, size);
    std::copy(px.begin(), px.end(), dst);
    dst += px.size();
  }
  return out.permute({0, 3, 1, 2}).contiguous().mul_(2.0).sub_(1.0);
}

// `dtype`: the dtype of the VAE's weights.
inline StarterRates judgeVaeReconstructions(const models::AutoencoderKL& vae, int size,
                                            at::ScalarType dtype) {
  at::NoGradGuard no_grad;
  auto specs = starter::heldOutSingles();
  const auto counts = starter::heldOutCounts();
  specs.insert(specs.end(), counts.begin(), counts.end());
  StarterRates rates;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    starter::SceneSampler sampler(seed, size);
    std::vector<starter::Scene> scenes;
    for (const auto& spec : specs) scenes.push_back(sampler.place(spec));
    constexpr std::size_t kChunk = 16;  // bounds the activations at full resolution
    for (std::size_t start = 0; start < scenes.size(); start += kChunk) {
      const std::vector<starter::Scene> part(
          scenes.begin() + static_cast<std::ptrdiff_t>(start),
          scenes.begin() + static_cast<std::ptrdiff_t>(std::min(scenes.size(), start + kChunk)));
      const at::Tensor mean = vae.encodeMoments(scenePictures(part, size).to(dtype)).chunk(2, 1)[0];
      const at::Tensor y = ((vae.decode(mean).to(at::kFloat).clamp(-1, 1) + 1) * 0.5)
                               .permute({0, 2, 3, 1})
                               .contiguous();
      for (std::size_t i = 0; i < part.size(); ++i) {
        Image img;
        img.width = img.height = size;
        img.channels = 3;
        const at::Tensor px = y[static_cast<int64_t>(i)];
        img.pixels.assign(px.data_ptr<float>(), px.data_ptr<float>() + px.numel());
        tally(rates, specs[start + i], judge(img, specs[start + i]));
      }
    }
  }
  return rates;
}

}  // namespace kiln::testing
