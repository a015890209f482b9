#include "render_command.h"

#include <QCommandLineParser>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>

#include "cli_session.h"
#include "job_display.h"
#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/image_io.h"
#include "kiln/render.h"
#include "kiln/units.h"
#include "kiln/video_io.h"

namespace kiln::cli {
namespace {

// "WxH" -> (W, H)
std::pair<int, int> toSize(const QCommandLineParser& p, const QString& name) {
  const QStringList parts = p.value(name).split('x');
  bool ok_w = false, ok_h = false;
  const int w = parts.size() == 2 ? parts[0].toInt(&ok_w) : 0;
  const int h = parts.size() == 2 ? parts[1].toInt(&ok_h) : 0;
  if (!ok_w || !ok_h || w <= 0 || h <= 0)
    throw UsageError{"--" + name + " needs WIDTHxHEIGHT, got '" + p.value(name) + "'"};
  return {w, h};
}

RenderParams parseParams(const QCommandLineParser& p) {
  RenderParams r;
  r = defaultRenderParams();
  if (p.isSet("model")) {
    r.model.path = p.value("model").toStdString();
    if (r.model.path.empty()) throw UsageError{"--model needs a path"};
    r.sampling = defaultRenderParams(r.model.path).sampling;  // the model's own (FLUX: CFG 1)
  }
  if (p.isSet("prompt")) r.prompt.text = p.value("prompt").toStdString();
  if (p.isSet("negative")) r.prompt.negative = p.value("negative").toStdString();
  if (p.isSet("seed")) {
    bool ok = false;
    r.sampling.seed = p.value("seed").toLongLong(&ok);
    if (!ok) throw UsageError{"--seed needs a whole number, got '" + p.value("seed") + "'"};
  }
  r.sampling.steps = toInt(p, "steps", r.sampling.steps);
  if (p.isSet("cfg")) {
    bool ok = false;
    r.sampling.cfg_scale = p.value("cfg").toDouble(&ok);
    if (!ok) throw UsageError{"--cfg needs a number, got '" + p.value("cfg") + "'"};
  }
  if (p.isSet("sampler")) r.sampling.sampler = p.value("sampler").toStdString();
  if (p.isSet("scheduler")) r.sampling.scheduler = p.value("scheduler").toStdString();
  r.size.width = toInt(p, "width", 0);
  r.size.height = toInt(p, "height", 0);
  if ((r.size.width == 0) != (r.size.height == 0))
    throw UsageError{"give both --width and --height, or neither for the model's native size"};
  if (p.isSet("original-size"))
    std::tie(r.size.original_width, r.size.original_height) = toSize(p, "original-size");
  if (p.isSet("crop")) {
    const QStringList parts = p.value("crop").split(',');
    bool ok_t = false, ok_l = false;
    if (parts.size() == 2) {
      r.size.crop_top = parts[0].toInt(&ok_t);
      r.size.crop_left = parts[1].toInt(&ok_l);
    }
    if (!ok_t || !ok_l) throw UsageError{"--crop needs TOP,LEFT, got '" + p.value("crop") + "'"};
  }
  for (const auto& [name, target] :
       {std::pair<const char*, double*>{"aesthetic-score", &r.prompt.aesthetic_score},
        std::pair<const char*, double*>{"negative-aesthetic-score",
                                        &r.prompt.negative_aesthetic_score}}) {
    if (!p.isSet(name)) continue;
    bool ok = false;
    *target = p.value(name).toDouble(&ok);
    if (!ok) throw UsageError{QString("--%1 needs a number, got '%2'").arg(name, p.value(name))};
  }
  const QString dtype = p.isSet("dtype") ? p.value("dtype") : QString("auto");
  if (dtype == "auto") {
    r.model.dtype = ComputeDType::Auto;
  } else if (dtype == "fp32") {
    r.model.dtype = ComputeDType::Float32;
  } else if (dtype == "bf16") {
    r.model.dtype = ComputeDType::BFloat16;
  } else if (dtype == "fp16") {
    r.model.dtype = ComputeDType::Float16;
  } else {
    throw UsageError{"--dtype must be auto, fp32, bf16 or fp16, got '" + dtype + "'"};
  }
  r.model.threads = toInt(p, "threads", 0);
  for (const QString& spec : p.values("lora")) {
    try {
      r.model.loras.push_back(parseLoraSpec(spec.toStdString()));
    } catch (const Error& e) {
      throw UsageError{"--lora: " + QString::fromStdString(e.what())};
    }
  }
  if (p.isSet("lora-mode")) {
    r.model.lora_mode = parseLoraMode(p.value("lora-mode").toStdString());
    if (r.model.lora_mode == LoraMode::Invalid)
      throw UsageError{"--lora-mode must be auto, merge or hook, got '" + p.value("lora-mode") +
                       "'"};
  }
  if (p.isSet("vae-tiling")) {
    r.tiling.mode = parseVaeTiling(p.value("vae-tiling").toStdString());
    if (r.tiling.mode == VaeTiling::Invalid)
      throw UsageError{"--vae-tiling must be auto, always or never, got '" + p.value("vae-tiling") +
                       "'"};
  }
  r.tiling.size = toInt(p, "tile-size", r.tiling.size);
  r.tiling.overlap = toInt(p, "tile-overlap", r.tiling.overlap);
  if (p.isSet("denoise")) {
    bool ok = false;
    r.init.denoise = p.value("denoise").toDouble(&ok);
    if (!ok)
      throw UsageError{"--denoise needs a number between 0 and 1, got '" + p.value("denoise") +
                       "'"};
    if (!p.isSet("init-image"))
      throw UsageError{"--denoise needs --init-image (it is image-to-image's strength)"};
  }
  r.init.mask_feather = toInt(p, "mask-feather", r.init.mask_feather);
  r.video.frames = toInt(p, "frames", 0);
  if (p.isSet("frames") && r.video.frames < 1)
    throw UsageError{"--frames needs a whole number of at least 1"};
  if (p.isSet("fps")) {
    bool ok = false;
    r.video.fps = p.value("fps").toDouble(&ok);
    if (!ok || r.video.fps <= 0)
      throw UsageError{"--fps needs a positive number, got '" + p.value("fps") + "'"};
  }
  if (p.isSet("shift")) {
    bool ok = false;
    r.sampling.flow_shift = p.value("shift").toDouble(&ok);
    if (!ok || r.sampling.flow_shift <= 0)
      throw UsageError{"--shift needs a positive number, got '" + p.value("shift") + "'"};
  }
  if (p.isSet("vae")) r.model.vae_path = p.value("vae").toStdString();
  if (p.isSet("text-encoder")) r.model.text_encoder_path = p.value("text-encoder").toStdString();
  if (p.isSet("clip-l")) {
    if (p.isSet("text-encoder"))
      throw UsageError{QStringLiteral("--clip-l and --text-encoder name the same part; give one")};
    r.model.text_encoder_path = p.value("clip-l").toStdString();
  }
  if (p.isSet("t5")) r.model.text_encoder_2_path = p.value("t5").toStdString();
  if (p.isSet("guidance")) {
    bool ok = false;
    r.sampling.guidance = p.value("guidance").toDouble(&ok);
    if (!ok || r.sampling.guidance <= 0)
      throw UsageError{"--guidance needs a positive number, got '" + p.value("guidance") + "'"};
  }
  // Video models sample with UniPC unless told otherwise (Wan's default).
  if (r.video.frames > 1 && !p.isSet("sampler")) r.sampling.sampler = "uni_pc";
  if ((p.isSet("mask") || p.isSet("mask-from-alpha")) && !p.isSet("init-image"))
    throw UsageError{"--mask and --mask-from-alpha need --init-image"};
  if (p.isSet("mask") && p.isSet("mask-from-alpha"))
    throw UsageError{"give --mask or --mask-from-alpha, not both"};
  return r;
}

// Reads --init-image and --mask (image files are read here, not by the engine). Throws
// kiln::Error (FileNotFound, CorruptFile, InvalidArgument) with the file in the message.
void readImages(const QCommandLineParser& p, RenderParams& r) {
  const auto read = [](const QString& option, const QString& path) {
    try {
      return readImage(path.toStdString());
    } catch (const Error& e) {
      throw Error(e.kind(), "--" + option.toStdString() + ": " + e.what());
    }
  };
  if (p.isSet("init-image")) r.init.image = read("init-image", p.value("init-image"));
  if (p.isSet("mask")) r.init.mask = read("mask", p.value("mask"));
  if (p.isSet("mask-from-alpha")) {
    try {
      r.init.mask = maskFromAlpha(r.init.image);
    } catch (const Error& e) {
      throw Error(e.kind(), "--mask-from-alpha: " + std::string(e.what()) + " ('" +
                                p.value("init-image").toStdString() + "')");
    }
  }
}

// A new file in the user's pictures folder (XDG_PICTURES_DIR, else ~/Pictures), which is
// created when missing; never an existing file. `extension` with its dot.
QString defaultOutputPath(const QString& extension) {
  const QString dir = picturesFolder();
  if (!QDir().mkpath(dir))
    throw UsageError{"cannot create the pictures folder '" + dir + "'; pass --out FILE.png"};
  const QString stem = dir + "/kiln-" + QDateTime::currentDateTime().toString("yyyyMMdd-HHmmss");
  QString candidate = stem + extension;
  for (int i = 2; QFileInfo::exists(candidate); ++i)
    candidate = stem + "-" + QString::number(i) + extension;
  return candidate;
}

}  // namespace

int runRender(const QStringList& arguments) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Render one image from a prompt with an SD 1.x, SD 2.x or SDXL checkpoint, or a video with a "
      "Wan 2.1 "
      "text-to-video model.");
  p.addHelpOption();
  const RenderParams defaults = defaultRenderParams();
  p.addOptions({
      {"model",
       "Checkpoint: a .safetensors file or a diffusers folder (default: Kiln's starter model).",
       "path"},
      {"prompt", "What to render (default: the default workflow's prompt).", "text"},
      {"negative", "What to avoid (negative prompt).", "text"},
      {"seed", QString("Seed of the initial noise (default %1).").arg(defaults.sampling.seed), "n"},
      {"steps",
       QString("Sampling steps (default %1; 4 for FLUX.1 schnell).").arg(defaults.sampling.steps),
       "n"},
      {"cfg",
       QString("Classifier-free guidance scale (default %1; 1 for FLUX.1, which is "
               "guidance-distilled).")
           .arg(defaults.sampling.cfg_scale),
       "x"},
      {"sampler",
       "Sampler: euler (default), euler_ancestral, heun, dpm_2, dpmpp_2m, dpmpp_2m_sde, dpmpp_sde, "
       "ddim, lcm, "
       "uni_pc or uni_pc_bh2.",
       "name"},
      {"scheduler",
       "Schedule of noise levels: normal (default), karras, exponential, simple, sgm_uniform, "
       "ddim_uniform or "
       "diffusers (the model's scheduler config as diffusers computes it).",
       "name"},
      {"width", "Image width in pixels (default: the model's native size).", "w"},
      {"height", "Image height in pixels (default: the model's native size).", "h"},
      {"original-size", "SDXL size conditioning: original WIDTHxHEIGHT (default: the output size).",
       "WxH"},
      {"crop", "SDXL size conditioning: crop TOP,LEFT (default 0,0).", "t,l"},
      {"aesthetic-score", "SDXL refiner: the prompt's aesthetic score (default 6).", "x"},
      {"negative-aesthetic-score",
       "SDXL refiner: the negative prompt's aesthetic score (default 2.5).", "x"},
      {"dtype",
       "Compute precision: auto (the default: bf16 on CPUs with bf16 instructions, else fp32), "
       "fp32, bf16 or "
       "fp16 (a GPU).",
       "type"},
      {"threads", "CPU threads (default: all cores).", "n"},
      {"lora",
       "A LoRA merged for this render: FILE[:STRENGTH[:TEXT_ENCODER_STRENGTH]] (strength default "
       "1; "
       "the text encoders take the first strength unless a second is given). STRENGTH may change "
       "over "
       "the steps: 1,40%=0.3 is 1 until 40% of the steps, then 0.3. Repeat to stack several.",
       "spec"},
      {"lora-mode",
       "How LoRAs reach the weights: auto (default: merge when the weights stay on the device, "
       "hook "
       "otherwise), merge, or hook.",
       "mode"},
      {"vae-tiling",
       "VAE decode and encode in tiles: auto (default: tiled only when the memory estimate says "
       "one "
       "piece would not fit), always, or never.",
       "mode"},
      {"tile-size",
       "VAE tile size in pixels (default: the largest that fits, or 512 with --vae-tiling always).",
       "pixels"},
      {"tile-overlap", "Overlap of neighbouring VAE tiles in pixels (default 64).", "pixels"},
      {"init-image",
       "Image-to-image: start from this picture (PNG, JPEG, EXR, TIFF, WebP ...), scaled and "
       "centre-"
       "cropped to --width/--height (default: its own size).",
       "file"},
      {"denoise", "Image-to-image strength: 0 keeps the picture, 1 repaints it all (default 1).",
       "x"},
      {"mask",
       "Inpainting: repaint where this image (the init image's size) is white, keep where it is "
       "black.",
       "file"},
      {"mask-from-alpha", "Inpainting: repaint where the init image is transparent."},
      {"mask-feather", "Blur the mask's edge over this many pixels (default 0).", "pixels"},
      {"frames",
       "Video models (Wan 2.1): frames to render, on the model's grid of 1 + 4n (others are "
       "snapped); 1 "
       "renders a still image. Default: 1 for an image --out, else 81.",
       "n"},
      {"fps", "Video frame rate stored with the video (default 16).", "n"},
      {"shift",
       "Video models: the flow shift of the noise schedule (default: the model's, 5 for Wan 2.1).",
       "x"},
      {"vae",
       "Models given as one transformer file (FLUX.1, Wan 2.1): its VAE (default: found in "
       "../vae, FLUX.1's as ae.safetensors).",
       "file"},
      {"clip-l",
       "FLUX.1 given as one transformer file: its CLIP-L text encoder (default: "
       "clip_l*.safetensors "
       "in ../text_encoders or ../clip).",
       "file"},
      {"t5",
       "FLUX.1 given as one transformer file: its T5 XXL text encoder (fp16 or fp8), with "
       "spiece.model beside it (default: t5*.safetensors in ../text_encoders or ../clip).",
       "file"},
      {"guidance",
       "FLUX.1 dev: the distilled guidance (default 3.5); --cfg then stays 1 (one model call a "
       "step).",
       "x"},
      {"text-encoder",
       "Video models given as one transformer file: its UMT5 text encoder, with spiece.model "
       "beside it "
       "(default: found in ../text_encoders).",
       "file"},
      {"out",
       "Output: an image (.png keeps the generation parameters), or for video models a video (.mp4 "
       "H.264, "
       ".webm VP9, .mov ProRes 422) or a folder of PNG frames (a name ending in '/'). Default: a "
       "new "
       "kiln-DATE-TIME.png (.mp4 with --frames above 1) in your pictures folder.",
       "file"},
  });
  addSessionOptions(p);
  if (!p.parse(arguments)) {
    std::fprintf(stderr, "kiln-cli render: %s\n", qPrintable(p.errorText()));
    return 2;
  }
  if (p.isSet("help")) {
    std::fputs(qPrintable(p.helpText()), stdout);
    return 0;
  }
  if (!p.positionalArguments().isEmpty()) {
    std::fprintf(stderr, "kiln-cli render: unexpected argument '%s'\n",
                 qPrintable(p.positionalArguments().first()));
    return 2;
  }
  RenderParams params;
  MemorySettings memory;
  try {
    params = parseParams(p);
    memory = parseMemory(p);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "kiln-cli render: %s\n", qPrintable(e.message));
    return 2;
  }
  QString out = p.value("out");
  if (!p.isSet("out")) {
    try {
      out = defaultOutputPath(params.video.frames > 1 ? ".mp4" : ".png");
    } catch (const UsageError& e) {
      std::fprintf(stderr, "kiln-cli render: %s\n", qPrintable(e.message));
      return 1;
    }
  } else if (out.isEmpty()) {
    std::fprintf(stderr, "kiln-cli render: --out needs a file name\n");
    return 2;
  }
  const QFileInfo out_info(out.endsWith('/') ? out.chopped(1)
                                             : out);  // a PNG folder's parent must exist
  if (!out_info.absoluteDir().exists()) {
    std::fprintf(stderr, "kiln-cli render: the output folder '%s' does not exist\n",
                 qPrintable(out_info.absolutePath()));
    return 2;
  }
  const bool quiet = p.isSet("quiet");
  const bool json = p.isSet("json-events");
  Job job;
  job.params = params;
  job.output_path = out.toStdString();
  const ProgressDisplay::Mode mode =
      quiet || json ? ProgressDisplay::Mode::Silent
                    : (::isatty(::fileno(stderr)) ? ProgressDisplay::Mode::Live
                                                  : ProgressDisplay::Mode::Lines);
  Event end;
  try {
    readImages(p, job.params);
    end = runJob(job, memory, mode, json, p.isSet("memory-report"));
  } catch (const Error& e) {  // parameters the engine refuses outright
    std::fprintf(stderr, "kiln-cli render: %s: %s\n", errorKindName(e.kind()), e.what());
    return 1;
  }
  if (end.type == EventType::JobFinished) {
    if (!quiet && !json) {
      for (const auto& notice : end.notices) std::fprintf(stderr, "note: %s\n", notice.c_str());
      const Image& img = end.outputs.at(0);
      if (videoFormatFor(out.toStdString()) != VideoFormat::Invalid)
        std::fprintf(stderr, "wrote %s (%dx%d video at %s fps, %s)\n", qPrintable(out), img.width,
                     img.height, formatNumber(job.params.video.fps).c_str(),
                     end.model_family.c_str());
      else
        std::fprintf(stderr, "wrote %s (%dx%d, %s)\n", qPrintable(out), img.width, img.height,
                     end.model_family.c_str());
    }
    if (!p.isSet("out") && !json)
      std::printf("%s\n", qPrintable(QFileInfo(out).absoluteFilePath()));
    return 0;
  }
  if (end.type == EventType::JobCancelled) {
    if (!json) std::fprintf(stderr, "kiln-cli render: interrupted; nothing was saved\n");
    return 130;
  }
  if (!json)
    std::fprintf(stderr, "kiln-cli render: %s: %s\n", errorKindName(end.error),
                 end.message.c_str());
  return 1;
}

}  // namespace kiln::cli
