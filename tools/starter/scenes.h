// The starter model's world: flat shapes in named colours on plain backgrounds, drawn
// with anti-aliasing, and the captions that describe them. The training tool draws its
// data from here, and the starter-model test takes its held-out prompts and its colour
// table from here. No torch, no Qt.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace kiln::starter {

struct NamedColour {
  const char* name;
  std::array<float, 3> rgb;  // sRGB in [0, 1]
};

// Colours objects come in, and colours backgrounds come in (the two sets are disjoint).
const std::vector<NamedColour>& objectColours();
const std::vector<NamedColour>& backgroundColours();

enum class Shape { Circle = 0, Square, Triangle, Star, Ring };
constexpr int kShapeCount = 5;
const char* shapeName(Shape shape);
const char* shapePlural(Shape shape);

enum class Size { Small = 0, Medium, Large };
constexpr int kSizeCount = 3;
const char* sizeName(Size size);
// Radius as a fraction of the image side.
float sizeRadius(Size size);

// Where an object sits: one of nine cells of a 3x3 grid, or anywhere (not stated).
enum class Position {
  Centre = 0,
  Left,
  Right,
  Top,
  Bottom,
  TopLeft,
  TopRight,
  BottomLeft,
  BottomRight,
  Anywhere
};
constexpr int kPlacedPositions = 9;  // all but Anywhere
const char* positionName(Position position);
// Column (0 left, 1 centre, 2 right) and row (0 top ...) of a grid position.
int positionColumn(Position position);
int positionRow(Position position);

// What a caption says about a picture. Count > 1 puts the objects in a row; then the
// position is Anywhere.
struct SceneSpec {
  int count = 1;
  int colour = 0;  // index into objectColours()
  Shape shape = Shape::Circle;
  Size size = Size::Medium;
  Position position = Position::Centre;
  int background = 0;  // index into backgroundColours()
  // Which attributes the caption states (unstated ones were drawn at random).
  bool says_size = true, says_position = true, says_background = true;
};

struct PlacedObject {
  Shape shape;
  int colour;
  float cx, cy, radius;  // pixels
};

struct Scene {
  SceneSpec spec;
  std::vector<PlacedObject> objects;
};

// Held-out combinations, never drawn for training: single objects by
// (colour, shape, size, position) and multiples by (count, colour, shape).
bool isHeldOut(const SceneSpec& spec);
std::vector<SceneSpec> heldOutSingles();
std::vector<SceneSpec> heldOutCounts();

class SceneSampler {
 public:
  explicit SceneSampler(uint64_t seed, int image_size) : rng_(seed), size_(image_size) {}
  // A random training scene (never a held-out combination) and a caption for it.
  Scene sampleTraining();
  // Concrete placement for a spec (jittered within its cell).
  Scene place(const SceneSpec& spec);
  // One of several caption templates, stating what the spec says it states.
  std::string caption(const SceneSpec& spec);
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
  int size_;
};

// The canonical prompt for a spec ("a small red star in the top left corner"), used by
// tests and examples.
std::string canonicalPrompt(const SceneSpec& spec);

// Draws a scene as RGB float HWC in [0, 1], size x size, with 4x4 supersampling.
std::vector<float> renderScene(const Scene& scene, int size);

// True when pixel offset (dx, dy) from the centre, in units of the radius, lies inside
// the shape.
bool insideShape(Shape shape, float dx, float dy);

}  // namespace kiln::starter
