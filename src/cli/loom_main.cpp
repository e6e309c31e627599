// The `loom` program: the commands of main.cpp, and the tuner's measuring
// worker (`loom tune` runs this program again as one). `loom tune --ray`
// continues in Python, where Ray is: this process becomes python3 running
// the same command line through Loom's module (cli.h).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli.h"
#include "loom/error.h"

namespace {

// The Python program that takes the command line over (sys.argv[1:] are ours).
const char* kHandOver =
    "import sys\n"
    "try:\n"
    "    from loom import _loom\n"
    "except ImportError as e:\n"
    "    sys.exit(f'loom: error: tune --ray runs the Ray backend in Python, and {sys.executable} cannot import Loom\\'s '\n"
    "             f'Python package ({e}): install it (pip install \"loom[ray]\") or set PYTHONPATH (LOOM_PYTHON picks the python)')\n"
    "sys.exit(_loom.cli_main(['loom'] + sys.argv[1:]))\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "tune-worker") return loom::tune::worker_main(3, 4);
  auto hand_over = [argc, argv](loom::tune::Options&, const loom::LoopKernel&, const std::string&) {
    const char* python = std::getenv("LOOM_PYTHON") ? std::getenv("LOOM_PYTHON") : "python3";
    std::vector<char*> args = {const_cast<char*>(python), const_cast<char*>("-c"), const_cast<char*>(kHandOver)};
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    std::fflush(stdout);
    execvp(python, args.data());
    throw loom::Error(std::string("--ray: cannot run ") + python + " (Loom's Ray backend is Python; LOOM_PYTHON picks the python)");
  };
  return loom::cli::cli_main(argc, argv, hand_over);
}
