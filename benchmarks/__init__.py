# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The benchmark: what loss scaling costs, `python -m benchmarks`.

Not part of the installed package: it runs from a clone, and imports
`contrib_mixed_precision` from wherever that is importable (this clone's,
from its root). Its rooms, in the order a run's data flow through them:

  floors.py     what any loss scaling must cost (the barrier, the least
                unscale) and TF 1.15's step, loaded from
                tests/tf115_reference.py by path
  variants.py   prototypes of the package's check, skip and unscale,
                timed beside it with `--variants`
  configs.py    each configuration's name and its optimizer factory
  models.py     the models, their inner optimizers, and the cases
  runners.py    each configuration built and stepped in a graph and
                Session, a `tf.function` or eagerly; rounds interleaved;
                graph-construction timing
  stats.py      medians, ratios to bare, paired 95% intervals
  report.py     the machine, the table, the goals and verdicts, the JSON
  profiles.py   `--profile`: where the overhead goes, instead of timing
  __main__.py   the command: its flags, and the run from cases to report
  pair.py       `python -m benchmarks.pair`: whole runs of two trees'
                packages, alternated and paired

This file imports nothing: `benchmarks.pair` imports the package from this
clone before the timed tree's `contrib_mixed_precision` is on the path.
"""
