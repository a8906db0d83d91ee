"""The discrimination gate (docs/gate.md §8): seeded fixture corpus (``corpus``), veto-read-backwards controls
(``controls``), and the evaluation and merge gate over the real index (``discriminate``). See ``docs/gate.md``."""
