"""loopy.options's module-level switch, so `import loopy.options` ports by
changing the import.

ALLOW_TERMINAL_COLORS: in loopy, whether code printed to a terminal (the
write_code option) is highlighted with terminal colors; its tutorial sets it
to False so that doctest sees plain text. Loom prints plain text only (its
kernels, generated code and messages never carry terminal escape codes), so
False is Loom's behaviour whatever the value; the switch exists so that
scripts setting it run."""

ALLOW_TERMINAL_COLORS = True
