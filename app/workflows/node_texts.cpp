#include "node_texts.h"

#include <QCoreApplication>

#include <algorithm>
#include <iterator>

namespace kiln::app {
namespace {

// Every text of the built-in node schemas (test_template_workflow checks that none is
// missing): node names, categories, parameter and port names.
constexpr const char* kTexts[] = {
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Aesthetic score"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Base shift"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Batch size"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "CFG scale"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "CLIP-L text"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Checkpoint"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Clip skip"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Compute precision"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Conditioning"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Crop left"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Crop top"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Denoise"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Empty latent"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Empty video latent"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "File name prefix"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Flux guidance"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Format"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Frame rate"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Frames"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Guidance"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Height"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Image"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Images"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Job's mask"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Job's picture"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Latent"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "LoRA"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load LoRA"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load LoRA (model only)"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load VAE"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load checkpoint"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load image"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load mask"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Load video model"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Mask"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Mask feather"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Max shift"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Mode"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Model"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Model sampling (FLUX)"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Model strength"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Negative"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Original height"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Original width"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Path"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Positive"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Prediction"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Preview image"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Quality"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Sampler"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Save image"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Save image as"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Save video"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Save video as"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Schedule"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Second text encoder"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Seed"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Shift"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Steps"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Strength schedule"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "T5 text"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Text"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Text encode"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Text encode (FLUX)"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Text encoder"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Text encoder strength"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Tile overlap"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Tile size"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Tiling"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "VAE"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "VAE decode"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "VAE encode"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Width"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "Zero terminal SNR"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "conditioning"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "image"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "latent"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "loaders"),
    QT_TRANSLATE_NOOP("kiln::app::Workflow", "sampling"),
};

}  // namespace

QString nodeText(const std::string& text) {
  return QCoreApplication::translate("kiln::app::Workflow", text.c_str());
}

QString nodeCategoryText(const std::string& category) {
  QString text = nodeText(category);
  if (!text.isEmpty()) text[0] = text[0].toUpper();  // "loaders" is a heading: "Loaders"
  return text;
}

bool nodeTextListed(std::string_view text) {
  return std::any_of(std::begin(kTexts), std::end(kTexts),
                     [&](const char* t) { return text == t; });
}

}  // namespace kiln::app
