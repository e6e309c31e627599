// Option parsing and help texts for the `loom` tool (options.h).
#include "options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace loom::cli {

namespace {

struct CommandHelp {
  const char* name;
  const char* summary;
  const char* usage;
  const char* options;  // the command's own options, one per line
  const char* example;
};

const char* kCommonOptions =
    "  --transform, -t FILE     more transformation steps after the file's, read from FILE (script\n"
    "                           lines, or a loom-transforms JSON document); repeatable\n"
    "  --target cuda|cpu|auto   cuda: CUDA C through NVRTC; cpu: the LLVM CPU target; auto (default):\n"
    "                           cuda, except that run and bench without a GPU use the CPU target\n"
    "  --as-written             leave out the file's own transforms: (replay a tuned script with -t)\n"
    "  --arch sm_XX             the GPU architecture to compile for (default: the GPU's, or sm_90a)\n"
    "  -D name=value            a parameter's value (overrides the file's defaults:)\n";

const CommandHelp kCommands[] = {
    {"show", "print a stage of the kernel (default: the CUDA C, or the LLVM IR with --target cpu)",
     "loom show FILE [--emit STAGE] [-o OUT] [options]",
     "  --emit STAGE             input | kernel | json | preprocessed | schedule | cuda | ptx | cubin | llvm\n"
     "                           (kernel and json: after the transformations; cubin is binary: use -o)\n"
     "  -o, --output OUT         write the stage to OUT instead of standard output\n",
     "loom show examples/matmul_prefetch.loom --emit schedule"},
    {"compile", "compile the kernel (NVRTC, or LLVM with --target cpu) and report registers, spills, shared memory",
     "loom compile FILE [--emit STAGE] [-o OUT] [-v] [options]",
     "  --emit STAGE             also write this stage (see show)\n"
     "  -o, --output OUT         where --emit writes (default: standard output)\n"
     "  -v, --verbose            print NVRTC's log\n",
     "loom compile examples/sgemm_tiled.loom --arch sm_90 --emit ptx -o sgemm.ptx"},
    {"run", "run the kernel on random or .npy inputs, check it against the untransformed kernel, report the time",
     "loom run FILE [--in NAME=FILE.npy]... [--out NAME=FILE.npy]... [--no-check] [--reps N] [options]",
     "  --in NAME=FILE.npy       the input array NAME from a NumPy file (parameters follow its shape)\n"
     "  --out NAME=FILE.npy      write the array NAME after the run\n"
     "  --no-check               skip the comparison with the reference interpreter\n"
     "  --reps N                 timed repetitions (default 20; the median is reported)\n"
     "  --fallback-compile       without a GPU (and --target cuda): compile only and succeed\n"
     "  --max-memory GIB         host memory the arrays of one copy of the inputs may take (default 8)\n",
     "loom run examples/vector_add.loom -D n=1000000 --in a=a.npy --in b=b.npy --out out=out.npy"},
    {"bench", "time the kernel on random inputs without checking it (the median of --reps launches)",
     "loom bench FILE [--reps N] [options]",
     "  --reps N                 timed repetitions (default 100)\n"
     "  --max-memory GIB         host memory the arrays of one copy of the inputs may take (default 8)\n",
     "loom bench examples/row_sums.loom -D n=65536 -D m=1024 --reps 200"},
    {"stats", "count the kernel's operations, memory accesses and synchronizations (loopy's get_op_map, ...)",
     "loom stats FILE [-D name=value]... [--granularity G] [--subgroup-size N] [--redundant] [options]",
     "  -D name=value            evaluate the counts there (all parameters, with the file's defaults:);\n"
     "                           without any -D the counts are printed as functions of the parameters\n"
     "  --granularity G          workitem | subgroup | workgroup: every count per G (default: loopy's\n"
     "                           choice per kind: operations per sub-group, coalesced accesses per work-item)\n"
     "  --subgroup-size N        threads per sub-group (default 32, a warp)\n"
     "  --redundant              count work repeated on thread and block axes an instruction does not use\n",
     "loom stats examples/matmul_prefetch.loom -D n=1024 -D m=1024 -D l=1024"},
    {"tune", "search a space of schedules of the kernel as written for the fastest that computes the same result",
     "loom tune FILE [--space auto|SPACE] [--trials N] [--strategy S] [--log LOG] [options]",
     "  --space auto|SPACE       auto (default): sketches derived from the kernel; SPACE: a script whose\n"
     "                           values may be choice(a|b|c) and whose lines may start with `optional`\n"
     "                           (or a JSON script with {\"choice\": [...]} values)\n"
     "  --trials N               configurations to try at most (default 64)\n"
     "  --strategy S             exhaustive | random | evolution | bayes | annealing | local | diff_evo |\n"
     "                           pso | auto\n"
     "                           (default: exhaustive when the space fits in --trials, else evolution\n"
     "                           with a learnt cost model); bayes: Bayesian optimisation (a Gaussian\n"
     "                           process, expected improvement); annealing: simulated annealing;\n"
     "                           local: multi-start local search; diff_evo: differential evolution;\n"
     "                           pso: particle swarm\n"
     "  --seed N                 the search's seed (default 1): a run is repeatable\n"
     "  --log LOG                append every trial to LOG (JSON lines) and skip those it holds\n"
     "  --no-resume              try every configuration again, even those in the log\n"
     "  --restrict EXPR          leave out configurations where EXPR, over the space's named choice\n"
     "                           points (choice(16|32 as bx)), is false: 'bx * by <= 256' (repeatable)\n"
     "  --no-settle              name the fastest trial as measured, even where the runner-up's\n"
     "                           times overlap its own (default: both measured again, 3 rounds)\n"
     "  --seed-log LOG           measure first the fastest trials of this kernel in LOG (another card's,\n"
     "                           or other sizes'); repeatable. The --log's own trials from another card\n"
     "                           or other sizes seed the run the same way\n"
     "  --feature-model          evolution: once 6 trials are measured, screen twice a batch and measure\n"
     "                           the half a model of the kernel features ranks fastest; with --seed-log,\n"
     "                           the model first learns from its other kernels' trials (this target\n"
     "                           and card), so it ranks from the first batch\n"
     "  --trial-timeout S        seconds a trial may take before its worker is killed (default 60)\n"
     "  --time-limit S           no new trial starts after S seconds (a budget besides --trials)\n"
     "  --rtol [ARRAY=]X         the check's relative tolerance, for every written array or one\n"
     "  --atol [ARRAY=]X         ... and absolute (default: by dtype; float32 1e-4, float64 1e-9/1e-12)\n"
     "  --check-input NAME=F.npy the check's input NAME from a .npy file (repeatable; others random);\n"
     "                           give the sizes it was made for with --check-size\n"
     "  --check-size NAME=V      the check's size of a parameter (default: small, no tile multiple)\n"
     "  -v                       each trial's generation, compile and run times, and the check's error\n"
     "  --gpus N                 measuring workers, one per GPU (default: every visible GPU)\n"
     "  --ray ADDRESS            screen on a Ray cluster's CPUs and measure on its GPUs (one actor a GPU;\n"
     "                           `auto`: the cluster this machine belongs to). Runs through Loom's Python\n"
     "                           package (python3, or LOOM_PYTHON), which needs Ray: pip install 'loom[ray]'\n"
     "The file's own transforms: are not applied: the tuner starts from the kernel as written.\n",
     "loom tune examples/row_sums.loom --target cpu -D n=4096 -D m=1000 --trials 40 --log rows.jsonl"},
    {"best", "print the fastest valid trial of a tuning log (its script, replayable with --transform)",
     "loom best LOG [--kernel NAME|HASH] [-D NAME=VALUE] [--target T] [--device TEXT]",
     "A log may hold several kernels, sizes, targets and cards, whose times do not compare: best picks\n"
     "from one group and says which; where several remain, it lists them and asks for a filter.\n"
     "  --kernel NAME|HASH       the kernel's name, or its hash (at least 4 leading hex digits)\n"
     "  -D NAME=VALUE            trials timed at this size (repeatable)\n"
     "  --target T               cpu or cuda\n"
     "  --device TEXT            trials on a card (or CPU) whose name contains TEXT\n",
     "loom best rows.jsonl > best.txt && loom run examples/row_sums.loom --as-written -t best.txt"},
    {"transforms", "list the registered transformations with their typed arguments", "loom transforms [--json]",
     "  --json                   the declarations as a JSON schema (types, defaults, choices, ranges, search domains)\n", "loom transforms --json"},
    {"help", "help for the tool or for one command", "loom help [COMMAND]", "", "loom help run"},
};

const CommandHelp* find_command(const std::string& name) {
  for (auto& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

void print_tool_help(std::FILE* out) {
  std::fprintf(out,
               "loom: a polyhedral loop-transformation code generator (kernels in the kernel language or JSON)\n\n"
               "usage: loom COMMAND FILE [options]\n\ncommands:\n");
  for (auto& c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(out, "\nFILE is a kernel file (.loom) or a loom-kernel JSON document (.json).\n"
                    "options of show, compile, run and bench:\n%s\n"
                    "`loom help COMMAND` or `loom COMMAND --help` describes a command.\n"
                    "Environment: LOOM_CACHE_DIR (compile cache folder), LOOM_CACHE=off (no disk cache),\n"
                    "LOOM_CPU (the CPU the CPU target compiles for).\n",
               kCommonOptions);
}

void print_command_help(const CommandHelp& c) {
  std::printf("loom %s: %s\n\nusage: %s\n", c.name, c.summary, c.usage);
  if (*c.options) std::printf("\noptions:\n%s", c.options);
  if (std::string(c.name) != "transforms" && std::string(c.name) != "help" && std::string(c.name) != "best") std::printf("%s", kCommonOptions);
  std::printf("\nexample:\n  %s\n", c.example);
}

[[noreturn]] void usage(const std::string& why, const std::string& command = "") {
  std::cerr << "loom: " << why << "\n";
  const CommandHelp* c = find_command(command);
  if (c) std::cerr << "usage: " << c->usage << "\n(loom help " << c->name << " for more)\n";
  else std::cerr << "usage: loom show|compile|run|bench FILE [options]   (loom --help for more)\n";
  std::exit(2);
}

// NAME=VALUE
std::pair<std::string, std::string> split_pair(const std::string& kv, const std::string& option, const std::string& command) {
  auto eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) usage(option + " expects NAME=VALUE, got '" + kv + "'", command);
  return {kv.substr(0, eq), kv.substr(eq + 1)};
}

}  // namespace

Options parse_args(int argc, char** argv) {
  Options o;
  if (argc < 2) usage("no command given");
  o.command = argv[1];
  if (o.command == "--help" || o.command == "-h") {
    print_tool_help(stdout);
    std::exit(0);
  }
  if (o.command == "help") {
    if (argc < 3) {
      print_tool_help(stdout);
      std::exit(0);
    }
    const CommandHelp* c = find_command(argv[2]);
    if (!c) usage(std::string("no command '") + argv[2] + "'");
    print_command_help(*c);
    std::exit(0);
  }
  if (!find_command(o.command)) usage("unknown command '" + o.command + "'");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("option " + a + " needs a value", o.command);
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      print_command_help(*find_command(o.command));
      std::exit(0);
    } else if (a == "--transform" || a == "-t") o.transform_files.push_back(value());
    else if (a == "--arch") o.arch = value();
    else if (a == "--target") {
      o.target = value();
      if (o.target != "cuda" && o.target != "cpu" && o.target != "auto") usage("--target is cuda, cpu or auto", o.command);
    } else if (a == "--emit") o.emit = value();
    else if (a == "-o" || a == "--output") o.output = value();
    else if (a == "--in") o.inputs.insert(split_pair(value(), "--in", o.command));
    else if (a == "--out") o.outputs.insert(split_pair(value(), "--out", o.command));
    else if (a == "--reps") {
      std::string v = value();
      char* end = nullptr;
      long r = std::strtol(v.c_str(), &end, 10);
      if (*end || r < 1 || r > 1000000) usage("--reps takes a count from 1 to 1000000, got '" + v + "'", o.command);
      o.reps = static_cast<int>(r);
    } else if (a == "--max-memory") {
      std::string v = value();
      char* end = nullptr;
      double g = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(g > 0) || g > 1e9) usage("--max-memory takes a size in GiB, got '" + v + "'", o.command);
      o.max_memory_gib = g;
    } else if (a == "--no-check") o.check = false;
    else if (a == "--fallback-compile") o.fallback_compile = true;
    else if (a == "--verbose" || a == "-v") o.verbose = true;
    else if (a == "--json" && o.command == "transforms") o.json = true;
    else if (a == "--space") o.space = value();
    else if (a == "--strategy") o.strategy = value();
    else if (a == "--log") o.log = value();
    else if (a == "--no-resume") o.resume = false;
    else if (a == "--no-settle") o.settle = false;
    else if (a == "--seed-log" && o.command == "tune") o.seed_logs.push_back(value());
    else if (a == "--restrict" && o.command == "tune") o.restrictions.push_back(value());
    else if (a == "--ray" && o.command == "tune") o.ray = value();
    else if (a == "--kernel" && o.command == "best") o.kernel = value();
    else if ((a == "--rtol" || a == "--atol") && o.command == "tune") {
      std::string v = value(), name;
      if (auto eq = v.find('='); eq != std::string::npos) name = v.substr(0, eq), v = v.substr(eq + 1);
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(x >= 0) || !std::isfinite(x)) usage(a + " takes [ARRAY=]TOLERANCE (a number, at least 0), got '" + v + "'", o.command);
      (a == "--rtol" ? o.rtol : o.atol)[name] = x;
    } else if (a == "--check-input" && o.command == "tune") o.check_inputs.insert(split_pair(value(), "--check-input", o.command));
    else if (a == "--check-size" && o.command == "tune") {
      auto [name, v] = split_pair(value(), "--check-size", o.command);
      char* end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || x < 0) usage("--check-size " + name + "=" + v + ": a size is an integer, at least 0", o.command);
      o.check_sizes[name] = x;
    } else if (a == "--time-limit" && o.command == "tune") {
      std::string v = value();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(x > 0) || !std::isfinite(x)) usage("--time-limit takes seconds above 0, got '" + v + "'", o.command);
      o.time_limit = x;
    }
    else if (a == "--device" && o.command == "best") o.device = value();
    else if (a == "--feature-model" && o.command == "tune") o.feature_model = true;
    else if (a == "--as-written") o.as_written = true;
    else if (a == "--redundant" && o.command == "stats") o.redundant = true;
    else if (a == "--granularity" && o.command == "stats") {
      o.granularity = value();
      if (o.granularity != "workitem" && o.granularity != "subgroup" && o.granularity != "workgroup")
        usage("--granularity is workitem, subgroup or workgroup", o.command);
    } else if (a == "--subgroup-size" && o.command == "stats") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || n < 1 || n > 1024) usage("--subgroup-size takes a thread count from 1 to 1024, got '" + v + "'", o.command);
      o.subgroup_size = int(n);
    }
    else if (a == "--trials" || a == "--seed" || a == "--trial-timeout" || a == "--gpus") {
      std::string v = value();
      char* end = nullptr;
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(x >= 0) || x > 1e9 || (a == "--trials" && x < 1)) usage(a + " takes a number, got '" + v + "'", o.command);
      if (a == "--trial-timeout" && !(x > 0)) usage("--trial-timeout takes seconds above 0, got '" + v + "'", o.command);
      if (a == "--trials") o.trials = int(x);
      else if (a == "--seed") o.seed = uint64_t(x);
      else if (a == "--gpus") o.gpus = int(x);
      else o.trial_timeout = x;
    }
    else if (a == "-D" || a.rfind("-D", 0) == 0) {
      auto [name, v] = split_pair(a == "-D" ? value() : a.substr(2), "-D", o.command);
      char* end = nullptr;
      errno = 0;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (!v.empty() && !*end && errno != ERANGE) {
        o.params[name] = x;
      } else {  // a float value argument's value (alpha=1.5)
        double d = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !std::isfinite(d)) usage("-D " + name + "=" + v + ": the value must be a number", o.command);
        o.scalars[name] = d;
      }
    } else if (!a.empty() && a[0] == '-') usage("unknown option " + a, o.command);
    else if (o.file.empty()) o.file = a;
    else usage("more than one FILE given", o.command);
  }
  if (o.command != "transforms" && o.file.empty()) usage("no FILE given", o.command);
  if (!o.output.empty() && o.emit.empty()) usage("-o names where --emit writes: give --emit STAGE too", o.command);
  if ((!o.inputs.empty() || !o.outputs.empty()) && o.command != "run") usage("--in and --out belong to run", o.command);
  // the commands' defaults: show prints the target's code; bench times more launches than run
  if (o.command == "show" && o.emit.empty()) o.emit = o.target == "cpu" ? "llvm" : "cuda";
  if (o.reps < 0) o.reps = o.command == "bench" ? 100 : 20;
  return o;
}

}  // namespace loom::cli
