import os
import sys

# the package from the build tree (PYTHONPATH set by ctest) or an installed one
SOURCE_DIR = os.environ.get("LOOM_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


def pytest_terminal_summary(terminalreporter):
    """The loopy corpus's counts: ported, passing, refused as loopy refuses, gaps."""
    corpus = sys.modules.get("test_loopy_corpus")
    if corpus is None or not corpus.OUTCOMES:
        return
    counts = {k: sum(1 for v in corpus.OUTCOMES.values() if v == k) for k in ("pass", "refused", "gap")}
    terminalreporter.write_line(
        f"loopy corpus: {len(corpus.NAMES)} kernels ported from loopy's tests; {counts['pass']} pass, "
        f"{counts['refused']} refused as loopy refuses them, {counts['gap']} not yet supported (listed as gaps)")
