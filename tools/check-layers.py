#!/usr/bin/env python3
"""Fails when an #include runs against Loom's layers (DESIGN.md, section 1,
with the decisions in docs/decisions.md, "Layers"). The allowed arrows are
listed here, once: each layer may include its own headers and those of the
layers it names. `tools/check-layers.py [ROOT]`; part of `make test`."""
import os
import re
import sys

# layer -> the layers it may see (besides itself)
ALLOWED = {
    "ir": set(),
    "analysis": {"ir"},
    # (transformations that move data, read_initial_values and expand_array, ask the scheduler's exact
    # dataflow of the kernel as it stands; neither preprocess nor the scheduler sees transforms)
    "transforms": {"ir", "analysis", "preprocess", "schedule"},
    "frontend": {"ir", "analysis", "transforms"},  # script readers check steps against the registry
    "preprocess": {"ir", "analysis"},
    "schedule": {"ir", "analysis", "preprocess"},
    "codegen": {"ir", "analysis", "preprocess", "schedule"},
    "statistics": {"ir", "analysis", "preprocess", "schedule", "codegen"},  # counts on the generated kernel
    "runtime": {"ir", "analysis", "preprocess", "schedule", "codegen"},  # the calling convention the targets launch through
    "cuda": {"ir", "analysis", "preprocess", "schedule", "codegen", "runtime"},
    "cpu": {"ir", "analysis", "preprocess", "schedule", "codegen", "runtime"},
    "interpreter": {"ir", "analysis", "preprocess", "schedule", "codegen", "runtime"},
    "top": {"ir", "analysis", "frontend", "transforms", "preprocess", "schedule", "codegen", "statistics", "runtime", "cuda",
            "cpu", "interpreter", "top"},
}

# public headers (include/loom/NAME.h) by layer
HEADERS = {
    "ir": "type expr kernel part bounded_memo domain constraints isl_util match functions half error script expr_text target_info",
    "analysis": "analysis", "frontend": "parser json", "transforms": "transforms", "preprocess": "preprocess",
    "schedule": "schedule", "codegen": "codegen ast", "statistics": "statistics", "runtime": "runtime disk_cache", "cuda": "cuda", "cpu": "cpu",
    "interpreter": "interpreter", "top": "stages variants tuner",
}
HEADER_LAYER = {h: layer for layer, hs in HEADERS.items() for h in hs.split()}

# source folders by layer
FOLDERS = {
    "src/ir": "ir", "src/analysis": "analysis", "src/frontend": "frontend", "transforms": "transforms",
    "src/preprocess": "preprocess", "src/schedule": "schedule", "src/codegen": "codegen", "src/statistics": "statistics", "src/runtime": "runtime",
    "targets/cuda": "cuda", "targets/cpu": "cpu", "targets/interpreter": "interpreter", "targets": "top",
    "src/cli": "top", "python": "top", "tuner": "top",
}


def layer_of_path(rel):
    best = None
    for folder, layer in FOLDERS.items():
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, layer)
    if rel.startswith("include/loom/"):
        return HEADER_LAYER.get(os.path.splitext(os.path.basename(rel))[0])
    return best[1] if best else None


def main(root):
    bad = []
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    for top in ["include/loom", "src", "transforms", "targets", "tuner", "python"]:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if not f.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                me = layer_of_path(rel)
                if me is None:
                    bad.append(f"{rel}: in no layer (add it to tools/check-layers.py)")
                    continue
                for inc in include.findall(open(path, encoding="utf-8").read()):
                    if inc.startswith("loom/"):
                        target = HEADER_LAYER.get(os.path.splitext(inc[5:])[0])
                        if target is None:
                            bad.append(f"{rel}: includes {inc}, a header in no layer")
                            continue
                    else:
                        target = layer_of_path(os.path.relpath(os.path.normpath(os.path.join(dirpath, inc)), root))
                        if target is None:
                            continue  # a generated or system-like header beside the file
                    if target != me and target not in ALLOWED[me]:
                        bad.append(f"{rel} ({me}) includes {inc} ({target})")
    for line in bad:
        print("layers:", line)
    print(f"layers: {len(bad)} include(s) against the arrows")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")))
