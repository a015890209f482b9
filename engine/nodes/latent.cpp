// The latent nodes: EmptyLatent, VAEDecode, VAEEncode.
#include "nodes/nodes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "memory/device.h"
#include "nodes/node_schema.h"
#include "nodes/vae_stage.h"
#include "nodes/video.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/common/vae_file.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

std::vector<ParamSpec> tilingParams() {
  return {choice("tiling", {"auto", "always", "never"}, "auto", "Tiling",
                 "Work in tiles: auto when the whole picture would not fit in memory"),
          number("tile_size", ValueType::Int, int64_t{0}, 0, 4096, 64, "Tile size",
                 "Tile size in pixels; 0 chooses the largest that fits"),
          number("tile_overlap", ValueType::Int, int64_t{64}, 0, 2048, 8, "Tile overlap",
                 "Overlap of tiles in pixels")};
}

}  // namespace

NodeDefinition emptyLatent() {
  NodeDefinition d;
  d.schema = {"EmptyLatent",
              "Empty latent",
              "latent",
              "A blank latent of a size: what text-to-image starts from. The model that samples it "
              "gives its "
              "layout (SD: 4 channels at 1/8 of the pixels; the starter model: 1/4; a video model: "
              "one frame)",
              {},
              {number("width", ValueType::Int, int64_t{512}, 8, 8192, 8, "Width",
                      "Pixels; snapped down to the model's grid (8 for SD models)"),
               number("height", ValueType::Int, int64_t{512}, 8, 8192, 8, "Height",
                      "Pixels; snapped down to the model's grid (8 for SD models)"),
               number("batch_size", ValueType::Int, int64_t{1}, 1, 64, 1, "Batch size",
                      "Pictures at once")},
              {out(ValueType::Latent, "Latent")}};
  d.run = [](NodeCall& c) {
    LatentValue v;
    v.empty = LatentRequest{c.intParam("width"), c.intParam("height"), c.intParam("batch_size"), 0};
    return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(v), 0)};
  };
  return d;
}

NodeDefinition vaeDecode() {
  NodeDefinition d;
  d.schema = {"VAEDecode",
              "VAE decode",
              "latent",
              "Turns a latent into a picture",
              {in("samples", ValueType::Latent, "Latent"), in("vae", ValueType::Vae, "VAE")},
              tilingParams(),
              {out(ValueType::Image, "Image")}};
  d.stage = StageKind::Decode;
  d.stage_name = "Decoding";
  d.unit = "tile passes";
  d.run = [](NodeCall& c) {
    const LatentValue& latent = c.input<LatentValue>("samples");
    if (c.input<ModelRef>("vae").video) return decodeVideo(c);
    if ((latent.empty && latent.empty->frames > 0) || (!latent.empty && latent.samples.dim() != 4))
      throw Error(ErrorKind::InvalidArgument,
                  "an image VAE decodes an image latent; a video latent needs its video "
                  "model's VAE");
    const tiling::TileSettings tiling = tilingOf(c);
    tiling::validateTiling(tiling);
    const pipelines::VaeCodec codec = c.run.vae(
        c.input<ModelRef>("vae"), latent.scaling_factor, [&](const pipelines::VaeCodec& vae) {
          const int64_t f = vae.config().downscale();
          const int64_t height = latent.empty ? latent.empty->height : latent.samples.size(2) * f;
          const int64_t width = latent.empty ? latent.empty->width : latent.samples.size(3) * f;
          return vaeStageWorkingBytes(pipelines::VaeWork::Decode, vae, tiling, height, width,
                                      c.run.device);
        });
    const int64_t f = codec.config().downscale();
    const at::Tensor samples =
        latent.empty ? emptyImageLatent(c.run, *latent.empty, {codec.config().embed_dim, f, f})
                     : latent.samples;
    if (samples.size(1) != codec.config().embed_dim)
      throw Error(ErrorKind::InvalidArgument, "the latent has " + std::to_string(samples.size(1)) +
                                                  " channels but this VAE decodes " +
                                                  std::to_string(codec.config().embed_dim) +
                                                  "; link the VAE of the model that sampled it");
    ImageValue image;
    std::vector<at::Tensor> outs;
    {
      memory::DeviceScope on_device(c.run.device);
      for (int64_t b = 0; b < samples.size(0); ++b) {
        at::Tensor decoded =
            runVaeStage(pipelines::VaeWork::Decode, codec, samples.narrow(0, b, 1),
                        {c.run.tracker, c.stage, c.run.env, c.run.device, tiling, {}});
        // Outside an inpainting mask the picture stays exactly as it was.
        if (latent.pixel_mask.defined() && latent.source_rgb.defined()) {
          const at::Tensor src =
              latent.source_rgb.narrow(0, std::min(b, latent.source_rgb.size(0) - 1), 1);
          decoded = src + (decoded - src) * latent.pixel_mask;
        }
        outs.push_back(toHost(c.run.device, (decoded / 2 + 0.5).clamp(0, 1)));
      }
    }
    image.rgb = at::cat(outs, 0);
    image.parameters = latent.parameters;
    const int64_t bytes = tensorBytes(image.rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes)};
  };
  return d;
}

NodeDefinition vaeEncode() {
  NodeDefinition d;
  std::vector<ParamSpec> params = tilingParams();
  params.push_back(number("mask_feather", ValueType::Int, int64_t{0}, 0, 256, 1, "Mask feather",
                          "Blurs the mask's edge over this many pixels"));
  d.schema = {"VAEEncode",
              "VAE encode",
              "latent",
              "Turns a picture into a latent for image-to-image; with a mask, only the masked part "
              "is repainted",
              {in("pixels", ValueType::Image, "Image"), in("vae", ValueType::Vae, "VAE"),
               in("mask", ValueType::Mask, "Mask", true)},
              params,
              {out(ValueType::Latent, "Latent")}};
  d.stage = StageKind::EncodeImage;
  d.stage_name = "Encoding image";
  d.unit = "tile passes";
  d.run = [](NodeCall& c) {
    const ImageValue& image = c.input<ImageValue>("pixels");
    const tiling::TileSettings tiling = tilingOf(c);
    tiling::validateTiling(tiling);
    const int64_t h = image.rgb.size(2), w = image.rgb.size(3);
    const pipelines::VaeCodec codec =
        c.run.vae(c.input<ModelRef>("vae"), 0, [&](const pipelines::VaeCodec& vae) {
          return vaeStageWorkingBytes(pipelines::VaeWork::Encode, vae, tiling, h, w, c.run.device);
        });
    const int64_t f = codec.config().downscale();
    const int64_t fh = std::max(f, h / f * f), fw = std::max(f, w / f * f);
    if (fh != h || fw != w)
      c.run.env.emit(logEvent("the picture (" + std::to_string(w) + "x" + std::to_string(h) +
                              ") was scaled to " + std::to_string(fw) + "x" + std::to_string(fh) +
                              ", a multiple of " + std::to_string(f)));
    LatentValue latent;
    latent.from_image = true;
    latent.scaling_factor = codec.scaling_factor;
    latent.source_rgb =
        (fh != h || fw != w ? pipelines::fitImage(image.rgb, fh, fw) : image.rgb) * 2 - 1;
    std::vector<at::Tensor> outs;
    {
      memory::DeviceScope on_device(c.run.device);
      for (int64_t b = 0; b < latent.source_rgb.size(0); ++b)
        outs.push_back(
            toHost(c.run.device,
                   runVaeStage(pipelines::VaeWork::Encode, codec, latent.source_rgb.narrow(0, b, 1),
                               {c.run.tracker, c.stage, c.run.env, c.run.device, tiling, {}})));
    }
    latent.samples = at::cat(outs, 0);
    if (c.hasInput("mask")) {
      const at::Tensor mask = c.input<MaskValue>("mask").mask;
      latent.mask_feather = c.intParam("mask_feather");
      latent.pixel_mask =
          pipelines::featherMask(pipelines::fitImage(mask, fh, fw), latent.mask_feather);
      latent.mask = pipelines::latentMask(latent.pixel_mask, f);
    }
    const int64_t bytes = tensorBytes(latent.samples) + tensorBytes(latent.source_rgb) +
                          tensorBytes(latent.pixel_mask);
    return graph::NodeOutputs{makeValue(ValueType::Latent, std::move(latent), bytes)};
  };
  return d;
}

}  // namespace kiln::nodes
