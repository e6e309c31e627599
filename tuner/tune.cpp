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
#include "cost_models.h"
#include "measure.h"
#include "search.h"

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
    if (t.status == TrialStatus::Ok) groups[device_model(t.device) + "|" + t.parameters].push_back(t);
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


// Now, in UTC, as ISO 8601 (a record's timestamp).
std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}


// Loom's version, for the records (the build's project version).
std::string loom_version() { return LOOM_VERSION; }

}  // namespace


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
  // (other kernels' trials of the seed logs, on this target and card: what
  // the feature model learns before this run measures anything, as
  // MetaSchedule's database trains its cost model across workloads)
  std::vector<Trial> other_workloads;
  for (auto& path : o.seed_logs) {
    if (!std::filesystem::exists(path)) throw Error("tuning: seed log '" + path + "' does not exist");
    for (auto& t : read_log(path)) {
      if (this_kernel(t)) elsewhere.push_back(t);
      else if (t.target == o.target && t.status == TrialStatus::Ok && !t.features.empty() && device_model(t.device) == device_model(device))
        other_workloads.push_back(t);
    }
  }

  std::string strategy = o.strategy;
  if (strategy == "auto") strategy = space.size() <= double(o.trials) ? "exhaustive" : "evolution";
  const std::set<std::string> strategies{"exhaustive", "random", "evolution", "bayes", "annealing", "local", "diff_evo", "pso"};
  if (!strategies.count(strategy))
    throw Error("tuning: no strategy '" + strategy + "' (exhaustive, random, evolution, bayes, annealing, local, diff_evo, pso or auto)");

  // measured first (random, evolution): the fastest elsewhere, then the rules' guesses
  std::vector<Configuration> seeds;
  if (strategy != "exhaustive") {
    seeds = seeds_from(elsewhere, space, done, std::min<size_t>(8, std::max(1, o.trials / 4)));
    result.seeded = int(seeds.size());
  }
  Search search(space, o, strategy, seeds, done);
  FeatureModel features;
  if (o.feature_model)
    for (auto& t : other_workloads) features.add(t.features, t.median_seconds);
  result.other_workloads = o.feature_model ? int(other_workloads.size()) : 0;

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
  if (strategy == "exhaustive") shown_total = int(std::min<size_t>(size_t(total), search.untried()));
  std::optional<Trial> best_so_far = best(earlier);
  // the log's trials of this space that the run reuses: reported with this
  // run's, and the search continues from them (a resumed run, or a task
  // scheduler's next round, refines what was measured instead of starting
  // with random draws again)
  for (auto& t : earlier)
    if (auto c = space.from_key(t.key); c && space.script(*c) == t.script) {
      result.resumed.push_back(t);
      search.measured(*c, t.status == TrialStatus::Ok ? std::optional<double>(t.median_seconds) : std::nullopt);
    }
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
    size_t want = size_t(std::max(0, std::min(total - issued, strategy == "exhaustive" || strategy == "random" ? 32 : 8)));
    if (out_of_time()) want = 0;
    doubled = strategy == "evolution" && o.feature_model && features.ready() && want > 0;
    if (doubled) want *= 2;  // (half is measured: below)
    std::vector<Configuration> b = want ? search.next_batch(want, result.trials.size() + result.resumed.size()) : std::vector<Configuration>{};
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
      search.measured(batch[i], t.status == TrialStatus::Ok ? std::optional<double>(t.median_seconds) : std::nullopt);
      if (t.status == TrialStatus::Ok) {
        features.add(t.features, t.median_seconds);
        if (!best_so_far || t.median_seconds < best_so_far->median_seconds) best_so_far = t;
      }
      if (!o.log.empty()) append_log(o.log, t);
      result.trials.push_back(t);
      if (t.status == TrialStatus::Illegal && result.refused < refusals_free) {
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
        t.status = screened[i].stopped ? TrialStatus::Failed : TrialStatus::Illegal;
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
  result.skipped = search.skipped();
  result.restricted = search.restricted();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  auto none_ran = [&] {
    std::string why;
    int shown = 0;
    for (auto& t : result.trials)
      if (shown++ < 3) why += "\n  " + t.key + " (" + to_string(t.status) + "): " + t.error;
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
