// Sketch generators of the automatic space that live in files of their own
// (auto_space.cpp calls them): each reads a kernel as written and returns a
// sketch, or nothing with the reason.
#pragma once
#include <optional>
#include <string>

#include "loom/kernel.h"
#include "loom/tuner.h"

namespace loom::tune {

// Parallelism from dependences for whole programs (tuner/nests.cpp): each
// loop nest a launch, the loops Loom's legality checks accept on blocks and
// threads mapped there, sequential loops around parallel nests on the host
// (global barriers); a second sketch ("nests, distributed") plans the kernel
// with its loops distributed wherever that is legal (distribute_loops).
// Nothing when no loop is parallel; *why then says which loop carries which
// dependence.
std::vector<Sketch> nests_sketches(const LoopKernel& k, std::string* why);

}  // namespace loom::tune
