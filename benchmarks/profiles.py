# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The profiles (`--profile`): where lso_exp's overhead goes, instead of timing.

Eagerly, the time of each piece of the step; in a `tf.function`, the op
counts of the traced step; in a graph, the time per op type of a traced
Session step. Each against the floors of `benchmarks/floors.py`.
"""

import collections
import statistics
import time

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp
from benchmarks import configs
from benchmarks import floors
from benchmarks import models
from benchmarks import runners
from contrib_mixed_precision import skip_decision


def _median_us(fn, calls):
  for _ in range(3):
    fn()
  samples = []
  for _ in range(calls):
    start = time.perf_counter()
    fn()
    samples.append(time.perf_counter() - start)
  return statistics.median(samples) * 1e6


def _profile_eager(model, quick):
  """Times each piece of lso_exp's eager step against the bare step's."""
  variables, loss_fn = models.model_fn(model, quick)(np.random.default_rng(0))
  inner = models.inner_optimizer(model)
  manager = cmp.ExponentialUpdateLossScaleManager(floors.INIT_SCALE,
                                                  floors.NEVER)
  lso = cmp.LossScaleOptimizer(inner, manager)
  grads_and_vars = lso.compute_gradients(loss_fn, var_list=variables)
  grads = [g for g, _ in grads_and_vars]
  flag = tf.constant(True)
  steps = collections.OrderedDict((
      ("bare", inner), ("tf115", floors.tf115_optimizer(inner)),
      ("unscale_floor", floors.UnscaleFloorOptimizer(inner)),
      ("lso_exp", lso)))
  calls = 5 if quick else 30
  # The whole steps alternate, so that all see the same machine.
  samples = {name: [] for name in steps}
  for _ in range(calls):
    for name, opt in steps.items():
      start = time.perf_counter()
      opt.minimize(loss_fn, var_list=variables)
      samples[name].append(time.perf_counter() - start)
  medians = {name: statistics.median(s) * 1e6 for name, s in samples.items()}
  bare_us = medians["bare"]
  print("{} eager, median of {} calls each:".format(model, calls))
  print("  {:<30} {:>10.0f} us".format("bare step (minimize)", bare_us))
  for name in list(steps)[1:]:
    us = medians[name]
    print("  {:<30} {:>10.0f} us  ({:+.0f} us, {:+.1f}%)".format(
        name + " step (minimize)", us, us - bare_us,
        100 * (us / bare_us - 1)))
  pieces = [
      ("  inner compute_gradients",
       lambda: inner.compute_gradients(loss_fn, var_list=variables)),
      ("  unscale (_down_scale)",
       lambda: lso._down_scale(grads_and_vars, manager.get_loss_scale())),  # pylint: disable=protected-access
      ("  check (all_finite)",
       lambda: skip_decision.all_finite(grads)),
      ("  manager update",
       lambda: manager.update_loss_scale(flag)),
      ("  inner apply_gradients",
       lambda: inner.apply_gradients(grads_and_vars)),
  ]
  added = 0.0
  for name, fn in pieces:
    us = _median_us(fn, calls)
    if name.strip() in ("unscale (_down_scale)", "check (all_finite)",
                        "manager update"):
      added += us
    print("  {:<30} {:>10.0f} us".format(name, us))
  print("  unscale + check + update: {:.0f} us ({:.1f}% of the bare step); "
        "the unscale runs {} eager ops (a multiply per gradient, a "
        "reciprocal)".format(added, 100 * added / bare_us,
                             len([g for g in grads if g is not None]) + 1))


def _function_graph_ops(train_step):
  """Op types of a tf.function's body, cond branches included, and the
  tensors its conds capture (each becomes a Switch when TF lowers it)."""
  graph_def = train_step.get_concrete_function().graph.as_graph_def()
  types = collections.Counter(n.op for n in graph_def.node)
  for function in graph_def.library.function:
    types.update(n.op for n in function.node_def)
  captured = sum(len(n.input) - 1 for n in graph_def.node
                 if n.op in ("If", "StatelessIf"))
  for function in graph_def.library.function:
    captured += sum(len(n.input) - 1 for n in function.node_def
                    if n.op in ("If", "StatelessIf"))
  return types, captured


def _profile_function(model, quick, factories):
  """Op counts of each configuration's tf.function step."""
  print("{} tf.function: ops in the traced step (cond branches included); "
        "tensors captured by its conds (one Switch each once lowered)"
        .format(model))
  base = None
  for name in ("tf115", "unscale_floor", "barrier", "lso_exp", "lso_fixed",
               "tf_mp"):
    runner = runners.EagerRunner(models.model_fn(model, quick),
                                 lambda: models.inner_optimizer(model),
                                 factories[name], function=True)
    types, captured = _function_graph_ops(runner._step)  # pylint: disable=protected-access
    total = sum(types.values())
    line = "  {:<13} {:>6} ops, {:>4} captured".format(name, total, captured)
    if base is None:
      base = types
    else:
      extra = types.copy()
      extra.subtract(base)
      more = ["{} {:+d}".format(k, v) for k, v in extra.most_common(8)
              if v > 0]
      if more:
        line += "; over tf115: " + ", ".join(more)
    print(line)


def _profile_graph(model, mode, quick, factories, threads):
  """Per-op-type time of one Session step (RunMetadata full trace)."""
  steps = 3 if quick else 20
  print("{}_{}: op time per step by op type (full trace, {} steps; op "
        "times overlap on several cores, so they do not add up to the step)"
        .format(model, mode, steps))
  base = None
  for name in ("tf115", "lso_exp"):
    runner = runners.GraphRunner(models.model_fn(model, quick),
                                 lambda: models.inner_optimizer(model),
                                 factories[name], threads,
                                 v1_behaviour=mode == "graph_v1")
    runner.step(3)
    types = {op.name: op.type for op in runner.graph.get_operations()}
    micros = collections.Counter()
    counts = collections.Counter()
    options = tf.compat.v1.RunOptions(
        trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
    for _ in range(steps):
      metadata = tf.compat.v1.RunMetadata()
      runner.session.run(runner.train_op, options=options,
                         run_metadata=metadata)
      for device in metadata.step_stats.dev_stats:
        for node in device.node_stats:
          op_type = types.get(node.node_name.split(":")[0], "(runtime)")
          micros[op_type] += node.op_end_rel_micros - node.op_start_rel_micros
          counts[op_type] += 1
    runner.close()
    total = sum(micros.values()) / steps
    print("  {:<13} {:>6.0f} ops/step, {:>8.0f} us of op time/step".format(
        name, sum(counts.values()) / steps, total))
    if base is None:
      base = (micros, counts)
    else:
      extra = collections.Counter(
          {k: (v - base[0].get(k, 0)) / steps for k, v in micros.items()})
      more = collections.Counter(
          {k: (v - base[1].get(k, 0)) / steps for k, v in counts.items()})
      for op_type, us in extra.most_common(10):
        print("    {:<24} {:+8.0f} us {:+6.0f} ops".format(
            op_type, us, more[op_type]))


def profile(case, quick, threads):
  """Prints where lso_exp's overhead goes in `case`, by its mode.

  Raises:
    SystemExit: `case` is not a step case (small_build).
  """
  model, mode = models.split_case(case)
  factories, _ = configs.optimizer_factories(None)
  if mode == "eager":
    _profile_eager(model, quick)
  elif mode == "function":
    _profile_function(model, quick, factories)
  elif mode in models.GRAPH_MODES:
    _profile_graph(model, mode, quick, factories, threads)
  else:
    raise SystemExit("--profile takes a step case, not {!r}".format(case))

