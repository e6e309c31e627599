error: tests/conformance/loopy/nonsense_reduction.loom:9:3: instruction 'insn_0' reduces over 'i', but the instruction already runs within 'i' (its left-hand side or its inames use it)
