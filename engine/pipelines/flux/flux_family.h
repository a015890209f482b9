// FLUX.1 (dev and schnell) as the registry sees it.
#pragma once

#include "pipelines/registry.h"

namespace kiln::pipelines {

Family fluxFamily();

}  // namespace kiln::pipelines
