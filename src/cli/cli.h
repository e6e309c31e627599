// The command line's commands (loom COMMAND FILE ...: main.cpp), shared by
// the `loom` program (loom_main.cpp) and the Python module (_loom.cli_main).
// `loom tune --ray ADDRESS` tunes on a Ray cluster, and Ray lives in Python:
// the program hands such a run to python3, whose module runs the same
// commands, with the same options and output, and a RayHook that installs
// the Ray backend (loom/ray_backend.py) into the tuner's options.
#pragma once

#include <functional>
#include <string>

#include "loom/kernel.h"
#include "loom/tuner.h"

namespace loom::cli {

// Makes `options` screen and measure on the Ray cluster at `address` (its
// screen and measure hooks); called once the kernel, sizes and space are
// read, before the first trial. A program without Ray hands the run over
// instead (and never returns).
using RayHook = std::function<void(tune::Options& options, const LoopKernel& kernel, const std::string& address)>;

// The command line (argv[0] the program's name); the exit status.
int cli_main(int argc, char** argv, const RayHook& ray);

}  // namespace loom::cli
