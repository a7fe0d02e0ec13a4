# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""What loss scaling costs: this package against the bare optimizer and TF's.

Every configuration of a case is built once, in this one process, and timed
in interleaved rounds (the order rotates every round), so a slow spell of a
shared machine hits all of them alike. The table reports the median per-step
time of each configuration and its ratio to the bare inner optimizer.

Configurations:
  bare       the inner optimizer alone (Adam; no loss scaling)
  lso_exp    LossScaleOptimizer + ExponentialUpdateLossScaleManager
  lso_fixed  LossScaleOptimizer + FixedLossScaleManager
  tf_mp      tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer
             with DynamicLossScale
  (--variants adds the prototypes of scripts/_perf_variants.py)

Cases:
  mlp_graph      16-layer 1024-wide ReLU MLP, Adam, batch 64, float32, one
                 `Session.run(train_op)` per step; data are constants.
  mlp_graph_v1   the same built under TF1 behaviour (ref variables, control
                 flow v1), as legacy code that calls disable_v2_behavior gets.
  mlp_function   the same step as a `tf.function`.
  mlp_eager      the same step run eagerly (callable loss).
  small_graph    500 small variables (125 blocks of a 32x32 matmul, bias,
                 scale and shift), where per-variable op overhead dominates.
  small_build    graph-construction time and op count of small_graph's model.

Usage:
  PYTHONPATH=. python scripts/benchmark.py             # about 2.5 minutes
  PYTHONPATH=. python scripts/benchmark.py --quick     # smoke test
  PYTHONPATH=. python scripts/benchmark.py --json out.json --variants
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

# Quiet TF's C++ start-up chatter before it is imported.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

import contrib_mixed_precision as cmp  # pylint: disable=g-import-not-at-top

# The deprecation warnings of TF's own loss scales would drown the table.
tf.get_logger().setLevel("ERROR")

BASE_CONFIGS = ("bare", "lso_exp", "lso_fixed", "tf_mp")
ALL_CASES = ("mlp_graph", "mlp_graph_v1", "mlp_function", "mlp_eager",
             "small_graph", "small_build")
# Large enough that float32 gradients never overflow and the scale never
# moves during a run: every configuration does the same work every step.
_INIT_SCALE = 2.0**15
_NEVER = 10**9


def _parse_args(argv):
  parser = argparse.ArgumentParser(
      description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--quick", action="store_true",
                      help="tiny models and few rounds: a smoke test only")
  parser.add_argument("--json", metavar="PATH",
                      help="also write the results as JSON to PATH")
  parser.add_argument("--cases", default=",".join(ALL_CASES),
                      help="comma-separated subset of: " + ", ".join(ALL_CASES))
  parser.add_argument("--variants", nargs="?", const="all", default=None,
                      metavar="NAMES",
                      help="also time the prototypes of _perf_variants.py "
                      "(graph cases only); optionally a comma-separated list")
  parser.add_argument("--rounds", type=int, default=None,
                      help="interleaved timing rounds per case")
  parser.add_argument("--steps", type=int, default=None,
                      help="steps per configuration per round")
  parser.add_argument("--intra-op-threads", type=int,
                      default=os.cpu_count() or 1)
  parser.add_argument("--inter-op-threads", type=int,
                      default=os.cpu_count() or 1)
  return parser.parse_args(argv)


# ---------------------------------------------------------------------------
# Optimizers.
# ---------------------------------------------------------------------------


def _optimizer_factories(variant_names):
  """name -> callable(inner_optimizer) -> optimizer."""
  factories = {
      "bare": lambda inner: inner,
      "lso_exp": lambda inner: cmp.LossScaleOptimizer(
          inner, cmp.ExponentialUpdateLossScaleManager(_INIT_SCALE, _NEVER)),
      "lso_fixed": lambda inner: cmp.LossScaleOptimizer(
          inner, cmp.FixedLossScaleManager(_INIT_SCALE)),
      "tf_mp": lambda inner: (
          tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
              inner, tf.compat.v1.mixed_precision.DynamicLossScale(
                  initial_loss_scale=_INIT_SCALE, increment_period=_NEVER))),
  }
  variants = {}
  if variant_names:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _perf_variants  # pylint: disable=g-import-not-at-top
    wanted = (list(_perf_variants.VARIANTS) if variant_names == "all" else
              [n for n in variant_names.split(",") if n])
    for name in wanted:
      if name not in _perf_variants.VARIANTS:
        raise SystemExit("unknown variant {!r}; known: {}".format(
            name, ", ".join(_perf_variants.VARIANTS)))
      variants[name] = _perf_variants.VARIANTS[name]
  return factories, variants


def _adam():
  return tf.compat.v1.train.AdamOptimizer(1e-5)


# ---------------------------------------------------------------------------
# Models. Each returns (variables, loss_fn); data are constants.
# ---------------------------------------------------------------------------


def _mlp(depth, width, batch, rng):
  x = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  y = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  variables = []
  for i in range(depth):
    init = rng.standard_normal((width, width)).astype(np.float32)
    init *= np.sqrt(2.0 / width)
    variables.append(tf.compat.v1.Variable(init, name="w%d" % i))
    variables.append(tf.compat.v1.Variable(
        np.zeros((width,), np.float32), name="b%d" % i))

  def loss_fn():
    h = x
    for i in range(depth):
      h = tf.matmul(h, variables[2 * i]) + variables[2 * i + 1]
      if i < depth - 1:
        h = tf.nn.relu(h)
    return tf.reduce_mean(tf.square(h - y))

  return variables, loss_fn


def _many_small(blocks, width, batch, rng):
  """4 variables per block: a chain of small, cheap layers."""
  x = tf.constant(rng.standard_normal((batch, width)).astype(np.float32))
  variables = []
  for i in range(blocks):
    w = np.eye(width, dtype=np.float32) + 0.01 * rng.standard_normal(
        (width, width)).astype(np.float32)
    variables.extend([
        tf.compat.v1.Variable(w, name="w%d" % i),
        tf.compat.v1.Variable(np.zeros((width,), np.float32), name="b%d" % i),
        tf.compat.v1.Variable(np.ones((width,), np.float32), name="g%d" % i),
        tf.compat.v1.Variable(np.zeros((width,), np.float32), name="s%d" % i),
    ])

  def loss_fn():
    h = x
    for i in range(blocks):
      w, b, g, s = variables[4 * i:4 * i + 4]
      h = tf.tanh((tf.matmul(h, w) + b) * g + s)
    return tf.reduce_mean(tf.square(h))

  return variables, loss_fn


def _model_fn(case, quick):
  if case.startswith("mlp"):
    depth, width = (3, 64) if quick else (16, 1024)
    return lambda rng: _mlp(depth, width, 64, rng)
  blocks = 10 if quick else 125
  return lambda rng: _many_small(blocks, 32, 64, rng)


# ---------------------------------------------------------------------------
# Runners: each builds one configuration and exposes step(n) and check().
# ---------------------------------------------------------------------------


class _GraphRunner(object):
  """One configuration in its own graph and Session."""

  def __init__(self, model_fn, factory, threads, v1_behaviour=False,
               session=True):
    self.graph = tf.Graph()
    with self.graph.as_default(), _tf1_behaviour(v1_behaviour):
      variables, loss_fn = model_fn(np.random.default_rng(0))
      loss = loss_fn()
      self.global_step = tf.compat.v1.train.get_or_create_global_step()
      ops_before = _count_ops(self.graph)
      # Construction time: the optimizer's part of the graph (gradients,
      # loss scaling, slots, apply), not the model's.
      start, cpu = time.perf_counter(), time.process_time()
      opt = factory(_adam())
      self.train_op = opt.minimize(loss, global_step=self.global_step,
                                   var_list=variables)
      self.build_s = time.perf_counter() - start
      self.build_cpu_s = time.process_time() - cpu
      self.ops = _count_ops(self.graph) - ops_before
      init = tf.compat.v1.global_variables_initializer()
    self.session = None
    if session:
      config = tf.compat.v1.ConfigProto(
          intra_op_parallelism_threads=threads[0],
          inter_op_parallelism_threads=threads[1])
      self.session = tf.compat.v1.Session(graph=self.graph, config=config)
      self.session.run(init)
    self.steps_run = 0

  def step(self, n):
    run, op = self.session.run, self.train_op
    for _ in range(n):
      run(op)
    self.steps_run += n

  def skipped(self):
    return self.steps_run - int(self.session.run(self.global_step))

  def close(self):
    if self.session is not None:
      self.session.close()


def _count_ops(graph):
  """Nodes of the graph and of its functions (cond v2 branches included)."""
  graph_def = graph.as_graph_def()
  return len(graph_def.node) + sum(
      len(f.node_def) for f in graph_def.library.function)


class _EagerRunner(object):
  """One configuration run eagerly, or as a tf.function."""

  def __init__(self, model_fn, factory, function):
    variables, loss_fn = model_fn(np.random.default_rng(0))
    self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False)
    opt = factory(_adam())
    if function:

      @tf.function
      def train_step():
        opt.minimize(loss_fn(), global_step=self.global_step,
                     var_list=variables)
    else:

      def train_step():
        return opt.minimize(loss_fn, global_step=self.global_step,
                            var_list=variables)

    self._step = train_step
    self._step()  # Traces the function and creates the slots.
    self.steps_run = 1

  def step(self, n):
    fn = self._step
    for _ in range(n):
      fn()
    self.steps_run += n

  def skipped(self):
    return self.steps_run - int(self.global_step.numpy())

  def close(self):
    pass


class _tf1_behaviour(object):
  """Builds with ref variables and control flow v1, as TF1 programs do."""

  def __init__(self, enabled):
    self._enabled = enabled

  def __enter__(self):
    if self._enabled:
      tf.compat.v1.disable_resource_variables()
      tf.compat.v1.disable_control_flow_v2()

  def __exit__(self, *exc):
    if self._enabled:
      tf.compat.v1.enable_resource_variables()
      tf.compat.v1.enable_control_flow_v2()


def _time_interleaved(runners, rounds, steps):
  """Per-step wall and process-CPU seconds of each runner, per round."""
  names = list(runners)
  samples = {name: ([], []) for name in names}
  for r in range(rounds):
    # Rotate the order so no configuration always runs first or last.
    order = names[r % len(names):] + names[:r % len(names)]
    for name in order:
      wall, cpu = time.perf_counter(), time.process_time()
      runners[name].step(steps)
      samples[name][0].append((time.perf_counter() - wall) / steps)
      samples[name][1].append((time.process_time() - cpu) / steps)
  return samples


def _summarise(samples, reference="bare"):
  """Medians and ratios to `reference`.

  Wall time is what a user waits for, but on a shared machine it swings
  with other processes. Process CPU time (all threads) measures the work a
  configuration adds and is far steadier; it cannot see idle time on the
  critical path, so both are reported.
  """
  ref_wall, ref_cpu = samples[reference]
  rows = {}
  for name, (wall, cpu) in samples.items():
    # Ratios within each round pair measurements taken moments apart.
    ratios = sorted(v / r for v, r in zip(wall, ref_wall))
    q1, q3 = _quartiles(ratios)
    rows[name] = {
        "median_ms": statistics.median(wall) * 1e3,
        "ratio": statistics.median(wall) / statistics.median(ref_wall),
        "round_ratio_median": statistics.median(ratios),
        "round_ratio_iqr": [q1, q3],
        "cpu_median_ms": statistics.median(cpu) * 1e3,
        "cpu_ratio": statistics.median(cpu) / statistics.median(ref_cpu),
        "samples_ms": [v * 1e3 for v in wall],
        "cpu_samples_ms": [v * 1e3 for v in cpu],
    }
  return rows


def _quartiles(sorted_values):
  if len(sorted_values) < 2:
    return sorted_values[0], sorted_values[0]
  q = statistics.quantiles(sorted_values, n=4, method="inclusive")
  return q[0], q[2]


def _run_step_case(case, model_fn, configs, args, threads):
  if case in ("mlp_graph", "mlp_graph_v1", "small_graph"):
    make = lambda f: _GraphRunner(model_fn, f, threads,
                                  v1_behaviour=case == "mlp_graph_v1")
  else:
    make = lambda f: _EagerRunner(model_fn, f, case == "mlp_function")
  runners = {name: make(factory) for name, factory in configs.items()}
  for runner in runners.values():
    runner.step(args.warmup)
  samples = _time_interleaved(runners, args.rounds, args.steps)
  rows = _summarise(samples)
  for name, runner in runners.items():
    rows[name]["skipped_steps"] = runner.skipped()
    if isinstance(runner, _GraphRunner):
      rows[name]["ops"] = runner.ops
    runner.close()
  return rows, runners


def _run_build_case(model_fn, configs, args, threads, earlier=None):
  """Construction time and op count of the optimizer's part of the graph.

  `earlier`: {name: _GraphRunner} already built for the same model (by
  small_graph), whose build times count as the first round.
  """
  samples = {name: ([], []) for name in configs}
  ops = {}

  def add(name, runner):
    samples[name][0].append(runner.build_s)
    samples[name][1].append(runner.build_cpu_s)
    ops[name] = runner.ops

  for name, runner in (earlier or {}).items():
    add(name, runner)
    ops[name] = runner.ops
  names = list(configs)
  for r in range(args.build_rounds):
    order = names[r % len(names):] + names[:r % len(names)]
    for name in order:
      add(name, _GraphRunner(model_fn, configs[name], threads,
                             session=False))
  rows = _summarise(samples)
  for name in rows:
    rows[name]["ops"] = ops[name]
    rows[name]["added_ops"] = ops[name] - ops["bare"]
  return rows


# ---------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------


def _machine(threads):
  return {
      "date": datetime.datetime.now().isoformat(timespec="seconds"),
      "tensorflow": tf.__version__,
      "python": platform.python_version(),
      "platform": platform.platform(),
      "cpu": _cpu_name(),
      "cores": os.cpu_count(),
      "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg")
                      else None,
      "intra_op_threads": threads[0],
      "inter_op_threads": threads[1],
  }


def _cpu_name():
  try:
    with open("/proc/cpuinfo") as f:
      for line in f:
        if line.startswith("model name"):
          return line.split(":", 1)[1].strip()
  except OSError:
    pass
  return platform.processor() or "unknown"


def _format_table(results):
  lines = []
  header = "{:<13} {:<15} {:>9} {:>7} {:>13} {:>9} {:>7} {:>6} {:>5}".format(
      "case", "config", "wall ms", "x bare", "round IQR", "cpu ms",
      "x bare", "ops", "skips")
  lines.append(header)
  lines.append("-" * len(header))
  for case, rows in results.items():
    for name, row in rows.items():
      lines.append(
          "{:<13} {:<15} {:>9.2f} {:>7.3f} {:>13} {:>9.2f} {:>7.3f} {:>6} {:>5}"
          .format(case, name, row["median_ms"], row["ratio"],
                  "{:.2f}-{:.2f}".format(*row["round_ratio_iqr"]),
                  row["cpu_median_ms"], row["cpu_ratio"], row.get("ops", ""),
                  row.get("skipped_steps", "")))
  return "\n".join(lines)


def main(argv=None):
  args = _parse_args(argv)
  # rounds, steps per round, warm-up steps, extra construction rounds.
  # Construction rounds come on top of small_graph's own builds (500
  # variables take seconds each to build).
  defaults = ((3, 2, 2, 1) if args.quick else (30, 3, 3, 0))
  args.rounds = args.rounds or defaults[0]
  args.steps = args.steps or defaults[1]
  args.warmup = defaults[2]
  args.build_rounds = defaults[3]
  threads = (args.intra_op_threads, args.inter_op_threads)
  # Eager and tf.function use the process-wide pools; set before any op.
  tf.config.threading.set_intra_op_parallelism_threads(threads[0])
  tf.config.threading.set_inter_op_parallelism_threads(threads[1])

  cases = [c for c in args.cases.split(",") if c]
  for case in cases:
    if case not in ALL_CASES:
      raise SystemExit("unknown case {!r}; known: {}".format(
          case, ", ".join(ALL_CASES)))
  factories, variants = _optimizer_factories(args.variants)
  machine = _machine(threads)
  print("machine: {cpu}, {cores} cores, load {load}; TF {tensorflow}; "
        "threads intra={intra_op_threads} inter={inter_op_threads}; {date}"
        .format(load=",".join("%.1f" % l for l in machine["load_average"] or
                              []), **machine), flush=True)

  results = {}
  built = {}
  total_start = time.perf_counter()
  for case in cases:
    start = time.perf_counter()
    configs = dict(factories)
    if case in ("mlp_graph", "small_graph", "small_build"):
      configs.update(variants)
    model_fn = _model_fn(case, args.quick)
    if case == "small_build":
      results[case] = _run_build_case(model_fn, configs, args, threads,
                                      built.get("small_graph"))
    else:
      results[case], built[case] = _run_step_case(case, model_fn, configs,
                                                  args, threads)
    print("  {} done in {:.0f}s".format(case, time.perf_counter() - start),
          flush=True)
  machine["total_seconds"] = time.perf_counter() - total_start

  print()
  print(_format_table(results))
  print("\nwall ms / cpu ms: median per-step wall-clock / process-CPU time "
        "(small_build: graph-construction time); x bare: ratio of medians to "
        "bare; round IQR: quartiles of the per-round wall ratios to bare (the "
        "noise); ops: nodes the optimizer added to the graph, function bodies "
        "included; skips: steps skipped (must be 0).")
  print("total {:.0f}s".format(machine["total_seconds"]))
  if args.json:
    with open(args.json, "w") as f:
      json.dump({"machine": machine,
                 "settings": {"rounds": args.rounds, "steps": args.steps,
                              "quick": args.quick},
                 "results": results}, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
