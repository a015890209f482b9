// SD 1.x, 2.x, SDXL and the SDXL refiner as a registered family.
#pragma once

#include "pipelines/registry.h"

namespace kiln::pipelines {

Family sdFamily();

}  // namespace kiln::pipelines
