// Interrupt latency: jobs on the conformance models (SD 1.x and SDXL tiny) and the
// starter model are cancelled at random moments, with and without the model cache (so
// that cancels land in loading as well as in encoding, denoising, decoding and saving).
// Prints p50, p99 and max of the time from cancel() to JobCancelled, where the cancels
// landed, the longest span the engine ran between two cancellation checks, and the p99
// against the mean denoising step measured in the same run.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kiln/engine.h"

using namespace kiln;
using Clock = std::chrono::steady_clock;

namespace {

// The events of the one job an engine runs at a time (reset before each submit).
struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  EventType end = EventType::Invalid;
  Clock::time_point end_at{};
  std::vector<Stage> plan;
  int stage = -1;  // the stage running when the job ended
  int64_t steps_done = 0;
  Clock::time_point first_step{}, last_step{};

  void operator()(const Event& e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (e.type == EventType::JobStarted) started = true;
    if (e.type == EventType::StagePlanned) plan = e.stages;
    if (e.type == EventType::StageStarted) stage = e.stage;
    if (e.type == EventType::Progress && e.unit == "steps") {
      if (e.done == 1) first_step = Clock::now();
      last_step = Clock::now();
      steps_done = e.done;
    }
    if (e.type == EventType::JobFinished || e.type == EventType::JobFailed || e.type == EventType::JobCancelled) {
      end = e.type;
      end_at = Clock::now();
      if (e.type != EventType::JobFinished && e.stage >= 0) stage = e.stage;
    }
    changed.notify_all();
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    started = false;
    end = EventType::Invalid;
    plan.clear();
    stage = -1;
    steps_done = 0;
  }
};

void writePpm(const std::string& path, const Image& image) {
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << image.width << " " << image.height << "\n255\n";
  for (float v : image.pixels) out.put(static_cast<char>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f));
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 240;
  if (samples < 1) {
    std::fprintf(stderr, "usage: bench_interrupt [SAMPLES]\n");
    return 2;
  }
  const std::string conf = std::string(KILN_SHARED_DIR) + "/conformance/sd-tiny-1234/";
  const std::vector<std::pair<std::string, std::string>> models{
      {"sd1 tiny", conf + "sd1/sd1_tiny_ldm.safetensors"},
      {"sdxl tiny", conf + "sdxl/sdxl_tiny_ldm.safetensors"},
      {"starter", starterModelPath()}};
  const std::filesystem::path out_dir = std::filesystem::temp_directory_path() / "kiln-bench-interrupt";
  std::filesystem::create_directories(out_dir);

  std::mt19937 rng(1234);
  std::vector<double> latencies;
  std::map<std::string, int> landed;
  double step_seconds_sum = 0;
  int step_runs = 0, finished_first = 0;
  InterruptStats checks;
  for (int cached = 0; cached <= 1; ++cached)
    for (const auto& [name, path] : models) {
      Watch watch;
      EngineOptions options;
      options.sink = [&watch](const Event& e) { watch(e); };
      options.write_image = writePpm;
      options.cached_models = cached;
      Engine engine(options);
      Job job;
      job.params.model_path = path;
      job.params.prompt = "a small red star in the top left corner";
      job.params.steps = 8;
      job.params.threads = 2;
      job.params.width = job.params.height = 64;
      job.output_path = (out_dir / "bench.ppm").string();
      // Uninterrupted runs set the span the cancels are spread over (the second one: the
      // first pays for warming up).
      double job_seconds = 0;
      for (int warm = 0; warm < 2; ++warm) {
        watch.reset();
        const auto t0 = Clock::now();
        engine.submit(job);
        engine.waitIdle(600);
        job_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      {
        std::lock_guard<std::mutex> lock(watch.mutex);
        if (watch.steps_done > 1) {
          step_seconds_sum += std::chrono::duration<double>(watch.last_step - watch.first_step).count() /
                              static_cast<double>(watch.steps_done - 1);
          ++step_runs;
        }
      }
      const std::size_t target = latencies.size() + static_cast<std::size_t>((samples + 5) / 6);
      for (int attempt = 0; latencies.size() < target && attempt < 10 * samples; ++attempt) {
        watch.reset();
        const JobId id = engine.submit(job);
        {
          std::unique_lock<std::mutex> lock(watch.mutex);
          watch.changed.wait(lock, [&] { return watch.started || watch.end != EventType::Invalid; });
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(
            std::uniform_real_distribution<double>(0, 0.9 * job_seconds)(rng)));
        const auto cancel_at = Clock::now();
        engine.cancel(id);
        std::unique_lock<std::mutex> lock(watch.mutex);
        watch.changed.wait(lock, [&] { return watch.end != EventType::Invalid; });
        if (watch.end != EventType::JobCancelled) {
          ++finished_first;
          continue;
        }
        latencies.push_back(std::chrono::duration<double>(watch.end_at - cancel_at).count() * 1000.0);
        const std::string where = watch.stage >= 0 && watch.stage < static_cast<int>(watch.plan.size())
                                      ? stageKindName(watch.plan[static_cast<std::size_t>(watch.stage)].kind)
                                      : "between stages";
        ++landed[where];
      }
      engine.waitIdle(60);
      const InterruptStats s = engine.interruptStats();
      checks.checks += s.checks;
      if (s.longest_gap_seconds > checks.longest_gap_seconds) checks = {checks.checks, s.longest_gap_seconds, s.longest_gap_from, s.longest_gap_to};
      std::printf("%-9s %s: one job %.0f ms\n", name.c_str(), cached ? "cached  " : "uncached", job_seconds * 1000);
    }
  std::filesystem::remove_all(out_dir);
  if (latencies.empty()) {
    std::fprintf(stderr, "bench_interrupt: no cancel landed\n");
    return 1;
  }
  const double p99 = percentile(latencies, 0.99);
  std::printf("\ncancel -> JobCancelled over %zu cancels (%d jobs finished first):\n", latencies.size(),
              finished_first);
  std::printf("  p50 %.2f ms   p99 %.2f ms   max %.2f ms\n", percentile(latencies, 0.5), p99,
              *std::max_element(latencies.begin(), latencies.end()));
  std::printf("  landed in:");
  for (const auto& [where, n] : landed) std::printf(" %s %d", where.c_str(), n);
  std::printf("\n  longest span between two cancellation checks: %.2f ms (%lld checks), from %s to %s\n",
              checks.longest_gap_seconds * 1000, static_cast<long long>(checks.checks),
              checks.longest_gap_from.c_str(), checks.longest_gap_to.c_str());
  const double step_ms = step_runs > 0 ? step_seconds_sum / step_runs * 1000 : 0;
  if (step_ms > 0) std::printf("  mean denoising step %.2f ms; p99 latency / step = %.2f\n", step_ms, p99 / step_ms);
  std::printf("  target p99 <= 50 ms: %s\n", p99 <= 50 ? "met" : "NOT met");
  return 0;
}
