// Judging a picture of shapes against the caption it was made from: palette
// segmentation, connected components, centroid cell, and a shape classifier from the
// fill ratio, holes and the vertical mass balance of the largest component. Used by the
// starter-model test and benchmark; it is checked on drawn ground truth first.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kiln/image.h"
#include "kiln/render.h"
#include "scenes.h"

namespace kiln::testing {

struct Component {
  int area = 0;
  double cx = 0, cy = 0;
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // inclusive bounding box
  std::vector<int> pixels;             // y * width + x
};

struct Judgement {
  int colour = -1;  // index into objectColours(), -1: no object found
  int count = 0;
  int column = -1, row = -1;  // of the largest component
  starter::Shape shape = starter::Shape::Circle;
  bool colour_ok = false, count_ok = false, position_ok = false, shape_ok = false;
  std::string describe() const {
    if (colour < 0) return "no object";
    return std::to_string(count) + " x " +
           starter::objectColours()[static_cast<std::size_t>(colour)].name + " " +
           starter::shapeName(shape) + " at column " + std::to_string(column) + ", row " +
           std::to_string(row);
  }
};

inline double colourDistance(const float* px, const std::array<float, 3>& c) {
  const double dr = px[0] - c[0], dg = px[1] - c[1], db = px[2] - c[2];
  return std::sqrt(dr * dr + dg * dg + db * db);
}

// Nearest palette entry: object colours first, then background colours (offset by the
// number of object colours).
inline int nearestPaletteEntry(const float* px, double* distance = nullptr) {
  const auto& obj = starter::objectColours();
  const auto& bg = starter::backgroundColours();
  int best = 0;
  double best_d = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < obj.size() + bg.size(); ++i) {
    const double d = colourDistance(px, i < obj.size() ? obj[i].rgb : bg[i - obj.size()].rgb);
    if (d < best_d) {
      best_d = d;
      best = static_cast<int>(i);
    }
  }
  if (distance) *distance = best_d;
  return best;
}

inline std::vector<Component> components(const std::vector<uint8_t>& mask, int w, int h) {
  std::vector<int> label(mask.size(), -1);
  std::vector<Component> out;
  std::vector<int> stack;
  for (int start = 0; start < w * h; ++start) {
    if (!mask[static_cast<std::size_t>(start)] || label[static_cast<std::size_t>(start)] >= 0)
      continue;
    Component c;
    c.x0 = w;
    c.y0 = h;
    stack.push_back(start);
    label[static_cast<std::size_t>(start)] = static_cast<int>(out.size());
    while (!stack.empty()) {
      const int p = stack.back();
      stack.pop_back();
      const int x = p % w, y = p / w;
      c.pixels.push_back(p);
      ++c.area;
      c.cx += x + 0.5;
      c.cy += y + 0.5;
      c.x0 = std::min(c.x0, x);
      c.x1 = std::max(c.x1, x);
      c.y0 = std::min(c.y0, y);
      c.y1 = std::max(c.y1, y);
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nx = x + dx, ny = y + dy;
          if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          const auto q = static_cast<std::size_t>(ny * w + nx);
          if (mask[q] && label[q] < 0) {
            label[q] = static_cast<int>(out.size());
            stack.push_back(static_cast<int>(q));
          }
        }
    }
    c.cx /= c.area;
    c.cy /= c.area;
    out.push_back(std::move(c));
  }
  return out;
}

// Pixels inside the component's bounding box that are not part of it and cannot be
// reached from outside the box: the holes (a ring has one).
inline int holeAreaIn(const Component& c, int image_width) {
  const int w = c.x1 - c.x0 + 3, h = c.y1 - c.y0 + 3;
  std::vector<uint8_t> solid(static_cast<std::size_t>(w * h), 0), seen(solid.size(), 0);
  for (int p : c.pixels) {
    const int x = p % image_width - c.x0 + 1, y = p / image_width - c.y0 + 1;
    solid[static_cast<std::size_t>(y * w + x)] = 1;
  }
  std::vector<int> stack{0};
  seen[0] = 1;
  int outside = 0;
  while (!stack.empty()) {
    const int p = stack.back();
    stack.pop_back();
    ++outside;
    const int x = p % w, y = p / w;
    const int nb[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (const auto& d : nb) {
      const int nx = x + d[0], ny = y + d[1];
      if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
      const auto q = static_cast<std::size_t>(ny * w + nx);
      if (!solid[q] && !seen[q]) {
        seen[q] = 1;
        stack.push_back(static_cast<int>(q));
      }
    }
  }
  return w * h - outside - c.area;
}

inline starter::Shape classifyShape(const Component& c, int image_width) {
  if (holeAreaIn(c, image_width) > std::max(2, c.area / 12)) return starter::Shape::Ring;
  const int bw = c.x1 - c.x0 + 1, bh = c.y1 - c.y0 + 1;
  const double fill = static_cast<double>(c.area) / (bw * bh);
  // Mass in the top and bottom thirds of the box.
  double top = 0, bottom = 0;
  for (int p : c.pixels) {
    const double fy = (p / image_width - c.y0 + 0.5) / bh;
    if (fy < 1.0 / 3) top += 1;
    if (fy > 2.0 / 3) bottom += 1;
  }
  top /= c.area;
  bottom /= c.area;
  // Drawn triangles put 37% or more of their mass more in the bottom third than in the
  // top third, stars at most 24%.
  if (bottom - top > 0.3) return starter::Shape::Triangle;
  if (fill > 0.88) return starter::Shape::Square;
  if (fill > 0.64) return starter::Shape::Circle;
  return starter::Shape::Star;
}

inline int cellOf(double v, int size) {
  const double f = v / size;
  return f < 0.36 ? 0 : (f > 0.64 ? 2 : 1);
}

inline Judgement judge(const Image& img, const starter::SceneSpec& spec) {
  Judgement j;
  const int w = img.width, h = img.height;
  const auto n_obj = static_cast<int>(starter::objectColours().size());
  const float* px = img.pixels.data();
  // Background: the commonest palette entry along the border.
  std::vector<int> border_votes(
      static_cast<std::size_t>(n_obj) + starter::backgroundColours().size(), 0);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
        ++border_votes[static_cast<std::size_t>(
            nearestPaletteEntry(px + (static_cast<std::size_t>(y) * w + x) * img.channels))];
  const int bg = static_cast<int>(std::max_element(border_votes.begin(), border_votes.end()) -
                                  border_votes.begin());
  const auto& bg_rgb = bg < n_obj
                           ? starter::objectColours()[static_cast<std::size_t>(bg)].rgb
                           : starter::backgroundColours()[static_cast<std::size_t>(bg - n_obj)].rgb;
  // Object colour: majority among clearly coloured pixels that are not background.
  std::vector<int> votes(static_cast<std::size_t>(n_obj), 0);
  for (int i = 0; i < w * h; ++i) {
    double d = 0;
    const int k = nearestPaletteEntry(px + static_cast<std::size_t>(i) * img.channels, &d);
    if (k < n_obj && k != bg && d < 0.25) ++votes[static_cast<std::size_t>(k)];
  }
  const auto top = std::max_element(votes.begin(), votes.end());
  if (*top < 4) return j;
  j.colour = static_cast<int>(top - votes.begin());
  // Geometry: pixels past the midpoint between the background and the object colour.
  const auto& obj_rgb = starter::objectColours()[static_cast<std::size_t>(j.colour)].rgb;
  const double half = 0.5 * colourDistance(obj_rgb.data(), bg_rgb);
  std::vector<uint8_t> mask(static_cast<std::size_t>(w * h), 0);
  for (int i = 0; i < w * h; ++i) {
    const float* p = px + static_cast<std::size_t>(i) * img.channels;
    mask[static_cast<std::size_t>(i)] =
        colourDistance(p, bg_rgb) > half && colourDistance(p, obj_rgb) < half;
  }
  auto comps = components(mask, w, h);
  std::sort(comps.begin(), comps.end(),
            [](const Component& a, const Component& b) { return a.area > b.area; });
  if (comps.empty()) return j;
  const int min_area = std::max(8, comps.front().area / 5);
  for (const auto& c : comps) j.count += c.area >= min_area ? 1 : 0;
  const Component& big = comps.front();
  j.column = cellOf(big.cx, w);
  j.row = cellOf(big.cy, h);
  j.shape = classifyShape(big, w);
  j.colour_ok = j.colour == spec.colour;
  j.count_ok = j.count == spec.count;
  j.shape_ok = j.shape == spec.shape;
  j.position_ok = spec.position == starter::Position::Anywhere ||
                  (j.column == starter::positionColumn(spec.position) &&
                   j.row == starter::positionRow(spec.position));
  return j;
}

// Rates over a set of rendered prompts.
struct StarterRates {
  int images = 0;
  int colour = 0;                            // of all images
  int singles = 0, position = 0, shape = 0;  // of single-object prompts
  int small = 0, small_shape = 0;            // of small single objects
  int counts = 0, count = 0;                 // of prompts asking for two or three
  static double rate(int hits, int of) { return of > 0 ? static_cast<double>(hits) / of : 0.0; }
  double colourRate() const { return rate(colour, images); }
  double positionRate() const { return rate(position, singles); }
  double shapeRate() const { return rate(shape, singles); }
  double smallShapeRate() const { return rate(small_shape, small); }
  double countRate() const { return rate(count, counts); }
  void print(std::FILE* f) const {
    std::fprintf(f,
                 "colour %.1f%% (%d images)  position %.1f%%  shape %.1f%% (small %.1f%%)  "
                 "count %.1f%% (%d)\n",
                 100 * colourRate(), images, 100 * positionRate(), 100 * shapeRate(),
                 100 * smallShapeRate(), 100 * countRate(), counts);
  }
};

inline void tally(StarterRates& r, const starter::SceneSpec& spec, const Judgement& j) {
  ++r.images;
  r.colour += j.colour_ok;
  if (spec.count == 1) {
    ++r.singles;
    r.position += j.position_ok;
    r.shape += j.shape_ok;
    if (spec.size == starter::Size::Small) {
      ++r.small;
      r.small_shape += j.shape_ok;
    }
  } else {
    ++r.counts;
    r.count += j.count_ok;
  }
}

// Renders each spec's canonical prompt with the given seeds through kiln::render and
// judges the pictures. `on_image` (optional) sees every result; `settings` gives the
// sampler, steps and CFG (the default workflow's unless told) and may be an
// image-to-image start (`prepare` then sets the init image per spec and seed).
inline StarterRates scoreStarterModel(
    const std::string& model, const std::vector<starter::SceneSpec>& specs,
    const std::vector<int64_t>& seeds, ComputeDType dtype,
    const std::function<void(const starter::SceneSpec&, int64_t, const Image&, const Judgement&)>&
        on_image = {},
    const RenderParams& settings = defaultRenderParams(),
    const std::function<void(const starter::SceneSpec&, int64_t, RenderParams&)>& prepare = {}) {
  StarterRates rates;
  for (const auto& spec : specs)
    for (int64_t seed : seeds) {
      RenderParams p = settings;
      if (prepare) prepare(spec, seed, p);
      p.model.path = model;
      p.prompt.text = starter::canonicalPrompt(spec);
      p.sampling.seed = seed;
      p.model.dtype = dtype;
      const RenderResult result = render(p);
      const Judgement j = judge(result.image, spec);
      tally(rates, spec, j);
      if (on_image) on_image(spec, seed, result.image, j);
    }
  return rates;
}

}  // namespace kiln::testing
