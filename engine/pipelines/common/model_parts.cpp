#include "pipelines/common/model_parts.h"

#include "kiln/units.h"

namespace kiln::pipelines {

std::vector<const weights::ParamList*> ModelParts::paramLists() const {
  std::vector<const weights::ParamList*> lists;
  for (const memory::ComponentInfo& c : components()) lists.push_back(c.params);
  return lists;
}

int64_t ModelParts::weightBytes() const {
  int64_t total = 0;
  for (const auto* params : paramLists())
    for (const auto& slot : params->slots())
      if (slot.tensor->defined()) total += static_cast<int64_t>(slot.tensor->nbytes());
  return total;
}

std::string ModelParts::describe() const {
  return displayName() + " (" + kindName() + ", " + at::toString(dtype()) + ", " +
         formatBytes(weightBytes()) + ")";
}

}  // namespace kiln::pipelines
