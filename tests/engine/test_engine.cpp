// The engine's job queue on its own thread: planned stages and honest progress, cancel
// and skip aimed at exactly one job, interruption while loading and saving with nothing
// left behind, non-finite results as failures, calibrated stage timings, and a stress
// run of 500 jobs cancelled at random moments.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "checkpoint_variants.h"
#include "kiln/engine.h"
#include "ref_tensors.h"

namespace {

using Clock = std::chrono::steady_clock;
using kiln::EventType;

// Collects events from the engine thread; tests wait on them with a deadline.
class Recorder {
 public:
  // Runs on the engine thread (or the caller's) for every event.
  std::function<void(const kiln::Event&)> on_event;

  void operator()(const kiln::Event& e) {
    if (on_event) on_event(e);
    std::lock_guard<std::mutex> lock(mutex_);
    kiln::Event copy = e;
    copy.outputs.clear();  // counted below; keeps the stress run's memory flat
    events_.push_back(std::move(copy));
    if (e.type == EventType::JobFinished) outputs_[e.job] = static_cast<int>(e.outputs.size());
    changed_.notify_all();
  }

  bool waitFor(const std::function<bool(const std::vector<kiln::Event>&)>& done,
               double seconds = 60) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::duration<double>(seconds),
                             [&] { return done(events_); });
  }
  bool waitForEnd(kiln::JobId id, double seconds = 60) {
    return waitFor([&](const auto& ev) { return terminal(ev, id) != nullptr; }, seconds);
  }

  static const kiln::Event* terminal(const std::vector<kiln::Event>& ev, kiln::JobId id) {
    for (const auto& e : ev)
      if (e.job == id && (e.type == EventType::JobFinished || e.type == EventType::JobFailed ||
                          e.type == EventType::JobCancelled))
        return &e;
    return nullptr;
  }

  std::vector<kiln::Event> of(kiln::JobId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<kiln::Event> out;
    for (const auto& e : events_)
      if (e.job == id) out.push_back(e);
    return out;
  }
  kiln::Event end(kiln::JobId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const kiln::Event* e = terminal(events_, id);
    return e ? *e : kiln::Event{};
  }
  int outputs(kiln::JobId id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = outputs_.find(id);
    return it == outputs_.end() ? -1 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<kiln::Event> events_;
  std::map<kiln::JobId, int> outputs_;
};

std::string tinyModel() {
  return kiln::testing::conformancePath("sd-tiny-1234/sd1/sd1_tiny_ldm.safetensors");
}

kiln::Job job(int steps = 2, int batch = 1) {
  kiln::Job j;
  j.params.model.path = tinyModel();
  j.params.prompt.text = "a red circle";
  j.params.sampling.steps = steps;
  j.params.size.width = 64;
  j.params.size.height = 64;
  j.params.model.threads = 2;
  j.params.sampling.cfg_scale = 5;
  j.params.model.dtype = kiln::ComputeDType::Float32;  // not auto: the timings keys name it
  j.batch = batch;
  return j;
}

// A plain PPM writer: the engine tests do not depend on the media library.
void writePpm(const std::string& path, const kiln::Image& image) {
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << image.width << " " << image.height << "\n255\n";
  for (float v : image.pixels)
    out.put(static_cast<char>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255)));
  if (!out.flush()) throw kiln::Error(kiln::ErrorKind::Io, "cannot write " + path);
}

int64_t rssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * 4096;
}

}  // namespace

class TestEngine : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  kiln::EngineOptions options(Recorder& rec) {
    kiln::EngineOptions o;
    o.sink = [&rec](const kiln::Event& e) { rec(e); };
    o.write_image = writePpm;
    return o;
  }

  // Runs one 4-step job on a fresh engine with the timings file; returns the seconds the
  // plan expected for its denoising stage.
  double plannedDenoiseSeconds(const std::string& timings) {
    Recorder rec;
    kiln::EngineOptions o = options(rec);
    o.timings_path = timings;
    kiln::Engine engine(o);
    const kiln::JobId id = engine.submit(job(4));
    if (!rec.waitForEnd(id)) return -1;
    for (const auto& e : rec.of(id))
      if (e.type == EventType::StagePlanned) return e.stages.at(2).expected_seconds;
    return -1;
  }

 private Q_SLOTS:
  // The whole plan arrives before any stage starts; progress never runs backwards and
  // ends at 1; a batch saves one file per image with its own seed. On a machine where the
  // stages were never timed no time left is given ("estimating"); the next job has one.
  void plansStagesAndReportsProgress() {
    Recorder rec;
    kiln::Engine engine(options(rec));
    kiln::Job j = job(3, 2);
    j.output_path = dir_.filePath("plan.ppm").toStdString();
    j.previews = true;
    const kiln::JobId id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    const auto ev = rec.of(id);
    QCOMPARE(ev.front().type, EventType::JobQueued);
    QCOMPARE(ev[1].type, EventType::JobStarted);
    std::vector<kiln::Stage> plan;
    double last_fraction = 0;
    int previews = 0;
    std::set<kiln::StageKind> timed;  // kinds of stage that finished once
    for (const auto& e : ev) {
      if (e.type == EventType::StagePlanned) plan = e.stages;
      if (e.type == EventType::StageFinished)
        timed.insert(plan.at(static_cast<std::size_t>(e.stage)).kind);
      if (e.type == EventType::StageStarted)
        QVERIFY2(!plan.empty(), "a stage started before the plan");
      if (e.type == EventType::Progress || e.type == EventType::StageFinished) {
        QVERIFY(e.done <= e.total);
        QVERIFY2(e.fraction >= last_fraction - 1e-9, "overall progress ran backwards");
        // Estimating until every kind of stage still to come was timed once.
        bool all_timed = true;
        for (std::size_t k = static_cast<std::size_t>(e.stage); k < plan.size(); ++k)
          all_timed = all_timed && timed.count(plan[k].kind) > 0;
        if (all_timed)
          QVERIFY(e.eta_seconds >= 0);
        else
          QCOMPARE(e.eta_seconds, -1.0);
        last_fraction = e.fraction;
      }
      if (e.type == EventType::Preview) {
        ++previews;
        QCOMPARE(e.image.width, 8);  // latent resolution of a 64x64 picture
        QCOMPARE(e.image.pixels.size(), std::size_t{8 * 8 * 3});
      }
    }
    std::vector<kiln::StageKind> kinds;
    for (const auto& s : plan) kinds.push_back(s.kind);
    using K = kiln::StageKind;
    QCOMPARE(kinds, (std::vector<K>{K::LoadModel, K::EncodePrompt, K::Denoise, K::Decode, K::Save,
                                    K::Denoise, K::Decode, K::Save}));
    QCOMPARE(plan[2].total, int64_t{3});
    QCOMPARE(plan[5].image, 1);
    QCOMPARE(previews, 6);
    const kiln::Event end = rec.end(id);
    QCOMPARE(end.type, EventType::JobFinished);
    QCOMPARE(end.fraction, 1.0);
    QCOMPARE(rec.outputs(id), 2);
    QCOMPARE(end.output_paths.size(), std::size_t{2});
    QVERIFY(QFileInfo::exists(dir_.filePath("plan.ppm")));
    QVERIFY(QFileInfo::exists(dir_.filePath("plan-2.ppm")));
    QCOMPARE(QFileInfo(dir_.filePath("plan.ppm")).size(),
             QFileInfo(dir_.filePath("plan-2.ppm")).size());

    // The second job finds the model in the cache: no load stage.
    const kiln::JobId again = engine.submit(job(1));
    QVERIFY(rec.waitForEnd(again));
    for (const auto& e : rec.of(again)) {
      if (e.type == EventType::StagePlanned) QCOMPARE(e.stages.front().kind, K::EncodePrompt);
      if (e.type == EventType::Progress) QVERIFY(e.eta_seconds >= 0);  // every stage was timed once
    }
    QCOMPARE(engine.memoryStats().cached_models, 1);
    QVERIFY(engine.memoryStats().cached_model_bytes > 0);
    QCOMPARE(engine.memoryStats().job_bytes, int64_t{0});
  }

  // On the simulated accelerator the weights and the work are device memory: the weights
  // stay resident between jobs, the work's memory comes back when the job ends, unloading
  // returns every byte, and the picture is the one the CPU renders.
  void simulatedDeviceHoldsWeightsAndWork() {
    std::vector<float> cpu_pixels, sim_pixels;
    const auto keep = [](std::vector<float>& into) {
      return [&into](const kiln::Event& e) {
        if (e.type == EventType::JobFinished) into = e.outputs.at(0).pixels;
      };
    };
    Recorder cpu_rec;
    cpu_rec.on_event = keep(cpu_pixels);
    kiln::Engine cpu(options(cpu_rec));
    const kiln::JobId cpu_id = cpu.submit(job(2));
    QVERIFY(cpu_rec.waitForEnd(cpu_id));
    QVERIFY(!cpu_pixels.empty());

    Recorder rec;
    rec.on_event = keep(sim_pixels);
    kiln::EngineOptions o = options(rec);
    o.device = "sim:256MiB";
    kiln::Engine engine(o);
    QCOMPARE(engine.memoryStats().device_allocated_bytes, int64_t{0});
    int64_t after_first = 0;
    for (int round = 0; round < 3; ++round) {
      const kiln::JobId id = engine.submit(job(2));
      QVERIFY(rec.waitForEnd(id));
      QCOMPARE(rec.end(id).type, EventType::JobFinished);
      QVERIFY(sim_pixels == cpu_pixels);
      sim_pixels.clear();
      const kiln::MemoryStats m = engine.memoryStats();
      QCOMPARE(m.device, std::string("sim:256 MiB"));
      QVERIFY(m.cached_model_device_bytes > 0);
      QCOMPARE(m.cached_model_device_bytes, m.cached_model_bytes);
      // Only the weights remain allocated (each rounded up to the allocator's 512-byte
      // blocks), the same after every job; the work was counted while it ran.
      QVERIFY(m.device_allocated_bytes >= m.cached_model_device_bytes);
      QVERIFY(m.device_allocated_bytes - m.cached_model_device_bytes < 256 * 1024);
      if (round == 0) after_first = m.device_allocated_bytes;
      QCOMPARE(m.device_allocated_bytes, after_first);
      QVERIFY2(m.device_peak_bytes > m.device_allocated_bytes,
               "the job's tensors were not device memory");
    }
    engine.unloadModels();
    const kiln::MemoryStats after = engine.memoryStats();
    QCOMPARE(after.device_allocated_bytes, int64_t{0});
    QCOMPARE(after.device_reserved_bytes, int64_t{0});
    QCOMPARE(after.cached_models, 0);
  }

  // The memory map says before Apply what Apply then does: after each settings change the
  // device holds exactly the resident weights the plan named, and a plan that does not
  // fit says so. The CPU has nothing to place; settings that cannot work are refused.
  void memoryMapShowsWhatApplyDoes() {
    Recorder cpu_rec;
    kiln::Engine cpu(options(cpu_rec));
    QVERIFY(!cpu.planMemory({}).accelerator);
    QCOMPARE(cpu.planMemory({}).device, std::string("cpu"));

    Recorder rec;
    kiln::EngineOptions o = options(rec);
    o.device = "sim:256MiB";
    kiln::Engine engine(o);
    const kiln::MemoryPlan empty = engine.planMemory({});
    QVERIFY(empty.accelerator);
    QVERIFY(empty.models.empty());  // nothing loaded yet
    const kiln::JobId id = engine.submit(job(2));
    QVERIFY(rec.waitForEnd(id));
    QCOMPARE(rec.end(id).type, EventType::JobFinished);

    const auto settings = [](kiln::OffloadMode mode, bool streams) {
      kiln::OffloadSettings s;
      s.mode = mode;
      s.streams = streams;
      s.working_reserve_bytes = 0;
      return s;
    };
    for (const kiln::OffloadSettings& s :
         {settings(kiln::OffloadMode::None, false), settings(kiln::OffloadMode::Balanced, false),
          settings(kiln::OffloadMode::GroupBlock, true),
          settings(kiln::OffloadMode::GroupLeaf, false)}) {
      kiln::MemoryPlanRequest request;
      request.offload = s;
      const kiln::MemoryPlan plan = engine.planMemory(request);
      QCOMPARE(plan.models.size(), std::size_t{1});
      const kiln::ModelMemoryPlan& m = plan.models[0];
      const char* mode = kiln::offloadModeName(s.mode);
      QVERIFY2(m.fits(), mode);
      QCOMPARE(m.width, int64_t{512});  // SD 1.x's native size (no size asked)
      QVERIFY(m.working_bytes > 0);
      QCOMPARE(m.components.size(), std::size_t{3});  // unet, vae, text_encoder
      int64_t weights = 0;
      for (const kiln::PlannedComponent& c : m.components) weights += c.weight_bytes;
      QCOMPARE(m.resident_bytes + m.host_bytes, weights);
      QCOMPARE(m.left_bytes, m.room_bytes - m.resident_bytes - m.streamed_bytes - m.working_bytes);
      engine.setOffloadSettings(s);
      QVERIFY(engine.waitIdle(60));
      QVERIFY2(engine.memoryStats().cached_model_device_bytes == m.resident_bytes, mode);
      if (s.mode == kiln::OffloadMode::None)
        QCOMPARE(m.streamed_bytes, int64_t{0});
      else
        QVERIFY2(m.resident_bytes < weights && m.streamed_bytes > 0, mode);
    }
    // Too large a size for the device: said before anything is applied.
    kiln::MemoryPlanRequest huge;
    huge.width = huge.height = 8192;
    const kiln::ModelMemoryPlan too_big = engine.planMemory(huge).models.at(0);
    QVERIFY(!too_big.fits());
    QVERIFY(too_big.left_bytes < 0);
    QVERIFY2(too_big.problems[0].find("more device memory") != std::string::npos,
             too_big.problems[0].c_str());
    kiln::MemoryPlanRequest bad;
    bad.offload.record_stream = true;  // without streams
    QVERIFY_THROWS_EXCEPTION(kiln::Error, engine.planMemory(bad));
  }

  // A device too small for the model fails the job before loading onto it, with a message
  // that says what to do, and leaves nothing on the device.
  void tooSmallDeviceFailsClearly() {
    Recorder rec;
    kiln::EngineOptions o = options(rec);
    o.device = "sim:64KiB";
    kiln::Engine engine(o);
    const kiln::JobId id = engine.submit(job(2));
    QVERIFY(rec.waitForEnd(id));
    const kiln::Event end = rec.end(id);
    QCOMPARE(end.type, EventType::JobFailed);
    QCOMPARE(end.error, kiln::ErrorKind::OutOfMemory);
    QVERIFY2(end.message.find("sim:64.0 KiB") != std::string::npos, end.message.c_str());
    QVERIFY2(end.message.find("offload mode") != std::string::npos, end.message.c_str());
    QCOMPARE(engine.memoryStats().device_allocated_bytes, int64_t{0});
    QVERIFY_THROWS_EXCEPTION(kiln::Error, [] {
      kiln::EngineOptions bad;
      bad.device = "tpu:0";
      kiln::Engine e(bad);
    }());
  }

  // Cancelling the queued job leaves the running one alone, and the reverse.
  void cancelTouchesOnlyItsJob() {
    Recorder rec;
    kiln::Engine engine(options(rec));
    std::atomic<kiln::JobId> queued{0};
    rec.on_event = [&](const kiln::Event& e) {
      if (e.type == EventType::StageStarted && e.job == 1 && queued.load() != 0)
        engine.cancel(queued.exchange(0));
    };
    const kiln::JobId a = engine.submit(job(6));
    const kiln::JobId b = engine.submit(job(2));
    queued = b;
    QVERIFY(rec.waitForEnd(a) && rec.waitForEnd(b));
    QCOMPARE(rec.end(a).type, EventType::JobFinished);
    QCOMPARE(rec.end(b).type, EventType::JobCancelled);
    for (const auto& e : rec.of(b)) QVERIFY(e.type != EventType::JobStarted);

    Recorder rec2;
    kiln::Engine engine2(options(rec2));
    rec2.on_event = [&](const kiln::Event& e) {
      if (e.type == EventType::Progress && e.job == 1 && e.unit == "steps") engine2.cancel(1);
    };
    const kiln::JobId c = engine2.submit(job(6));
    const kiln::JobId d = engine2.submit(job(2));
    QVERIFY(rec2.waitForEnd(c) && rec2.waitForEnd(d));
    QCOMPARE(rec2.end(c).type, EventType::JobCancelled);
    QCOMPARE(rec2.end(d).type, EventType::JobFinished);
    QVERIFY(!engine2.cancel(c));  // over
    QVERIFY(!engine2.cancel(999));
  }

  // A cancel during loading stops at the next tensor (no more bytes read); nothing
  // enters the cache and the job's memory is given back.
  // A checkpoint rewritten or cut short on disk while its model is cached is not used
  // through the old memory map (SIGBUS, or weights of two files): the next job loads it
  // again, and a truncated file is a clear error naming it; the engine goes on.
  void fileChangedUnderACachedModel() {
    Recorder rec;
    kiln::Engine engine(options(rec));
    const QString model = dir_.filePath("changing.safetensors");
    QFile::remove(model);
    QVERIFY(QFile::copy(QString::fromStdString(tinyModel()), model));
    kiln::Job j = job(2);
    j.params.model.path = model.toStdString();
    kiln::JobId id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    QCOMPARE(rec.end(id).type, EventType::JobFinished);
    QCOMPARE(engine.memoryStats().cached_models, 1);
    // Cut short in place (the same file, as a download or copy over it does).
    QVERIFY(QFile::resize(model, QFileInfo(model).size() / 2));
    id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    const kiln::Event failed = rec.end(id);
    QCOMPARE(failed.type, EventType::JobFailed);
    QCOMPARE(failed.error, kiln::ErrorKind::CorruptFile);
    QVERIFY2(failed.message.find("changing.safetensors") != std::string::npos,
             failed.message.c_str());
    // Whole again: loaded afresh, and the picture is the one the file draws.
    QFile::remove(model);
    QVERIFY(QFile::copy(QString::fromStdString(tinyModel()), model));
    id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    QCOMPARE(rec.end(id).type, EventType::JobFinished);
    bool loaded_again = false;
    for (const auto& e : rec.of(id))
      if (e.type == EventType::StagePlanned)
        loaded_again = e.stages.front().kind == kiln::StageKind::LoadModel;
    QVERIFY(loaded_again);
  }

  // A cancel that arrives as prompt encoding or the decode starts lands inside that stage,
  // every time: the job ends cancelled there, the stage never finishes, nothing later runs,
  // and the job's memory is given back.
  void cancelLandsInsideAStage_data() {
    QTest::addColumn<int>("kind");
    QTest::newRow("prompt encoding") << static_cast<int>(kiln::StageKind::EncodePrompt);
    QTest::newRow("decode") << static_cast<int>(kiln::StageKind::Decode);
  }
  void cancelLandsInsideAStage() {
    QFETCH(int, kind);
    Recorder rec;
    kiln::Engine engine(options(rec));
    std::vector<kiln::Stage> plan;
    rec.on_event = [&](const kiln::Event& e) {
      if (e.type == EventType::StagePlanned) plan = e.stages;
      if (e.type == EventType::StageStarted &&
          static_cast<int>(plan.at(static_cast<std::size_t>(e.stage)).kind) == kind)
        engine.cancel(e.job);
    };
    const kiln::JobId id = engine.submit(job(2));
    QVERIFY(rec.waitForEnd(id));
    const kiln::Event end = rec.end(id);
    QCOMPARE(end.type, EventType::JobCancelled);
    QCOMPARE(static_cast<int>(plan.at(static_cast<std::size_t>(end.stage)).kind), kind);
    for (const auto& e : rec.of(id)) {
      QVERIFY(!(e.type == EventType::StageFinished && e.stage == end.stage));
      QVERIFY(!(e.type == EventType::StageStarted && e.stage > end.stage));
    }
    QVERIFY(engine.waitIdle(10));
    QCOMPARE(engine.memoryStats().job_bytes, int64_t{0});
  }

  void cancelWhileLoading() {
    Recorder rec;
    kiln::EngineOptions o = options(rec);
    o.cached_models = 0;
    kiln::Engine engine(o);
    // The same job uncancelled, for a bound relative to this machine's speed now.
    const Clock::time_point started = Clock::now();
    const kiln::JobId whole = engine.submit(job(2));
    QVERIFY(rec.waitForEnd(whole));
    QCOMPARE(rec.end(whole).type, EventType::JobFinished);
    const double uncancelled = std::chrono::duration<double>(Clock::now() - started).count();
    Clock::time_point cancelled_at{};
    int64_t read_when_cancelled = -1;
    rec.on_event = [&](const kiln::Event& e) {
      if (e.type == EventType::Progress && e.unit == "bytes" && e.done > 0 &&
          read_when_cancelled < 0) {
        QVERIFY(e.done < e.total);
        read_when_cancelled = e.done;
        cancelled_at = Clock::now();
        engine.cancel(e.job);
      }
    };
    const kiln::JobId id = engine.submit(job(2));
    QVERIFY(rec.waitForEnd(id));
    const double latency = std::chrono::duration<double>(Clock::now() - cancelled_at).count();
    const kiln::Event end = rec.end(id);
    QCOMPARE(end.type, EventType::JobCancelled);
    QCOMPARE(end.stage, 0);  // the load stage
    QVERIFY(read_when_cancelled > 0);
    int reads_after = 0;
    for (const auto& e : rec.of(id))
      if (e.type == EventType::Progress && e.unit == "bytes" && e.done > read_when_cancelled)
        ++reads_after;
    QCOMPARE(reads_after, 0);
    // The cancel lands within the load, long before the job would have ended.
    QVERIFY2(latency < uncancelled / 2,
             qPrintable(QString("%1 s, the whole job %2 s").arg(latency).arg(uncancelled)));
    QVERIFY(engine.waitIdle(10));
    QCOMPARE(engine.memoryStats().cached_models, 0);
    QCOMPARE(engine.memoryStats().cached_model_bytes, int64_t{0});
    QCOMPARE(engine.memoryStats().job_bytes, int64_t{0});
  }

  // A cancel while the file is being written leaves neither the file nor a temporary.
  void cancelWhileSavingLeavesNoFile() {
    Recorder rec;
    kiln::EngineOptions o = options(rec);
    o.write_image = [](const std::string& path, const kiln::Image& image) {
      writePpm(path, image);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    };
    kiln::Engine engine(o);
    std::thread canceller;
    rec.on_event = [&](const kiln::Event& e) {
      if (e.type == EventType::StageStarted && e.unit == "files")
        canceller = std::thread([&engine, id = e.job] {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          engine.cancel(id);
        });
    };
    QTemporaryDir out;
    kiln::Job j = job(1);
    j.output_path = out.filePath("saved.ppm").toStdString();
    const kiln::JobId id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    canceller.join();
    QCOMPARE(rec.end(id).type, EventType::JobCancelled);
    QCOMPARE(QDir(out.path()).entryList(QDir::Files | QDir::Hidden).size(), 0);
  }

  // Skip finishes the image being rendered and keeps it with the earlier ones.
  void skipKeepsFinishedImages() {
    Recorder rec;
    kiln::Engine engine(options(rec));
    int denoise_started = 0;
    rec.on_event = [&](const kiln::Event& e) {
      // The second image's denoising stage: skip from here.
      if (e.type == EventType::StageStarted && e.unit == "steps" && ++denoise_started == 2)
        engine.skip(e.job);
    };
    const kiln::JobId id = engine.submit(job(2, 4));
    QVERIFY(rec.waitForEnd(id));
    QCOMPARE(rec.end(id).type, EventType::JobFinished);
    QCOMPARE(rec.outputs(id), 2);
    bool logged = false;
    for (const auto& e : rec.of(id))
      logged =
          logged || (e.type == EventType::Log && e.message.find("skipped") != std::string::npos);
    QVERIFY(logged);
    // On a queued job, skip keeps only the first image.
    kiln::Job slow = job(4);
    const kiln::JobId first = engine.submit(slow);
    const kiln::JobId second = engine.submit(job(1, 3));
    QVERIFY(engine.skip(second));
    QVERIFY(rec.waitForEnd(first) && rec.waitForEnd(second));
    QCOMPARE(rec.outputs(second), 1);
  }

  // NaN or infinity fails the job with a typed error naming the stage and step.
  void nonFiniteFailsTheJob() {
    const QString path = dir_.filePath("inf-unet.safetensors");
    kiln::testing::writeVariant(path, [](auto& t, auto& s) {
      kiln::testing::poison(t, s, "model.diffusion_model.out.2.bias");
    });
    Recorder rec;
    kiln::Engine engine(options(rec));
    kiln::Job j = job(2);
    j.params.model.path = path.toStdString();
    j.output_path = dir_.filePath("never.ppm").toStdString();
    const kiln::JobId id = engine.submit(j);
    QVERIFY(rec.waitForEnd(id));
    const kiln::Event end = rec.end(id);
    QCOMPARE(end.type, EventType::JobFailed);
    QCOMPARE(end.error, kiln::ErrorKind::NonFinite);
    QVERIFY2(end.message.find("step 1/2") != std::string::npos, end.message.c_str());
    QCOMPARE(end.stage, 2);  // load, encode, denoise
    QVERIFY(!QFileInfo::exists(dir_.filePath("never.ppm")));
  }

  // Stage durations measured in one run set the expectations of the next.
  void timingsPersistBetweenRuns() {
    const std::string timings = dir_.filePath("timings.json").toStdString();
    const double first_expected = plannedDenoiseSeconds(timings);
    QVERIFY(QFileInfo::exists(QString::fromStdString(timings)));
    QFile f(QString::fromStdString(timings));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("denoise|sd1|4096|fp32"));
    const double second_expected = plannedDenoiseSeconds(timings);
    // The built-in guess for 4 steps at 64x64 is 4 * 2 s / 64; this tiny model is much faster.
    QVERIFY(second_expected > 0);
    QVERIFY2(std::abs(second_expected - first_expected) > 1e-6,
             qPrintable(QString("%1 vs %2").arg(first_expected).arg(second_expected)));

    // A damaged timings file is ignored with a log message, not an error.
    QFile bad(dir_.filePath("bad-timings.json"));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write("{ not json");
    bad.close();
    Recorder rec3;
    kiln::EngineOptions o3 = options(rec3);
    o3.timings_path = bad.fileName().toStdString();
    kiln::Engine engine3(o3);
    QVERIFY(rec3.waitFor(
        [](const auto& ev) { return !ev.empty() && ev.front().type == EventType::Log; }, 1));
  }

  // 500 jobs, cancelled at random moments: every job ends exactly once, the engine goes
  // idle, and neither its accounting nor the process's resident memory grows.
  void stressCancelAtRandomMoments() {
    Recorder rec;
    kiln::Engine engine(options(rec));
    std::mt19937 rng(7);
    std::vector<kiln::JobId> ids;
    int64_t rss_warm = 0, cached_warm = 0;
    double warm_seconds = 0;  // the first 51 jobs, to scale the wait for the other 449
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 500; ++i) {
      ids.push_back(engine.submit(job(1 + static_cast<int>(rng() % 3))));
      if (rng() % 4 != 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
        engine.cancel(ids[rng() % ids.size()]);
      }
      if (i == 50) {
        QVERIFY(engine.waitIdle(60));
        warm_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        rss_warm = rssBytes();
        cached_warm = engine.memoryStats().cached_model_bytes;
      }
    }
    // A hang, not a slow machine: nine times the work of the warm-up, with three times
    // that to spare (a sanitizer build runs several times slower).
    const double limit = std::max(120.0, 30.0 * warm_seconds);
    QVERIFY2(engine.waitIdle(limit),
             qPrintable(QString("the engine did not become idle in %1 s").arg(limit)));
    int finished = 0, cancelled = 0;
    for (kiln::JobId id : ids) {
      const kiln::Event end = rec.end(id);
      QVERIFY2(end.type == EventType::JobFinished || end.type == EventType::JobCancelled,
               qPrintable(QString("job %1: %2").arg(id).arg(QString::fromStdString(end.message))));
      finished += end.type == EventType::JobFinished;
      cancelled += end.type == EventType::JobCancelled;
      int ends = 0;
      for (const auto& e : rec.of(id))
        ends += e.type == EventType::JobFinished || e.type == EventType::JobCancelled ||
                e.type == EventType::JobFailed;
      QCOMPARE(ends, 1);
    }
    QVERIFY(finished > 0 && cancelled > 0);
    const kiln::MemoryStats m = engine.memoryStats();
    QCOMPARE(m.job_bytes, int64_t{0});
    QCOMPARE(m.cached_model_bytes, cached_warm);
    const int64_t growth = rssBytes() - rss_warm;
    qInfo("finished %d, cancelled %d, resident growth %lld KiB", finished, cancelled,
          static_cast<long long>(growth / 1024));
#ifndef KILN_SANITIZE
    QVERIFY2(growth < 48 * 1024 * 1024, qPrintable(QString::number(growth)));
#else
    // Under AddressSanitizer resident memory includes the freed-memory quarantine (256 MiB);
    // leaks there are LeakSanitizer's to find, at exit.
    Q_UNUSED(growth);
#endif
  }
};

QTEST_APPLESS_MAIN(TestEngine)
#include "test_engine.moc"
