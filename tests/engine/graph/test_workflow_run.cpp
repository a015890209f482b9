// Workflow jobs on the engine with the sd1 conformance model: a text-to-image graph draws
// what kiln::render draws (with every sampler), an empty latent takes the model's grid,
// saving never overwrites another writer, unknown samplers are refused, a cancel inside a
// node stops it, and failures name their node. The node cache's tests are in
// test_workflow_run_cache.cpp, the model nodes' and inpainting's in
// test_workflow_run_models.cpp.
#include "workflow_run_fixture.h"

using namespace workflow_run_test;

void TestWorkflowRun::initTestCase() {
  kiln::EngineOptions o;
  o.sink = [this](const kiln::Event& e) { rec_(e); };
  // Files as bytes the tests can see: a path that exists is enough for the atomic rename.
  o.write_image = [this](const std::string& path, const kiln::Image& image) {
    std::ofstream(path) << "image";
    std::lock_guard<std::mutex> lock(files_mutex_);
    files_[path] = image;
  };
  o.read_image = [this](const std::string& path) {
    std::lock_guard<std::mutex> lock(files_mutex_);
    const auto it = files_.find(path);
    if (it == files_.end())
      throw kiln::Error(kiln::ErrorKind::FileNotFound, "no file '" + path + "'");
    return it->second;
  };
  engine_ = std::make_unique<kiln::Engine>(o);
}

void TestWorkflowRun::cleanupTestCase() {
  engine_.reset();
}

// The graph draws what the fixed pipeline draws, saves it with the workflow inside and
// plans one stage per running node.
void TestWorkflowRun::drawsWhatRenderDraws() {
  const kiln::JobId id = submit(textToImage(1));
  const kiln::Event end = rec_.waitEnd(id);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(end.outputs.size(), std::size_t{1});
  QCOMPARE(end.output_paths.size(), std::size_t{1});
  QVERIFY(QString::fromStdString(end.output_paths[0]).endsWith("/t-00001.png"));
  const kiln::Image reference = kiln::render(sameAsRender(1)).image;
  const double diff = maxDiff(end.outputs[0], reference);
  QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
  QVERIFY(QFileInfo::exists(QString::fromStdString(end.output_paths[0])));
  const kiln::Image& saved = end.outputs[0];  // as written, with its text chunks
  QCOMPARE(kiln::parseWorkflow(saved.text.at("kiln_workflow")).nodes.size(), std::size_t{7});
  QVERIFY2(saved.text.at("parameters")
                   .find("Steps: 3, Sampler: Euler, CFG scale: 5, Seed: 1, Size: 64x64") !=
               std::string::npos,
           saved.text.at("parameters").c_str());
  const auto planned = rec_.of(id, EventType::StagePlanned);
  QCOMPARE(planned.size(), std::size_t{1});
  std::vector<std::string> names;
  for (const auto& s : planned[0].stages) names.push_back(s.name);
  QCOMPARE(names, (std::vector<std::string>{"Loading model", "Encoding prompt (Prompt)",
                                            "Encoding prompt (TextEncode neg)", "Denoising",
                                            "Decoding", "Saving"}));
  for (const auto& [node, state] : rec_.states(id))
    QVERIFY2(state == NodeState::Done, node.c_str());
}

// EmptyLatent takes the grid of the model that samples it. The starter model's VAE
// downscales by 4: 64x64 draws 64x64, as kiln::render does, and 70x66 snaps to its grid
// (68x64) with a notice. A video latent and a latent of another channel count are
// refused by an image model with the reason.
void TestWorkflowRun::emptyLatentTakesTheModelsGrid() {
  kiln::Workflow w = textToImage(5);
  w.node("ckpt")->params["ckpt_name"] = std::string();  // the starter model
  kiln::JobId id = submit(w);
  kiln::Event end = rec_.waitEnd(id);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(end.outputs.at(0).width, 64);
  QCOMPARE(end.outputs.at(0).height, 64);
  kiln::RenderParams p = sameAsRender(5);
  p.model.path = kiln::starterModelPath();
  const kiln::Image reference = kiln::render(p).image;
  QCOMPARE(maxDiff(end.outputs[0], reference), 0.0);
  QCOMPARE(end.outputs[0].text.at("parameters"), reference.text.at("parameters"));

  w.node("latent")->params["width"] = int64_t{70};
  w.node("latent")->params["height"] = int64_t{66};
  id = submit(w);
  end = rec_.waitEnd(id);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(end.outputs.at(0).width, 68);
  QCOMPARE(end.outputs.at(0).height, 64);
  const auto logs = rec_.of(id, EventType::Log);
  QVERIFY(std::any_of(logs.begin(), logs.end(), [](const kiln::Event& e) {
    return e.message == "size 70x66 is not a multiple of 4; rendering 68x64 instead";
  }));

  kiln::Workflow video = textToImage(5);
  video.node("latent")->type = "EmptyVideoLatent";
  video.node("latent")->params = {
      {"width", int64_t{64}}, {"height", int64_t{64}}, {"frames", int64_t{5}}};
  end = rec_.waitEnd(submit(video));
  QCOMPARE(end.type, EventType::JobFailed);
  QVERIFY2(end.message.find("a video latent needs a video model") != std::string::npos,
           end.message.c_str());

  // The 4-channel latent decoded by a VAE of 8 latent channels is refused by the node.
  const std::string wide = dir_.filePath("wide-vae.safetensors").toStdString();
  {
    const auto file = kiln::tensor_io::SafetensorsFile::open(tinyModel());
    kiln::testing::NamedTensors tensors;
    const std::string prefix = "first_stage_model.";
    for (const auto& info : file->tensors()) {
      if (info.name.rfind(prefix, 0) != 0) continue;
      const std::string name = info.name.substr(prefix.size());
      at::Tensor t = kiln::tensor_io::viewStored({file, &info}).to(at::kFloat);
      if (name == "post_quant_conv.weight") t = at::cat({t, t}, 1);  // [z, 8, 1, 1]
      if (name == "quant_conv.weight" || name == "quant_conv.bias") t = at::cat({t, t}, 0);
      tensors.push_back({name, t});
    }
    kiln::testing::writeTensors(wide, tensors);
  }
  kiln::Workflow mixed = textToImage(5);
  mixed.nodes.push_back({"vae", "LoadVAE", {{"vae_name", wide}}, 0, 0, ""});
  for (auto& l : mixed.links)
    if (l.to_node == "decode" && l.to_input == "vae") l = {"vae", "VAE", "decode", "vae"};
  end = rec_.waitEnd(submit(mixed));
  QCOMPARE(end.type, EventType::JobFailed);
  QVERIFY2(end.message.find("channels but this VAE decodes") != std::string::npos,
           end.message.c_str());
}

// Two Kilns saving into one folder at once: a name another one took while this one was
// writing is not overwritten; the picture goes under the next free name.
void TestWorkflowRun::saveNeverOverwritesAnotherWriter() {
  QTemporaryDir out;
  Recorder rec;
  int writes = 0;
  kiln::EngineOptions o;
  o.sink = [&rec](const kiln::Event& e) { rec(e); };
  o.write_image = [&](const std::string& path, const kiln::Image&) {
    if (writes++ == 0)
      std::ofstream(out.filePath("race-00001.png").toStdString()) << "theirs";  // the other Kiln
    std::ofstream(path) << "ours";
  };
  kiln::Engine engine(o);
  kiln::Workflow w = textToImage(3);
  w.node("save")->params["filename_prefix"] = std::string("race");
  kiln::Job job;
  job.workflow = std::make_shared<const kiln::Workflow>(w);
  job.output_dir = out.path().toStdString();
  const kiln::Event end = rec.waitEnd(engine.submit(std::move(job)));
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(end.output_paths.size(), std::size_t{1});
  QVERIFY(QString::fromStdString(end.output_paths[0]).endsWith("/race-00002.png"));
  std::ifstream theirs(out.filePath("race-00001.png").toStdString());
  std::string text;
  theirs >> text;
  QCOMPARE(text, std::string("theirs"));
  QCOMPARE(QDir(out.path()).entryList(QDir::Files | QDir::Hidden).size(),
           2);  // no temporary file left
}

// Every sampler and schedule runs through the Sampler node, names itself in the
// picture's parameters as A1111 would, and draws what the render API draws with the same
// settings (the same noise, in the same order, for the ones that add noise).
void TestWorkflowRun::everySamplerRunsThroughTheNode_data() {
  QTest::addColumn<QString>("sampler");
  QTest::addColumn<QString>("scheduler");
  QTest::addColumn<QString>("label");
  QTest::newRow("euler_ancestral") << "euler_ancestral"
                                   << "normal"
                                   << "Euler a";
  QTest::newRow("heun karras") << "heun"
                               << "karras"
                               << "Heun Karras";
  QTest::newRow("dpm_2 exponential") << "dpm_2"
                                     << "exponential"
                                     << "DPM2 Exponential";
  QTest::newRow("dpmpp_2m karras") << "dpmpp_2m"
                                   << "karras"
                                   << "DPM++ 2M Karras";
  QTest::newRow("dpmpp_2m_sde simple") << "dpmpp_2m_sde"
                                       << "simple"
                                       << "DPM++ 2M SDE";
  QTest::newRow("dpmpp_sde sgm_uniform") << "dpmpp_sde"
                                         << "sgm_uniform"
                                         << "DPM++ SDE";
  QTest::newRow("ddim ddim_uniform") << "ddim"
                                     << "ddim_uniform"
                                     << "DDIM";
  QTest::newRow("lcm") << "lcm"
                       << "normal"
                       << "LCM";
  QTest::newRow("uni_pc") << "uni_pc"
                          << "normal"
                          << "UniPC";
  QTest::newRow("uni_pc_bh2 diffusers") << "uni_pc_bh2"
                                        << "diffusers"
                                        << "UniPC (bh2)";
}

void TestWorkflowRun::everySamplerRunsThroughTheNode() {
  QFETCH(QString, sampler);
  QFETCH(QString, scheduler);
  QFETCH(QString, label);
  kiln::Workflow w = textToImage(11);
  w.node("sampler")->params["sampler_name"] = sampler.toStdString();
  w.node("sampler")->params["scheduler"] = scheduler.toStdString();
  const kiln::JobId id = submit(w);
  const kiln::Event end = rec_.waitEnd(id);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  const std::string& parameters = end.outputs.at(0).text.at("parameters");
  QVERIFY2(parameters.find("Sampler: " + label.toStdString() + ", CFG scale") != std::string::npos,
           parameters.c_str());
  kiln::RenderParams p = sameAsRender(11);
  p.sampling.sampler = sampler.toStdString();
  p.sampling.scheduler = scheduler.toStdString();
  const kiln::Image reference = kiln::render(p).image;
  const double diff = maxDiff(end.outputs[0], reference);
  QVERIFY2(diff < 1e-4, qPrintable(QString::number(diff)));
  // Another sampler draws another picture from the same seed.
  QVERIFY(maxDiff(end.outputs[0], kiln::render(sameAsRender(11)).image) > 1e-3);
}

// An unknown sampler in the render API is refused before anything loads.
void TestWorkflowRun::renderRefusesUnknownSamplers() {
  kiln::RenderParams p = sameAsRender(1);
  p.sampling.sampler = "dpmpp_3m";
  try {
    (void)kiln::render(p);
    QFAIL("rendered");
  } catch (const kiln::Error& e) {
    QCOMPARE(e.kind(), kiln::ErrorKind::InvalidArgument);
    QVERIFY2(std::string(e.what()).find("unknown sampler 'dpmpp_3m'") != std::string::npos,
             e.what());
  }
}

// Cancelling mid-sampling ends the job at once; the interrupted sampler left no result
// behind, so the next run samples again.
void TestWorkflowRun::cancelInsideANode() {
  kiln::Workflow w = textToImage(21);
  w.node("sampler")->params["steps"] = int64_t{400};
  const kiln::JobId id = submit(w);
  for (int i = 0; i < 3000 && rec_.of(id, EventType::Progress).size() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  QVERIFY(engine_->cancel(id));
  const kiln::Event end = rec_.waitEnd(id);
  QCOMPARE(end.type, EventType::JobCancelled);
  QCOMPARE(rec_.states(id).at("sampler"), NodeState::Failed);
  QVERIFY(!rec_.states(id).count("save") || rec_.states(id).at("save") == NodeState::Queued);
  w.node("sampler")->params["steps"] = int64_t{2};
  const kiln::JobId next = submit(w);
  QCOMPARE(rec_.waitEnd(next).type, EventType::JobFinished);
  QCOMPARE(rec_.states(next).at("sampler"), NodeState::Done);
  QCOMPARE(rec_.states(next).at("pos"), NodeState::Cached);
}

// A node that fails says so with its id; an invalid graph is refused at submit with
// every problem.
void TestWorkflowRun::failuresNameTheirNode() {
  kiln::Workflow w = textToImage(1);
  w.nodes.push_back(
      {"lora", "LoadLoRA", {{"lora_name", std::string("/no/such/lora.safetensors")}}, 0, 0, ""});
  w.links[2] = {"lora", "MODEL", "sampler", "model"};
  w.links.push_back({"ckpt", "MODEL", "lora", "model"});
  w.links.push_back({"ckpt", "CLIP", "lora", "clip"});
  const kiln::JobId id = submit(w);
  const kiln::Event end = rec_.waitEnd(id);
  QCOMPARE(end.type, EventType::JobFailed);
  QCOMPARE(end.error, kiln::ErrorKind::FileNotFound);
  QCOMPARE(rec_.states(id).at("lora"), NodeState::Failed);
  bool named = false;
  for (const auto& e : rec_.of(id, EventType::NodeState))
    named = named ||
            (e.node == "lora" && e.message.find("/no/such/lora.safetensors") != std::string::npos);
  QVERIFY(named);

  // fp16 on this CPU engine: the checkpoint node fails, saying to choose bf16 or fp32.
  kiln::Workflow half = textToImage(1);
  half.node("ckpt")->params["dtype"] = std::string("fp16");
  const kiln::JobId half_id = submit(half);
  const kiln::Event half_end = rec_.waitEnd(half_id);
  QCOMPARE(half_end.type, EventType::JobFailed);
  QCOMPARE(rec_.states(half_id).at("ckpt"), NodeState::Failed);
  QVERIFY2(half_end.message.find("fp16 compute needs a GPU") != std::string::npos,
           half_end.message.c_str());

  kiln::Workflow bad = textToImage(1);
  bad.node("sampler")->params["steps"] = int64_t{0};
  bad.links.pop_back();
  bad.nodes.push_back({"x", "Upscale", {}, 0, 0, ""});
  try {
    submit(bad);
    QFAIL("submitted");
  } catch (const kiln::Error& e) {
    QCOMPARE(e.kind(), kiln::ErrorKind::InvalidWorkflow);
    const std::string what = e.what();
    QVERIFY2(what.find("node sampler: Sampler: 'steps' is 0") != std::string::npos, e.what());
    QVERIFY2(what.find("node x: unknown node type 'Upscale'") != std::string::npos, e.what());
    QVERIFY2(what.find("node save: SaveImage: input 'images' (IMAGE) is not linked") !=
                 std::string::npos,
             e.what());
  }
}

QTEST_GUILESS_MAIN(TestWorkflowRun)
