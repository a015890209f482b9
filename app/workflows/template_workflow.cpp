#include "template_workflow.h"

#include <QCoreApplication>

#include "kiln/render_workflow.h"

namespace kiln::app {

namespace {

const kiln::NodeSchema* schemaOf(const std::vector<kiln::NodeSchema>& schemas,
                                 const std::string& type) {
  for (const auto& s : schemas)
    if (s.type == type) return &s;
  return nullptr;
}

const kiln::WorkflowNode* firstOfType(const kiln::Workflow& w, const std::string& type) {
  for (const auto& n : w.nodes)
    if (n.type == type) return &n;
  return nullptr;
}

}  // namespace

kiln::Workflow defaultTemplate() {
  // The engine's template for the default settings, the graph kiln-cli render and
  // kiln::render draw, at the starter model's size.
  kiln::RenderParams d = kiln::defaultRenderParams();
  d.width = d.height = 64;
  kiln::Workflow w = kiln::renderWorkflow(d);
  // Tiling is left to Preferences (applyNodeDefaults), as the app's other workflows leave it.
  for (kiln::WorkflowNode& n : w.nodes)
    if (n.type == "VAEDecode") n.params.clear();
  // The labels are translated where the panel shows them.
  w.exposed = {{"model", "ckpt_name", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Model")},
               {"prompt", "text", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Prompt")},
               {"negative", "text", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Negative prompt")},
               {"sampler", "sampler_name", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Sampler")},
               {"sampler", "seed", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Seed")},
               {"sampler", "steps", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Steps")},
               {"sampler", "cfg", QT_TRANSLATE_NOOP("kiln::app::Workflow", "CFG scale")},
               {"latent", "width", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Width")},
               {"latent", "height", QT_TRANSLATE_NOOP("kiln::app::Workflow", "Height")}};
  return w;
}

ParamRef findRole(const kiln::Workflow& w, PanelRole role) {
  const auto first = [&](const char* type, const char* param) -> ParamRef {
    const kiln::WorkflowNode* n = firstOfType(w, type);
    return n ? ParamRef{n->id, param} : ParamRef{};
  };
  switch (role) {
    case PanelRole::Model:
      return first("LoadCheckpoint", "ckpt_name");
    case PanelRole::Sampler:
      return first("Sampler", "sampler_name");
    case PanelRole::Seed:
      return first("Sampler", "seed");
    case PanelRole::Steps:
      return first("Sampler", "steps");
    case PanelRole::Cfg:
      return first("Sampler", "cfg");
    case PanelRole::Width:
      return first("EmptyLatent", "width");
    case PanelRole::Height:
      return first("EmptyLatent", "height");
    case PanelRole::Prompt:
    case PanelRole::Negative: {
      const kiln::WorkflowNode* sampler = firstOfType(w, "Sampler");
      if (!sampler) return {};
      const char* input = role == PanelRole::Prompt ? "positive" : "negative";
      for (const auto& l : w.links)
        if (l.to_node == sampler->id && l.to_input == input)
          if (const kiln::WorkflowNode* n = w.node(l.from_node); n && n->type == "TextEncode")
            return {n->id, "text"};
      return {};
    }
  }
  return {};
}

void exposeCommonParameters(kiln::Workflow& w) {
  if (!w.exposed.empty()) return;
  const kiln::Workflow labels = defaultTemplate();
  const PanelRole roles[] = {PanelRole::Model,   PanelRole::Prompt, PanelRole::Negative,
                             PanelRole::Sampler, PanelRole::Seed,   PanelRole::Steps,
                             PanelRole::Cfg,     PanelRole::Width,  PanelRole::Height};
  for (std::size_t i = 0; i < std::size(roles); ++i) {
    const ParamRef ref = findRole(w, roles[i]);
    if (ref.valid()) w.exposed.push_back({ref.node, ref.param, labels.exposed[i].label});
  }
}

kiln::ParamValue paramValue(const kiln::Workflow& w, const std::vector<kiln::NodeSchema>& schemas,
                            const std::string& node, const std::string& param) {
  const kiln::WorkflowNode* n = w.node(node);
  if (!n) return {};
  if (const auto it = n->params.find(param); it != n->params.end()) return it->second;
  const kiln::NodeSchema* s = schemaOf(schemas, n->type);
  const kiln::ParamSpec* p = s ? s->param(param) : nullptr;
  return p ? p->default_value : kiln::ParamValue{};
}

void applyNodeDefaults(kiln::Workflow& w, const NodeDefaults& d) {
  for (kiln::WorkflowNode& n : w.nodes) {
    if (n.type == "VAEDecode" || n.type == "VAEEncode") {
      n.params.try_emplace("tiling", d.tiling);
      n.params.try_emplace("tile_size", d.tile_size);
      n.params.try_emplace("tile_overlap", d.tile_overlap);
    } else if (n.type == "LoadLoRA" || n.type == "LoadLoRAModelOnly") {
      n.params.try_emplace("mode", d.lora_mode);
    }
  }
}

kiln::RenderParams roleParams(const kiln::Workflow& w, int index) {
  static const std::vector<kiln::NodeSchema> schemas = kiln::builtinNodeSchemas();
  const auto value = [&](PanelRole role) {
    const ParamRef ref = findRole(w, role);
    return ref.valid() ? paramValue(w, schemas, ref.node, ref.param) : kiln::ParamValue{};
  };
  const auto integer = [&](PanelRole role) {
    const kiln::ParamValue v = value(role);
    const auto* i = std::get_if<int64_t>(&v);
    return i ? *i : 0;
  };
  const auto text = [&](PanelRole role) {
    const kiln::ParamValue v = value(role);
    const auto* s = std::get_if<std::string>(&v);
    return s ? *s : std::string();
  };
  kiln::RenderParams p;
  p.model_path = text(PanelRole::Model);
  p.prompt = text(PanelRole::Prompt);
  p.negative_prompt = text(PanelRole::Negative);
  p.seed = integer(PanelRole::Seed) + index;
  p.steps = static_cast<int>(integer(PanelRole::Steps));
  const kiln::ParamValue cfg = value(PanelRole::Cfg);
  if (const auto* d = std::get_if<double>(&cfg)) p.cfg_scale = *d;
  p.width = static_cast<int>(integer(PanelRole::Width));
  p.height = static_cast<int>(integer(PanelRole::Height));
  return p;
}

kiln::Workflow prepareRun(const kiln::Workflow& workflow,
                          const std::vector<kiln::NodeSchema>& schemas, int index,
                          const QString& file_prefix) {
  kiln::Workflow w = workflow;
  for (kiln::WorkflowNode& n : w.nodes) {
    const kiln::NodeSchema* s = schemaOf(schemas, n.type);
    if (!s) continue;
    for (const kiln::ParamSpec& p : s->params) {
      if (p.type == kiln::ValueType::Seed && index > 0) {
        const kiln::ParamValue v = paramValue(w, schemas, n.id, p.name);
        if (const auto* seed = std::get_if<int64_t>(&v)) n.params[p.name] = *seed + index;
      }
    }
    if (n.type == "SaveImage" && !file_prefix.isEmpty())
      n.params["filename_prefix"] = file_prefix.toStdString();
  }
  return w;
}

}  // namespace kiln::app
