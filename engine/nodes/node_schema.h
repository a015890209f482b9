// Builders for node schemas: parameters, inputs and outputs with their display texts.
#pragma once

#include <string>
#include <vector>

#include "kiln/workflow.h"

namespace kiln::nodes::schema {

inline ParamSpec number(std::string name, ValueType type, ParamValue def, double min, double max,
                        double step, std::string display, std::string description) {
  ParamSpec p;
  p.name = std::move(name);
  p.type = type;
  p.default_value = std::move(def);
  p.min = min;
  p.max = max;
  p.step = step;
  p.display_name = std::move(display);
  p.description = std::move(description);
  return p;
}
inline ParamSpec text(std::string name, ValueType type, ParamValue def, std::string display,
                      std::string description, bool multiline = false) {
  ParamSpec p = number(std::move(name), type, std::move(def), 0, 0, 0, std::move(display),
                       std::move(description));
  p.multiline = multiline;
  return p;
}
inline ParamSpec choice(std::string name, std::vector<std::string> choices, std::string def,
                        std::string display, std::string description) {
  ParamSpec p = text(std::move(name), ValueType::Enum, std::move(def), std::move(display),
                     std::move(description));
  p.choices = std::move(choices);
  return p;
}
inline InputSpec in(std::string name, ValueType type, std::string display, bool optional = false) {
  return {std::move(name), type, optional, std::move(display)};
}
inline OutputSpec out(ValueType type, std::string display) {
  return {valueTypeName(type), type, std::move(display)};
}

}  // namespace kiln::nodes::schema
