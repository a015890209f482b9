// How the workflow editor's canvas copes with large graphs: the time to load a workflow
// of N nodes (document + scene) and the time per frame while panning across it, for
// 500 nodes against 50 in the same run.
//
//   bench_node_canvas [NODES]   (default 500)
#include <QApplication>
#include <QElapsedTimer>
#include <QScrollBar>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "kiln/workflow.h"
#include "node_canvas.h"
#include "workflow_document.h"

namespace {

// Chains of text-to-image graphs side by side: every node type with real links.
kiln::Workflow graphOf(int nodes) {
  kiln::Workflow w;
  int id = 1;
  for (int chain = 0; static_cast<int>(w.nodes.size()) + 7 <= nodes; ++chain) {
    const double x = (chain % 10) * 1600.0, y = (chain / 10) * 600.0;
    const auto add = [&](const char* type, double dx, double dy) {
      w.nodes.push_back({std::to_string(id++), type, {}, x + dx, y + dy, ""});
      return w.nodes.back().id;
    };
    const auto ck = add("LoadCheckpoint", 0, 0), pos = add("TextEncode", 260, -80),
               neg = add("TextEncode", 260, 80), lat = add("EmptyLatent", 260, 240),
               smp = add("Sampler", 520, 0), dec = add("VAEDecode", 780, 0),
               sav = add("SaveImage", 1040, 0);
    w.links.insert(w.links.end(), {{ck, "CLIP", pos, "clip"},
                                   {ck, "CLIP", neg, "clip"},
                                   {ck, "MODEL", smp, "model"},
                                   {pos, "CONDITIONING", smp, "positive"},
                                   {neg, "CONDITIONING", smp, "negative"},
                                   {lat, "LATENT", smp, "latent_image"},
                                   {smp, "LATENT", dec, "samples"},
                                   {ck, "VAE", dec, "vae"},
                                   {dec, "IMAGE", sav, "images"}});
  }
  return w;
}

struct Result {
  double load_ms = 0, frame_ms = 0, worst_frame_ms = 0;
  std::size_t nodes = 0;
};

Result measure(int nodes) {
  Result r;
  kiln::app::WorkflowDocument doc(kiln::builtinNodeSchemas());
  kiln::ui::NodeCanvas canvas(&doc);
  canvas.resize(1600, 900);
  canvas.show();
  const kiln::Workflow w = graphOf(nodes);
  r.nodes = w.nodes.size();
  QElapsedTimer t;
  t.start();
  doc.setWorkflow(w);
  canvas.frameAll();
  (void)canvas.viewport()->grab();  // paints the view as a frame would
  r.load_ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
  // Pan at 100% zoom across the graph, one repaint per step.
  canvas.resetTransform();
  QScrollBar* bar = canvas.horizontalScrollBar();
  const int frames = 60;
  double total = 0;
  for (int i = 0; i < frames; ++i) {
    bar->setValue(bar->minimum() + (bar->maximum() - bar->minimum()) * i / frames);
    t.restart();
    (void)canvas.viewport()->grab();  // paints the view as a frame would
    const double ms = static_cast<double>(t.nsecsElapsed()) / 1e6;
    total += ms;
    r.worst_frame_ms = std::max(r.worst_frame_ms, ms);
  }
  r.frame_ms = total / frames;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  qputenv("QT_QPA_PLATFORM", QByteArrayLiteral("offscreen"));
  QApplication app(argc, argv);
  const int big = argc > 1 ? std::max(7, std::atoi(argv[1])) : 500;
  (void)measure(50);  // warm-up: fonts, caches
  const Result small = measure(50), large = measure(big);
  std::printf("workflow editor canvas (offscreen, 1600x900)\n");
  for (const Result* r : {&small, &large})
    std::printf("%4zu nodes: load %7.1f ms  pan frame %6.2f ms (worst %6.2f ms)\n", r->nodes,
                r->load_ms, r->frame_ms, r->worst_frame_ms);
  std::printf("%zu vs %zu nodes: load x%.1f, frame x%.2f\n", large.nodes, small.nodes,
              large.load_ms / small.load_ms, large.frame_ms / small.frame_ms);
  return 0;
}
