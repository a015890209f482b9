// The image nodes: LoadImage, LoadMask, JobImage, JobMask, SaveImage, SaveImageAs, PreviewImage.
#include "nodes/nodes.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/data_paths.h"
#include "core/interrupt.h"
#include "memory/device.h"
#include "nodes/node_schema.h"
#include "nodes/vae_stage.h"
#include "nodes/video.h"
#include "pipelines/common/image_prep.h"
#include "pipelines/common/vae_file.h"

namespace kiln::nodes {
namespace {

using schema::choice;
using schema::in;
using schema::number;
using schema::out;
using schema::text;

// An image file through the engine's reader, checked.
Image readImageFile(const NodeCall& c, const std::string& path) {
  if (!c.run.env.read_image)
    throw Error(ErrorKind::InvalidArgument,
                "this engine was set up without an image reader, so it cannot load '" + path + "'");
  Image image = c.run.env.read_image(path);
  pipelines::checkImage(image, "'" + path + "'");
  return image;
}

// The images of a file as [1, 3, H, W] in [0, 1] and its alpha as a mask (1 where
// transparent; zeros without alpha).
std::pair<at::Tensor, at::Tensor> readPicture(const NodeCall& c, const std::string& path) {
  const Image image = readImageFile(c, path);
  const at::Tensor t = pipelines::imageTensor(image);
  at::Tensor alpha = t.size(1) == 4 || t.size(1) == 2 ? 1 - t.narrow(1, t.size(1) - 1, 1)
                                                      : at::zeros({1, 1, t.size(2), t.size(3)});
  return {pipelines::rgbOf(t), alpha};
}

}  // namespace

NodeDefinition loadImage() {
  NodeDefinition d;
  d.schema = {"LoadImage",
              "Load image",
              "image",
              "Reads a picture (PNG, JPEG, EXR, TIFF, WebP); its transparency is a mask",
              {},
              {text("image", ValueType::File, ParamValue(), "Image", "The picture file")},
              {out(ValueType::Image, "Image"), out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    auto [rgb, alpha] = readPicture(c, c.stringParam("image"));
    ImageValue image;
    image.rgb = rgb;
    const int64_t bytes = tensorBytes(rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes),
                              makeValue(ValueType::Mask, MaskValue{alpha}, tensorBytes(alpha))};
  };
  return d;
}

NodeDefinition loadMask() {
  NodeDefinition d;
  d.schema = {"LoadMask",
              "Load mask",
              "image",
              "Reads a mask picture: white repaints, black keeps",
              {},
              {text("image", ValueType::File, ParamValue(), "Mask", "The mask file")},
              {out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    const at::Tensor mask = pipelines::maskTensor(readImageFile(c, c.stringParam("image")));
    return graph::NodeOutputs{makeValue(ValueType::Mask, MaskValue{mask}, tensorBytes(mask))};
  };
  return d;
}

namespace {

// The images of an IMAGE value, with their A1111 parameters where known.
std::vector<Image> imagesOf(const ImageValue& v) {
  std::vector<Image> images;
  for (int64_t b = 0; b < v.rgb.size(0); ++b) {
    Image image = imageFromRgb(v.rgb[b].permute({1, 2, 0}));
    if (static_cast<std::size_t>(b) < v.parameters.size())
      image.text["parameters"] = v.parameters[static_cast<std::size_t>(b)];
    images.push_back(std::move(image));
  }
  return images;
}

}  // namespace

NodeDefinition saveImage() {
  NodeDefinition d;
  d.schema = {
      "SaveImage",
      "Save image",
      "image",
      "Saves PNG files with the workflow and the A1111 parameters inside",
      {in("images", ValueType::Image, "Images")},
      {text("filename_prefix", ValueType::String, std::string("kiln"), "File name prefix", "")},
      {}};
  d.schema.output_node = true;
  d.stage = StageKind::Save;
  d.stage_name = "Saving";
  d.unit = "files";
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    if (run.job.output_dir.empty() || !run.env.write_image)
      throw Error(ErrorKind::InvalidArgument,
                  "SaveImage needs an output folder and an image writer");
    const std::string prefix = checkedPrefix(c);
    std::vector<Image> images = imagesOf(c.input<ImageValue>("images"));
    const std::string workflow = carriedWorkflow(c);
    std::error_code ec;
    std::filesystem::create_directories(run.job.output_dir, ec);
    int number = 1;
    for (std::size_t i = 0; i < images.size(); ++i) {
      images[i].text["kiln_workflow"] = workflow;
      const std::string path = saveNewImage(run.job.output_dir, prefix, number, images[i], run.env);
      run.tracker.progress(c.stage, static_cast<int64_t>(i + 1),
                           static_cast<int64_t>(images.size()));
      run.result.paths.push_back(path);
      run.result.images.push_back(std::move(images[i]));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

NodeDefinition previewImage() {
  NodeDefinition d;
  d.schema = {"PreviewImage",
              "Preview image",
              "image",
              "Shows pictures without saving them",
              {in("images", ValueType::Image, "Images")},
              {},
              {}};
  d.schema.output_node = true;
  d.run = [](NodeCall& c) {
    // A render's pictures carry their workflow; a workflow's previews are not saved.
    const std::string workflow = c.run.layout && c.image >= 0 ? carriedWorkflow(c) : std::string();
    for (Image& image : imagesOf(c.input<ImageValue>("images"))) {
      if (!workflow.empty()) image.text["kiln_workflow"] = workflow;
      c.run.result.images.push_back(std::move(image));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

NodeDefinition saveImageAs() {
  NodeDefinition d;
  d.schema = {"SaveImageAs",
              "Save image as",
              "image",
              "Saves pictures under a path of your choosing (the format by its extension), "
              "replacing a file of that name; a batch's second picture gets \"-2\" before the "
              "extension, and so on. The workflow and the A1111 parameters go inside",
              {in("images", ValueType::Image, "Images")},
              {text("path", ValueType::String, std::string(), "Path", "The file to write")},
              {}};
  d.schema.output_node = true;
  d.stage = StageKind::Save;
  d.stage_name = "Saving";
  d.unit = "files";
  d.units = [](const graph::PlannedNode&) { return int64_t{1}; };
  d.run = [](NodeCall& c) {
    WorkflowRun& run = c.run;
    const std::string path = c.stringParam("path");
    if (path.empty() || !run.env.write_image)
      throw Error(ErrorKind::InvalidArgument, "SaveImageAs needs a path and an image writer");
    std::vector<Image> images = imagesOf(c.input<ImageValue>("images"));
    const std::string workflow = carriedWorkflow(c);
    const auto n = static_cast<int64_t>(images.size());
    for (int64_t i = 0; i < n; ++i) {
      Image& image = images[static_cast<std::size_t>(i)];
      if (!workflow.empty()) image.text["kiln_workflow"] = workflow;
      const std::string file = numberedPath(path, i);
      saveImage(file, image, run.env);
      run.tracker.progress(c.stage, i + 1, n);
      run.result.paths.push_back(file);
      run.result.images.push_back(std::move(image));
    }
    return graph::NodeOutputs{};
  };
  return d;
}

namespace {

// A hash of an image's size and pixels: what a job's own picture is, for the node cache.
std::string imageState(const Image& image) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the bytes
  const auto mix = [&h](const void* data, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  const int dims[3] = {image.width, image.height, image.channels};
  mix(dims, sizeof dims);
  mix(image.pixels.data(), image.pixels.size() * sizeof(float));
  return std::to_string(h);
}

}  // namespace

NodeDefinition jobImage() {
  NodeDefinition d;
  d.schema = {"JobImage",
              "Job's picture",
              "image",
              "The init image the job carries (a render's, given in memory), scaled to cover the "
              "size and centre-cropped",
              {},
              {number("width", ValueType::Int, int64_t{0}, 0, 8192, 8, "Width",
                      "Pixels; 0: the picture's own"),
               number("height", ValueType::Int, int64_t{0}, 0, 8192, 8, "Height",
                      "Pixels; 0: the picture's own")},
              {out(ValueType::Image, "Image")}};
  d.run = [](NodeCall& c) {
    const Image& given = c.run.job.params.init.image;
    if (!hasImage(given))
      throw Error(ErrorKind::InvalidArgument, "JobImage: this job carries no init image");
    pipelines::checkImage(given, "the init image");
    const int64_t w = c.intParam("width") > 0 ? c.intParam("width") : given.width;
    const int64_t h = c.intParam("height") > 0 ? c.intParam("height") : given.height;
    bool cropped = false;
    ImageValue image;
    image.rgb =
        pipelines::fitImage(pipelines::rgbOf(pipelines::imageTensor(given)), h, w, &cropped);
    if (given.width != w || given.height != h) {
      std::string notice = "the init image (" + std::to_string(given.width) + "x" +
                           std::to_string(given.height) + ") was " +
                           (cropped ? "scaled and centre-cropped" : "scaled") + " to " +
                           std::to_string(w) + "x" + std::to_string(h);
      c.run.env.emit(logEvent(notice));
      c.run.result.notices.push_back(std::move(notice));
    }
    const int64_t bytes = tensorBytes(image.rgb);
    return graph::NodeOutputs{makeValue(ValueType::Image, std::move(image), bytes)};
  };
  d.outside_state = [](const RunEnvironment&, const Job& job) {
    return imageState(job.params.init.image);
  };
  return d;
}

NodeDefinition jobMask() {
  NodeDefinition d;
  d.schema = {"JobMask",
              "Job's mask",
              "image",
              "The inpainting mask the job carries (a render's, given in memory): white repaints, "
              "black keeps",
              {},
              {},
              {out(ValueType::Mask, "Mask")}};
  d.run = [](NodeCall& c) {
    const Image& given = c.run.job.params.init.mask;
    if (!hasImage(given))
      throw Error(ErrorKind::InvalidArgument, "JobMask: this job carries no mask");
    pipelines::checkImage(given, "the mask");
    const at::Tensor mask = pipelines::maskTensor(given);
    return graph::NodeOutputs{makeValue(ValueType::Mask, MaskValue{mask}, tensorBytes(mask))};
  };
  d.outside_state = [](const RunEnvironment&, const Job& job) {
    return imageState(job.params.init.mask);
  };
  return d;
}

}  // namespace kiln::nodes
