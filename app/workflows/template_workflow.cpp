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

// The panel's label for each role, translated where the panel shows them.
const char* roleLabel(PanelRole role) {
  switch (role) {
    case PanelRole::Model:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Model");
    case PanelRole::Prompt:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Prompt");
    case PanelRole::Negative:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Negative prompt");
    case PanelRole::Sampler:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Sampler");
    case PanelRole::Seed:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Seed");
    case PanelRole::Steps:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Steps");
    case PanelRole::Cfg:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "CFG scale");
    case PanelRole::Guidance:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Guidance");
    case PanelRole::Width:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Width");
    case PanelRole::Height:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Height");
    case PanelRole::Frames:
      return QT_TRANSLATE_NOOP("kiln::app::Workflow", "Frames");
  }
  return "";
}

constexpr PanelRole kRoles[] = {PanelRole::Model,   PanelRole::Prompt,   PanelRole::Negative,
                                PanelRole::Sampler, PanelRole::Seed,     PanelRole::Steps,
                                PanelRole::Cfg,     PanelRole::Guidance, PanelRole::Width,
                                PanelRole::Height,  PanelRole::Frames};

// The engine's template for `p`, with tiling left to Preferences (applyNodeDefaults), as
// the app's other workflows leave it, and the roles it has exposed.
kiln::Workflow templateFor(const kiln::RenderParams& p) {
  kiln::Workflow w = kiln::renderWorkflow(p);
  for (kiln::WorkflowNode& n : w.nodes)
    if (n.type == "VAEDecode") n.params.clear();
  exposeCommonParameters(w);
  return w;
}

}  // namespace

kiln::Workflow defaultTemplate() {
  // The engine's template for the default settings, the graph kiln-cli render and
  // kiln::render draw, at the starter model's size.
  kiln::RenderParams d = kiln::defaultRenderParams();
  d.size.width = d.size.height = 64;
  return templateFor(d);
}

kiln::Workflow videoTemplate() {
  kiln::RenderParams d = kiln::defaultRenderParams();
  d.size.width = 832;
  d.size.height = 480;
  d.video.frames = 81;
  d.video.fps = 16;
  d.sampling.steps = 50;
  d.sampling.cfg_scale = 5.0;
  d.sampling.sampler = "uni_pc";
  return templateFor(d);
}

kiln::Workflow fluxTemplate(const std::string& model_path) {
  kiln::RenderParams d = kiln::defaultRenderParams(model_path);
  d.size.width = d.size.height = 1024;
  d.sampling.guidance = 3.5;
  kiln::Workflow w = templateFor(d);
  // Guidance in place of the CFG scale (1: one model call a step), no negative prompt.
  const ParamRef negative = findRole(w, PanelRole::Negative), cfg = findRole(w, PanelRole::Cfg);
  std::erase_if(w.exposed, [&](const kiln::ExposedParam& e) {
    return (e.node == negative.node && e.param == negative.param) ||
           (e.node == cfg.node && e.param == cfg.param);
  });
  return w;
}

ParamRef findRole(const kiln::Workflow& w, PanelRole role) {
  const auto first = [&](const char* type, const char* param) -> ParamRef {
    const kiln::WorkflowNode* n = firstOfType(w, type);
    return n ? ParamRef{n->id, param} : ParamRef{};
  };
  switch (role) {
    case PanelRole::Model:
      return firstOfType(w, "LoadCheckpoint") ? first("LoadCheckpoint", "ckpt_name")
                                              : first("LoadVideoModel", "model_name");
    case PanelRole::Sampler:
      return first("Sampler", "sampler_name");
    case PanelRole::Seed:
      return first("Sampler", "seed");
    case PanelRole::Steps:
      return first("Sampler", "steps");
    case PanelRole::Cfg:
      return first("Sampler", "cfg");
    case PanelRole::Guidance:
      return first("FluxGuidance", "guidance");
    case PanelRole::Width:
      return firstOfType(w, "EmptyLatent") ? first("EmptyLatent", "width")
                                           : first("EmptyVideoLatent", "width");
    case PanelRole::Height:
      return firstOfType(w, "EmptyLatent") ? first("EmptyLatent", "height")
                                           : first("EmptyVideoLatent", "height");
    case PanelRole::Frames:
      return first("EmptyVideoLatent", "frames");
    case PanelRole::Prompt:
    case PanelRole::Negative: {
      const kiln::WorkflowNode* sampler = firstOfType(w, "Sampler");
      if (!sampler) return {};
      // The conditioning's source, through FluxGuidance to the prompt it guides.
      const auto source = [&w](const std::string& node, const char* input) {
        for (const auto& l : w.links)
          if (l.to_node == node && l.to_input == input) return w.node(l.from_node);
        return static_cast<const kiln::WorkflowNode*>(nullptr);
      };
      const kiln::WorkflowNode* n =
          source(sampler->id, role == PanelRole::Prompt ? "positive" : "negative");
      for (int hops = 0; n && n->type == "FluxGuidance" && hops < 8; ++hops)
        n = source(n->id, "conditioning");
      if (n && n->type == "TextEncode") return {n->id, "text"};
      return {};
    }
  }
  return {};
}

void exposeCommonParameters(kiln::Workflow& w) {
  if (!w.exposed.empty()) return;
  for (const PanelRole role : kRoles) {
    const ParamRef ref = findRole(w, role);
    if (ref.valid()) w.exposed.push_back({ref.node, ref.param, roleLabel(role)});
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
  p.model.path = text(PanelRole::Model);
  p.prompt.text = text(PanelRole::Prompt);
  p.prompt.negative = text(PanelRole::Negative);
  p.sampling.seed = integer(PanelRole::Seed) + index;
  p.sampling.steps = static_cast<int>(integer(PanelRole::Steps));
  const kiln::ParamValue cfg = value(PanelRole::Cfg);
  if (const auto* d = std::get_if<double>(&cfg)) p.sampling.cfg_scale = *d;
  p.size.width = static_cast<int>(integer(PanelRole::Width));
  p.size.height = static_cast<int>(integer(PanelRole::Height));
  p.video.frames = static_cast<int>(integer(PanelRole::Frames));
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
    if ((n.type == "SaveImage" || n.type == "SaveVideo") && !file_prefix.isEmpty())
      n.params["filename_prefix"] = file_prefix.toStdString();
  }
  return w;
}

}  // namespace kiln::app
