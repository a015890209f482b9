#include "pipelines/common/vae_codec.h"

#include "kiln/error.h"
#include "memory/device.h"

namespace kiln::pipelines {

at::Tensor VaeCodec::decode(const at::Tensor& latent, const tiling::Tiles* tiles,
                            const tiling::TileProgress& progress) const {
  // The latent arrives from the host; the VAE computes on the current compute device.
  const at::Tensor z = latent.to(memory::computeDevice()) / scaling_factor + shift;
  at::Tensor image =
      tiles ? models::decodeTiled(*vae, z, *tiles, progress) : vae->decode(z).to(at::kFloat);
  if (!at::isfinite(image).all().item<bool>())
    throw Error(ErrorKind::NonFinite,
                "NaN or infinity appeared in the VAE decode; try float32 compute");
  return image;
}

at::Tensor VaeCodec::encode(const at::Tensor& image, const tiling::Tiles* tiles,
                            const tiling::TileProgress& progress) const {
  const at::Tensor pixels = image.to(memory::computeDevice());
  const at::Tensor moments = tiles ? models::encodeMomentsTiled(*vae, pixels, *tiles, progress)
                                   : vae->encodeMoments(pixels).to(at::kFloat);
  const at::Tensor latent = (moments.chunk(2, 1)[0] - shift) * scaling_factor;
  if (!at::isfinite(latent).all().item<bool>())
    throw Error(ErrorKind::NonFinite,
                "NaN or infinity appeared in the VAE encode; try float32 compute");
  return latent;
}

}  // namespace kiln::pipelines
