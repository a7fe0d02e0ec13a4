# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15's optimizer beside the package's, under `disable_v2_behavior()`.

The oracle harness of `tests/tf115_harness.py` in graph mode, in a
process of its own: `disable_v2_behavior()` (ref variables, control flow
v1) must never run in the test process. Each case builds TF 1.15's
`LossScaleOptimizer` (`tests/tf115_reference.py`) and the package's on the
same model, in one Session, trains both, and compares every piece of state
to the bit after each step.

Usage: python tf115_v1_graph.py CASES_JSON

CASES_JSON is a JSON list of `Case.to_json()` dicts. The program prints one
line, `TF115_ORACLE_RESULT ` and a JSON object: for each case's name, its
mismatches (empty when every bit agrees), how many states were compared and
the oracle's final `global_step`, or the error the case raised, and
whether variables were resource variables (they must not be).
"""

import json
import os
import sys
import traceback

import tensorflow as tf

# Before anything builds a graph or a variable.
tf.compat.v1.disable_v2_behavior()

# The harness and the oracle live in tests/, this directory's parent.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tf115_harness as harness  # pylint: disable=wrong-import-position  # noqa: E402


def main(argv):
  if len(argv) != 1:
    sys.exit(__doc__)
  reports = {}
  for data in json.loads(argv[0]):
    case = harness.Case.from_json(data)
    try:
      report = harness.case_report(case, harness.GRAPH)
    except Exception:  # pylint: disable=broad-except
      # One case's error fails that case's test, not the whole batch.
      report = {"error": traceback.format_exc()}
    # What the mode means: ref variables, read in place.
    report["resource_variables"] = (
        tf.compat.v1.resource_variables_enabled())
    reports[case.name] = report
  print(harness.V1_RESULT_PREFIX + json.dumps(reports), flush=True)


if __name__ == "__main__":
  main(sys.argv[1:])
