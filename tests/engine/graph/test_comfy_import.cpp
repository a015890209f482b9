// ComfyUI workflows in both formats, written here as ComfyUI writes them: nodes, widgets
// and links map onto Kiln's nodes, model names resolve in ComfyUI and A1111 folder trees,
// what cannot map is listed, and an imported text-to-image graph draws what render draws.
#include <QTemporaryDir>
#include <QtTest>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "kiln/comfy_import.h"
#include "kiln/engine.h"
#include "kiln/error.h"
#include "kiln/render.h"
#include "ref_tensors.h"

namespace {

std::string tinyModel() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

// ComfyUI's default graph in its API format ("Save (API)", or a PNG's "prompt" chunk).
std::string apiWorkflow(const std::string& ckpt, const std::string& sampler = "euler",
                        const std::string& scheduler = "normal") {
  return R"({
  "3": {"inputs": {"seed": 5, "steps": 3, "cfg": 5, "sampler_name": ")" +
         sampler + R"(", "scheduler": ")" + scheduler +
         R"(", "denoise": 1, "model": ["4", 0], "positive": ["6", 0], "negative": ["7", 0],
        "latent_image": ["5", 0]}, "class_type": "KSampler", "_meta": {"title": "KSampler"}},
  "4": {"inputs": {"ckpt_name": ")" +
         ckpt + R"("}, "class_type": "CheckpointLoaderSimple",
        "_meta": {"title": "Load Checkpoint"}},
  "5": {"inputs": {"width": 64, "height": 64, "batch_size": 1}, "class_type": "EmptyLatentImage"},
  "6": {"inputs": {"text": "a red circle", "clip": ["4", 1]}, "class_type": "CLIPTextEncode",
        "_meta": {"title": "Positive"}},
  "7": {"inputs": {"text": "blurry", "clip": ["4", 1]}, "class_type": "CLIPTextEncode"},
  "8": {"inputs": {"samples": ["3", 0], "vae": ["4", 2]}, "class_type": "VAEDecode"},
  "9": {"inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}, "class_type": "SaveImage"}
})";
}

// The same graph in the UI format (a PNG's "workflow" chunk), with a reroute on the
// VAE link, the seed from a primitive node, a note, a muted upscaler and a LoRA.
std::string uiWorkflow() {
  return R"({"last_node_id": 14, "last_link_id": 20, "version": 0.4,
  "nodes": [
    {"id": 3, "type": "KSampler", "pos": [863, 186], "mode": 0,
     "inputs": [{"name": "model", "type": "MODEL", "link": 15}, {"name": "positive", "type": "CONDITIONING", "link": 4},
                {"name": "negative", "type": "CONDITIONING", "link": 6}, {"name": "latent_image", "type": "LATENT", "link": 2},
                {"name": "seed", "type": "INT", "link": 13, "widget": {"name": "seed"}}],
     "outputs": [{"name": "LATENT", "type": "LATENT", "links": [7], "slot_index": 0}],
     "widgets_values": [1, "randomize", 3, 5, "euler", "normal", 1]},
    {"id": 4, "type": "CheckpointLoaderSimple", "pos": [26, 474], "mode": 0,
     "outputs": [{"name": "MODEL", "links": [14]}, {"name": "CLIP", "links": [3, 5, 16]}, {"name": "VAE", "links": [11]}],
     "widgets_values": ["sd1/tiny.safetensors"]},
    {"id": 5, "type": "EmptyLatentImage", "pos": [473, 609], "mode": 0, "widgets_values": [64, 64, 1]},
    {"id": 6, "type": "CLIPTextEncode", "pos": [415, 186], "mode": 0, "title": "Positive",
     "inputs": [{"name": "clip", "type": "CLIP", "link": 17}], "widgets_values": ["a red circle"]},
    {"id": 7, "type": "CLIPTextEncode", "pos": [413, 389], "mode": 0,
     "inputs": [{"name": "clip", "type": "CLIP", "link": 5}], "widgets_values": ["blurry"]},
    {"id": 8, "type": "VAEDecode", "pos": [1209, 188], "mode": 0,
     "inputs": [{"name": "samples", "type": "LATENT", "link": 7}, {"name": "vae", "type": "VAE", "link": 12}]},
    {"id": 9, "type": "SaveImage", "pos": [1451, 189], "mode": 0,
     "inputs": [{"name": "images", "type": "IMAGE", "link": 9}], "widgets_values": ["ComfyUI"]},
    {"id": 10, "type": "Reroute", "pos": [1100, 500], "mode": 0,
     "inputs": [{"name": "", "type": "*", "link": 11}], "outputs": [{"name": "", "type": "VAE", "links": [12]}]},
    {"id": 11, "type": "PrimitiveNode", "pos": [600, 0], "mode": 0,
     "outputs": [{"name": "INT", "type": "INT", "links": [13], "widget": {"name": "seed"}}],
     "widgets_values": [5, "fixed"]},
    {"id": 12, "type": "Note", "pos": [0, 0], "mode": 0, "widgets_values": ["remember the seed"]},
    {"id": 13, "type": "UpscaleModelLoader", "pos": [0, 900], "mode": 2, "widgets_values": ["4x.pth"]},
    {"id": 14, "type": "LoraLoader", "pos": [200, 300], "mode": 0,
     "inputs": [{"name": "model", "type": "MODEL", "link": 14}, {"name": "clip", "type": "CLIP", "link": 16}],
     "outputs": [{"name": "MODEL", "links": [15]}, {"name": "CLIP", "links": [17]}],
     "widgets_values": ["style.safetensors", 0.7, 0.4]}
  ],
  "links": [[2, 5, 0, 3, 3, "LATENT"], [4, 6, 0, 3, 1, "CONDITIONING"], [5, 4, 1, 7, 0, "CLIP"],
            [6, 7, 0, 3, 2, "CONDITIONING"], [7, 3, 0, 8, 0, "LATENT"], [9, 8, 0, 9, 0, "IMAGE"],
            [11, 4, 2, 10, 0, "VAE"], [12, 10, 0, 8, 1, "VAE"], [13, 11, 0, 3, 4, "INT"],
            [14, 4, 0, 14, 0, "MODEL"], [15, 14, 0, 3, 0, "MODEL"], [16, 4, 1, 14, 1, "CLIP"],
            [17, 14, 1, 6, 0, "CLIP"]],
  "groups": [{"title": "Prompts", "bounding": [400, 150, 200, 300], "color": "#3f789e"},
             {"title": "Empty", "bounding": [5000, 5000, 10, 10]}, {"title": "Bad", "bounding": "x"}],
  "config": {}, "extra": {}})";
}

bool hasLine(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

class TestComfyImport : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  kiln::ModelFolders folders_;
  std::string ckpt_, lora_;

 private Q_SLOTS:
  // A ComfyUI tree (models/checkpoints/sd1/) and an A1111 tree (models/Lora/).
  void initTestCase() {
    namespace fs = std::filesystem;
    const fs::path comfy = fs::path(dir_.path().toStdString()) / "ComfyUI";
    const fs::path a1111 = fs::path(dir_.path().toStdString()) / "webui";
    fs::create_directories(comfy / "models/checkpoints/sd1");
    fs::create_directories(a1111 / "models/Lora");
    ckpt_ = (comfy / "models/checkpoints/sd1/tiny.safetensors").string();
    lora_ = (a1111 / "models/Lora/style.safetensors").string();
    fs::create_symlink(tinyModel(), ckpt_);
    // Its configuration (head counts) sits beside it, as it does beside the original.
    fs::create_symlink(fs::path(tinyModel()).parent_path() / "ldm_config.json",
                       comfy / "models/checkpoints/sd1/ldm_config.json");
    std::ofstream(lora_) << "x";
    folders_.roots = {comfy.string(), a1111.string()};
  }

  // ComfyUI's FLUX.1 nodes in the UI format: the split loaders become one LoadCheckpoint
  // with its parts (T5 told from CLIP-L by name), CLIPTextEncodeFlux a TextEncodeFlux, the
  // SamplerCustomAdvanced set (RandomNoise's seed saved with and without its
  // control_after_generate widget) a Sampler; what cannot fold is reported, not guessed.
  void mapsFluxWorkflows() {
    const std::string ui = R"({"nodes": [
      {"id": 1, "type": "UNETLoader", "widgets_values": ["flux1-dev.safetensors", "fp8_e4m3fn"]},
      {"id": 2, "type": "DualCLIPLoader", "widgets_values": ["clip_l.safetensors", "t5xxl_fp8_e4m3fn.safetensors", "flux"]},
      {"id": 3, "type": "CLIPTextEncodeFlux", "widgets_values": ["a fox", "a red fox in snow", 3.0],
       "inputs": [{"name": "clip", "link": 1}]},
      {"id": 4, "type": "RandomNoise", "widgets_values": [42]},
      {"id": 5, "type": "KSamplerSelect", "widgets_values": ["euler"]},
      {"id": 6, "type": "BasicScheduler", "widgets_values": ["simple", 4, 1.0],
       "inputs": [{"name": "model", "link": 2}]},
      {"id": 7, "type": "BasicGuider", "inputs": [{"name": "model", "link": 3}, {"name": "conditioning", "link": 4}]},
      {"id": 8, "type": "EmptySD3LatentImage", "widgets_values": [1024, 768, 1]},
      {"id": 9, "type": "SamplerCustomAdvanced", "inputs": [{"name": "noise", "link": 5},
       {"name": "guider", "link": 6}, {"name": "sampler", "link": 7}, {"name": "sigmas", "link": 8},
       {"name": "latent_image", "link": 9}]},
      {"id": 10, "type": "VAEDecode", "inputs": [{"name": "samples", "link": 10}, {"name": "vae", "link": 11}]},
      {"id": 11, "type": "PreviewImage", "inputs": [{"name": "images", "link": 12}]},
      {"id": 12, "type": "VAELoader", "widgets_values": ["ae.safetensors"]}],
     "links": [[1, 2, 0, 3, 0, "CLIP"], [2, 1, 0, 6, 0, "MODEL"], [3, 1, 0, 7, 0, "MODEL"],
               [4, 3, 0, 7, 1, "CONDITIONING"], [5, 4, 0, 9, 0, "NOISE"], [6, 7, 0, 9, 1, "GUIDER"],
               [7, 5, 0, 9, 2, "SAMPLER"], [8, 6, 0, 9, 3, "SIGMAS"], [9, 8, 0, 9, 4, "LATENT"],
               [10, 9, 1, 10, 0, "LATENT"], [11, 12, 0, 10, 1, "VAE"], [12, 10, 0, 11, 0, "IMAGE"]]})";
    const kiln::ComfyImport im = kiln::importComfyWorkflow(ui, folders_);
    const kiln::Workflow& w = im.workflow;
    // loader, prompt, latent, sampler, decode, preview, VAE
    QCOMPARE(w.nodes.size(), std::size_t{7});
    QVERIFY(std::get<std::string>(w.node("1")->params.at("vae_name")).ends_with("ae.safetensors"));
    const kiln::WorkflowNode* loader = w.node("1");
    QCOMPARE(loader->type, std::string("LoadCheckpoint"));
    QVERIFY(std::get<std::string>(loader->params.at("text_encoder_2_name"))
                .ends_with("t5xxl_fp8_e4m3fn.safetensors"));
    QVERIFY(std::get<std::string>(loader->params.at("text_encoder_name"))
                .ends_with("clip_l.safetensors"));
    const kiln::WorkflowNode* prompt = w.node("3");
    QCOMPARE(prompt->type, std::string("TextEncodeFlux"));
    QCOMPARE(std::get<std::string>(prompt->params.at("t5xxl")), std::string("a red fox in snow"));
    QCOMPARE(std::get<double>(prompt->params.at("guidance")), 3.0);
    const kiln::WorkflowNode* sampler = w.node("9");
    QCOMPARE(sampler->type, std::string("Sampler"));
    QCOMPARE(std::get<int64_t>(sampler->params.at("seed")), int64_t{42});
    QCOMPARE(std::get<int64_t>(sampler->params.at("steps")), int64_t{4});
    QCOMPARE(std::get<std::string>(sampler->params.at("scheduler")), std::string("simple"));
    QCOMPARE(std::get<double>(sampler->params.at("cfg")), 1.0);
    std::map<std::string, std::string> into;  // input -> source node
    for (const auto& l : w.links)
      if (l.to_node == "9") into[l.to_input] = l.from_node + "." + l.from_output;
    QCOMPARE(into["model"], std::string("1.MODEL"));
    QCOMPARE(into["positive"], std::string("3.CONDITIONING"));
    QCOMPARE(into["negative"], std::string("3.CONDITIONING"));
    QCOMPARE(into["latent_image"], std::string("8.LATENT"));
    bool clip_from_loader = false;
    for (const auto& l : w.links)
      clip_from_loader = clip_from_loader || (l.from_node == "1" && l.from_output == "CLIP");
    QVERIFY(clip_from_loader);
    const auto problems = kiln::validateWorkflow(w, kiln::builtinNodeSchemas());
    QVERIFY2(problems.empty(), kiln::describeProblems(problems).c_str());
    // the model files are not in this tree, and weight_dtype is not applied: both said
    QVERIFY(std::any_of(im.unmapped.begin(), im.unmapped.end(), [](const std::string& u) {
      return u.find("weight_dtype") != std::string::npos;
    }));

    // A text encoder loader with no UNETLoader, and sigmas Kiln cannot fold, are reported.
    const std::string api = R"({
      "1": {"class_type": "DualCLIPLoader", "inputs": {"clip_name1": "a.safetensors", "clip_name2": "b.safetensors", "type": "flux"}},
      "2": {"class_type": "KarrasScheduler", "inputs": {"steps": 4}},
      "3": {"class_type": "SamplerCustomAdvanced", "inputs": {"sigmas": ["2", 0]}}})";
    const kiln::ComfyImport bad = kiln::importComfyWorkflow(api, folders_);
    const std::string report = joined(bad.unmapped);
    QVERIFY2(report.find("no UNETLoader") != std::string::npos, report.c_str());
    QVERIFY2(report.find("cannot fold") != std::string::npos, report.c_str());
    QVERIFY(bad.workflow.nodes.empty());
  }

  void importsTheApiFormat() {
    QVERIFY(kiln::looksLikeComfyWorkflow(apiWorkflow("sd1/tiny.safetensors")));
    const kiln::ComfyImport im =
        kiln::importComfyWorkflow(apiWorkflow("sd1/tiny.safetensors"), folders_);
    QCOMPARE(im.format, std::string("api"));
    QVERIFY2(im.unmapped.empty(), joined(im.unmapped).c_str());
    const kiln::Workflow& w = im.workflow;
    QCOMPARE(w.nodes.size(), std::size_t{7});
    QCOMPARE(w.links.size(), std::size_t{9});
    QCOMPARE(w.node("4")->type, std::string("LoadCheckpoint"));
    QCOMPARE(std::get<std::string>(w.node("4")->params.at("ckpt_name")), ckpt_);
    QCOMPARE(w.node("6")->title, std::string("Positive"));
    QCOMPARE(std::get<int64_t>(w.node("3")->params.at("seed")), int64_t{5});
    const auto problems = kiln::validateWorkflow(w, kiln::builtinNodeSchemas());
    QVERIFY2(problems.empty(), kiln::describeProblems(problems).c_str());
    bool vae_link = false;
    for (const auto& l : w.links)
      vae_link = vae_link || (l.from_node == "4" && l.from_output == "VAE" && l.to_node == "8");
    QVERIFY(vae_link);
  }

  // Sampler and schedule names Kiln lacks are kept and reported, and validation names them.
  void reportsSamplersKilnLacks() {
    const kiln::ComfyImport im = kiln::importComfyWorkflow(
        apiWorkflow("missing.safetensors", "euler_cfg_pp", "beta"), folders_);
    QVERIFY2(
        hasLine(
            im.unmapped,
            "node 3 (KSampler): sampler 'euler_cfg_pp' is not one of Kiln's samplers (euler, "
            "euler_ancestral, heun, dpm_2, dpmpp_2m, dpmpp_2m_sde, dpmpp_sde, ddim, lcm, uni_pc, "
            "uni_pc_bh2)"),
        joined(im.unmapped).c_str());
    QVERIFY(hasLine(im.unmapped, "scheduler 'beta' is not one of Kiln's schedules"));
    QVERIFY(hasLine(im.unmapped, "'missing.safetensors' was not found in the model folders"));
    const std::string problems =
        kiln::describeProblems(kiln::validateWorkflow(im.workflow, kiln::builtinNodeSchemas()));
    QVERIFY2(problems.find(
                 "'sampler_name' is 'euler_cfg_pp', which is not one of: euler, euler_ancestral") !=
                 std::string::npos,
             problems.c_str());
    // The ones Kiln has come through as they are.
    const kiln::ComfyImport known = kiln::importComfyWorkflow(
        apiWorkflow("sd1/tiny.safetensors", "dpmpp_2m_sde", "karras"), folders_);
    QVERIFY2(known.unmapped.empty(), joined(known.unmapped).c_str());
    QCOMPARE(std::get<std::string>(known.workflow.node("3")->params.at("sampler_name")),
             std::string("dpmpp_2m_sde"));
    QCOMPARE(std::get<std::string>(known.workflow.node("3")->params.at("scheduler")),
             std::string("karras"));
  }

  void findsModelsInInvokeAiTrees() {
    namespace fs = std::filesystem;
    const fs::path invoke = fs::path(dir_.path().toStdString()) / "invokeai";
    fs::create_directories(invoke / "models/sdxl/main");
    fs::create_directories(invoke / "models/sd-1/vae");
    std::ofstream(invoke / "invokeai.yaml") << "schema_version: 4.0.2\n";
    std::ofstream(invoke / "models/sdxl/main/juggernaut.safetensors") << "x";
    std::ofstream(invoke / "models/sd-1/vae/ft-mse.safetensors") << "x";
    kiln::ModelFolders folders;
    folders.roots = {invoke.string()};
    std::string api = apiWorkflow("juggernaut.safetensors");
    api.insert(
        api.rfind('}'),
        R"(, "10": {"inputs": {"vae_name": "ft-mse.safetensors"}, "class_type": "VAELoader"})");
    const kiln::ComfyImport im = kiln::importComfyWorkflow(api, folders);
    QCOMPARE(std::get<std::string>(im.workflow.node("4")->params.at("ckpt_name")),
             (invoke / "models/sdxl/main/juggernaut.safetensors").string());
    QCOMPARE(std::get<std::string>(im.workflow.node("10")->params.at("vae_name")),
             (invoke / "models/sd-1/vae/ft-mse.safetensors").string());
  }

  void importsTheUiFormat() {
    const kiln::ComfyImport im = kiln::importComfyWorkflow(uiWorkflow(), folders_);
    QCOMPARE(im.format, std::string("ui"));
    const kiln::Workflow& w = im.workflow;
    QCOMPARE(w.nodes.size(),
             std::size_t{8});  // the reroute, primitive, note and muted node are gone
    QVERIFY2(
        hasLine(im.unmapped, "node 13 (UpscaleModelLoader) is muted in ComfyUI and was left out"),
        joined(im.unmapped).c_str());
    QCOMPARE(im.unmapped.size(), std::size_t{1});
    QCOMPARE(std::get<int64_t>(w.node("3")->params.at("seed")), int64_t{5});  // from the primitive
    QCOMPARE(std::get<int64_t>(w.node("3")->params.at("steps")), int64_t{3});
    QCOMPARE(std::get<std::string>(w.node("14")->params.at("lora_name")), lora_);
    QCOMPARE(std::get<double>(w.node("14")->params.at("strength_clip")), 0.4);
    QCOMPARE(w.node("8")->x, 1209.0);
    // A group holds the nodes inside its rectangle; an empty or unreadable one is dropped.
    QCOMPARE(w.groups.size(), std::size_t{1});
    QCOMPARE(w.groups[0].title, std::string("Prompts"));
    QCOMPARE(w.groups[0].color, std::string("#3f789e"));
    QCOMPARE(w.groups[0].nodes, (std::vector<std::string>{"6", "7"}));
    const auto problems = kiln::validateWorkflow(w, kiln::builtinNodeSchemas());
    QVERIFY2(problems.empty(), kiln::describeProblems(problems).c_str());
    bool through_reroute = false, lora_clip = false;
    for (const auto& l : w.links) {
      through_reroute =
          through_reroute || (l.from_node == "4" && l.from_output == "VAE" && l.to_node == "8");
      lora_clip = lora_clip || (l.from_node == "14" && l.from_output == "CLIP" && l.to_node == "6");
    }
    QVERIFY(through_reroute);
    QVERIFY(lora_clip);
  }

  // Nodes Kiln lacks are listed and left out; what reads them is left unlinked, which
  // validation reports; partial schedules and tiled decodes say what they became.
  void listsWhatCannotMap() {
    std::string api = apiWorkflow("sd1/tiny.safetensors");
    const auto replace = [&api](const std::string& from, const std::string& to) {
      const auto at = api.find(from);
      QVERIFY2(at != std::string::npos, from.c_str());
      api.replace(at, from.size(), to);
    };
    replace("\"VAEDecode\"", "\"VAEDecodeTiled\"");
    replace("\"samples\": [\"3\", 0]",
            "\"samples\": [\"3\", 0], \"tile_size\": 256, \"overlap\": 32");
    replace("\"class_type\": \"KSampler\"", "\"class_type\": \"KSamplerAdvanced\"");
    replace("\"seed\": 5",
            "\"noise_seed\": 5, \"add_noise\": \"enable\", \"start_at_step\": 1, "
            "\"end_at_step\": 10000, \"return_with_leftover_noise\": \"disable\"");
    replace("\"latent_image\": [\"5\", 0]", "\"latent_image\": [\"10\", 0]");
    api.insert(
        api.rfind('}'),
        R"(, "10": {"inputs": {"upscale_method": "nearest-exact", "scale_by": 1.5, "samples": ["5", 0]}, "class_type": "LatentUpscaleBy"})");
    const kiln::ComfyImport im = kiln::importComfyWorkflow(api, folders_);
    QVERIFY2(hasLine(im.unmapped,
                     "node 10 (LatentUpscaleBy): Kiln has no node of this type; it was left out"),
             joined(im.unmapped).c_str());
    QVERIFY2(
        hasLine(im.unmapped,
                "node 3 (KSamplerAdvanced): start_at_step 1 of 3 becomes denoise 0.666667: the "
                "sampler re-noises"),
        joined(im.unmapped).c_str());
    QCOMPARE(std::get<double>(im.workflow.node("3")->params.at("denoise")), 2.0 / 3.0);
    const kiln::Workflow& w = im.workflow;
    QCOMPARE(std::get<std::string>(w.node("8")->params.at("tiling")), std::string("always"));
    QCOMPARE(std::get<int64_t>(w.node("8")->params.at("tile_size")), int64_t{256});
    QCOMPARE(std::get<int64_t>(w.node("8")->params.at("tile_overlap")), int64_t{32});
    QCOMPARE(std::get<int64_t>(w.node("3")->params.at("seed")), int64_t{5});
    const std::string problems =
        kiln::describeProblems(kiln::validateWorkflow(w, kiln::builtinNodeSchemas()));
    QVERIFY2(problems.find("node 3: Sampler: input 'latent_image' (LATENT) is not linked") !=
                 std::string::npos,
             problems.c_str());
  }

  // An SDXL refiner's text node becomes TextEncode with its aesthetic score; a refiner's
  // KSamplerAdvanced that stops early says so.
  void mapsRefinerNodes() {
    std::string api = apiWorkflow("sd1/tiny.safetensors");
    const auto replace = [&api](const std::string& from, const std::string& to) {
      const auto at = api.find(from);
      QVERIFY2(at != std::string::npos, from.c_str());
      api.replace(at, from.size(), to);
    };
    replace("\"text\": \"blurry\", \"clip\": [\"4\", 1]}, \"class_type\": \"CLIPTextEncode\"",
            "\"text\": \"blurry\", \"ascore\": 2.5, \"width\": 1024, \"height\": 1024, \"clip\": "
            "[\"4\", 1]}, "
            "\"class_type\": \"CLIPTextEncodeSDXLRefiner\"");
    replace("\"class_type\": \"KSampler\"", "\"class_type\": \"KSamplerAdvanced\"");
    replace("\"seed\": 5",
            "\"noise_seed\": 5, \"add_noise\": \"enable\", \"start_at_step\": 0, "
            "\"end_at_step\": 2, \"return_with_leftover_noise\": \"enable\"");
    const kiln::ComfyImport im = kiln::importComfyWorkflow(api, folders_);
    const kiln::Workflow& w = im.workflow;
    QCOMPARE(w.node("7")->type, std::string("TextEncode"));
    QCOMPARE(std::get<std::string>(w.node("7")->params.at("text")), std::string("blurry"));
    QCOMPARE(std::get<double>(w.node("7")->params.at("aesthetic_score")), 2.5);
    QVERIFY2(hasLine(im.unmapped,
                     "node 3 (KSamplerAdvanced): end_at_step (stopping with leftover noise) is not "
                     "supported"),
             joined(im.unmapped).c_str());
    QVERIFY(!w.node("3")->params.count("denoise"));
    const auto problems = kiln::validateWorkflow(w, kiln::builtinNodeSchemas());
    QVERIFY2(problems.empty(), kiln::describeProblems(problems).c_str());
  }

  // VAELoader becomes LoadVAE, its file found under models/vae.
  void mapsVaeLoader() {
    namespace fs = std::filesystem;
    const fs::path vae = fs::path(folders_.roots.at(0)) / "models/vae/ft-mse.safetensors";
    fs::create_directories(vae.parent_path());
    std::ofstream(vae) << "x";
    std::string api = apiWorkflow("sd1/tiny.safetensors");
    api.replace(api.find("\"vae\": [\"4\", 2]"), 15, "\"vae\": [\"10\", 0]");
    api.insert(
        api.rfind('}'),
        R"(, "10": {"inputs": {"vae_name": "ft-mse.safetensors"}, "class_type": "VAELoader"})");
    const kiln::ComfyImport im = kiln::importComfyWorkflow(api, folders_);
    QVERIFY2(im.unmapped.empty(), joined(im.unmapped).c_str());
    QCOMPARE(im.workflow.node("10")->type, std::string("LoadVAE"));
    QCOMPARE(std::get<std::string>(im.workflow.node("10")->params.at("vae_name")), vae.string());
    bool linked = false;
    for (const auto& l : im.workflow.links)
      linked = linked || (l.from_node == "10" && l.to_node == "8" && l.to_input == "vae");
    QVERIFY(linked);
    QVERIFY(kiln::validateWorkflow(im.workflow, kiln::builtinNodeSchemas()).empty());
  }

  void refusesOtherText() {
    QVERIFY(!kiln::looksLikeComfyWorkflow(R"({"kiln_workflow": 1, "nodes": [], "links": []})"));
    QVERIFY(!kiln::looksLikeComfyWorkflow("not json"));
    for (const char* text : {"[1]", R"({"a": 1})", "{", R"({"nodes": [{"id": 1}], "links": []})"}) {
      try {
        (void)kiln::importComfyWorkflow(text, folders_);
        QFAIL(text);
      } catch (const kiln::Error& e) {
        QCOMPARE(e.kind(), kiln::ErrorKind::InvalidWorkflow);
      }
    }
  }

  // Imported and run: the picture render draws with the same settings.
  void importedGraphDrawsWhatRenderDraws() {
    kiln::Workflow w =
        kiln::importComfyWorkflow(apiWorkflow("sd1/tiny.safetensors"), folders_).workflow;
    std::mutex mutex;
    std::condition_variable done;
    kiln::Event end;
    kiln::EngineOptions o;
    o.sink = [&](const kiln::Event& e) {
      if (e.type != kiln::EventType::JobFinished && e.type != kiln::EventType::JobFailed) return;
      std::lock_guard<std::mutex> lock(mutex);
      end = e;
      done.notify_all();
    };
    o.write_image = [](const std::string& path, const kiln::Image&) {
      std::ofstream(path) << "image";
    };
    kiln::Engine engine(o);
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(std::move(w));
    job.output_dir = dir_.filePath("out").toStdString();
    engine.submit(job);
    std::unique_lock<std::mutex> lock(mutex);
    QVERIFY(done.wait_for(lock, std::chrono::seconds(300),
                          [&] { return end.type != kiln::EventType::Invalid; }));
    QVERIFY2(end.type == kiln::EventType::JobFinished, end.message.c_str());
    QVERIFY(QString::fromStdString(end.output_paths.at(0)).endsWith("/ComfyUI-00001.png"));
    kiln::RenderParams p;
    p.model.path = tinyModel();
    p.prompt.text = "a red circle";
    p.prompt.negative = "blurry";
    p.sampling.seed = 5;
    p.sampling.steps = 3;
    p.sampling.cfg_scale = 5;
    p.size.width = 64;
    p.size.height = 64;
    const kiln::Image want = kiln::render(p).image;
    const kiln::Image& got = end.outputs.at(0);
    QCOMPARE(got.pixels.size(), want.pixels.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.pixels.size(); ++i)
      worst = std::max(worst, double(std::abs(got.pixels[i] - want.pixels[i])));
    QVERIFY2(worst < 1e-4, qPrintable(QString::number(worst)));
  }
};

QTEST_GUILESS_MAIN(TestComfyImport)
#include "test_comfy_import.moc"
