error: kernel 'nonsense_reduction', instruction 'insn_0': reduces over 'i', but the instruction already runs within 'i'
