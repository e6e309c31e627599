"""loopy's tutorial section "Obtaining Performance Statistics", as a loopy user writes it with
`import loom as lp`: the counts and their printing, filter_by, group_by, to_bytes,
filter_by_func, synchronization, and the counts against a run's results."""
import numpy as np
import pytest

import loom as lp
from loom.statistics import CountGranularity as CG


@pytest.fixture
def knl():
    k = lp.make_kernel(
        "[n,m,l] -> {[i,k,j]: 0<=i<n and 0<=k<m and 0<=j<l}",
        """
        c[i, j, k] = a[i,j,k]*b[i,j,k]/3.0+a[i,j,k]
        e[i, k] = g[i,k]*(2+h[i,k+1])
        """, name="stats_knl")
    return lp.add_dtypes(k, dict(a=np.float32, b=np.float32, g=np.float64, h=np.float64))


PARAMS = {'n': 256, 'm': 256, 'l': 8}


def test_operations_as_in_loopys_tutorial(knl):
    op_map = lp.get_op_map(knl, subgroup_size=32)
    assert str(op_map).startswith("Op(np:dtype('float32'), add, subgroup, \"stats_knl\"): ")
    counts = [op_map[lp.Op(dt, name, CG.SUBGROUP, "stats_knl")].eval_with_dict(PARAMS)
              for dt, name in [(np.float32, 'add'), (np.float32, 'div'), (np.float32, 'mul'), (np.float64, 'add'),
                               (np.float64, 'mul'), (np.int32, 'add')]]
    assert counts == [524288, 524288, 524288, 65536, 65536, 65536]
    assert op_map.filter_by(dtype=[np.float32]).eval_and_sum(PARAMS) == 1572864
    by_dtype = op_map.group_by('dtype')
    assert str(by_dtype).startswith("Op(np:dtype('float32'), None, None): ")
    assert by_dtype[lp.Op(dtype=np.float32)].eval_with_dict(PARAMS) == 1572864
    # a closed form in the parameters, as isl prints it
    assert "n * m * l" in str(op_map[lp.Op(np.float32, 'mul', CG.SUBGROUP, "stats_knl")]).replace("(", "").replace(")", "")


def test_memory_accesses_as_in_loopys_tutorial(knl):
    mem_map = lp.get_mem_access_map(knl, subgroup_size=32)
    assert str(mem_map).startswith("MemAccess(global, np:dtype('float32'), {}, {}, load, a, None, subgroup, 'stats_knl'): ")

    def access(dt, direction, var, strides=({}, {}), gran=CG.SUBGROUP, m=mem_map):
        return m[lp.MemAccess('global', dt, strides[0], strides[1], direction, var, variable_tags=None,
                              count_granularity=gran, kernel_name="stats_knl")].eval_with_dict(PARAMS)

    assert [access(np.float32, 'load', 'a'), access(np.float32, 'store', 'c'), access(np.float64, 'load', 'g'),
            access(np.float64, 'store', 'e')] == [1048576, 524288, 65536, 65536]
    moved = mem_map.to_bytes().filter_by(mtype=['global']).group_by('direction')
    assert str(moved).startswith("MemAccess(None, None, None, None, load, None, None, None, None): ")
    assert moved[lp.MemAccess(direction='load')].eval_with_dict(PARAMS) == 7340032
    assert moved[lp.MemAccess(direction='store')].eval_with_dict(PARAMS) == 2621440

    for outer, inner, strides in [("l.1", "l.0", {0: 1, 1: 128}), ("l.0", "l.1", {0: 128, 1: 1})]:
        par = lp.split_iname(knl, "k", 128, outer_tag=outer, inner_tag=inner)
        m = lp.get_mem_access_map(par, subgroup_size=32)
        assert [access(np.float32, 'load', 'a', (strides, {}), CG.WORKITEM, m), access(np.float32, 'store', 'c', (strides, {}), CG.WORKITEM, m),
                access(np.float64, 'load', 'g', (strides, {}), CG.WORKITEM, m),
                access(np.float64, 'store', 'e', (strides, {}), CG.WORKITEM, m)] == [1048576, 524288, 65536, 65536]
        if strides[0] == 128:
            from loom.statistics import MemAccess  # noqa: F401  (loopy's tutorial imports from loopy.statistics too)
            f = m.filter_by_func(lambda key: key.dtype == np.dtype(np.float32) and key.lid_strides[0] > 1)
            assert f.eval_and_sum(PARAMS) == 2097152


def test_synchronization_as_in_loopys_tutorial(knl):
    sync_map = lp.get_synchronization_map(knl)
    assert str(sync_map).startswith("Sync(kernel_launch, stats_knl): ")
    assert sync_map[lp.Sync("kernel_launch", "stats_knl")].eval_with_dict(PARAMS) == 1

    k = lp.make_kernel(
        "[] -> {[i,k,j]: 0<=i<50 and 1<=k<98 and 0<=j<10}",
        """
        c[i,j,k] = 2*a[i,j,k]
        e[i,j,k] = c[i,j,k+1]+c[i,j,k-1]
        """, [lp.TemporaryVariable("c", dtype=None, shape=(50, 10, 99)), "..."])
    k = lp.add_dtypes(k, dict(a=np.int32))
    k = lp.split_iname(k, "k", 128, inner_tag="l.0")
    sync_map = lp.get_synchronization_map(k)
    # loopy places two barriers per (i, j) here (1000); Loom one, as iteration j + 1 writes other elements of c
    assert sync_map[lp.Sync("barrier_local", "loopy_kernel")].eval_with_dict({}) == 500
    assert sync_map[lp.Sync("kernel_launch", "loopy_kernel")].eval_with_dict({}) == 1
    # and the kernel computes what NumPy does (where it reads elements of c it wrote: c[..., 0] and
    # c[..., 98] are never written, in loopy's tutorial as here)
    a = np.random.default_rng(1).integers(-9, 9, (50, 10, 98)).astype(np.int32)
    (e,) = k(a=a)
    c = np.zeros((50, 10, 99), np.int32)
    c[:, :, 1:98] = 2 * a[:, :, 1:98]
    np.testing.assert_array_equal(e[:, :, 2:97], c[:, :, 3:98] + c[:, :, 1:96])


def test_counts_refuse_missing_parameters_and_follow_split_tiles():
    k = lp.make_kernel("{[i, j]: 0 <= i < n and 0 <= j <= i}", "out[i] = sum(j, a[i, j])", name="tri")
    k = lp.add_dtypes(k, dict(a=np.float32))
    k = lp.split_iname(k, "i", 16, outer_tag="g.0", inner_tag="l.0")
    m = lp.get_mem_access_map(k, count_granularity=CG.WORKITEM)
    loads = m.filter_by(variable=["a"], direction=["load"]).sum()
    assert loads.closed_form
    for n in [1, 15, 16, 17, 100]:
        assert loads.eval_with_dict({"n": n}) == n * (n + 1) // 2
    with pytest.raises(lp.ArgumentError, match="parameter 'n'"):
        loads.eval_with_dict({})
    with pytest.raises(ValueError, match="count_granularity"):
        lp.Op(np.float32, "add", "warp")
