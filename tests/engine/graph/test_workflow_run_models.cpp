// Workflow jobs with the model-side nodes: the SDXL refiner, textual-inversion embeddings
// from the engine's folders, LoRA nodes that change the picture and come off, LoadVAE, and
// inpainting through VAEEncode with a mask.
#include "workflow_run_fixture.h"

using namespace workflow_run_test;

// SDXL base then refiner: the refiner's Sampler takes the base Sampler's latent and
// repaints part of it (denoise), with each prompt's aesthetic score.
void TestWorkflowRun::refinesWithAnSdxlRefiner() {
  const QString refiner = dir_.filePath("tiny_refiner.safetensors");
  kiln::testing::writeSdxlRefiner(refiner);
  const std::string base =
      kiln::testing::conformancePath("sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors");
  const auto workflow = [&](double negative_score, const std::string& refined_latent) {
    kiln::Workflow w;
    w.nodes = {
        {"ckpt", "LoadCheckpoint", {{"ckpt_name", base}}, 0, 0, ""},
        {"pos", "TextEncode", {{"text", std::string("a red circle")}}, 0, 0, ""},
        {"neg", "TextEncode", {{"text", std::string("blurry")}}, 0, 0, ""},
        {"latent", "EmptyLatent", {{"width", int64_t{64}}, {"height", int64_t{64}}}, 0, 0, ""},
        {"sampler",
         "Sampler",
         {{"seed", int64_t{3}}, {"steps", int64_t{4}}, {"cfg", 5.0}},
         0,
         0,
         ""},
        {"refiner", "LoadCheckpoint", {{"ckpt_name", refiner.toStdString()}}, 0, 0, ""},
        {"rpos",
         "TextEncode",
         {{"text", std::string("a red circle")}, {"aesthetic_score", 6.0}},
         0,
         0,
         ""},
        {"rneg",
         "TextEncode",
         {{"text", std::string("blurry")}, {"aesthetic_score", negative_score}},
         0,
         0,
         ""},
        {"rsampler",
         "Sampler",
         {{"seed", int64_t{3}}, {"steps", int64_t{4}}, {"cfg", 5.0}, {"denoise", 0.5}},
         0,
         0,
         ""},
        {"decode", "VAEDecode", {}, 0, 0, ""},
        {"base_decode", "VAEDecode", {}, 0, 0, ""},
        {"save", "SaveImage", {{"filename_prefix", std::string("refined")}}, 0, 0, ""},
        {"save_base", "SaveImage", {{"filename_prefix", std::string("base")}}, 0, 0, ""}};
    w.links = {{"ckpt", "CLIP", "pos", "clip"},
               {"ckpt", "CLIP", "neg", "clip"},
               {"ckpt", "MODEL", "sampler", "model"},
               {"pos", "CONDITIONING", "sampler", "positive"},
               {"neg", "CONDITIONING", "sampler", "negative"},
               {"latent", "LATENT", "sampler", "latent_image"},
               {"refiner", "CLIP", "rpos", "clip"},
               {"refiner", "CLIP", "rneg", "clip"},
               {"refiner", "MODEL", "rsampler", "model"},
               {"rpos", "CONDITIONING", "rsampler", "positive"},
               {"rneg", "CONDITIONING", "rsampler", "negative"},
               {refined_latent, "LATENT", "rsampler", "latent_image"},
               {"rsampler", "LATENT", "decode", "samples"},
               {"refiner", "VAE", "decode", "vae"},
               {"decode", "IMAGE", "save", "images"},
               {"sampler", "LATENT", "base_decode", "samples"},
               {"ckpt", "VAE", "base_decode", "vae"},
               {"base_decode", "IMAGE", "save_base", "images"}};
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    if (end.type != EventType::JobFinished) throw std::runtime_error(end.message);
    if (end.outputs.size() != 2) throw std::runtime_error("expected two pictures");
    // The refined picture names the refiner.
    const bool first_refined =
        end.outputs[0].text.at("parameters").find("tiny_refiner") != std::string::npos;
    return first_refined ? std::make_pair(end.outputs[0], end.outputs[1])
                         : std::make_pair(end.outputs[1], end.outputs[0]);
  };
  try {
    const auto [refined, base_picture] = workflow(2.5, "sampler");
    QVERIFY2(refined.text.at("parameters").find("Denoising strength: 0.5") != std::string::npos,
             refined.text.at("parameters").c_str());
    QVERIFY2(refined.text.at("parameters").find("Model: tiny_refiner") != std::string::npos,
             refined.text.at("parameters").c_str());
    const double refined_from_base = maxDiff(refined, base_picture);
    QVERIFY(refined_from_base > 1e-3);  // the refiner changed it
    // The negative's score reaches the model (a small effect in the tiny model, whose
    // size-id weights are small; without it the pictures would be bit-identical).
    const double score_effect = maxDiff(workflow(6.0, "sampler").first, refined);
    QVERIFY2(score_effect > 1e-5, qPrintable(QString::number(score_effect)));
    // From an empty latent the refiner draws from noise alone, further from the base's.
    const double drawn_from_base = maxDiff(workflow(2.5, "latent").first, base_picture);
    QVERIFY2(refined_from_base < drawn_from_base,
             qPrintable(QString("%1 vs %2").arg(refined_from_base).arg(drawn_from_base)));
  } catch (const std::exception& e) {
    QFAIL(e.what());
  }
}

// The engine's embeddings folders reach TextEncode; an encoding cached before an
// embedding file appeared is not reused once it has.
void TestWorkflowRun::embeddingsFromTheEngineFolders() {
  QTemporaryDir folder;
  Recorder rec;
  kiln::EngineOptions o;
  o.sink = [&rec](const kiln::Event& e) { rec(e); };
  o.write_image = [](const std::string& path, const kiln::Image&) {
    std::ofstream(path) << "image";
  };
  o.embedding_dirs = {folder.path().toStdString()};
  kiln::Engine engine(o);
  kiln::Workflow w = textToImage(2);
  w.node("pos")->params["text"] = std::string("a redstar");
  const auto run = [&] {
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    job.output_dir = dir_.path().toStdString();
    const kiln::JobId id = engine.submit(std::move(job));
    const kiln::Event end = rec.waitEnd(id);
    if (end.type != EventType::JobFinished) throw std::runtime_error(end.message);
    return std::make_pair(id, end.outputs.at(0));
  };
  kiln::RenderParams p = sameAsRender(2);
  try {
    const auto [first_id, plain] = run();
    p.prompt.text = "a redstar";
    QVERIFY(maxDiff(plain, kiln::render(p).image) < 1e-4);  // no such embedding yet: a word
    // "redstar" as the token vectors of "red star".
    const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
    const at::Tensor table =
        kiln::tensor_io::viewStored(
            {file,
             file->find(
                 "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight")})
            .to(at::kFloat);
    const auto tokenizer = kiln::models::ClipTokenizer::fromVocabFile(
        kiln::core::findDataFile("bpe_simple_vocab_16e6.txt.gz"));
    const at::Tensor rows = table
                                .index_select(0, at::tensor(tokenizer.encode("red star"),
                                                            at::TensorOptions().dtype(at::kLong)))
                                .contiguous();
    std::vector<uint8_t> bytes(rows.nbytes());
    std::memcpy(bytes.data(), rows.data_ptr(), rows.nbytes());
    kiln::tensor_io::writeSafetensors(
        folder.filePath("redstar.safetensors").toStdString(),
        {{"emb_params", kiln::tensor_io::DType::F32, {2, rows.size(1)}, bytes}});
    const auto [second_id, embedded] = run();
    QCOMPARE(rec.states(second_id).at("pos"), NodeState::Done);  // encoded again, not cached
    p.prompt.text = "a red star";
    const double diff = maxDiff(embedded, kiln::render(p).image);
    QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
    const auto [third_id, again] = run();
    QCOMPARE(rec.states(third_id).at("pos"), NodeState::Cached);  // nothing changed since
    QVERIFY(maxDiff(again, embedded) == 0);
  } catch (const std::exception& e) {
    QFAIL(e.what());
  }
}

// Image-to-image with a mask from the picture's transparency: the opaque half comes
// back exactly, the transparent half is repainted.
void TestWorkflowRun::inpaintsThroughVaeEncode() {
  const kiln::Image base = kiln::render(sameAsRender(3)).image;
  kiln::Image rgba = base;
  rgba.channels = 4;
  rgba.pixels.clear();
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      for (int ch = 0; ch < 3; ++ch)
        rgba.pixels.push_back(base.pixels[static_cast<std::size_t>((y * 64 + x) * 3 + ch)]);
      rgba.pixels.push_back(x < 32 ? 0.0f : 1.0f);
    }
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    files_["/pictures/holed.png"] = rgba;
  }
  kiln::Workflow w = textToImage(11);
  w.nodes.push_back(
      {"load", "LoadImage", {{"image", std::string("/pictures/holed.png")}}, 0, 0, ""});
  w.nodes.push_back({"encode", "VAEEncode", {}, 0, 0, ""});
  w.nodes.push_back({"show", "PreviewImage", {}, 0, 0, ""});
  w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
  w.links.push_back({"load", "IMAGE", "encode", "pixels"});
  w.links.push_back({"load", "MASK", "encode", "mask"});
  w.links.push_back({"ckpt", "VAE", "encode", "vae"});
  w.links.push_back({"decode", "IMAGE", "show", "images"});
  w.nodes.erase(w.nodes.begin() + 6);  // no SaveImage: the preview is the output
  w.links.erase(w.links.begin() + 8);
  const kiln::JobId id = submit(w);
  const kiln::Event end = rec_.waitEnd(id);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(end.outputs.size(), std::size_t{1});
  QVERIFY(end.output_paths.empty());
  QVERIFY(!rec_.states(id).count("latent"));  // not planned: nothing reads it
  const kiln::Image& out = end.outputs[0];
  double kept = 0, repainted = 0;
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x)
      for (int ch = 0; ch < 3; ++ch) {
        const auto i = static_cast<std::size_t>((y * 64 + x) * 3 + ch);
        const double d = std::abs(out.pixels[i] - base.pixels[i]);
        if (x < 32)
          repainted = std::max(repainted, d);
        else
          kept = std::max(kept, d);
      }
  QVERIFY2(kept < 1e-6, qPrintable(QString::number(kept)));
  QVERIFY2(repainted > 0.05, qPrintable(QString::number(repainted)));
}

// A LoRA node changes the picture; the same graph without it draws the original again.
void TestWorkflowRun::loraNodeAppliesAndComesOff() {
  const std::string lora = dir_.filePath("style.safetensors").toStdString();
  at::manual_seed(5);
  const std::string m = "lora_unet_input_blocks_1_1_transformer_blocks_0_attn1_to_q";
  kiln::testing::writeTensors(lora, {{m + ".lora_down.weight", at::randn({4, 32})},
                                     {m + ".lora_up.weight", at::randn({32, 4})},
                                     {m + ".alpha", at::full({}, 4.0)}});
  kiln::Workflow w = textToImage(4);
  w.nodes.push_back({"lora", "LoadLoRA", {{"lora_name", lora}, {"strength_model", 1.0}}, 0, 0, ""});
  w.links[2] = {"lora", "MODEL", "sampler", "model"};
  w.links.push_back({"ckpt", "MODEL", "lora", "model"});
  w.links.push_back({"ckpt", "CLIP", "lora", "clip"});
  const kiln::JobId styled = submit(w);
  const kiln::Event a = rec_.waitEnd(styled);
  QVERIFY2(a.type == EventType::JobFinished, a.message.c_str());
  bool reported = false;
  for (const auto& n : a.notices)
    reported = reported || n.find("applied 1 of 1 modules") != std::string::npos;
  QVERIFY(reported);
  const kiln::Image plain = kiln::render(sameAsRender(4)).image;
  QVERIFY(maxDiff(a.outputs[0], plain) > 1e-3);
  const kiln::JobId back = submit(textToImage(4));
  const kiln::Event b = rec_.waitEnd(back);
  QCOMPARE(b.type, EventType::JobFinished);
  QVERIFY2(maxDiff(b.outputs[0], plain) < 1e-4,
           qPrintable(QString::number(maxDiff(b.outputs[0], plain))));
}

// LoadVAE: the checkpoint's VAE saved as a file of its own (original keys without the
// prefix) and the diffusers VAE beside the conformance checkpoint decode what the
// checkpoint's VAE decodes; image-to-image through the file's VAE matches too; a file
// with no VAE is refused by the node.
void TestWorkflowRun::loadVaeDecodesLikeTheCheckpointsVae() {
  const std::string vae_path = dir_.filePath("vae.safetensors").toStdString();
  {
    const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
    kiln::testing::NamedTensors tensors;
    const std::string prefix = "first_stage_model.";
    for (const auto& info : file->tensors())
      if (info.name.rfind(prefix, 0) == 0)
        tensors.push_back({info.name.substr(prefix.size()),
                           kiln::tensor_io::viewStored({file, &info}).to(at::kFloat)});
    QVERIFY(tensors.size() > 50);
    kiln::testing::writeTensors(vae_path, tensors);
    // The same VAE with its output shifted: proof that the file's weights do the decode.
    for (auto& [name, t] : tensors)
      if (name == "decoder.conv_out.bias") t = t + 0.2;
    kiln::testing::writeTensors(dir_.filePath("shifted-vae.safetensors").toStdString(), tensors);
  }
  const kiln::Image reference = [&] {
    const kiln::JobId id = submit(textToImage(13));
    const kiln::Event end = rec_.waitEnd(id);
    return end.outputs.at(0);
  }();
  const std::string diffusers =
      kiln::testing::conformancePath("sd-tiny-1234/sd1/vae/diffusion_pytorch_model.safetensors");
  for (const std::string& file : {vae_path, diffusers}) {
    kiln::Workflow w = textToImage(13);
    w.nodes.push_back({"vae", "LoadVAE", {{"vae_name", file}}, 0, 0, ""});
    w.links[7] = {"vae", "VAE", "decode", "vae"};
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    QVERIFY2(end.type == EventType::JobFinished, (file + ": " + end.message).c_str());
    QCOMPARE(rec_.states(id).at("sampler"), NodeState::Cached);  // only the decode differs
    const double diff = maxDiff(end.outputs.at(0), reference);
    QVERIFY2(diff < 1e-5,
             qPrintable(QString("%1: %2").arg(QString::fromStdString(file)).arg(diff)));
  }

  {
    kiln::Workflow w = textToImage(13);
    w.nodes.push_back({"vae",
                       "LoadVAE",
                       {{"vae_name", dir_.filePath("shifted-vae.safetensors").toStdString()}},
                       0,
                       0,
                       ""});
    w.links[7] = {"vae", "VAE", "decode", "vae"};
    const kiln::Event end = rec_.waitEnd(submit(w));
    QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
    double mean = 0;
    for (std::size_t i = 0; i < reference.pixels.size(); ++i)
      mean += end.outputs.at(0).pixels[i] - reference.pixels[i];
    mean /= static_cast<double>(reference.pixels.size());
    QVERIFY2(mean > 0.05,
             qPrintable(QString::number(mean)));  // +0.2 on [-1, 1] is +0.1, less clipping
  }

  // Image-to-image, encoded and decoded with the file's VAE, against the checkpoint's.
  {
    std::lock_guard<std::mutex> lock(files_mutex_);
    files_["/pictures/start.png"] = reference;
  }
  const auto imageToImage = [&](bool own_vae) {
    kiln::Workflow w = textToImage(14);
    w.nodes.push_back(
        {"load", "LoadImage", {{"image", std::string("/pictures/start.png")}}, 0, 0, ""});
    w.nodes.push_back({"encode", "VAEEncode", {}, 0, 0, ""});
    w.node("sampler")->params["denoise"] = 0.5;
    w.node("sampler")->params["steps"] = int64_t{4};
    w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
    w.links.push_back({"load", "IMAGE", "encode", "pixels"});
    if (own_vae) {
      w.nodes.push_back({"vae", "LoadVAE", {{"vae_name", vae_path}}, 0, 0, ""});
      w.links.push_back({"vae", "VAE", "encode", "vae"});
      w.links[7] = {"vae", "VAE", "decode", "vae"};
    } else {
      w.links.push_back({"ckpt", "VAE", "encode", "vae"});
    }
    const kiln::JobId id = submit(w);
    const kiln::Event end = rec_.waitEnd(id);
    return end.type == EventType::JobFinished ? end.outputs.at(0) : kiln::Image{};
  };
  const kiln::Image a = imageToImage(false), b = imageToImage(true);
  QVERIFY(!a.pixels.empty());
  QVERIFY2(maxDiff(a, b) < 1e-4, qPrintable(QString::number(maxDiff(a, b))));

  kiln::Workflow bad = textToImage(13);
  const std::string not_a_vae = dir_.filePath("not-a-vae.safetensors").toStdString();
  kiln::testing::writeTensors(not_a_vae, {{"lora_unet_x.lora_down.weight", at::zeros({2, 2})}});
  bad.nodes.push_back({"vae", "LoadVAE", {{"vae_name", not_a_vae}}, 0, 0, ""});
  bad.links[7] = {"vae", "VAE", "decode", "vae"};
  const kiln::JobId id = submit(bad);
  const kiln::Event end = rec_.waitEnd(id);
  QCOMPARE(end.type, EventType::JobFailed);
  QCOMPARE(end.error, kiln::ErrorKind::UnsupportedModel);
  QCOMPARE(rec_.states(id).at("vae"), NodeState::Failed);
}
