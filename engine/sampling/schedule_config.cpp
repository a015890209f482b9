#include "sampling/schedule_config.h"

#include "kiln/error.h"

namespace kiln::sampling {

TimestepSpacing parseSpacing(const std::string& name) {
  if (name == "linspace") return TimestepSpacing::Linspace;
  if (name == "leading") return TimestepSpacing::Leading;
  if (name == "trailing") return TimestepSpacing::Trailing;
  throw Error(ErrorKind::UnsupportedModel,
              "unknown timestep spacing '" + name + "' (expected linspace, leading or trailing)");
}

}  // namespace kiln::sampling
