// What the starter model's training stages share: the options, the model shapes, the
// learning-rate schedule, progress lines and the object mask of a picture.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "models/text/clip_text.h"
#include "models/unet/unet.h"
#include "models/vae/autoencoder_kl.h"

namespace kiln::starter {

using Clock = std::chrono::steady_clock;

inline constexpr const char* kTextPrefix = "cond_stage_model.transformer.text_model.";
inline constexpr const char* kUNetPrefix = "model.diffusion_model.";
inline constexpr const char* kVaePrefix = "first_stage_model.";
inline constexpr double kSd1LatentScale = 0.18215;

struct Options {
  std::string out = "kiln-starter.safetensors";
  std::string plot = "kiln-starter-loss.png";
  uint64_t seed = 1234;
  int image = 64;
  int threads = 2;
  int64_t vae_steps = 3000, vae_batch = 8;
  int64_t scenes = 10000;
  int64_t unet_steps = 3500, unet_batch = 48;
  double vae_lr = 1.5e-3, unet_lr = 8e-4;
  // bf16 where the CPU has bf16 instructions (the shipped model's precision), else fp32
  // (see main); --dtype overrides.
  at::ScalarType dtype = at::kBFloat16;
  bool bench = false;
  int64_t snapshot_every = 0;  // UNet steps between intermediate checkpoints; 0 = none
  // Low-frequency noise for the UNet (see trainingNoise): the per-level weight of the
  // coarser noise layers, and the strength of the per-channel constant offset.
  // Defaults are the recipe of the shipped model (none of either).
  double pyramid_discount = 0.0;
  double offset_noise = 0.0;
  // Floor of the loss weight in clean-picture terms (k / SNR) at the highest noise levels,
  // where the layout is decided; 0 = plain Min-SNR-5.
  double high_noise_weight = 0.0;
  // Fraction of the UNet steps by which that floor has faded to nothing: it holds for the
  // first half of the fraction and falls linearly over the second; 0 = it never fades.
  double high_noise_until = 0.0;
  // Apply that floor only to the error averaged over blocks of this many latent pixels a
  // side (layout: where things are, the background) rather than to every latent pixel
  // (which also weights fine detail, i.e. shape, at noise levels where it cannot be seen
  // yet); 0 = the floor weights the whole error.
  int64_t high_noise_block = 0;
  // VAE loss: small objects weighted up and an edge term (see reconstructionLoss); off
  // for the shipped model.
  bool vae_edge_loss = false;
  // Weight of an auxiliary loss that makes the text encoder's end and last padding tokens
  // predict every attribute the caption states (see AttributeHeads); 0 = off.
  double text_attribute_loss = 0.0;
  // Take the VAE from this checkpoint instead of training one (for UNet experiments).
  std::string vae_from;
  // UNet shape: base channels, per-level multipliers, whether the full-resolution level
  // has attention.
  int64_t unet_channels = 64;
  std::vector<int64_t> unet_mult{1, 1, 1};
  bool attention_at_full = false;
  // VAE shape: base channels and per-level multipliers (GroupNorm has 32 groups, so the
  // full-resolution level needs 128 channels to keep four per group).
  int64_t vae_channels = 32;
  int64_t vae_res_blocks = 1;
  int64_t vae_judge_every = 500;  // steps between judgements of the VAE's reconstructions
  bool vae_only = false;
  // Centre and scale each latent channel on its own (folded into quant_conv and
  // post_quant_conv) instead of one scale for all four.
  bool per_channel_latents = false;
  // Extra weight of the latent pixels at and next to the objects in the UNet's loss
  // (1 + W x their object coverage, averaged per picture), so that the few pixels that
  // carry the object's colour and shape are not outweighed by the background; 0 = off.
  double object_weight = 0.0;
  // Weight of an extra loss on the error averaged over each picture's object pixels (one
  // value per latent channel: the object's colour, as the UNet predicts it), which the
  // per-pixel MSE weighs no more than any other component of the error; 0 = off.
  double colour_loss = 0.0;
  // Fades the colour loss out at high noise: it counts min(1, SNR / S) of its weight at
  // each noise level, where the object's place is still open and the object-averaged
  // error measures that rather than the colour; 0 = full weight at every level.
  double colour_loss_snr = 0.0;
  std::vector<int64_t> vae_mult{4, 2, 4};
};

double seconds(Clock::time_point since);
// Linear warm-up, then cosine decay to a tenth of the peak.
double schedule(double peak, int64_t step, int64_t total, int64_t warmup);

// The starter model's shapes. One SD 1.x single file carries all three.
models::ClipTextConfig textConfig();
models::UNetConfig unetConfig(const Options& o);
models::VaeConfig vaeConfig(const Options& o);

// Prints a training step's line: loss, learning rate, time so far and left.
struct Timer {
  Clock::time_point start = Clock::now();
  int64_t last_report = 0;
  void report(const char* phase, int64_t step, int64_t total, double loss, double lr);
};

// 1 where a picture differs from its corner pixel (always background), else 0: [N, 1, H, W].
at::Tensor objectPixels(const at::Tensor& x);

}  // namespace kiln::starter
