# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""What `KerasLossScaleOptimizer` costs in `fit`, beside Keras' own.

Three copies of one model are compiled under a `mixed_float16` policy:

  bare        the inner optimizer, with `compile(auto_scale_loss=False)` on
              Keras 3 (no loss scaling; elsewhere Keras' own, see below);
  keras_lso   Keras' own `LossScaleOptimizer` around the same optimizer;
  ours        `contrib_mixed_precision.KerasLossScaleOptimizer(opt,
              'dynamic')`.

Each is timed in `fit` over the same batches, in interleaved rounds whose
order rotates, so that a slow spell of a shared machine hits all three
alike. The report gives each configuration's median per-step time and, per
round, `ours - keras_lso` in points of the bare step, with a
distribution-free 95% interval for its median (issue 42's goal: within 2
points of Keras' own).

Modes: `eager` (`run_eagerly=True`), `function` (fit's `tf.function`) and
`jit` (`jit_compile=True`).

Usage: python -m benchmarks.keras_fit [--modes eager,jit] [--rounds 9]
                                      [--steps 20] [--json PATH]

On a shared machine pin it to one core and one TensorFlow thread
(`TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 taskset -c 1 ...`,
with `--rounds 15 --steps 100`): unpinned, rounds of every configuration
jump between two speeds, and nothing resolves (docs/performance.md).
"""

import argparse
import json
import statistics
import sys
import time

from benchmarks import stats

_CONFIGS = ("bare", "keras_lso", "ours")


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      prog="python -m benchmarks.keras_fit",
      description=__doc__.split("\n\n")[0],
      formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--modes", default="eager,jit",
                      help="comma-separated: eager, function, jit")
  parser.add_argument("--rounds", type=int, default=9,
                      help="interleaved rounds (6 at least for an interval)")
  parser.add_argument("--steps", type=int, default=20,
                      help="fit steps per configuration per round")
  parser.add_argument("--width", type=int, default=512,
                      help="width of the 4 hidden layers")
  parser.add_argument("--json", default=None, help="write the results here")
  args = parser.parse_args(argv)
  args.modes = [m for m in args.modes.split(",") if m]
  for mode in args.modes:
    if mode not in ("eager", "function", "jit"):
      parser.error("--modes: {!r} is not eager, function or jit".format(mode))
  if args.rounds < 1 or args.steps < 1:
    parser.error("--rounds and --steps must be at least 1")
  return args


def _build(tf, keras, mp, config, mode, width, is_keras3):
  """One compiled model for `config` in `mode`."""
  keras.mixed_precision.set_global_policy("mixed_float16")
  try:
    layers = [keras.Input([width])]
    layers += [keras.layers.Dense(width, activation="relu")
               for _ in range(4)]
    layers.append(keras.layers.Dense(1))
    model = keras.Sequential(layers)
  finally:
    keras.mixed_precision.set_global_policy("float32")
  inner = keras.optimizers.SGD(0.01)
  options = {"run_eagerly": mode == "eager", "jit_compile": mode == "jit"}
  if config == "bare":
    optimizer = inner
    if is_keras3:
      options["auto_scale_loss"] = False
  elif config == "keras_lso":
    optimizer = keras.mixed_precision.LossScaleOptimizer(inner)
  else:
    optimizer = mp.KerasLossScaleOptimizer(inner, "dynamic")
  model.compile(optimizer=optimizer, loss="mse", **options)
  return model


def run(args):
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import contrib_mixed_precision as mp  # pylint: disable=g-import-not-at-top
  keras = tf.keras
  package = sys.modules[keras.optimizers.SGD.__module__.split(".")[0]]
  is_keras3 = str(package.__version__).startswith("3")
  rng = np.random.RandomState(0)
  batch = 64
  x = rng.uniform(-1, 1, [batch * args.steps, args.width]).astype(np.float32)
  y = rng.uniform(-1, 1, [batch * args.steps, 1]).astype(np.float32)
  results = {"keras": "{} {}".format(package.__name__, package.__version__),
             "tensorflow": tf.__version__, "modes": {}}
  for mode in args.modes:
    models = {c: _build(tf, keras, mp, c, mode, args.width, is_keras3)
              for c in _CONFIGS}
    for model in models.values():  # Trace, compile and build first.
      model.fit(x, y, batch_size=batch, epochs=1, verbose=0, shuffle=False)
    samples = {c: [] for c in _CONFIGS}
    for r in range(args.rounds):
      order = _CONFIGS[r % 3:] + _CONFIGS[:r % 3]
      for config in order:
        start = time.perf_counter()
        models[config].fit(x, y, batch_size=batch, epochs=1, verbose=0,
                           shuffle=False)
        samples[config].append((time.perf_counter() - start) / args.steps)
    diffs = [100 * (o - k) / b for o, k, b in zip(
        samples["ours"], samples["keras_lso"], samples["bare"])]
    results["modes"][mode] = {
        "median_ms": {c: statistics.median(v) * 1e3
                      for c, v in samples.items()},
        "ours_minus_keras_lso_points": {
            "median": statistics.median(diffs),
            "ci95": stats._median_ci(diffs)},  # pylint: disable=protected-access
        "samples_ms": {c: [s * 1e3 for s in v] for c, v in samples.items()},
    }
  return results


def _print(results):
  print("KerasLossScaleOptimizer in fit: {}, TensorFlow {}".format(
      results["keras"], results["tensorflow"]))
  print("{:<9} {:>10} {:>12} {:>10}   ours - keras_lso (points of bare, "
        "95% CI)".format("mode", "bare ms", "keras_lso ms", "ours ms"))
  for mode, row in results["modes"].items():
    ms = row["median_ms"]
    paired = row["ours_minus_keras_lso_points"]
    ci = paired["ci95"]
    ci_text = "[{:+.1f}, {:+.1f}]".format(*ci) if ci else "(too few rounds)"
    verdict = ""
    if ci:
      verdict = ("  goal met" if ci[1] <= 2 else
                 "  goal not met" if ci[0] > 2 else "  not resolved")
    print("{:<9} {:>10.2f} {:>12.2f} {:>10.2f}   {:+.1f} {}{}".format(
        mode, ms["bare"], ms["keras_lso"], ms["ours"], paired["median"],
        ci_text, verdict))


def main(argv=None):
  args = _parse_args(argv)
  results = run(args)
  _print(results)
  if args.json:
    with open(args.json, "w") as f:
      json.dump(results, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
