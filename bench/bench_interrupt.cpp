// Interrupt latency: jobs on the conformance models (SD 1.x and SDXL tiny) and the
// starter model are cancelled at random moments, with and without the model cache (so
// that cancels land in loading as well as in encoding, denoising, decoding and saving).
// Prints p50, p99 and max of the time from cancel() to JobCancelled, where the cancels
// landed, the longest span the engine ran between two cancellation checks, and the p99
// against the mean denoising step measured in the same run; with one compute thread and
// with two, since on a machine with as many cores as threads a long-spinning OpenMP team
// stalls for a scheduler slice whenever another thread needs a core (app/process_env.h).
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
    if (e.type == EventType::JobFinished || e.type == EventType::JobFailed ||
        e.type == EventType::JobCancelled) {
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
  for (float v : image.pixels)
    out.put(static_cast<char>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f));
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

// Cancels jobs at random moments with `threads` compute threads; prints the summary.
// Returns false when no cancel landed.
bool measure(int samples, int threads,
             const std::vector<std::pair<std::string, std::string>>& models,
             const std::filesystem::path& out_dir) {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::printf("\n== %d compute thread(s), OMP_WAIT_POLICY=%s, GOMP_SPINCOUNT=%s ==\n", threads,
              policy ? policy : "(unset)", spin ? spin : "(unset)");
  std::mt19937 rng(1234);
  std::vector<double> latencies;
  std::map<std::string, std::vector<double>> landed;  // latencies by the stage cancelled
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
      job.params.model.path = path;
      job.params.prompt.text = "a small red star in the top left corner";
      job.params.sampling.steps = 8;
      job.params.model.threads = threads;
      job.params.size.width = job.params.size.height = 64;
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
          step_seconds_sum +=
              std::chrono::duration<double>(watch.last_step - watch.first_step).count() /
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
          watch.changed.wait(lock,
                             [&] { return watch.started || watch.end != EventType::Invalid; });
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
        const double ms = std::chrono::duration<double>(watch.end_at - cancel_at).count() * 1000.0;
        latencies.push_back(ms);
        const std::string where =
            watch.stage >= 0 && watch.stage < static_cast<int>(watch.plan.size())
                ? stageKindName(watch.plan[static_cast<std::size_t>(watch.stage)].kind)
                : "between stages";
        landed[where].push_back(ms);
      }
      engine.waitIdle(60);
      const InterruptStats s = engine.interruptStats();
      checks.checks += s.checks;
      if (s.longest_gap_seconds > checks.longest_gap_seconds)
        checks = {checks.checks, s.longest_gap_seconds, s.longest_gap_from, s.longest_gap_to};
      std::printf("%-9s %s: one job %.0f ms\n", name.c_str(), cached ? "cached  " : "uncached",
                  job_seconds * 1000);
    }
  if (latencies.empty()) {
    std::fprintf(stderr, "bench_interrupt: no cancel landed\n");
    return false;
  }
  const double p99 = percentile(latencies, 0.99);
  std::printf("\ncancel -> JobCancelled over %zu cancels (%d jobs finished first):\n",
              latencies.size(), finished_first);
  std::printf("  p50 %.2f ms   p99 %.2f ms   max %.2f ms\n", percentile(latencies, 0.5), p99,
              *std::max_element(latencies.begin(), latencies.end()));
  std::printf("  by stage:");
  for (const auto& [where, v] : landed)
    std::printf("  %s %zu (max %.1f ms)", where.c_str(), v.size(),
                *std::max_element(v.begin(), v.end()));
  std::printf(
      "\n  longest span between two cancellation checks: %.2f ms (%lld checks), from %s to %s\n",
      checks.longest_gap_seconds * 1000, static_cast<long long>(checks.checks),
      checks.longest_gap_from.c_str(), checks.longest_gap_to.c_str());
  const double step_ms = step_runs > 0 ? step_seconds_sum / step_runs * 1000 : 0;
  if (step_ms > 0)
    std::printf("  mean denoising step %.2f ms; p99 latency / step = %.2f\n", step_ms,
                p99 / step_ms);
  std::printf("  target p99 <= 50 ms: %s\n", p99 <= 50 ? "met" : "NOT met");
  return true;
}

int main(int argc, char** argv) {
  const int samples = argc > 1 ? std::atoi(argv[1]) : 240;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;  // without it: 1 and 2 threads
  if (samples < 1 || threads < 1) {
    std::fprintf(stderr, "usage: bench_interrupt [SAMPLES [THREADS]]\n");
    return 2;
  }
  const std::string conf = std::string(KILN_SHARED_DIR) + "/conformance/sd-tiny-1234/";
  const std::vector<std::pair<std::string, std::string>> models{
      {"sd1 tiny", conf + "sd1/sd1_tiny_ldm.safetensors"},
      {"sdxl tiny", conf + "sdxl/sdxl_tiny_ldm.safetensors"},
      {"starter", starterModelPath()}};
  const std::filesystem::path out_dir =
      std::filesystem::temp_directory_path() / "kiln-bench-interrupt";
  std::filesystem::create_directories(out_dir);

  bool ok = true;
  if (argc > 2)
    ok = measure(samples, threads, models, out_dir);
  else
    for (int t : {1, 2}) ok = measure(samples, t, models, out_dir) && ok;
  std::filesystem::remove_all(out_dir);
  return ok ? 0 : 1;
}
