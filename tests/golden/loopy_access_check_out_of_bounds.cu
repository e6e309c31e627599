error: kernel 'access_check_out_of_bounds': instruction 'insn_0' accesses y[i] out of bounds: index 0 (i) leaves [0, 10) for i = 19 (add assumptions if such values cannot occur)
