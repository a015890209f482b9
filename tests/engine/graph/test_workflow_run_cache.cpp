// Workflow jobs and the node result cache: results cached by input signature across jobs
// (counted per node), job pictures signed by their pixels, the cache held to its limit.
#include "workflow_run_fixture.h"

using namespace workflow_run_test;

// Changing only the seed re-runs the sampler, the decode and the save; the same
// workflow again re-runs only the save; clearing the cache re-runs everything.
void TestWorkflowRun::cachesByInputSignature() {
  const auto runs = [&](kiln::JobId id) {
    std::set<std::string> ran;
    for (const auto& e : rec_.of(id, EventType::NodeState))
      if (e.node_state == NodeState::Running) ran.insert(e.node);
    return ran;
  };
  const kiln::JobId first = submit(textToImage(7));
  QCOMPARE(rec_.waitEnd(first).type, EventType::JobFinished);
  const kiln::JobId second = submit(textToImage(8));
  const kiln::Event end = rec_.waitEnd(second);
  QCOMPARE(end.type, EventType::JobFinished);
  QCOMPARE(runs(second), (std::set<std::string>{"sampler", "decode", "save"}));
  const auto states = rec_.states(second);
  for (const char* node : {"ckpt", "pos", "neg", "latent"})
    QCOMPARE(states.at(node), NodeState::Cached);
  QVERIFY(maxDiff(end.outputs[0], kiln::render(sameAsRender(8)).image) < 1e-4);
  QCOMPARE(rec_.of(second, EventType::StagePlanned).at(0).stages.size(), std::size_t{3});

  const kiln::JobId again = submit(textToImage(8));
  QCOMPARE(rec_.waitEnd(again).type, EventType::JobFinished);
  QCOMPARE(runs(again), (std::set<std::string>{"save"}));
  const kiln::MemoryStats m = engine_->memoryStats();
  QVERIFY(m.node_cache_bytes > 0);
  QVERIFY(m.node_cache_entries >= 6);

  engine_->clearNodeCache();
  QCOMPARE(engine_->memoryStats().node_cache_bytes, int64_t{0});
  const kiln::JobId cleared = submit(textToImage(8));
  QCOMPARE(rec_.waitEnd(cleared).type, EventType::JobFinished);
  QCOMPARE(runs(cleared).size(), std::size_t{7});

  // A model handle stands only while the model is loaded.
  engine_->unloadModels();
  const kiln::JobId unloaded = submit(textToImage(8));
  QCOMPARE(rec_.waitEnd(unloaded).type, EventType::JobFinished);
  QVERIFY(runs(unloaded).count("ckpt"));
}

// A job's own picture and mask (JobImage, JobMask: what kiln::render's init image and
// mask become) are signed into the node cache by their pixels: another picture in the
// next job is encoded afresh, the same one again is taken from the cache; the workflow
// draws what kiln::render draws from the same picture.
void TestWorkflowRun::jobPicturesAreSignedByTheirPixels() {
  kiln::Workflow w = textToImage(5);
  w.nodes.push_back({"image", "JobImage", {}, 0, 0, ""});
  w.nodes.push_back({"mask", "JobMask", {}, 0, 0, ""});
  w.nodes.push_back({"encode", "VAEEncode", {{"mask_feather", int64_t{4}}}, 0, 0, ""});
  w.nodes.push_back({"show", "PreviewImage", {}, 0, 0, ""});
  w.node("sampler")->params["denoise"] = 0.6;
  w.links[5] = {"encode", "LATENT", "sampler", "latent_image"};
  w.links.push_back({"image", "IMAGE", "encode", "pixels"});
  w.links.push_back({"mask", "MASK", "encode", "mask"});
  w.links.push_back({"ckpt", "VAE", "encode", "vae"});
  w.links.push_back({"decode", "IMAGE", "show", "images"});
  w.nodes.erase(w.nodes.begin() + 6);  // the preview is the output
  w.links.erase(w.links.begin() + 8);
  const auto picture = [](float red) {
    kiln::Image image;
    image.width = image.height = 64;
    image.channels = 3;
    for (int i = 0; i < 64 * 64; ++i)
      image.pixels.insert(image.pixels.end(), {red, 0.3f, static_cast<float>(i % 64) / 64});
    return image;
  };
  kiln::Image mask;
  mask.width = mask.height = 64;
  mask.channels = 1;
  for (int i = 0; i < 64 * 64; ++i) mask.pixels.push_back(i % 64 < 32 ? 1.0f : 0.0f);
  const auto run = [&](const kiln::Image& image) {
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(w);
    job.params.init.image = image;
    job.params.init.mask = mask;
    const kiln::JobId id = engine_->submit(std::move(job));
    const kiln::Event end = rec_.waitEnd(id);
    return std::make_pair(end, rec_.states(id));
  };
  const auto [red, red_states] = run(picture(0.9f));
  QVERIFY2(red.type == EventType::JobFinished, red.message.c_str());
  QCOMPARE(red_states.at("encode"), NodeState::Done);
  const auto [green, green_states] = run(picture(0.1f));
  QVERIFY2(green.type == EventType::JobFinished, green.message.c_str());
  QCOMPARE(green_states.at("image"), NodeState::Done);  // not the red picture's result
  QCOMPARE(green_states.at("encode"), NodeState::Done);
  QVERIFY(maxDiff(red.outputs.at(0), green.outputs.at(0)) > 0.1);
  const auto [again, again_states] = run(picture(0.9f));
  QCOMPARE(again_states.at("encode"), NodeState::Cached);
  QCOMPARE(maxDiff(again.outputs.at(0), red.outputs.at(0)), 0.0);
  // kiln::render with the same picture, mask and settings draws the same.
  kiln::RenderParams p = sameAsRender(5);
  p.init.image = picture(0.9f);
  p.init.mask = mask;
  p.init.mask_feather = 4;
  p.init.denoise = 0.6;
  const kiln::RenderResult r = kiln::render(p);
  QCOMPARE(maxDiff(r.image, red.outputs.at(0)), 0.0);
  QCOMPARE(r.image.text.at("parameters"), red.outputs.at(0).text.at("parameters"));
  QVERIFY(r.image.text.at("parameters").find("Mask blur: 4") != std::string::npos);
}

// The node cache keeps to its byte limit, given directly or as what the host budget
// leaves beside the cached weights: with room for less than one conditioning, the
// prompts are encoded again while the small latent is still kept.
void TestWorkflowRun::nodeCacheKeepsToItsLimit_data() {
  QTest::addColumn<bool>("through_host_budget");
  QTest::newRow("node cache limit") << false;
  QTest::newRow("host budget") << true;
}

void TestWorkflowRun::nodeCacheKeepsToItsLimit() {
  QFETCH(bool, through_host_budget);
  // The tiny model's conditioning is 77 x 32 floats (9.6 KiB), its 64x64 latent 1 KiB.
  constexpr int64_t kRoom = 4 * 1024;
  Recorder rec;
  kiln::EngineOptions o;
  o.sink = [&rec](const kiln::Event& e) { rec(e); };
  o.write_image = [](const std::string& path, const kiln::Image&) {
    std::ofstream(path) << "image";
  };
  if (through_host_budget)
    o.host_budget_bytes =
        engine_->memoryStats().cached_model_bytes + kRoom;  // the same model's weights
  else
    o.node_cache_bytes = kRoom;
  QVERIFY(!through_host_budget || o.host_budget_bytes > kRoom);
  kiln::Engine engine(o);
  const auto run = [&](int64_t seed) {
    kiln::Job job;
    job.workflow = std::make_shared<const kiln::Workflow>(textToImage(seed));
    job.output_dir = dir_.filePath("limited").toStdString();
    const kiln::JobId id = engine.submit(std::move(job));
    const kiln::Event end = rec.waitEnd(id);  // first: the states are complete once it came
    return std::make_pair(end, rec.states(id));
  };
  // (A budget that shrinks when the weights load evicts the oldest results first, so
  // the steady state shows from the third run on.)
  QCOMPARE(run(1).first.type, EventType::JobFinished);
  QCOMPARE(run(2).first.type, EventType::JobFinished);
  const auto [end, states] = run(3);
  QVERIFY2(end.type == EventType::JobFinished, end.message.c_str());
  QCOMPARE(states.at("pos"), NodeState::Done);
  QCOMPARE(states.at("latent"), NodeState::Cached);
  QVERIFY(engine.memoryStats().node_cache_bytes <= kRoom);
  QVERIFY(engine.memoryStats().node_cache_bytes > 0);
}
