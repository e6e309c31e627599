// The tuning loop: picks configurations (exhaustive, random, or evolution
// guided by a cost model learnt from this run's measurements), screens each
// batch in parallel worker processes (compile_variants: the transformation,
// Loom's legality checks and code generation, and NVRTC for CUDA, so the
// measuring worker finds the binary in the disk cache), measures the legal
// ones one at a time in the measuring worker, and appends every trial to
// the log as it ends. Configurations already in the log (same kernel, same
// target, device, sizes and script) are not tried again: a killed run
// resumes. The fastest trials of the kernel measured elsewhere (another
// device or other sizes, in this log or the seed logs) are measured first.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <future>
#include <numeric>
#include <set>
#include <poll.h>

#include "loom/parser.h"
#include "loom/tuner.h"
#include "loom/variants.h"
#include "measure.h"

namespace loom::tune {

namespace {

using Clock = std::chrono::steady_clock;

std::string parameter_text(const std::map<std::string, int64_t>& p) {
  std::string s;
  for (auto& [n, v] : p) s += (s.empty() ? "" : " ") + n + "=" + std::to_string(v);
  return s;
}

// The card a trial ran on, without the " (GPU k)" a run over several GPUs
// adds: trials on any card of one model resume each other.
std::string device_model(const std::string& device) {
  size_t p = device.rfind(" (GPU ");
  return p == std::string::npos ? device : device.substr(0, p);
}

// A trial's configuration in this space: its key, or its picks in another
// sketch (the automatic space for other sizes may lack a sketch before
// it), whichever gives the trial's script; nullopt when none does.
std::optional<Configuration> place(const Space& space, const Trial& t) {
  if (auto c = space.from_key(t.key); c && space.script(*c) == t.script) return c;
  size_t colon = t.key.find(':');
  if (colon == std::string::npos) return std::nullopt;
  for (size_t s = 0; s < space.sketches().size(); ++s)
    if (auto c = space.from_key(std::to_string(s) + t.key.substr(colon)); c && space.script(*c) == t.script) return c;
  return std::nullopt;
}

// The configurations to measure first: the fastest valid trials of the
// kernel measured elsewhere, the fastest of each (device, sizes) group
// first, then the second fastest of each, ...; at most `most`, each one
// the space can express (place) and not already done here.
std::vector<Configuration> seeds_from(std::vector<Trial> elsewhere, const Space& space, const std::set<std::string>& done, size_t most) {
  std::map<std::string, std::vector<Trial>> groups;
  for (auto& t : elsewhere)
    if (t.status == "ok") groups[device_model(t.device) + "|" + t.parameters].push_back(t);
  for (auto& [_, g] : groups) std::stable_sort(g.begin(), g.end(), [](auto& a, auto& b) { return a.median_seconds < b.median_seconds; });
  std::vector<Configuration> seeds;
  std::set<std::string> taken = done;
  for (size_t rank = 0; seeds.size() < most; ++rank) {
    bool any = false;
    for (auto& [_, g] : groups) {
      if (rank >= g.size() || seeds.size() >= most) continue;
      any = true;
      const Trial& t = g[rank];
      std::optional<Configuration> c = place(space, t);
      if (!c || !taken.insert(t.script).second) continue;
      seeds.push_back(*c);
    }
    if (!any) break;
  }
  return seeds;
}

// The cost model of the evolution strategy: the measured log-times of this
// run's valid trials, and a prediction for an unmeasured configuration of
// the same sketch from its nearest measured neighbours (distance: how far
// apart the picks are, each choice point scaled to [0, 1]). Invalid trials
// count as slow, so their neighbourhood is avoided.
class NeighbourModel {
 public:
  explicit NeighbourModel(const Space& s) : space_(s) {}
  void add(const Configuration& c, double seconds) { seen_.push_back({c, std::log(seconds)}); }
  double predict(const Configuration& c) const {
    const Sketch& s = space_.sketches()[size_t(c.sketch)];
    std::vector<std::pair<double, double>> near;  // (distance, log-time)
    for (auto& [m, y] : seen_) {
      if (m.sketch != c.sketch) continue;
      double d = 0;
      for (size_t p = 0; p < c.picks.size(); ++p) {
        double n = double(std::max<size_t>(1, s.choices[p].values.size() - 1));
        d += std::fabs(double(c.picks[p] - m.picks[p])) / n;
      }
      near.push_back({d, y});
    }
    if (near.empty()) return 0;  // unknown sketch: neutral
    std::sort(near.begin(), near.end());
    double num = 0, den = 0;
    for (size_t i = 0; i < std::min<size_t>(4, near.size()); ++i) {
      double w = 1 / (near[i].first + 0.05);
      num += w * near[i].second;
      den += w;
    }
    return num / den;
  }

 private:
  const Space& space_;
  std::vector<std::pair<Configuration, double>> seen_;
};

// Now, in UTC, as ISO 8601 (a record's timestamp).
std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A configuration's values by choice point name, and its sketch's name
// under "sketch": what the user's restrictions are asked about.
std::map<std::string, std::string> choice_values(const Space& space, const Configuration& c) {
  const Sketch& s = space.sketches().at(size_t(c.sketch));
  std::map<std::string, std::string> v{{"sketch", s.name}};
  for (size_t i = 0; i < s.choices.size() && i < c.picks.size(); ++i) v[s.choices[i].name] = s.choices[i].values.at(size_t(c.picks[i]));
  return v;
}

// Loom's version, for the records (the build's project version).
std::string loom_version() { return LOOM_VERSION; }

}  // namespace

void FeatureModel::add(const std::map<std::string, double>& features, double seconds) {
  if (features.empty() || !(seconds > 0)) return;
  samples_.push_back({features, std::log(seconds)});
  fitted_ = false;
}

std::vector<double> FeatureModel::row(const std::map<std::string, double>& f) const {
  std::vector<double> x(names_.size() + 1, 0);
  x[0] = 1;  // (the intercept)
  for (size_t i = 0; i < names_.size(); ++i) {
    auto it = f.find(names_[i]);
    x[i + 1] = it == f.end() ? 0 : std::log1p(std::max(0.0, it->second));
  }
  return x;
}

void FeatureModel::fit() const {
  std::set<std::string> names;
  for (auto& [f, y] : samples_)
    for (auto& [n, v] : f) names.insert(n);
  names_.assign(names.begin(), names.end());
  size_t d = names_.size() + 1;  // (and an intercept)
  // (X'X + lambda I) w = X'y, by Gaussian elimination with partial pivoting
  std::vector<std::vector<double>> a(d, std::vector<double>(d + 1, 0));
  for (auto& [f, y] : samples_) {
    auto x = row(f);
    for (size_t i = 0; i < d; ++i) {
      for (size_t j = 0; j < d; ++j) a[i][j] += x[i] * x[j];
      a[i][d] += x[i] * y;
    }
  }
  for (size_t i = 1; i < d; ++i) a[i][i] += 0.1;  // ridge: features that do not vary say nothing
  for (size_t c = 0; c < d; ++c) {
    size_t p = c;
    for (size_t r = c + 1; r < d; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
    std::swap(a[c], a[p]);
    if (std::fabs(a[c][c]) < 1e-12) continue;
    for (size_t r = 0; r < d; ++r) {
      if (r == c) continue;
      double m = a[r][c] / a[c][c];
      for (size_t j = c; j <= d; ++j) a[r][j] -= m * a[c][j];
    }
  }
  weights_.assign(d, 0);
  for (size_t i = 0; i < d; ++i) weights_[i] = std::fabs(a[i][i]) < 1e-12 ? 0 : a[i][d] / a[i][i];
  fitted_ = true;
}

std::optional<double> FeatureModel::predict(const std::map<std::string, double>& features) const {
  if (!ready() || features.empty()) return std::nullopt;
  if (!fitted_) fit();
  std::vector<double> x = row(features);
  return std::inner_product(x.begin(), x.end(), weights_.begin(), 0.0);
}

double occupancy(const TargetInfo& t, int64_t threads, int registers, int64_t shared_bytes, std::string* limit) {
  if (threads <= 0) return 0;
  int64_t warps = (threads + t.warp_size - 1) / t.warp_size, rounded = warps * t.warp_size;
  auto why = [&](const std::string& s) {
    if (limit) *limit = s;
  };
  int64_t blocks = std::min<int64_t>(32, t.max_threads_per_sm / rounded);  // (32 resident blocks per SM on sm_80-sm_90)
  why(std::to_string(threads) + " threads per block");
  if (registers > 0) {
    int64_t per_block = int64_t((registers + 7) / 8 * 8) * rounded;  // (allocated per warp in units of 8 per thread)
    int64_t by_registers = t.registers_per_sm / per_block;
    if (by_registers < blocks) {
      blocks = by_registers;
      why(std::to_string(registers) + " registers x " + std::to_string(threads) + " threads = " + std::to_string(int64_t(registers) * threads) +
          " per block, of the SM's " + std::to_string(t.registers_per_sm));
    }
  }
  if (shared_bytes > 0) {
    int64_t by_shared = (t.max_shared_bytes + 1024) / (shared_bytes + 1024);  // (1 KiB reserved per block)
    if (by_shared < blocks) {
      blocks = by_shared;
      why(std::to_string(shared_bytes) + " bytes of shared memory per block, of the SM's " + std::to_string(t.max_shared_bytes + 1024));
    }
  }
  return double(std::max<int64_t>(0, blocks) * rounded) / double(t.max_threads_per_sm);
}

Result tune(const LoopKernel& k, const Space& space, const Options& options) {
  auto start = Clock::now();
  Result result;
  uint64_t kernel_hash = structural_hash(k);
  for (auto& p : k.parameters())
    if (!options.parameters.count(p)) throw Error("tuning: no size for parameter '" + p + "' (give every parameter a value: -D " + p + "=VALUE)");
  // the measuring worker first: it resolves the target and reports the
  // device, so this process never initializes CUDA (its forks could not use it)
  // One measuring worker per GPU (each sees only its own), or one for the CPU
  // (trials timed side by side on the CPU would disturb each other).
  std::vector<std::string> gpus = options.target == "cpu" ? std::vector<std::string>{} : detail::visible_gpu_ids();
  if (options.gpus > 0 && gpus.size() > size_t(options.gpus)) gpus.resize(size_t(options.gpus));
  std::vector<std::unique_ptr<detail::MeasureWorker>> workers;
  Options o = options;
  if (!options.measure) {
    workers.push_back(std::make_unique<detail::MeasureWorker>(k, options, gpus.empty() ? "" : gpus[0]));
    const detail::WorkerInfo& first = workers[0]->info();
    o.target = first.target;
    o.arch = first.arch;
    o.device = first.device;
    o.max_shared_bytes = first.max_shared_bytes;
    if (o.target == "cuda")
      for (size_t g = 1; g < gpus.size(); ++g) workers.push_back(std::make_unique<detail::MeasureWorker>(k, o, gpus[g]));
  } else if (o.target != "cpu" && o.target != "cuda") {
    throw Error("tuning with a backend of its own: give the target (cpu or cuda) its workers resolved, not '" + o.target + "'");
  }
  std::string device = o.device;
  std::string dtypes;  // (each record says what data it was timed on)
  for (auto& a : k.arguments)
    if (a.kind == Argument::Array) dtypes += (dtypes.empty() ? "" : " ") + a.name + ":" + a.dtype.name();

  // what the log already holds for this kernel and target
  // (and what it, and the seed logs, hold of this kernel measured elsewhere)
  std::vector<Trial> earlier, elsewhere;
  std::set<std::string> done;
  auto this_kernel = [&](const Trial& t) { return t.kernel_hash == kernel_hash && t.target == o.target; };
  if (!o.log.empty() && o.resume)
    for (auto& t : read_log(o.log)) {
      if (!this_kernel(t)) continue;
      if (t.parameters == parameter_text(o.parameters) && device_model(t.device) == device_model(device)) {
        earlier.push_back(t);
        done.insert(t.script);
      } else {
        elsewhere.push_back(t);
      }
    }
  for (auto& path : o.seed_logs) {
    if (!std::filesystem::exists(path)) throw Error("tuning: seed log '" + path + "' does not exist");
    for (auto& t : read_log(path))
      if (this_kernel(t)) elsewhere.push_back(t);
  }

  std::mt19937_64 rng(o.seed);
  std::string strategy = o.strategy;
  if (strategy == "auto") strategy = space.size() <= double(o.trials) ? "exhaustive" : "evolution";
  if (strategy != "exhaustive" && strategy != "random" && strategy != "evolution")
    throw Error("tuning: no strategy '" + strategy + "' (exhaustive, random, evolution or auto)");

  std::vector<Configuration> order;  // exhaustive: the whole list, in order
  if (strategy == "exhaustive") order = space.all();
  size_t next_in_order = 0;
  std::set<std::string> picked;      // keys tried or skipped in this run
  NeighbourModel model(space);
  FeatureModel features;
  std::vector<std::pair<double, Configuration>> valid;  // (median, configuration), this run

  auto fresh = [&](const Configuration& c) { return !picked.count(c.key()); };
  // measured first (random, evolution): the fastest elsewhere, then the rules' guesses
  std::vector<Configuration> starts;
  if (strategy != "exhaustive") {
    starts = seeds_from(elsewhere, space, done, std::min<size_t>(8, std::max(1, o.trials / 4)));
    result.seeded = int(starts.size());
  }
  for (auto& c : space.starts()) starts.push_back(c);
  std::reverse(starts.begin(), starts.end());
  std::vector<int> unvisited;  // evolution's first draws: each sketch once, in a random order
  for (size_t s = 0; s < space.sketches().size(); ++s) unvisited.push_back(int(s));
  std::shuffle(unvisited.begin(), unvisited.end(), rng);
  // The next batch of configurations nobody has tried.
  auto next_batch = [&](size_t want) {
    std::vector<Configuration> batch;
    auto take = [&](const Configuration& c) {
      picked.insert(c.key());
      if (done.count(space.script(c))) {
        ++result.skipped;
        return;
      }
      if (o.restrict && !o.restrict(choice_values(space, c))) {
        ++result.restricted;
        return;
      }
      batch.push_back(c);
    };
    if (strategy == "exhaustive") {
      while (batch.size() < want && next_in_order < order.size()) take(order[next_in_order++]);
      return batch;
    }
    // evolution: random until this many; with a trial for each sketch,
    // every sketch is drawn once first (unvisited), so a sketch the few
    // random draws of a short run would miss (the one tensor-core sketch of
    // twelve, 16 trials) is measured
    size_t warm = std::max<size_t>(8, size_t(o.trials) / 4);
    bool covers = size_t(o.trials) >= space.sketches().size();
    if (covers) warm = std::max(warm, space.sketches().size());
    for (int attempts = 0; batch.size() < want && attempts < 200 * int(want); ++attempts) {
      if (double(picked.size()) >= space.size()) break;
      if (!starts.empty()) {
        Configuration c = starts.back();
        starts.pop_back();
        if (fresh(c)) take(c);
        continue;
      }
      if (strategy == "random" || valid.size() < 2 || result.trials.size() < warm) {
        bool cover = strategy == "evolution" && !unvisited.empty() && covers;
        Configuration c = cover ? space.random_in(unvisited.back(), rng) : space.random(rng);
        if (cover) unvisited.pop_back();
        if (fresh(c)) take(c);
        continue;
      }
      // evolution: mutants of the best few, the most promising by the model;
      // one parent in four is the best of some sketch instead, so a sketch
      // whose first random draws were poor is still refined (a short run's
      // few random trials decide little about a sketch)
      std::sort(valid.begin(), valid.end(), [](auto& a, auto& b) { return a.first < b.first; });
      size_t parents = std::min<size_t>(valid.size(), 4);
      std::vector<size_t> sketch_bests;  // indexes into valid, the first of each sketch
      std::set<int> seen_sketches;
      for (size_t v = 0; v < valid.size(); ++v)
        if (seen_sketches.insert(valid[v].second.sketch).second) sketch_bests.push_back(v);
      std::vector<std::pair<double, Configuration>> candidates;
      // (the model ranks the mutants together, so a sketch's best is
      // mutated alone: among the others' mutants its would never rank first)
      bool from_sketch = sketch_bests.size() > 1 && std::uniform_int_distribution<int>(0, 3)(rng) == 0;
      size_t sketch_parent = from_sketch ? sketch_bests[std::uniform_int_distribution<size_t>(0, sketch_bests.size() - 1)(rng)] : 0;
      for (int m = 0; m < 24; ++m) {
        size_t parent = from_sketch ? sketch_parent : std::uniform_int_distribution<size_t>(0, parents - 1)(rng);
        Configuration c = valid[parent].second;
        int steps = 1 + int(std::uniform_int_distribution<int>(0, 2)(rng) == 0);
        for (int s = 0; s < steps; ++s) c = space.mutate(c, rng);
        if (fresh(c)) candidates.push_back({model.predict(c), c});
      }
      if (candidates.empty()) {  // a neighbourhood worn out: explore
        Configuration c = space.random(rng);
        if (fresh(c)) take(c);
        continue;
      }
      std::sort(candidates.begin(), candidates.end(), [](auto& a, auto& b) { return a.first < b.first; });
      take(candidates.front().second);
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) {  // one in four also random, as evolution keeps diversity
        Configuration c = space.random(rng);
        if (fresh(c) && batch.size() < want) take(c);
      }
    }
    return batch;
  };

  VariantOptions vo;
  vo.workers = o.compile_workers;
  vo.compile = o.target == "cuda";
  vo.arch = o.arch;
  vo.seconds_per_variant = o.compile_timeout_seconds;
  vo.feature_parameters = o.parameters;  // each trial's kernel features at the timed sizes, for the log and the models
  vo.target = o.arch.empty() ? TargetInfo::generic_cuda() : TargetInfo::cuda(o.arch);
  if (o.max_shared_bytes > 0) vo.target->max_shared_bytes = o.max_shared_bytes;
  int total = o.trials;
  // what the progress reports as the run's length: the trials it will measure
  // (a space smaller than the budget, less what the log already holds, is measured whole)
  int shown_total = total;
  if (strategy == "exhaustive")
    shown_total = int(std::min<size_t>(size_t(total), size_t(std::count_if(order.begin(), order.end(), [&](const Configuration& c) {
                                                         return !done.count(space.script(c));
                                                       }))));
  std::optional<Trial> best_so_far = best(earlier);
  for (auto& t : earlier)  // (the log's trials of this space that the run reuses: reported with this run's)
    if (space.from_key(t.key) && space.script(*space.from_key(t.key)) == t.script) result.resumed.push_back(t);
  // Screening runs one batch ahead: while the workers measure a batch, the
  // next is transformed, generated and compiled (its configurations chosen
  // from what was measured so far).
  int issued = 0;
  // Configurations the checks refuse before anything runs (illegal: a
  // reordering, a race, a block too large) are no trials: they are recorded
  // (and logged, so a resumed run skips them) but leave the budget to a
  // configuration that runs — up to refusals_free of them, after which they
  // count, so a space of mostly refused configurations still ends.
  int counted = 0;  // trials that count against the budget
  const int refusals_free = std::max(64, 4 * total);
  // doubled: set to whether the batch is a doubled one (the feature model is ready)
  // the time budget: no batch is taken, and no trial sent to a worker, once it is spent
  auto out_of_time = [&] { return o.time_limit_seconds > 0 && std::chrono::duration<double>(Clock::now() - start).count() >= o.time_limit_seconds; };
  auto take_batch = [&](bool& doubled) {
    size_t want = size_t(std::max(0, std::min(total - issued, strategy == "evolution" ? 8 : 32)));
    if (out_of_time()) want = 0;
    doubled = strategy == "evolution" && o.feature_model && features.ready() && want > 0;
    if (doubled) want *= 2;  // (half is measured: below)
    std::vector<Configuration> b = want ? next_batch(want) : std::vector<Configuration>{};
    issued += int(b.size());
    return b;
  };
  auto screen = [&k, &vo, &o](std::vector<std::string> texts) {
    if (o.screen) return o.screen(texts);
    std::vector<ScreenResult> out;
    std::vector<std::vector<TransformStep>> scripts;
    for (size_t i = 0; i < texts.size(); ++i) scripts.push_back(parse_transform_script(texts[i], "<trial " + std::to_string(i) + ">"));
    for (auto& v : compile_variants(k, scripts, vo))
      out.push_back({v.ok, v.stopped, v.error, v.hash, v.generate_seconds, v.compile_seconds, v.registers, v.threads, v.shared_bytes,
                     v.features});
    return out;
  };
  auto scripts_of = [&](const std::vector<Configuration>& b) {
    std::vector<std::string> s;
    for (auto& c : b) s.push_back(space.script(c));
    return s;
  };
  // the next batch, whether it is a doubled one, and its screening started
  std::future<std::vector<ScreenResult>> screening;
  auto issue = [&](std::vector<Configuration>& b, bool& is_doubled) {
    b = take_batch(is_doubled);
    if (!b.empty()) screening = std::async(std::launch::async, screen, scripts_of(b));
  };
  std::vector<Configuration> batch;
  bool doubled = false;
  issue(batch, doubled);
  while (!batch.empty()) {
    std::vector<ScreenResult> screened = screening.get();
    std::vector<Configuration> following;
    bool following_doubled = false;
    issue(following, following_doubled);
    // every trial's record; the illegal ones are done now, the others go to the workers
    std::vector<Trial> trials(batch.size());
    std::vector<size_t> to_measure;
    auto record = [&](size_t i) {
      Trial& t = trials[i];
      if (t.status == "ok") {
        valid.push_back({t.median_seconds, batch[i]});
        model.add(batch[i], t.median_seconds);
        features.add(t.features, t.median_seconds);
        if (!best_so_far || t.median_seconds < best_so_far->median_seconds) best_so_far = t;
      } else if (!valid.empty()) {
        model.add(batch[i], std::max_element(valid.begin(), valid.end(), [](auto& a, auto& b) { return a.first < b.first; })->first * 4);
      }
      if (!o.log.empty()) append_log(o.log, t);
      result.trials.push_back(t);
      if (t.status == "illegal" && result.refused < refusals_free) {
        ++result.refused;
        --issued;
      } else {
        ++counted;
      }
      if (o.progress) o.progress(t, best_so_far, counted, shown_total);
    };
    for (size_t i = 0; i < batch.size(); ++i) {
      Trial& t = trials[i];
      t.key = batch[i].key();
      t.sketch = space.sketches().at(size_t(batch[i].sketch)).name;
      t.script = space.script(batch[i]);
      t.kernel_hash = kernel_hash;
      t.kernel_name = k.name;
      t.target = o.target;
      t.device = device;
      t.parameters = parameter_text(o.parameters);
      t.features = screened[i].features;
      t.timestamp = utc_now();
      t.version = loom_version();
      t.dtypes = dtypes;
      t.seed = o.seed;
      if (o.target == "cuda" && screened[i].ok && screened[i].threads > 0) {
        // static pruning: a block whose registers or shared memory do not fit an SM would fail to launch
        std::string limit;
        t.occupancy = occupancy(*vo.target, screened[i].threads, screened[i].registers, screened[i].shared_bytes, &limit);
        if (t.occupancy == 0) {
          screened[i].ok = false;
          screened[i].error = "one block does not fit an SM: " + limit;
        }
      }
      if (!screened[i].ok) {
        t.status = screened[i].stopped ? "failed" : "illegal";
        t.error = screened[i].error;
        t.generate_seconds = screened[i].generate_seconds;
        t.variant_hash = screened[i].hash;
        if (doubled && size_t(counted) + following.size() >= size_t(total)) {
          ++result.unmeasured;  // (a doubled batch's refusals past the budget are not trials)
          --issued;
        } else {
          record(i);
        }
      } else {
        if (o.target == "cuda") t.compile_seconds = screened[i].compile_seconds;  // (the worker's came from the cache)
        to_measure.push_back(i);
      }
    }
    // A doubled batch (the feature model is ready): measure the 8 it predicts
    // fastest (those it cannot predict stay in), fewer where the budget ends
    // (this batch's refusals are trials too, and the next batch is issued).
    size_t keep = std::min<size_t>(8, size_t(std::max<long>(0, long(total) - long(counted) - long(following.size()))));
    if (doubled && to_measure.size() > keep) {
      std::vector<std::pair<double, size_t>> ranked;
      for (size_t i : to_measure) ranked.push_back({features.predict(trials[i].features).value_or(-1e300), i});
      std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
      to_measure.clear();
      for (size_t r = 0; r < keep; ++r) to_measure.push_back(ranked[r].second);
      std::sort(to_measure.begin(), to_measure.end());
      int dropped = int(ranked.size() - keep);
      result.unmeasured += dropped;
      issued -= dropped;  // (the budget counts what is measured or refused)
      if (following.empty()) {  // the budget they leave: another batch
        issue(following, following_doubled);
      }
    }
    if (o.measure) {  // the backend's workers
      std::vector<Trial> batch_trials;
      for (size_t i : to_measure) batch_trials.push_back(trials[i]);
      o.measure(batch_trials, [&](size_t j) {
        trials[to_measure.at(j)] = batch_trials.at(j);
        record(to_measure[j]);
      });
      if (following.empty()) issue(following, following_doubled);  // (the budget this batch's refusals left)
      batch = std::move(following);
      doubled = following_doubled;
      continue;
    }
    // each idle worker takes the next trial; the first to answer (or to run out of time) is recorded
    std::vector<long> running(workers.size(), -1);
    std::vector<bool> sent(workers.size(), false);
    size_t next = 0;
    for (;;) {
      if (out_of_time() && next < to_measure.size()) {
        result.unmeasured += int(to_measure.size() - next);  // (screened, not measured: the time is spent)
        next = to_measure.size();
      }
      for (size_t w = 0; w < workers.size() && next < to_measure.size(); ++w)
        if (running[w] < 0) {
          running[w] = long(to_measure[next++]);
          sent[w] = workers[w]->begin(trials[size_t(running[w])]);
        }
      std::vector<pollfd> fds;
      std::vector<size_t> owner;
      double wait = 3600;
      for (size_t w = 0; w < workers.size(); ++w)
        if (running[w] >= 0) {
          fds.push_back({workers[w]->fd(), POLLIN, 0});
          owner.push_back(w);
          wait = std::min(wait, workers[w]->seconds_left());
        }
      if (fds.empty()) break;
      poll(fds.data(), fds.size(), std::max(0, int(wait * 1000)));
      for (size_t f = 0; f < fds.size(); ++f) {
        size_t w = owner[f];
        if (fds[f].revents == 0 && workers[w]->seconds_left() > 0 && sent[w]) continue;
        size_t i = size_t(running[w]);
        workers[w]->finish(trials[i], sent[w]);
        if (workers.size() > 1) trials[i].device = device + " (GPU " + gpus[w] + ")";
        running[w] = -1;
        record(i);
      }
    }
    if (following.empty()) issue(following, following_doubled);  // (the budget this batch's refusals left)
    batch = std::move(following);
    doubled = following_doubled;
  }
  result.best = best_so_far;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  auto none_ran = [&] {
    std::string why;
    int shown = 0;
    for (auto& t : result.trials)
      if (shown++ < 3) why += "\n  " + t.key + " (" + t.status + "): " + t.error;
    return NoValidConfiguration("tuning kernel '" + k.name + "': no configuration of the space ran correctly (" + std::to_string(result.trials.size()) +
                                    " tried" + (result.skipped ? ", " + std::to_string(result.skipped) + " already in the log" : "") + ")" + why,
                                result.trials);
  };
  // A space none of whose configurations runs is an error, whatever the
  // references do; one the time limit cut short before any ran is not: the
  // references, where asked for, are then the answer.
  bool cut = o.time_limit_seconds > 0 && result.seconds >= o.time_limit_seconds;
  if (!result.best && !(cut && o.references)) throw none_ran();
  if (o.settle && !cut) settle_close_winners(k, o, result);
  if (o.references) {
    measure_references(k, o, result);
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  }
  if (!result.best) throw none_ran();
  return result;
}

}  // namespace loom::tune
