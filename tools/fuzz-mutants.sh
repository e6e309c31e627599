#!/usr/bin/env bash
# Long mutation fuzzing (tests/unit/test_mutation_fuzz.cpp): every example and
# conformance kernel mutated as text and as a JSON document, and its script's
# transformation arguments replaced by hostile values of their declared
# types; each mutant must be refused with a Loom error or compute what the
# kernel as written computes. Prints the counts; a failure prints the mutant.
# LOOM_FUZZ_VERBOSE=1 also lists mutants that took over 2 s.
#   tools/fuzz-mutants.sh [MUTANTS_PER_FILE=100] [SEED=1]      (after make build)
set -euo pipefail
cd "$(dirname "$0")/.."
LOOM_SOURCE_DIR=$PWD LOOM_MUTANTS=${1:-100} LOOM_RANDOM_SEED=${2:-1} \
  build/loom_unit_tests --gtest_filter='MutationFuzz.*' | grep -vE '^\[ *(RUN|-+|=+) *\]|^Running main|^Note: Google'
