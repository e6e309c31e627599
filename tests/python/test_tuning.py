"""lp.tune on the CPU target: choice points in transformation calls, the
automatic space, lists of scripts, a function of a configuration, the log and
resume, and the winner as an ordinary kernel checked against NumPy."""
import json

import numpy as np
import pytest

import loom as lp

SIZES = {"n": 300, "m": 77}
# the CPU target where this build has it (CI), else the GPU (the lent machine's build)
TARGET = "cpu" if lp._loom.has_cpu_target() else "cuda" if lp._loom.gpu_available() else None
pytestmark = pytest.mark.skipif(TARGET is None, reason="neither the CPU target nor a GPU: nothing to tune on")


def rows():
    return lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])")


def quick(**kw):
    return dict(parameters=SIZES, target=TARGET, progress=False, min_time=0.002, **{"settle": False, **kw})


def check_rows(knl):
    a = np.random.default_rng(0).random((300, 45), dtype=np.float32)  # (a winner may assume the timed n = 300 is a multiple of 4)
    (out,) = knl(a=a)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-4)


def test_choices_make_a_space_and_the_winner_is_a_kernel():
    knl = rows()
    space = lp.split_iname(knl, "j", lp.Choice([32, 64]), inner_tag="l.0")
    assert isinstance(space, lp.TuningSpace)
    space = lp.split_iname(space, "i", lp.Choice([1, 4, 64]), outer_tag="g.0", inner_tag="l.1")
    assert "choice(1|4|64)" in str(space) and "6 configurations" in str(space)
    r = lp.tune(space, **quick())
    assert len(r.trials) == 6
    statuses = {t["key"]: t["status"] for t in r.trials}
    assert statuses["0:1.2"] == "illegal"  # 64 x 64 threads per block
    assert "4096 threads" in next(t["error"] for t in r.trials if t["key"] == "0:1.2")
    assert r.best["status"] == "ok"
    assert isinstance(r.kernel, lp.LoopKernel)
    check_rows(r.kernel)


def test_a_transformed_kernel_keeps_its_steps_before_the_choices():
    knl = lp.split_iname(rows(), "j", 32, inner_tag="l.0")
    space = lp.split_iname(knl, "i", lp.Choice([2, 4]), outer_tag="g.0", inner_tag="l.1")
    assert space.lines[0].startswith("split_iname")
    r = lp.tune(space, **quick())
    assert all(t["script"].startswith("split_iname") and "j" in t["script"].splitlines()[0] for t in r.trials)
    check_rows(r.kernel)


def test_automatic_space_scripts_and_functions():
    knl = rows()
    r = lp.tune(knl, trials=5, seed=3, strategy="random", **quick())
    assert len(r.trials) == 5
    check_rows(r.kernel)
    scripts = ["split_iname i 32 outer_tag=g.0 inner_tag=l.0", "split_iname j 32 inner_tag=l.0\nsplit_iname i 4 outer_tag=g.0 inner_tag=l.1"]
    r = lp.tune((knl, scripts), **quick())
    assert [t["key"] for t in r.trials] == ["0:", "1:"]
    r = lp.tune(lambda c: lp.split_iname(knl, "i", c["b"], outer_tag="g.0", inner_tag="l.0"), configs=[{"b": 16}, {"b": 128}], **quick())
    assert len(r.trials) == 2
    check_rows(r.kernel)
    r = lp.tune((knl, "split_iname i choice(16|32) outer_tag=g.0 inner_tag=l.0\n"), **quick())
    assert len(r.trials) == 2


def test_the_log_is_json_lines_and_a_second_run_resumes(tmp_path):
    log = str(tmp_path / "t.jsonl")
    space = lp.split_iname(rows(), "i", lp.Choice([8, 16, 32, 64]), outer_tag="g.0", inner_tag="l.0")
    first = lp.tune(space, trials=2, strategy="exhaustive", log=log, **quick())
    lines = open(log).read().splitlines()
    assert len(lines) == 2 and all(json.loads(x)["status"] == "ok" for x in lines)
    second = lp.tune(space, log=log, **quick())
    assert second.skipped == 2 and len(second.trials) == 2
    assert len(lp.read_log(log)) == 4
    assert {t["key"] for t in first.trials}.isdisjoint({t["key"] for t in second.trials})


def test_another_cards_log_seeds_a_run(tmp_path):
    log, seeds = str(tmp_path / "here.jsonl"), str(tmp_path / "there.jsonl")
    space = lp.split_iname(rows(), "i", lp.Choice([8, 16, 32, 64, 128, 256]), outer_tag="g.0", inner_tag="l.0")
    lp.tune(space, trials=4, strategy="exhaustive", log=seeds, **quick())
    there = [json.loads(x) for x in open(seeds).read().splitlines()]
    with open(seeds, "w") as f:  # as if measured on another card
        for t in there:
            f.write(json.dumps(dict(t, device="Another Card")) + "\n")
    fastest = min((t for t in there if t["status"] == "ok"), key=lambda t: t["median_seconds"])
    r = lp.tune(space, trials=4, strategy="random", seed=5, log=log, seed_logs=seeds, **quick())
    assert r.seeded == 1 and r.trials[0]["key"] == fastest["key"] and r.trials[0]["device"] != "Another Card"
    with pytest.raises(lp.LoomError, match="seed log"):
        lp.tune(space, trials=2, strategy="random", seed_logs=[seeds + ".missing"], **quick())


def test_bad_spaces_and_missing_sizes_are_errors():
    knl = rows()
    with pytest.raises(lp.LoomError, match="1:15: an empty value"):
        lp.tune((knl, "split_iname i choice(8||16)\n"), **quick())
    with pytest.raises(lp.LoomError, match="no size for parameter 'm'"):
        lp.tune(knl, parameters={"n": 10}, target=TARGET, progress=False)
    with pytest.raises(lp.LoomError, match="no configuration of the space ran correctly"):
        lp.tune((knl, "split_iname i choice(2048|4096) outer_tag=g.0 inner_tag=l.0\n"), **quick())
    with pytest.raises(ValueError):
        lp.Choice([])


def test_autotune_tunes_once_per_key_and_reuses_the_winner_from_disk(tmp_path, monkeypatch):
    space = lp.split_iname(rows(), "i", lp.Choice([16, 32]), outer_tag="g.0", inner_tag="l.0")
    fast = lp.autotune(space, key=["n"], cache_dir=str(tmp_path), target=TARGET, progress=False, min_time=0.002)
    a = np.random.default_rng(1).random((300, 45), dtype=np.float32)
    (out,) = fast(a=a)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-4)
    assert fast.tuned == 1
    fast(a=np.ones((300, 20), dtype=np.float32))  # m is not part of the key: the same winner
    assert fast.tuned == 1
    b = np.random.default_rng(2).random((64, 45), dtype=np.float32)
    (out,) = fast(a=b)  # another n: tuned for it
    np.testing.assert_allclose(out, b.sum(1), rtol=1e-4)
    assert fast.tuned == 2
    assert len(list(tmp_path.iterdir())) == 2
    # a later process (a new object, the same cache): the winners come from disk, nothing is tuned
    def no_tuning(*args, **kwargs):
        raise AssertionError("tuned again")
    monkeypatch.setattr(lp.tuning, "tune", no_tuning)
    again = lp.autotune(space, key=["n"], cache_dir=str(tmp_path), target=TARGET)
    (out,) = again(a=a)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-4)
    assert again.tuned == 0


def test_autotune_as_a_decorator():
    @lp.autotune(key=["n"], target=TARGET, progress=False, min_time=0.002, cache_dir=None, trials=3)
    def fast():
        return rows()
    assert isinstance(fast, lp.Autotuned)


def test_a_run_plots_to_png(tmp_path):
    pytest.importorskip("matplotlib")
    space = lp.split_iname(rows(), "i", lp.Choice([16, 32, 2048]), outer_tag="g.0", inner_tag="l.0")
    log = str(tmp_path / "t.jsonl")
    r = lp.tune(space, log=log, **quick())
    png = tmp_path / "run.png"
    r.plot(str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    import subprocess, sys
    out = subprocess.run([sys.executable, "-m", "loom.plot", log, str(tmp_path / "log.png")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "log.png").stat().st_size > 10000


def test_trials_carry_kernel_features_and_the_feature_model_keeps_the_budget():
    import loom as lp
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, a[i, j])", name="rows")
    k = lp.add_dtypes(k, dict(a="float32"))
    space = (k, "split_iname j choice(4|8|16|32|64) inner_tag=l.0\n"
                "split_iname i choice(1|2|4|8|16|32|64) outer_tag=g.0 inner_tag=l.1\n"
                "optional split_iname j_outer 2 inner_tag=unr\n")
    r = lp.tune(space, {"n": 300, "m": 77}, trials=32, strategy="evolution", target=TARGET, feature_model=True, progress=False, min_time=0.002)
    assert len(r.trials) - r.refused == 32  # (configurations the checks refused are no trials)
    ok = [t for t in r.trials if t["status"] == "ok"]
    assert ok and all(t["features"]["global_load_bytes"] == 4 * 300 * 77 for t in ok)


# ---- wrong winners and wrong bookkeeping (the tuner as a product, fix first) ----

def test_a_script_fixing_a_timed_parameter_to_another_value_never_wins():
    # fix_parameters n=16 timed at n=300 would time a smaller problem and win
    knl = rows()
    r = lp.tune((knl, "fix_parameters n=choice(16|300)\nsplit_iname i 4 outer_tag=g.0 inner_tag=l.0\n"), **quick())
    by_script = {t["script"].splitlines()[0]: t for t in r.trials}
    assert by_script["fix_parameters n=16"]["status"] == "illegal"
    assert "fixes n=16 but the trial is timed at n=300" in by_script["fix_parameters n=16"]["error"]
    assert by_script["fix_parameters n=300"]["status"] == "ok"
    # the winner of the space (the kernel as written, trial 0, may be faster still)
    best = min((t for t in r.trials if t["status"] == "ok"), key=lambda t: t["median_seconds"])
    assert best["script"].startswith("fix_parameters n=300")
    assert r.best in (best, r.as_written) or r.best["key"] == "as written"


def test_the_kernel_as_written_is_trial_0_and_never_beaten_by_a_slower_winner():
    # every configuration of this space is slower than the kernel as written: one
    # thread a block, a block a row, a row's loop unrolled by 1 (an extra loop)
    knl = rows()
    r = lp.tune((knl, "split_iname i 1 outer_tag=g.0 inner_tag=l.0\nsplit_iname j choice(1|2)\n"), **quick())
    assert r.as_written["status"] == "ok" and r.as_written["script"] == ""
    space_best = min(t["median_seconds"] for t in r.trials if t["status"] == "ok")
    assert r.best["median_seconds"] <= min(space_best, r.as_written["median_seconds"])
    assert r.best["key"] in ("as written",) + tuple(t["key"] for t in r.trials)
    assert len(r.trials) == 2  # (trial 0 is not one of the space's trials)
    off = lp.tune((knl, "split_iname i 1 outer_tag=g.0 inner_tag=l.0\n"), references=False, **quick())
    assert off.as_written is None


def test_a_missing_log_is_an_error_not_an_empty_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        lp.read_log(str(tmp_path / "nosuch.jsonl"))


def test_a_log_of_two_kernels_is_read_one_group_at_a_time(tmp_path):
    log = str(tmp_path / "two.jsonl")
    lp.tune(lp.split_iname(rows(), "i", lp.Choice([8, 16]), outer_tag="g.0", inner_tag="l.0"), log=log, **quick())
    other = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j < m}", "out[i] = sum(j, 2 * a[i, j])", name="twice")
    lp.tune(lp.split_iname(other, "i", lp.Choice([8, 16]), outer_tag="g.0", inner_tag="l.0"), log=log, **quick())
    trials = lp.read_log(log)
    assert {t["kernel"] for t in trials} == {"loopy_kernel", "twice"}
    with pytest.raises(ValueError, match="2 kernels"):
        lp.tuning.log_group(trials)
    name, group = lp.tuning.log_group(trials, kernel="twice")
    assert "kernel 'twice'" in name and len(group) == 2 and all(t["kernel"] == "twice" for t in group)


def test_a_resumed_run_reports_the_logs_trials_with_its_own(tmp_path):
    log = str(tmp_path / "r.jsonl")
    space = lp.split_iname(rows(), "i", lp.Choice([8, 16]), outer_tag="g.0", inner_tag="l.0")
    first = lp.tune(space, log=log, **quick())
    again = lp.tune(space, log=log, **quick())  # everything is in the log: nothing runs
    assert again.trials == [] and len(again.resumed) == 2
    assert again.best["key"] == first.best["key"]
    table = again.table()
    assert table.count("(from the log)") == 2
    again.plot(str(tmp_path / "r.png"))
    assert (tmp_path / "r.png").stat().st_size > 0


def test_autotune_keys_name_parameters_and_include_dtypes(tmp_path):
    with pytest.raises(ValueError, match="'N'.*parameters: m, n"):
        lp.autotune(rows(), key=["N"], cache_dir=str(tmp_path))
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]",
                         [lp.GlobalArg("a", lp.auto, shape="n"), lp.GlobalArg("out", lp.auto, shape="n"), "..."])
    space = lp.split_iname(knl, "i", lp.Choice([16, 32]), outer_tag="g.0", inner_tag="l.0")
    fast = lp.autotune(space, key=["n"], cache_dir=str(tmp_path), target=TARGET, progress=False, min_time=0.002)
    a32 = np.arange(100, dtype=np.float32)
    (out,) = fast(a=a32)
    assert fast.tuned == 1 and out.dtype == np.float32
    (out,) = fast(a=a32.astype(np.float64))  # a float64 call tunes for float64 data
    assert fast.tuned == 2 and out.dtype == np.float64
    np.testing.assert_array_equal(out, 2 * a32.astype(np.float64))


def test_autotune_does_not_reuse_a_winner_whose_assumptions_the_call_breaks(tmp_path):
    knl = lp.make_kernel("{[i]: 0 <= i < n}", "out[i] = 2 * a[i]", [lp.GlobalArg("a", np.float32, shape="n"), "..."])
    # the only schedule assumes n mod 4 = 0 (timed at n=96); key=[] shares one winner across sizes
    space = (knl, ["assume n mod 4 = 0\nsplit_iname i 4 outer_tag=g.0 inner_tag=l.0"])
    fast = lp.Autotuned(lp.TuningSpace(knl, ("assume n mod 4 = 0", "split_iname i choice(4|8) outer_tag=g.0 inner_tag=l.0")),
                        key=[], cache_dir=str(tmp_path), target=TARGET, progress=False, min_time=0.002,
                        references=False)  # (the kernel as written, assuming nothing, could win at n=96)
    del space
    a = np.arange(96, dtype=np.float32)
    (out,) = fast(a=a)
    np.testing.assert_array_equal(out, 2 * a)
    b = np.arange(97, dtype=np.float32)
    with pytest.raises(lp.LoomError, match="no configuration of the space ran correctly|break"):
        fast(a=b)  # every schedule of this space assumes n mod 4 = 0: refused, not run wrong
    plain = lp.Autotuned(lp.TuningSpace(knl, ("optional assume n mod 4 = 0", "split_iname i choice(4|8) outer_tag=g.0 inner_tag=l.0")),
                         key=[], cache_dir=str(tmp_path / "p"), target=TARGET, progress=False, min_time=0.002)
    (out,) = plain(a=a)
    (out,) = plain(a=b)  # the n=96 winner may assume n mod 4 = 0; n=97 gets a schedule of its own where it does
    np.testing.assert_array_equal(out, 2 * b)


def test_values_every_trial_would_fail_on_are_errors_before_any_trial():
    knl = rows()
    for kw, text in ((dict(parameters={"n": 1024.5, "m": 7}), "a size is an integer"),
                     (dict(parameters={"n": -5, "m": 7}), "not negative"),
                     (dict(parameters=SIZES, trials=0), "at least 1"),
                     (dict(parameters=SIZES, trial_timeout=0), "above 0"),
                     (dict(parameters=SIZES, trial_timeout=-1), "above 0"),
                     (dict(parameters=SIZES, target="gpu"), "'auto', 'cpu' or 'cuda'")):
        with pytest.raises(ValueError, match=text):
            lp.tune(knl, progress=False, **kw)


def test_a_transformed_kernel_is_not_given_an_automatic_space_on_top_of_its_schedule():
    knl = lp.split_iname(rows(), "i", 16, outer_tag="g.0", inner_tag="l.0")
    with pytest.raises(ValueError, match="already transformed .*split_iname"):
        lp.tune(knl, **quick())
    # declarations (dtypes, assumptions) leave a kernel as written
    typed = lp.assume(lp.add_dtypes(rows(), {"a": np.float64}), "n >= 1")
    r = lp.tune(typed, trials=2, strategy="random", **quick())
    assert r.best["status"] == "ok"


def test_records_carry_the_check_the_spread_and_what_they_were_made_with(tmp_path):
    log = str(tmp_path / "rec.jsonl")
    r = lp.tune(lp.split_iname(rows(), "i", lp.Choice([8, 16]), outer_tag="g.0", inner_tag="l.0"), log=log, seed=4, **quick())
    for t in lp.read_log(log):
        assert t["check"] == "passed" and t["check_error"] < 1e-3 and "n=" in t["check_sizes"]
        assert t["min_seconds"] <= t["median_seconds"] <= t["max_seconds"]
        assert t["timestamp"].endswith("Z") and t["version"] and t["seed"] == 4
        assert sorted(t["dtypes"].split()) == ["a:float32", "out:float32"] and t["kernel"] == "loopy_kernel"
    assert r.best["check"] == "passed"


def test_check_inputs_and_tolerances_are_the_users(tmp_path):
    knl = rows()
    space = lp.split_iname(knl, "i", lp.Choice([8, 16]), outer_tag="g.0", inner_tag="l.0")
    check = {"n": 5, "m": 3}
    a = np.arange(15, dtype=np.float32).reshape(5, 3)
    r = lp.tune(space, check_parameters=check, check_inputs={"a": a}, rtol=1e-6, atol=0, **quick())
    assert all(t["check"] == "passed" and t["check_sizes"] == "m=3 n=5" for t in r.trials)
    r = lp.tune(space, check_parameters=check, check_inputs=lambda sizes: {"a": np.ones((sizes["n"], sizes["m"]), np.float32)}, **quick())
    assert r.best["status"] == "ok"
    with pytest.raises(ValueError, match="check_parameters"):
        lp.tune(space, check_inputs={"a": a}, **quick())
    with pytest.raises(ValueError, match="tolerance"):
        lp.tune(space, rtol=-1, **quick())
    # an input of the wrong shape fails every trial, saying why
    with pytest.raises(lp.LoomError, match="check input 'a'.*check sizes give"):
        lp.tune(space, check_parameters=check, check_inputs={"a": np.ones((4, 3), np.float32)}, **quick())


def test_a_time_limit_stops_the_run():
    import time
    knl = rows()
    started = time.time()
    # (the kernel as written is measured first, so a machine busy enough that
    # no trial of the space finishes within the limit still has a winner)
    r = lp.tune(knl, trials=200, strategy="random", time_limit=0.5, **quick(references=True))
    assert len(r.trials) < 200 and r.best["status"] == "ok"
    assert time.time() - started < 60
    # a limit too short for any trial: the kernel as written is the answer, not an error
    r = lp.tune(knl, trials=200, strategy="random", time_limit=1e-4, **quick(references=True))
    assert len(r.trials) == 0 and r.best["key"] == "as written" and r.best["status"] == "ok"


def test_restrictions_leave_configurations_out_before_anything_is_generated():
    space = lp.split_iname(rows(), "i", lp.Choice([8, 16, 32, 64]), outer_tag="g.0", inner_tag="l.0")
    seen = []

    def small_blocks(values):
        seen.append(dict(values))
        (factor,) = [v for k, v in values.items() if k != "sketch"]
        return int(factor) <= 16

    r = lp.tune(space, restrictions=[small_blocks], **quick())
    assert r.restricted == 2 and len(r.trials) == 2
    assert sorted(t["script"].split()[2] for t in r.trials) == ["inner_length=16", "inner_length=8"]
    assert len(seen) == 4 and all("sketch" in v for v in seen)

    def broken(values):
        raise RuntimeError("no")

    with pytest.raises(lp.LoomError, match="a restriction raised"):
        lp.tune(space, restrictions=broken, **quick())


def test_the_plot_names_sketches_and_draws_runs_without_a_valid_trial(tmp_path):
    r = lp.tune(lp.split_iname(rows(), "i", lp.Choice([8, 4096]), outer_tag="g.0", inner_tag="l.0"), **quick())
    assert {t["sketch"] for t in r.trials} == {"user"}
    r.plot(str(tmp_path / "some.png"))
    assert (tmp_path / "some.png").stat().st_size > 0
    bad = [dict(t, status="illegal") for t in r.trials]
    lp.tuning.plot_trials(bad, str(tmp_path / "none.png"))
    assert (tmp_path / "none.png").stat().st_size > 0
    with pytest.raises(FileNotFoundError, match="no folder"):
        r.plot(str(tmp_path / "nosuch" / "x.png"))
