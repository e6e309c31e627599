// Kernels and transformation scripts as JSON (schema: docs/json-schema.md).
// Expressions and domains are stored as text in the kernel language and isl's
// syntax, written so that they read back to the same trees (Expr::exact_str):
// kernel -> JSON -> kernel gives identical generated code. Every document
// carries "format" and "version"; a reader refuses other versions, unknown
// fields and wrong types with a JsonError naming the JSON path.
#pragma once
#include <string>
#include <vector>

#include "loom/kernel.h"
#include "loom/parser.h"

namespace loom {

constexpr int kJsonVersion = 1;

// {"format": "loom-kernel", "version": 1, "kernel": {...}, "transforms": [...],
//  "defaults": {...}}; transforms and defaults are written when non-empty.
std::string kernel_file_to_json(const KernelFile& file, int indent = 2);
std::string kernel_to_json(const LoopKernel& k, int indent = 2);
// `filename` names the document in errors.
KernelFile kernel_file_from_json(const std::string& text, const std::string& filename = "<json>");
LoopKernel kernel_from_json(const std::string& text, const std::string& filename = "<json>");

// {"format": "loom-transforms", "version": 1, "transforms": [{"transform":
// "split_iname", "iname": "i", "inner_length": 16}, ...]}; each step's
// arguments are checked against the registry's schema.
std::string transform_script_to_json(const std::vector<TransformStep>& steps, int indent = 2);
std::vector<TransformStep> transform_script_from_json(const std::string& text, const std::string& filename = "<json>");

// Whether text looks like a JSON document (its first non-blank character is '{').
bool looks_like_json(const std::string& text);

}  // namespace loom
