#include "pipelines/common/pipeline.h"

#include <algorithm>

#include "kiln/error.h"
#include "models/vae/vae_tiling.h"

namespace kiln::pipelines {
namespace {

[[noreturn]] void noClips(const Pipeline& p) {
  throw Error(ErrorKind::InvalidArgument,
              p.describe() + " draws pictures; a clip's latent needs its video model's VAE");
}

}  // namespace

int64_t snapFrames(int64_t frames, int64_t factor) {
  if (frames <= 1 || factor <= 1) return std::max<int64_t>(frames, 1);
  const int64_t n = (frames - 1 + factor / 2) / factor;
  return 1 + n * factor;
}

int64_t clipTilePasses(int64_t latent_h, int64_t latent_w, const ClipTiles& tiles) {
  if (tiles.tile <= 0 || (tiles.tile >= latent_h && tiles.tile >= latent_w)) return 1;
  return static_cast<int64_t>(
      tiling::tileStarts(latent_h, std::min(tiles.tile, latent_h), tiles.overlap).size() *
      tiling::tileStarts(latent_w, std::min(tiles.tile, latent_w), tiles.overlap).size());
}

ClipTiles Pipeline::planClipDecode(int64_t, int64_t, const tiling::TileSettings&, int64_t) const {
  noClips(*this);
}

int64_t Pipeline::clipDecodeWorkingBytes(int64_t, int64_t, const ClipTiles&) const {
  noClips(*this);
}

int64_t Pipeline::decodeClip(const at::Tensor&, const ClipTiles&,
                             const std::function<void(const at::Tensor&)>&,
                             const std::function<void()>&) const {
  noClips(*this);
}

}  // namespace kiln::pipelines
