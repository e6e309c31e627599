"""loopy.version's names, so `from loopy.version import LOOPY_USE_LANGUAGE_VERSION_2018_2`
ports by changing the import. Loom has one language version, loopy's most recent
(2018.2: instructions without dependencies run in the order dependencies and
the data flow give, not in text order); make_kernel accepts lang_version and
seq_dependencies for scripts that pass them."""
from importlib import metadata as _metadata

try:
    VERSION_TEXT = _metadata.version("loom")
except _metadata.PackageNotFoundError:  # (run from a build tree)
    VERSION_TEXT = "0.0.0"
VERSION = tuple(int(x) for x in VERSION_TEXT.split(".")[:3] if x.isdigit())
VERSION_STATUS = ""

LOOPY_USE_LANGUAGE_VERSION_2018_2 = (2018, 2)
LOOPY_USE_LANGUAGE_VERSION_2018_1 = (2018, 1)
LOOPY_USE_LANGUAGE_VERSION_2017_2 = (2017, 2)
MOST_RECENT_LANGUAGE_VERSION = LOOPY_USE_LANGUAGE_VERSION_2018_2
LANGUAGE_VERSION_SYMBOLS = ["LOOPY_USE_LANGUAGE_VERSION_2018_2", "LOOPY_USE_LANGUAGE_VERSION_2018_1",
                            "LOOPY_USE_LANGUAGE_VERSION_2017_2"]
