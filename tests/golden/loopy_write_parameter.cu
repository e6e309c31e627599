error: tests/conformance/loopy/write_parameter.loom:10:3: cannot assign to argument 'a' (only arrays and temporaries are written)
