#include "scenes.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace kiln::starter {
namespace {

int uniformInt(std::mt19937_64& rng, int lo, int hi) {  // inclusive
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}
float uniformReal(std::mt19937_64& rng, float lo, float hi) {
  return std::uniform_real_distribution<float>(lo, hi)(rng);
}
bool chance(std::mt19937_64& rng, double p) {
  return std::bernoulli_distribution(p)(rng);
}

template <typename T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& items) {
  return items[static_cast<std::size_t>(uniformInt(rng, 0, static_cast<int>(items.size()) - 1))];
}

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

uint64_t comboHash(std::initializer_list<int> parts) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int p : parts) h = mix(h ^ static_cast<uint64_t>(p + 1) * 0x100000001b3ULL);
  return h;
}

// The largest count drawn at each size: three objects must fit a row with clear gaps.
int maxCountFor(Size size) {
  return size == Size::Small ? 3 : (size == Size::Medium ? 2 : 1);
}

std::string article(const std::string& next_word) {
  return std::string("aeiou").find(next_word.front()) != std::string::npos ? "an" : "a";
}

const char* countWord(int count) {
  static const char* words[] = {"zero", "one", "two", "three"};
  return words[count];
}

std::string positionPhrase(Position p, std::mt19937_64& rng) {
  switch (p) {
    case Position::Centre:
      return pick(rng, std::vector<std::string>{"in the centre", "in the center", "in the middle"});
    case Position::Left:
      return pick(rng, std::vector<std::string>{"on the left", "at the left"});
    case Position::Right:
      return pick(rng, std::vector<std::string>{"on the right", "at the right"});
    case Position::Top:
      return pick(rng, std::vector<std::string>{"at the top", "at the top edge"});
    case Position::Bottom:
      return pick(rng, std::vector<std::string>{"at the bottom", "at the bottom edge"});
    case Position::TopLeft:
      return pick(rng, std::vector<std::string>{"in the top left corner", "at the top left"});
    case Position::TopRight:
      return pick(rng, std::vector<std::string>{"in the top right corner", "at the top right"});
    case Position::BottomLeft:
      return pick(rng, std::vector<std::string>{"in the bottom left corner", "at the bottom left"});
    case Position::BottomRight:
      return pick(rng,
                  std::vector<std::string>{"in the bottom right corner", "at the bottom right"});
    case Position::Anywhere:
      break;
  }
  return "";
}

std::string sizeWord(Size s, std::mt19937_64& rng) {
  switch (s) {
    case Size::Small:
      return pick(rng, std::vector<std::string>{"small", "small", "little"});
    case Size::Medium:
      return pick(rng, std::vector<std::string>{"medium", "medium sized", "medium"});
    case Size::Large:
      return pick(rng, std::vector<std::string>{"large", "big", "large"});
  }
  return "";
}

std::string backgroundPhrase(int bg, std::mt19937_64& rng) {
  const std::string name = backgroundColours()[static_cast<std::size_t>(bg)].name;
  switch (uniformInt(rng, 0, 2)) {
    case 0:
      return "on a " + name + " background";
    case 1:
      return "on " + name;
    default:
      return "against a " + name + " background";
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (w.empty()) continue;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

// Star outline: ten vertices alternating outer radius 1 and inner radius 0.5, point up.
const std::array<std::array<float, 2>, 10>& starVertices() {
  static const auto v = [] {
    std::array<std::array<float, 2>, 10> out{};
    for (int i = 0; i < 10; ++i) {
      const double r = i % 2 == 0 ? 1.0 : 0.5;
      const double a = -std::numbers::pi / 2 + i * std::numbers::pi / 5;
      out[static_cast<std::size_t>(i)] = {static_cast<float>(r * std::cos(a)),
                                          static_cast<float>(r * std::sin(a) + 0.1)};
    }
    return out;
  }();
  return v;
}

}  // namespace

const std::vector<NamedColour>& objectColours() {
  static const std::vector<NamedColour> c{
      {"red", {0.90f, 0.10f, 0.10f}},    {"green", {0.10f, 0.70f, 0.20f}},
      {"blue", {0.10f, 0.25f, 0.90f}},   {"yellow", {0.95f, 0.85f, 0.10f}},
      {"orange", {1.00f, 0.55f, 0.05f}}, {"purple", {0.55f, 0.15f, 0.75f}},
      {"pink", {1.00f, 0.50f, 0.80f}},   {"cyan", {0.10f, 0.80f, 0.85f}},
  };
  return c;
}

const std::vector<NamedColour>& backgroundColours() {
  static const std::vector<NamedColour> c{
      {"white", {0.97f, 0.97f, 0.97f}},
      {"black", {0.05f, 0.05f, 0.05f}},
      {"gray", {0.50f, 0.50f, 0.50f}},
  };
  return c;
}

const char* shapeName(Shape s) {
  static const char* n[] = {"circle", "square", "triangle", "star", "ring"};
  return n[static_cast<int>(s)];
}
const char* shapePlural(Shape s) {
  static const char* n[] = {"circles", "squares", "triangles", "stars", "rings"};
  return n[static_cast<int>(s)];
}
const char* sizeName(Size s) {
  static const char* n[] = {"small", "medium", "large"};
  return n[static_cast<int>(s)];
}
float sizeRadius(Size s) {
  static const float r[] = {0.105f, 0.16f, 0.245f};
  return r[static_cast<int>(s)];
}
const char* positionName(Position p) {
  static const char* n[] = {"centre",   "left",      "right",       "top",          "bottom",
                            "top left", "top right", "bottom left", "bottom right", "anywhere"};
  return n[static_cast<int>(p)];
}
int positionColumn(Position p) {
  switch (p) {
    case Position::Left:
    case Position::TopLeft:
    case Position::BottomLeft:
      return 0;
    case Position::Right:
    case Position::TopRight:
    case Position::BottomRight:
      return 2;
    default:
      return 1;
  }
}
int positionRow(Position p) {
  switch (p) {
    case Position::Top:
    case Position::TopLeft:
    case Position::TopRight:
      return 0;
    case Position::Bottom:
    case Position::BottomLeft:
    case Position::BottomRight:
      return 2;
    default:
      return 1;
  }
}

bool insideShape(Shape shape, float dx, float dy) {
  switch (shape) {
    case Shape::Circle:
      return dx * dx + dy * dy <= 1.0f;
    case Shape::Ring: {
      const float d2 = dx * dx + dy * dy;
      return d2 <= 1.0f && d2 >= 0.55f * 0.55f;
    }
    case Shape::Square:
      return std::abs(dx) <= 0.82f && std::abs(dy) <= 0.82f;
    case Shape::Triangle: {
      // Point up, centroid at the centre, circumradius 1.1.
      const float y = dy / 1.1f, x = dx / 1.1f;
      return y <= 0.5f && y >= -1.0f && std::abs(x) <= (y + 1.0f) * 0.57735f;
    }
    case Shape::Star: {
      const auto& v = starVertices();
      bool in = false;
      for (std::size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
        const float xi = v[i][0], yi = v[i][1], xj = v[j][0], yj = v[j][1];
        if ((yi > dy) != (yj > dy) && dx < (xj - xi) * (dy - yi) / (yj - yi) + xi) in = !in;
      }
      return in;
    }
  }
  return false;
}

bool isHeldOut(const SceneSpec& s) {
  if (s.count == 1) {
    if (s.position == Position::Anywhere) return false;
    return comboHash({s.colour, static_cast<int>(s.shape), static_cast<int>(s.size),
                      static_cast<int>(s.position)}) %
               8 ==
           0;
  }
  return comboHash({100 + s.count, s.colour, static_cast<int>(s.shape)}) % 6 == 0;
}

std::vector<SceneSpec> heldOutSingles() {
  std::vector<SceneSpec> out;
  const int colours = static_cast<int>(objectColours().size());
  for (int c = 0; c < colours; ++c)
    for (int sh = 0; sh < kShapeCount; ++sh)
      for (int sz = 0; sz < kSizeCount; ++sz)
        for (int p = 0; p < kPlacedPositions; ++p) {
          SceneSpec s;
          s.colour = c;
          s.shape = static_cast<Shape>(sh);
          s.size = static_cast<Size>(sz);
          s.position = static_cast<Position>(p);
          if (!isHeldOut(s)) continue;
          const uint64_t h = comboHash({7, c, sh, sz, p});
          s.background = static_cast<int>(h % backgroundColours().size());
          s.says_background = (h >> 8) % 2 == 0;
          out.push_back(s);
        }
  return out;
}

std::vector<SceneSpec> heldOutCounts() {
  std::vector<SceneSpec> out;
  const int colours = static_cast<int>(objectColours().size());
  for (int n = 2; n <= 3; ++n)
    for (int c = 0; c < colours; ++c)
      for (int sh = 0; sh < kShapeCount; ++sh) {
        SceneSpec s;
        s.count = n;
        s.colour = c;
        s.shape = static_cast<Shape>(sh);
        s.size = Size::Small;
        s.says_size = false;
        s.position = Position::Anywhere;
        s.says_position = false;
        if (!isHeldOut(s)) continue;
        const uint64_t h = comboHash({11, n, c, sh});
        s.background = static_cast<int>(h % backgroundColours().size());
        s.says_background = (h >> 8) % 2 == 0;
        out.push_back(s);
      }
  return out;
}

Scene SceneSampler::sampleTraining() {
  auto& rng = rng_;
  for (;;) {
    SceneSpec s;
    const double u = uniformReal(rng, 0.0f, 1.0f);
    s.count = u < 0.6 ? 1 : (u < 0.8 ? 2 : 3);
    s.colour = uniformInt(rng, 0, static_cast<int>(objectColours().size()) - 1);
    s.shape = static_cast<Shape>(uniformInt(rng, 0, kShapeCount - 1));
    s.background = uniformInt(rng, 0, static_cast<int>(backgroundColours().size()) - 1);
    s.says_background = chance(rng, 0.5);
    if (s.count == 1) {
      s.size = static_cast<Size>(uniformInt(rng, 0, kSizeCount - 1));
      s.says_size = chance(rng, 0.8);
      s.says_position = chance(rng, 0.85);
      s.position = s.says_position ? static_cast<Position>(uniformInt(rng, 0, kPlacedPositions - 1))
                                   : Position::Anywhere;
    } else {
      s.size = s.count == 3 ? Size::Small : static_cast<Size>(uniformInt(rng, 0, 1));
      s.says_size = chance(rng, 0.5);
      s.position = Position::Anywhere;
      s.says_position = false;
    }
    if (maxCountFor(s.size) < s.count || isHeldOut(s)) continue;
    return place(s);
  }
}

Scene SceneSampler::place(const SceneSpec& spec) {
  Scene scene{spec, {}};
  const float S = static_cast<float>(size_);
  const float jitter = 0.04f * S;
  auto clampCentre = [&](float v, float r) { return std::clamp(v, r + 1.0f, S - r - 1.0f); };
  const float r = sizeRadius(spec.size) * S * uniformReal(rng_, 0.92f, 1.08f);
  if (spec.count == 1) {
    float cx, cy;
    if (spec.position == Position::Anywhere) {
      cx = uniformReal(rng_, r + 1.0f, S - r - 1.0f);
      cy = uniformReal(rng_, r + 1.0f, S - r - 1.0f);
    } else {
      static const float cells[] = {0.22f, 0.5f, 0.78f};
      cx = cells[positionColumn(spec.position)] * S + uniformReal(rng_, -jitter, jitter);
      cy = cells[positionRow(spec.position)] * S + uniformReal(rng_, -jitter, jitter);
    }
    scene.objects.push_back({spec.shape, spec.colour, clampCentre(cx, r), clampCentre(cy, r), r});
    return scene;
  }
  // A row: evenly spaced across the picture at one random height.
  const float cy = uniformReal(rng_, r + 1.0f, S - r - 1.0f);
  const float spacing = S / static_cast<float>(spec.count);
  for (int i = 0; i < spec.count; ++i) {
    const float cx = (static_cast<float>(i) + 0.5f) * spacing + uniformReal(rng_, -1.5f, 1.5f);
    scene.objects.push_back({spec.shape, spec.colour, clampCentre(cx, r),
                             clampCentre(cy + uniformReal(rng_, -1.5f, 1.5f), r), r});
  }
  return scene;
}

std::string SceneSampler::caption(const SceneSpec& s) {
  auto& rng = rng_;
  const std::string colour = objectColours()[static_cast<std::size_t>(s.colour)].name;
  const std::string size = s.says_size ? sizeWord(s.size, rng) : "";
  const std::string bg = s.says_background ? backgroundPhrase(s.background, rng) : "";
  if (s.count > 1) {
    const std::string noun = shapePlural(s.shape);
    return join({countWord(s.count), size, colour, noun, bg});
  }
  const std::string noun = shapeName(s.shape);
  const std::string pos = s.says_position ? positionPhrase(s.position, rng) : "";
  const std::string first = size.empty() ? colour : size;
  const std::string det = chance(rng, 0.15) ? "one" : article(first);
  switch (uniformInt(rng, 0, 3)) {
    case 0:
      return join({det, size, colour, noun, pos, bg});
    case 1:
      return join({size, colour, noun, pos, bg});
    case 2:
      return pos.empty() ? join({det, size, colour, noun, bg})
                         : join({pos + ",", article(first), size, colour, noun, bg});
    default:
      return join({det, size, colour, noun, bg, pos});
  }
}

std::string canonicalPrompt(const SceneSpec& s) {
  const std::string colour = objectColours()[static_cast<std::size_t>(s.colour)].name;
  const std::string size = s.says_size ? sizeName(s.size) : "";
  const std::string bg =
      s.says_background
          ? std::string("on a ") +
                backgroundColours()[static_cast<std::size_t>(s.background)].name + " background"
          : "";
  if (s.count > 1) return join({countWord(s.count), size, colour, shapePlural(s.shape), bg});
  std::string pos;
  if (s.says_position && s.position != Position::Anywhere) {
    switch (s.position) {
      case Position::Centre:
        pos = "in the centre";
        break;
      case Position::Left:
      case Position::Right:
        pos = std::string("on the ") + positionName(s.position);
        break;
      case Position::Top:
      case Position::Bottom:
        pos = std::string("at the ") + positionName(s.position);
        break;
      default:
        pos = std::string("in the ") + positionName(s.position) + " corner";
    }
  }
  const std::string first = size.empty() ? colour : size;
  return join({article(first), size, colour, shapeName(s.shape), pos, bg});
}

std::vector<float> renderScene(const Scene& scene, int size) {
  const auto& bg = backgroundColours()[static_cast<std::size_t>(scene.spec.background)].rgb;
  std::vector<float> px(static_cast<std::size_t>(size) * size * 3);
  constexpr int kSub = 4;
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      std::array<float, 3> acc{0, 0, 0};
      for (int sy = 0; sy < kSub; ++sy)
        for (int sx = 0; sx < kSub; ++sx) {
          const float fx = static_cast<float>(x) + (static_cast<float>(sx) + 0.5f) / kSub;
          const float fy = static_cast<float>(y) + (static_cast<float>(sy) + 0.5f) / kSub;
          const std::array<float, 3>* c = &bg;
          for (const auto& o : scene.objects)
            if (insideShape(o.shape, (fx - o.cx) / o.radius, (fy - o.cy) / o.radius))
              c = &objectColours()[static_cast<std::size_t>(o.colour)].rgb;
          for (int k = 0; k < 3; ++k)
            acc[static_cast<std::size_t>(k)] += (*c)[static_cast<std::size_t>(k)];
        }
      float* p = &px[(static_cast<std::size_t>(y) * size + x) * 3];
      for (int k = 0; k < 3; ++k) p[k] = acc[static_cast<std::size_t>(k)] / (kSub * kSub);
    }
  return px;
}

}  // namespace kiln::starter
