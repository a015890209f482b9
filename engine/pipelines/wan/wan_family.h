// Wan 2.1 text-to-video as a registered family.
#pragma once

#include "pipelines/registry.h"

namespace kiln::pipelines {

Family wanFamily();

}  // namespace kiln::pipelines
