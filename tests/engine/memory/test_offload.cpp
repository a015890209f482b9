// Offload on the simulated accelerator with the conformance models: every mode computes
// exactly what resident weights compute, within its documented peak of device bytes;
// placements follow the settings and the component's role, re-apply without reloading,
// skip unchanged settings, and give every byte back.
#include <QtTest>

#include "kiln/engine.h"
#include "kiln/error.h"
#include "memory/device.h"
#include "memory/model_cache.h"
#include "memory/offload.h"
#include "models/vae/vae_tiling.h"
#include "nodes/model_loading.h"
#include "pipelines/common/loaded_model.h"
#include "pipelines/sd/sd_pipeline.h"
#include "ref_tensors.h"

using namespace kiln;
using namespace kiln::memory;

namespace {

constexpr int64_t kMiB = 1024 * 1024;
// Every weight is rounded up to the allocator's 512-byte blocks.
int64_t roundingSlack(const weights::ParamList& p) {
  return static_cast<int64_t>(p.slots().size()) * 512;
}

std::string tinyPath() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

// The pipeline's VAE placed as a large one is: onloaded whole for each call, sent back after.
std::unique_ptr<ComponentPlacement> vaePlacedPerCall(const Device& dev,
                                                     const pipelines::SdPipeline& pipe) {
  OffloadSettings s;
  s.mode = OffloadMode::Model;
  s.vae_resident_threshold_bytes = 0;
  const ComponentInfo vae{"vae", "AutoencoderKL", ComponentRole::Vae, &pipe.vae().params()};
  auto place = std::make_unique<ComponentPlacement>(dev, vae);
  place->apply(decidePlacement(vae, place->weightBytes(), s), 0);
  return place;
}

// Group-block streaming from pinned host memory with no reserve.
OffloadSettings streamedFromPinnedMemory() {
  OffloadSettings s;
  s.mode = OffloadMode::GroupBlock;
  s.streams = true;
  s.pin = PinMode::On;
  s.pin_reserve_bytes = 0;
  return s;
}

std::unique_ptr<pipelines::SdPipeline> tinyPipeline() {
  return std::make_unique<pipelines::SdPipeline>(models::openCheckpoint(tinyPath()), at::kFloat);
}

ComponentInfo unetOf(const pipelines::SdPipeline& p) {
  return {"unet", "UNetModel", ComponentRole::Denoiser, &p.unet().params()};
}

struct UNetCall {
  models::UNetInputs in;
  UNetCall() {
    const kiln::testing::RefFile ref("sd-tiny-1234/sd1/ref_unet.safetensors");
    in.latent = ref["in_latent"];
    in.timesteps = ref["in_timestep"];
    in.context = ref["in_context"];
  }
  // Runs the UNet with the work charged to `dev`; returns the output in host memory.
  at::Tensor run(const pipelines::SdPipeline& p, const Device& dev) const {
    at::Tensor out;
    {
      DeviceScope scope(dev);
      out = p.unet().forward(in);
    }
    return dev.download(out);
  }
};

PlacementDecision decision(OffloadMode mode, int blocks = 1, bool streams = false,
                           PinMode pin = PinMode::Off) {
  PlacementDecision d;
  d.mode = mode;
  d.blocks_per_group = blocks;
  d.streams = streams;
  d.pin = pin;
  return d;
}

// A data-driven case of a placement mode: the mode, blocks per group, streams and, for
// balanced mode, its resident budget as a fraction of the weights.
struct ModeRow {
  const char* name;
  OffloadMode mode;
  int blocks;
  bool streams;
  double budget_fraction;
};
void addModeRows(const std::vector<ModeRow>& rows) {
  QTest::addColumn<int>("mode");
  QTest::addColumn<int>("blocks");
  QTest::addColumn<bool>("streams");
  QTest::addColumn<double>("budget_fraction");
  for (const ModeRow& r : rows)
    QTest::newRow(r.name) << int(r.mode) << r.blocks << r.streams << r.budget_fraction;
}
struct ModeCase {
  int mode, blocks;
  bool streams;
  double budget_fraction;
};
ModeCase fetchModeCase() {
  QFETCH(int, mode);
  QFETCH(int, blocks);
  QFETCH(bool, streams);
  QFETCH(double, budget_fraction);
  return {mode, blocks, streams, budget_fraction};
}

}  // namespace

class OffloadTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyModeComputesWhatResidentWeightsCompute_data() {
    addModeRows({{"none", OffloadMode::None, 1, false, 0.0},
                 {"model", OffloadMode::Model, 1, false, 0.0},
                 {"group-block 1", OffloadMode::GroupBlock, 1, false, 0.0},
                 {"group-block 3 streams", OffloadMode::GroupBlock, 3, true, 0.0},
                 {"group-leaf", OffloadMode::GroupLeaf, 1, false, 0.0},
                 {"balanced", OffloadMode::Balanced, 1, false, 0.4},
                 {"balanced streams", OffloadMode::Balanced, 1, true, 0.4}});
  }
  void everyModeComputesWhatResidentWeightsCompute() {
    const auto [mode, blocks, streams, budget_fraction] = fetchModeCase();
    const auto pipe = tinyPipeline();
    const UNetCall call;
    const at::Tensor expected = pipe->unet().forward(call.in);
    const weights::ParamList& params = pipe->unet().params();

    // The work's own peak, measured with resident weights.
    SimulatedDevice ref_dev(256 * kMiB);
    int64_t work_peak = 0;
    {
      ComponentPlacement resident(ref_dev, unetOf(*pipe));
      resident.apply(decision(OffloadMode::None), 0);
      const int64_t weights = ref_dev.memory().allocated_bytes;
      ref_dev.resetPeak();
      QVERIFY(call.run(*pipe, ref_dev).equal(expected));
      work_peak = ref_dev.memory().peak_allocated_bytes - weights;
      resident.teardown();
    }

    SimulatedDevice dev(256 * kMiB);
    ComponentPlacement place(dev, unetOf(*pipe));
    const int64_t budget =
        static_cast<int64_t>(budget_fraction * static_cast<double>(place.weightBytes()));
    QVERIFY(place.apply(decision(static_cast<OffloadMode>(mode), blocks, streams), budget));
    const int64_t between_calls = dev.memory().allocated_bytes;
    if (mode != int(OffloadMode::Model)) {  // model mode onloads at the first call
      QVERIFY(between_calls >= place.residentBytes());
      QVERIFY(between_calls - place.residentBytes() <= roundingSlack(params));
    }
    dev.resetPeak();
    for (int round = 0; round < 2; ++round) QVERIFY(call.run(*pipe, dev).equal(expected));
    const int64_t peak = dev.memory().peak_allocated_bytes;
    std::fprintf(stderr,
                 "%s: weights %lld, resident %lld, peak weights %lld, peak %lld (work %lld)\n",
                 place.describe().c_str(), static_cast<long long>(place.weightBytes()),
                 static_cast<long long>(place.residentBytes()),
                 static_cast<long long>(place.peakWeightBytes()), static_cast<long long>(peak),
                 static_cast<long long>(work_peak));
    // The documented bound: the mode's weight peak plus the work's own.
    QVERIFY2(peak <= place.peakWeightBytes() + work_peak + roundingSlack(params),
             place.describe().c_str());
    if ((mode == int(OffloadMode::GroupBlock) && blocks == 1) ||
        mode == int(OffloadMode::GroupLeaf))
      QVERIFY2(place.peakWeightBytes() < place.weightBytes() / 2, "streaming saved little");
    if (mode == int(OffloadMode::Balanced)) {
      QVERIFY(place.residentBytes() > 0);
      QVERIFY(place.residentBytes() <= budget);
    }
    // Nothing streamed stays behind after a call; model mode keeps the whole component.
    if (mode == int(OffloadMode::Model))
      QCOMPARE(place.deviceBytes(), place.weightBytes());
    else
      QCOMPARE(dev.memory().allocated_bytes, between_calls);
    if (mode != int(OffloadMode::None) && mode != int(OffloadMode::Model))
      QVERIFY(place.counters().uploads > 0);
    place.teardown();
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
    QVERIFY(params.hooks() == nullptr);
    QVERIFY(pipe->unet().forward(call.in).equal(expected));
  }

  // The memory map's arithmetic is the placement's: in every mode the plan's resident and
  // peak bytes are what placing keeps and what a call brings, and balanced mode's budget
  // bounds its peak (the blocks that stream past the resident ones included).
  void planIsWhatPlacementDoes_data() {
    addModeRows({{"none", OffloadMode::None, 1, false, 0.0},
                 {"model", OffloadMode::Model, 1, false, 0.0},
                 {"group-block 2 streams", OffloadMode::GroupBlock, 2, true, 0.0},
                 {"group-leaf", OffloadMode::GroupLeaf, 1, false, 0.0},
                 {"balanced 60%", OffloadMode::Balanced, 1, false, 0.6},
                 {"balanced 80% streams", OffloadMode::Balanced, 1, true, 0.8},
                 {"balanced, all fits", OffloadMode::Balanced, 1, true, 1.0}});
  }
  void planIsWhatPlacementDoes() {
    const auto [mode, blocks, streams, budget_fraction] = fetchModeCase();
    const auto pipe = tinyPipeline();
    const UNetCall call;
    const at::Tensor expected = pipe->unet().forward(call.in);
    SimulatedDevice dev(256 * kMiB);
    ComponentPlacement place(dev, unetOf(*pipe));
    OffloadSettings s;
    s.mode = static_cast<OffloadMode>(mode);
    s.blocks_per_group = blocks;
    s.streams = streams;
    s.pin = PinMode::Off;
    const auto budget =
        static_cast<int64_t>(budget_fraction * static_cast<double>(place.weightBytes()));
    const std::vector<PlannedPlacement> plans =
        planPlacements({{&place.component(), &place.layout()}}, s, budget, -1);
    QCOMPARE(plans.size(), std::size_t{1});
    const PlannedPlacement& plan = plans[0];
    QCOMPARE(plan.weight_bytes, place.weightBytes());
    QVERIFY(place.apply(decidePlacement(place.component(), place.weightBytes(), s),
                        plan.balanced_budget_bytes));
    QCOMPARE(place.decision(), plan.decision);
    QCOMPARE(plan.peak_bytes, place.peakWeightBytes());
    // Model mode onloads at the first call; the others hold their resident part now.
    const int64_t between_calls = dev.memory().allocated_bytes;
    QVERIFY(between_calls >= plan.resident_bytes);
    QVERIFY(between_calls - plan.resident_bytes <= roundingSlack(*place.component().params));
    if (s.mode != OffloadMode::Model) QCOMPARE(plan.resident_bytes, place.residentBytes());
    if (s.mode == OffloadMode::Balanced) {
      QCOMPARE(plan.balanced_budget_bytes, budget);
      QVERIFY2(plan.peak_bytes <= budget, place.describe().c_str());
      QVERIFY(plan.resident_bytes > 0);
      if (budget_fraction >= 1.0)
        QCOMPARE(plan.resident_bytes, place.weightBytes());
      else
        QVERIFY(plan.resident_bytes < place.weightBytes());
    }
    // What a call measures stays within the planned weight peak plus the work.
    dev.resetPeak();
    QVERIFY(call.run(*pipe, dev).equal(expected));
    QVERIFY(dev.memory().peak_allocated_bytes >= plan.peak_bytes);
    place.teardown();
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  // One model's map: the device bar's parts add up, a room too small says how much is
  // missing and what to change, a working reserve that does not fit is dropped (as
  // placing does), and pinned memory is counted against what the settings allow.
  void memoryMapSaysWhatFits() {
    SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(tinyPipeline(), dev);
    int64_t width = 0, height = 0, frames = 0;
    const int64_t working = model.workingBytes(width, height, frames);
    QVERIFY(working > 0);
    QVERIFY(width > 0 && height > 0);
    QCOMPARE(frames, int64_t{0});  // a picture family
    int64_t weights = 0;
    for (const auto& p : model.placements()) weights += p->weightBytes();

    OffloadSettings resident;
    resident.working_reserve_bytes = 0;
    const ModelMemoryPlan all = model.planMemory(resident, {256 * kMiB, -1}, 0, 0, 0);
    QVERIFY(all.fits());
    QCOMPARE(all.width, width);
    QCOMPARE(all.resident_bytes, weights);
    QCOMPARE(all.streamed_bytes, int64_t{0});
    QCOMPARE(all.working_bytes, working);
    QCOMPARE(all.left_bytes, 256 * kMiB - weights - working);
    QCOMPARE(all.pinned_room_bytes, int64_t{-1});

    // Exactly the room it needs fits; a byte less does not, and the problem says how much.
    const int64_t needed = weights + working;
    QVERIFY(model.planMemory(resident, {needed, -1}, 0, 0, 0).fits());
    const ModelMemoryPlan short_by_one = model.planMemory(resident, {needed - 1, -1}, 0, 0, 0);
    QVERIFY(!short_by_one.fits());
    QCOMPARE(short_by_one.left_bytes, int64_t{-1});
    QVERIFY2(short_by_one.problems[0].find("group-block") != std::string::npos,
             short_by_one.problems[0].c_str());
    // Streaming the UNet block by block fits where resident weights did not.
    OffloadSettings streamed = resident;
    streamed.mode = OffloadMode::GroupBlock;
    streamed.pin = PinMode::Off;
    const ModelMemoryPlan blocks = model.planMemory(streamed, {needed - 1, -1}, 0, 0, 0);
    QVERIFY(blocks.fits());
    QVERIFY(blocks.resident_bytes < weights);
    QVERIFY(blocks.streamed_bytes > 0);
    QVERIFY(!blocks.largest_streamed.empty());
    // A reserve that does not fit beside the model is a note, not a failure.
    OffloadSettings reserved = resident;
    reserved.working_reserve_bytes = 64;
    const ModelMemoryPlan no_reserve = model.planMemory(reserved, {needed, -1}, 0, 0, 0);
    QVERIFY(no_reserve.fits());
    QVERIFY(!no_reserve.notes.empty());
    QCOMPARE(no_reserve.reserve_bytes, int64_t{0});
    QCOMPARE(no_reserve.left_bytes, int64_t{0});
    // Pinned memory: all the streamed weights where allowed; denied where not, which the
    // component's placement says (block level, no streams).
    OffloadSettings pinned = streamed;
    pinned.pin = PinMode::On;
    pinned.streams = true;
    const ModelMemoryPlan pins = model.planMemory(pinned, {256 * kMiB, 1024 * kMiB}, 0, 0, 0);
    QVERIFY(pins.pinned_bytes > 0);
    QVERIFY(pins.pinned_bytes <= pins.host_bytes);
    const ModelMemoryPlan denied = model.planMemory(pinned, {256 * kMiB, 0}, 0, 0, 0);
    QCOMPARE(denied.pinned_bytes, int64_t{0});
    bool said = false;
    for (const PlannedComponent& c : denied.components)
      said = said || c.placement.find("pinned memory denied") != std::string::npos;
    QVERIFY(said);
    // A bigger picture needs more working memory.
    QVERIFY(model.planMemory(resident, {256 * kMiB, -1}, width * 2, height * 2, 0).working_bytes >
            working);
  }

  // Re-applying unchanged settings does no work; changing them re-places without a reload;
  // fifty changes leave nothing behind.
  void settingsChangesReplaceAndLeakNothing() {
    const auto pipe = tinyPipeline();
    const UNetCall call;
    const at::Tensor expected = pipe->unet().forward(call.in);
    SimulatedDevice dev(256 * kMiB);
    ComponentPlacement place(dev, unetOf(*pipe));
    QVERIFY(place.apply(decision(OffloadMode::GroupBlock, 2), 0));
    const int64_t uploads = place.counters().uploads;
    QVERIFY(!place.apply(decision(OffloadMode::GroupBlock, 2), 0));
    QCOMPARE(place.counters().unchanged, int64_t{1});
    QCOMPARE(place.counters().uploads, uploads);
    const std::vector<PlacementDecision> cycle{
        decision(OffloadMode::None), decision(OffloadMode::GroupBlock, 1, true),
        decision(OffloadMode::GroupLeaf), decision(OffloadMode::Model),
        decision(OffloadMode::Balanced, 1, false)};
    for (int i = 0; i < 50; ++i) {
      QVERIFY(
          place.apply(cycle[static_cast<std::size_t>(i) % cycle.size()], place.weightBytes() / 3));
      if (i % 5 == 0) QVERIFY(call.run(*pipe, dev).equal(expected));
    }
    QCOMPARE(place.counters().applies, int64_t{51});
    place.teardown();
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  void placementFollowsRolesAndLists() {
    const auto pipe = tinyPipeline();
    const ComponentInfo unet = unetOf(*pipe);
    const ComponentInfo vae{"vae", "AutoencoderKL", ComponentRole::Vae, &pipe->vae().params()};
    const ComponentInfo text{"text_encoder", "ClipTextModel", ComponentRole::TextEncoder,
                             &pipe->textEncoder(0).params()};
    OffloadSettings s;
    s.mode = OffloadMode::GroupBlock;
    s.streams = true;
    s.blocks_per_group = 2;
    // The denoiser takes the block profile as asked.
    QCOMPARE(decidePlacement(unet, 1000, s),
             decision(OffloadMode::GroupBlock, 2, true, PinMode::On));
    // Text encoders go leaf by leaf without streams, whatever block mode is asked.
    const PlacementDecision t = decidePlacement(text, 1000, s);
    QCOMPARE(t.mode, OffloadMode::GroupLeaf);
    QVERIFY(!t.streams);
    QVERIFY(t.reason.find("leaf") != std::string::npos);
    QCOMPARE(t.pin, PinMode::Off);  // never held in pinned memory
    QVERIFY(t.reason.find("pinned") != std::string::npos);
    // A small VAE stays resident; a large one is onloaded whole per call and leaves after.
    QCOMPARE(decidePlacement(vae, 1000, s).mode, OffloadMode::None);
    s.vae_resident_threshold_bytes = 500;
    const PlacementDecision v = decidePlacement(vae, 1000, s);
    QCOMPARE(v.mode, OffloadMode::Model);
    QVERIFY(v.offload_after_call);
    // Per-component modes override the default.
    s.per_component["unet"] = OffloadMode::Balanced;
    QCOMPARE(decidePlacement(unet, 1000, s).mode, OffloadMode::Balanced);
    // never is tested first: a class in never exempts it from a name in always.
    OffloadSettings lists;
    lists.always = {"unet", "vae"};
    lists.never = {"UNetModel"};
    lists.vae_resident_threshold_bytes = 0;
    QCOMPARE(decidePlacement(unet, 1000, lists).mode, OffloadMode::None);
    QVERIFY(decidePlacement(unet, 1000, lists).reason.find("never") != std::string::npos);
    QCOMPARE(decidePlacement(vae, 1000, lists).mode, OffloadMode::Model);
    lists.never.clear();
    QCOMPARE(decidePlacement(unet, 1000, lists).mode, OffloadMode::GroupBlock);

    // Names match a component's role too, whatever its family calls it: "unet" is every
    // denoiser (Wan's transformer), "text_encoder" every text encoder (SDXL's second); the
    // component's own name or class wins over its role.
    const ComponentInfo transformer{"transformer", "WanTransformer3DModel", ComponentRole::Denoiser,
                                    &pipe->unet().params()};
    const ComponentInfo text2{"text_encoder_2", "ClipTextModel", ComponentRole::TextEncoder,
                              &pipe->textEncoder(0).params()};
    OffloadSettings roles;
    roles.per_component["unet"] = OffloadMode::Balanced;
    roles.per_component["text_encoder"] = OffloadMode::GroupLeaf;
    QCOMPARE(decidePlacement(transformer, 1000, roles).mode, OffloadMode::Balanced);
    QCOMPARE(decidePlacement(text2, 1000, roles).mode, OffloadMode::GroupLeaf);
    roles.per_component["text_encoder_2"] = OffloadMode::None;
    QCOMPARE(decidePlacement(text2, 1000, roles).mode, OffloadMode::None);
    QCOMPARE(decidePlacement(text, 1000, roles).mode, OffloadMode::GroupLeaf);
    roles.per_component["WanTransformer3DModel"] = OffloadMode::Model;
    QCOMPARE(decidePlacement(transformer, 1000, roles).mode, OffloadMode::Model);
    OffloadSettings role_lists;
    role_lists.always = {"text_encoder", "transformer"};
    QCOMPARE(decidePlacement(text2, 1000, role_lists).mode, OffloadMode::GroupLeaf);
    QCOMPARE(decidePlacement(unet, 1000, role_lists).mode, OffloadMode::GroupBlock);
    role_lists.never = {"denoiser"};
    QCOMPARE(decidePlacement(transformer, 1000, role_lists).mode, OffloadMode::None);
    // A family's resting default (Wan's text encoder) holds until the settings name it.
    ComponentInfo resting = text;
    resting.offloaded_by_default = true;
    QCOMPARE(decidePlacement(resting, 1000, OffloadSettings{}).mode, OffloadMode::GroupLeaf);
    OffloadSettings named;
    named.per_component["text_encoder"] = OffloadMode::None;
    QCOMPARE(decidePlacement(resting, 1000, named).mode, OffloadMode::None);
    named.per_component.clear();
    named.never = {"ClipTextModel"};
    QCOMPARE(decidePlacement(resting, 1000, named).mode, OffloadMode::None);

    OffloadSettings bad;
    bad.record_stream = true;
    QVERIFY_THROWS_EXCEPTION(Error, bad.validate());
    bad.record_stream = false;
    bad.blocks_per_group = 0;
    QVERIFY_THROWS_EXCEPTION(Error, bad.validate());
    QCOMPARE(parseOffloadMode("group-leaf"), OffloadMode::GroupLeaf);
    QCOMPARE(parseOffloadMode("sideways"), OffloadMode::Invalid);
  }

  // A component on the never list stays resident whatever mode streams the others.
  void neverListHoldsUnderEveryStreamingMode_data() {
    QTest::addColumn<int>("mode");
    QTest::newRow("group-block") << static_cast<int>(OffloadMode::GroupBlock);
    QTest::newRow("group-leaf") << static_cast<int>(OffloadMode::GroupLeaf);
    QTest::newRow("balanced") << static_cast<int>(OffloadMode::Balanced);
  }
  void neverListHoldsUnderEveryStreamingMode() {
    QFETCH(int, mode);
    SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(tinyPipeline(), dev);
    OffloadSettings s;
    s.mode = static_cast<OffloadMode>(mode);
    s.vae_resident_threshold_bytes = 0;
    s.never = {"unet"};
    const ComponentInfo unet = unetOf(model.as<pipelines::SdPipeline>());
    QCOMPARE(decidePlacement(unet, 1000, s).mode, OffloadMode::None);
    (void)model.place(s, 0);  // balanced: no budget, so the others keep nothing resident
    const auto& pipe = model.as<pipelines::SdPipeline>();
    const auto bytesOnDevice = [&](const weights::ParamList& params) {
      int64_t n = 0, total = 0;
      for (const auto& slot : params.slots()) {
        total += static_cast<int64_t>(slot.tensor->nbytes());
        if (dev.holds(*slot.tensor)) n += static_cast<int64_t>(slot.tensor->nbytes());
      }
      return std::make_pair(n, total);
    };
    const auto [unet_on, unet_total] = bytesOnDevice(pipe.unet().params());
    QCOMPARE(unet_on, unet_total);                                   // resident
    QCOMPARE(bytesOnDevice(pipe.vae().params()).first, int64_t{0});  // streamed, as the mode says
    s.never.clear();
    (void)model.place(s, 0);
    QVERIFY(bytesOnDevice(pipe.unet().params()).first < unet_total);
  }

  // Pinned host copies have a budget; a denied pin falls back to block level without
  // streams and says what that costs; per-group pinning holds pinned memory only while a
  // group is being moved; tearing down gives every pinned byte back.
  void pinnedMemoryHasABudget() {
    const auto pipe = tinyPipeline();
    const UNetCall call;
    const at::Tensor expected = pipe->unet().forward(call.in);
    const int64_t slack = roundingSlack(pipe->unet().params());
    SimulatedDevice dev(256 * kMiB);
    ComponentPlacement place(dev, unetOf(*pipe));
    dev.setPinnedLimit(64 * kMiB);
    QVERIFY(place.apply(decision(OffloadMode::GroupBlock, 1, true, PinMode::On), 0));
    QCOMPARE(place.decision().pin, PinMode::On);
    QVERIFY(dev.memory().pinned_bytes >= place.weightBytes());
    QVERIFY(dev.memory().pinned_bytes <= place.weightBytes() + slack);
    QVERIFY(call.run(*pipe, dev).equal(expected));
    place.teardown();
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});

    dev.setPinnedLimit(1024);
    QVERIFY(place.apply(decision(OffloadMode::GroupBlock, 1, true, PinMode::On), 0));
    QCOMPARE(place.decision().pin, PinMode::Off);
    QVERIFY(!place.decision().streams);
    QVERIFY2(place.decision().reason.find("pinned memory denied") != std::string::npos,
             place.describe().c_str());
    QVERIFY2(place.describe().find("per step") != std::string::npos, place.describe().c_str());
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
    QVERIFY(call.run(*pipe, dev).equal(expected));
    // Unchanged settings stay a no-op even though what was placed differs from the request.
    QVERIFY(!place.apply(decision(OffloadMode::GroupBlock, 1, true, PinMode::On), 0));

    dev.setPinnedLimit(64 * kMiB);
    QVERIFY(place.apply(decision(OffloadMode::GroupBlock, 1, false, PinMode::PerGroup), 0));
    QCOMPARE(place.decision().pin, PinMode::PerGroup);
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
    dev.pinnedPool().resetPeak();
    QVERIFY(call.run(*pipe, dev).equal(expected));
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
    QVERIFY(dev.memory().pinned_peak_bytes > 0);
    QVERIFY(dev.memory().pinned_peak_bytes <= place.peakWeightBytes() + slack);
    place.teardown();
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
  }

  // A VAE above the threshold is on the device only during its call.
  void largeVaeLeavesAfterEachCall() {
    const auto pipe = tinyPipeline();
    const at::Tensor latent = at::randn({1, 4, 8, 8});
    const at::Tensor expected = pipe->vae().decode(latent);
    SimulatedDevice dev(256 * kMiB);
    const auto placed = vaePlacedPerCall(dev, *pipe);
    ComponentPlacement& place = *placed;
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
    dev.resetPeak();
    at::Tensor out;
    {
      DeviceScope scope(dev);
      out = pipe->vae().decode(latent);
    }
    QVERIFY(dev.download(out).equal(expected));
    out.reset();
    QVERIFY(dev.memory().peak_allocated_bytes >= place.weightBytes());
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  // A tiled decode and encode of a VAE placed per call upload its weights once for all
  // their tile passes (the whole picture's statistics pass and the blending pass), not
  // once per tile and pass.
  void tiledVaeUploadsOncePerDecode() {
    const auto pipe = tinyPipeline();
    const at::Tensor latent = at::randn({1, 4, 16, 16});
    SimulatedDevice dev(256 * kMiB);
    const auto placed = vaePlacedPerCall(dev, *pipe);
    ComponentPlacement& place = *placed;
    QVERIFY(place.decision().offload_after_call);
    const auto weights = static_cast<int64_t>(pipe->vae().params().slots().size());
    const kiln::tiling::Tiles tiles{8, 2};
    QVERIFY(kiln::tiling::tileCount(16, 16, tiles) >= 4);
    int64_t before = dev.uploadCount();
    at::Tensor image;
    {
      DeviceScope scope(dev);
      image = dev.download(kiln::models::decodeTiled(pipe->vae(), dev.upload(latent), tiles, {}));
    }
    QCOMPARE(dev.uploadCount() - before, weights + 1);  // the weights once, and the latent
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
    before = dev.uploadCount();
    {
      DeviceScope scope(dev);
      (void)dev.download(
          kiln::models::encodeMomentsTiled(pipe->vae(), dev.upload(image), tiles, {}));
    }
    QCOMPARE(dev.uploadCount() - before, weights + 1);
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
  }

  // The pinned budget is the host memory free when the placement is applied, less the
  // reserve: with a reserve of all but 512 MiB, the limit is about 512 MiB (give or take
  // what other processes do meanwhile), not the gigabytes free.
  void pinnedBudgetIsFreeHostMemoryLessTheReserve() {
    const std::optional<int64_t> free_host = availableHostBytes();
    if (!free_host || *free_host < 2 * int64_t{1024} * kMiB)
      QSKIP("needs 2 GiB of free host memory");
    SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(tinyPipeline(), dev);
    OffloadSettings s = streamedFromPinnedMemory();
    s.pin_reserve_bytes = *free_host - 512 * kMiB;
    (void)model.place(s, 0);
    const int64_t limit = dev.memory().pinned_limit_bytes - dev.memory().pinned_bytes;
    QVERIFY2(limit > 256 * kMiB && limit < 768 * kMiB,
             qPrintable(QString("pinned limit %1 bytes").arg(limit)));
    QVERIFY(dev.memory().pinned_bytes > 0);
    // A reserve beyond what is free leaves nothing to pin: the weights stream from pageable memory.
    pipelines::LoadedModel other(tinyPipeline(), dev);
    s.pin_reserve_bytes = *free_host * 2;
    model.offload();
    (void)other.place(s, 0);
    QCOMPARE(dev.memory().pinned_bytes, int64_t{0});
  }

  // Each component's placement line is logged as soon as its resident weights are placed,
  // before its pin step (which may take long or fail), and the model's next component
  // is placed after it.
  void placementLineComesBeforeThePinStep() {
    SimulatedDevice dev(256 * kMiB);
    pipelines::LoadedModel model(tinyPipeline(), dev);
    OffloadSettings s = streamedFromPinnedMemory();
    std::vector<std::pair<std::string, int64_t>> heard;  // line, pinned bytes then
    const std::vector<std::string> lines = model.place(s, 0, [&](const std::string& line) {
      heard.emplace_back(line, dev.memory().pinned_bytes);
    });
    QCOMPARE(heard.size(), lines.size());
    const auto unet = std::find_if(heard.begin(), heard.end(), [](const auto& h) {
      return h.first.rfind("placed unet (", 0) == 0;
    });
    QVERIFY(unet != heard.end());
    QVERIFY2(unet->first.find("pinned") != std::string::npos, unet->first.c_str());
    const int64_t pinned_before = unet->second;
    const int64_t pinned_after =
        std::next(unet) != heard.end() ? std::next(unet)->second : dev.memory().pinned_bytes;
    QVERIFY2(pinned_after > pinned_before,
             "the UNet's weights were pinned after its line, not before");
  }

  // Switching to another model gives the first one's pinned host memory back, reserved
  // blocks included, before the next model loads; unloading gives it back at once.
  void pinnedMemoryGoesBackOnSwitchAndUnload() {
    SimulatedDevice dev(256 * kMiB);
    const int64_t baseline = dev.memory().pinned_reserved_bytes;
    ModelCache cache(dev, CacheBudget{0, 0, 1});
    OffloadSettings s = streamedFromPinnedMemory();
    const auto loadPinned = [&] {
      auto m = std::make_shared<pipelines::LoadedModel>(tinyPipeline(), dev);
      (void)m->place(s, 0);
      return std::static_pointer_cast<CachedModel>(m);
    };
    (void)cache.acquire("a", loadPinned);
    const int64_t pinned = dev.memory().pinned_bytes;
    QVERIFY(pinned > 0);
    int64_t at_load = -1, reserved_at_load = -1;
    (void)cache.acquire("b", [&] {
      at_load = dev.memory().pinned_bytes;
      reserved_at_load = dev.memory().pinned_reserved_bytes;
      return loadPinned();
    });
    QCOMPARE(at_load, baseline);
    QCOMPARE(reserved_at_load, baseline);
    QCOMPARE(dev.memory().pinned_bytes, pinned);  // the second model's, as many
    QVERIFY(cache.unload("b"));
    QCOMPARE(dev.memory().pinned_bytes, baseline);
    QCOMPARE(dev.memory().pinned_reserved_bytes, baseline);
    QCOMPARE(dev.memory().reserved_bytes, int64_t{0});
  }

  // Placing a whole pipeline: one component that does not fit fails alone and is torn
  // down; the others stay placed; model mode sends the previous component home.
  void pipelinePlacementFailsPerComponent() {
    auto pipe = tinyPipeline();
    const auto bytes = [](const weights::ParamList& params) {
      int64_t n = 0;
      for (const auto& s : params.slots()) n += static_cast<int64_t>(s.tensor->nbytes()) + 512;
      return n;
    };
    const int64_t all = pipe->weightBytes();
    // The resident text encoder fits, a resident UNet does not; the VAE, placed after the
    // UNet, only onloads when called.
    SimulatedDevice dev(bytes(pipe->textEncoder(0).params()) + bytes(pipe->unet().params()) / 2);
    pipelines::LoadedModel model(std::move(pipe), dev);
    OffloadSettings settings;
    settings.per_component["vae"] = OffloadMode::Model;
    settings.vae_resident_threshold_bytes = 0;
    QVERIFY_THROWS_EXCEPTION(c10::OutOfMemoryError, model.place(settings, 0));
    const auto& placements = model.placements();
    QCOMPARE(placements.size(), std::size_t{3});
    QVERIFY(placements[0]->deviceBytes() > 0);           // text encoder
    QCOMPARE(placements[1]->deviceBytes(), int64_t{0});  // UNet, torn down
    QVERIFY(model.as<pipelines::SdPipeline>().unet().params().hooks() == nullptr);
    QCOMPARE(placements[2]->decision().mode, OffloadMode::Model);  // VAE, placed after the failure
    QVERIFY(model.as<pipelines::SdPipeline>().vae().params().hooks() == placements[2].get());
    // Streaming the UNet fits; the others are left alone.
    OffloadSettings streamed = settings;
    streamed.per_component["unet"] = OffloadMode::GroupBlock;
    const auto lines = model.place(streamed, 0);
    QCOMPARE(lines.size(), std::size_t{1});
    QVERIFY2(lines[0].find("unet (UNetModel") != std::string::npos, lines[0].c_str());
    QCOMPARE(placements[0]->counters().unchanged, int64_t{1});
    QCOMPARE(placements[2]->counters().unchanged, int64_t{1});
    QCOMPARE(placements[1]->decision().mode, OffloadMode::GroupBlock);
    QVERIFY(model.as<pipelines::SdPipeline>().unet().params().hooks() == placements[1].get());
    model.offload();
    QCOMPARE(dev.memory().allocated_bytes, int64_t{0});
    QCOMPARE(model.hostBytes(), all);

    // Model mode: the text encoder goes home when the UNet is called.
    SimulatedDevice big(256 * kMiB);
    pipelines::LoadedModel both(tinyPipeline(), big);
    OffloadSettings m;
    m.mode = OffloadMode::Model;
    both.place(m, 0);
    const UNetCall call;
    {
      DeviceScope scope(big);
      (void)both.as<pipelines::SdPipeline>().encodePrompts("a red circle", "");
    }
    QVERIFY(both.placements()[0]->deviceBytes() > 0);
    (void)call.run(both.as<pipelines::SdPipeline>(), big);
    QCOMPARE(both.placements()[0]->deviceBytes(), int64_t{0});
    QVERIFY(both.placements()[1]->deviceBytes() > 0);
  }

  // Through the engine: new settings re-place the cached model without reloading it.
  void engineAppliesSettingsToLoadedModels() {
    std::vector<Event> events;
    std::mutex mutex;
    EngineOptions o;
    o.device = "sim:256M";
    o.sink = [&](const Event& e) {
      std::lock_guard lock(mutex);
      events.push_back(e);
    };
    Engine engine(o);
    Job job;
    job.params.model.path = tinyPath();
    job.params.prompt.text = "a red circle";
    job.params.sampling.steps = 2;
    job.params.size.width = job.params.size.height = 64;
    job.params.model.threads = 2;
    job.params.model.dtype = kiln::ComputeDType::Float32;  // the placement log below names it
    QVERIFY(engine.submit(job) > 0);
    QVERIFY(engine.waitIdle(120));
    const MemoryStats resident = engine.memoryStats();
    OffloadSettings s;
    s.per_component["unet"] = OffloadMode::GroupBlock;
    engine.setOffloadSettings(s);
    // Placed again at once, between jobs, without a job and without reloading.
    QVERIFY(engine.waitIdle(120));
    const MemoryStats streamed = engine.memoryStats();
    bool replaced = false, reported_idle = false;
    {
      std::lock_guard lock(mutex);
      for (const auto& e : events) {
        if (e.job != 0) continue;
        if (e.type == EventType::Log &&
            e.message.find("placed unet (UNetModel") != std::string::npos &&
            e.message.find("fp32, not quantized): group-block") != std::string::npos)
          replaced = true;
        if (e.type == EventType::MemoryStats)
          for (const auto& line : e.memory.placements)
            reported_idle = reported_idle || line.find("group-block") != std::string::npos;
      }
    }
    QVERIFY(replaced);
    QVERIFY(reported_idle);
    QVERIFY(streamed.device_allocated_bytes < resident.device_allocated_bytes);
    bool reported = false;
    for (const auto& line : streamed.placements)
      reported = reported || line.find("group-block") != std::string::npos;
    QVERIFY(reported);
    // The next job uses the placement as it is: no load, no placement again.
    const JobId second = engine.submit(job);
    QVERIFY(engine.waitIdle(120));
    bool loaded_again = false, placed_again = false, finished = false;
    for (const auto& e : events) {
      if (e.job != second) continue;
      if (e.type == EventType::StagePlanned)
        for (const auto& st : e.stages)
          loaded_again = loaded_again || st.kind == StageKind::LoadModel;
      if (e.type == EventType::Log && e.message.find("placed ") != std::string::npos)
        placed_again = true;
      finished = finished || e.type == EventType::JobFinished;
    }
    QVERIFY(finished);
    QVERIFY(!loaded_again);
    QVERIFY(!placed_again);
    // The first job logged each component's placement once, resident included.
    for (const char* component : {"placed unet (", "placed vae (", "placed text_encoder ("}) {
      int logged = 0;
      for (const auto& e : events)
        if (e.job != second && e.job != 0 && e.type == EventType::Log &&
            e.message.find(component) != std::string::npos)
          ++logged;
      QVERIFY2(logged == 1, component);
    }
    // Streamed with pinned host copies, then unloaded: device and pinned bytes return to
    // nothing.
    s.streams = true;
    s.pin = PinMode::On;
    s.pin_reserve_bytes = 0;
    engine.setOffloadSettings(s);
    QVERIFY(engine.submit(job) > 0);
    QVERIFY(engine.waitIdle(120));
    QVERIFY(engine.memoryStats().pinned_bytes > 0);
    engine.unloadModels();
    QCOMPARE(engine.memoryStats().pinned_bytes, int64_t{0});
    QCOMPARE(engine.memoryStats().pinned_reserved_bytes, int64_t{0});  // cached blocks too
    QCOMPARE(engine.memoryStats().device_allocated_bytes, int64_t{0});
    OffloadSettings bad;
    bad.blocks_per_group = 0;
    QVERIFY_THROWS_EXCEPTION(Error, engine.setOffloadSettings(bad));
  }

  // The working reserve: room is made for it beside the weights (other loaded models
  // leave the device, at once when it changes); one the device cannot hold beside the
  // model is given up with a log line, and rendering goes on.
  void workingReserveLeavesRoomBesideTheWeights() {
    std::vector<Event> events;
    std::mutex mutex;
    EngineOptions o;
    o.device = "sim:256M";
    o.cached_models = 2;
    o.sink = [&](const Event& e) {
      std::lock_guard lock(mutex);
      events.push_back(e);
    };
    Engine engine(o);
    const auto render = [&](const std::string& model) {
      Job job;
      job.params.model.path = model;
      job.params.prompt.text = "a red circle";
      job.params.sampling.steps = 1;
      job.params.size.width = job.params.size.height = 64;
      const JobId id = engine.submit(job);
      engine.waitIdle(120);
      std::lock_guard lock(mutex);
      for (const auto& e : events)
        if (e.job == id && e.type == EventType::JobFinished) return true;
      return false;
    };
    const auto logged = [&](const std::string& text) {
      std::lock_guard lock(mutex);
      for (const auto& e : events)
        if (e.type == EventType::Log && e.message.find(text) != std::string::npos) return true;
      return false;
    };
    QVERIFY(render(tinyPath()));
    const int64_t first = engine.memoryStats().cached_model_device_bytes;
    QVERIFY(
        render(std::string(KILN_CONFORMANCE_DIR) + "/sd-tiny-1234/sdxl/sdxl_tiny_ldm.safetensors"));
    MemoryStats both = engine.memoryStats();
    QCOMPARE(both.cached_models, 2);
    QVERIFY(both.cached_model_device_bytes > first);  // both on the device
    QVERIFY(!logged("to make room"));
    // A reserve that fits only once the first model has left the device.
    const int64_t free_now = both.device_total_bytes - both.device_allocated_bytes;
    OffloadSettings s;
    s.working_reserve_bytes = free_now + first / 2;
    engine.setOffloadSettings(s);
    QVERIFY(engine.waitIdle(60));
    QVERIFY(logged("moved sd1_tiny_ldm"));
    QVERIFY(!logged("does not fit"));
    const MemoryStats after = engine.memoryStats();
    QCOMPARE(after.cached_models, 2);  // moved, not dropped
    QVERIFY(after.device_total_bytes - after.device_allocated_bytes >= s.working_reserve_bytes);
    // More than the device has: given up with a message; the render still runs.
    s.working_reserve_bytes = int64_t{1} << 30;
    engine.setOffloadSettings(s);
    QVERIFY(engine.waitIdle(60));
    QVERIFY(render(tinyPath()));
    QVERIFY(logged("working reserve of 1.00 GiB does not fit"));
    OffloadSettings bad;
    bad.working_reserve_bytes = -1;
    QVERIFY_THROWS_EXCEPTION(Error, engine.setOffloadSettings(bad));
  }
};

QTEST_GUILESS_MAIN(OffloadTest)
#include "test_offload.moc"
