import os
import sys

# the package from the build tree (PYTHONPATH set by ctest) or an installed one
SOURCE_DIR = os.environ.get("LOOM_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
