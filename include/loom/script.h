// A transformation script's step as data: the transformation's name and its
// arguments as written (text), where it was written. The front ends read
// scripts into steps (text lines, JSON); the transformations' registry
// checks and applies them. Plain data, so both sides see it without seeing
// each other.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "loom/kernel.h"

namespace loom {

// One step of a transformation script: `split_iname i 16 outer_tag=g.0`.
struct TransformStep {
  std::string name;
  std::vector<std::string> positional;
  std::map<std::string, std::string> keyword;
  SourceLoc loc;
};

}  // namespace loom
