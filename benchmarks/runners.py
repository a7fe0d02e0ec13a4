# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The runners: each configuration built, stepped and timed in its mode.

`GraphRunner` builds one configuration in its own graph and Session (TF1
behaviour on request), `EagerRunner` eagerly or as a `tf.function`; each
exposes `step(n)` and `skipped()`. `run_step_case` times a case's runners
in interleaved rounds, `run_build_case` times graph construction alone.
"""

import gc
import time

import numpy as np
import tensorflow as tf

from benchmarks import models
from benchmarks import stats


class GraphRunner(object):
  """One configuration in its own graph and Session."""

  def __init__(self, model_fn, inner_fn, factory, threads, v1_behaviour=False,
               session=True):
    self.graph = tf.Graph()
    with self.graph.as_default(), tf1_behaviour(v1_behaviour):
      variables, loss_fn = model_fn(np.random.default_rng(0))
      loss = loss_fn()
      self.global_step = tf.compat.v1.train.get_or_create_global_step()
      ops_before = _count_ops(self.graph)
      # Construction time: the optimizer's part of the graph (gradients,
      # loss scaling, slots, apply), not the model's.
      start, cpu = time.perf_counter(), time.process_time()
      opt = factory(inner_fn())
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


class EagerRunner(object):
  """One configuration run eagerly, or as a tf.function."""

  def __init__(self, model_fn, inner_fn, factory, function):
    variables, loss_fn = model_fn(np.random.default_rng(0))
    self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False)
    opt = factory(inner_fn())
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


class tf1_behaviour(object):
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


def run_step_case(case, model_fn, inner_fn, configs, args, threads):
  """Per-step times of each configuration of `case`, in interleaved rounds.

  Returns:
    (rows, runners): `stats.summarise`'s rows, with each configuration's
    skipped steps (and, in a graph, its op count), and the runners, whose
    graphs a later build case may count.
  """
  _, mode = models.split_case(case)
  if mode in models.GRAPH_MODES:
    make = lambda f: GraphRunner(model_fn, inner_fn, f, threads,
                                 v1_behaviour=mode == "graph_v1")
  else:
    make = lambda f: EagerRunner(model_fn, inner_fn, f, mode == "function")
  runners = {name: make(factory) for name, factory in configs.items()}
  for runner in runners.values():
    runner.step(args.warmup)
  samples = _time_interleaved(runners, args.rounds, args.steps)
  rows = stats.summarise(samples)
  for name, runner in runners.items():
    rows[name]["skipped_steps"] = runner.skipped()
    if isinstance(runner, GraphRunner):
      rows[name]["ops"] = runner.ops
    runner.close()
  return rows, runners


def run_build_case(model_fn, inner_fn, configs, args, threads, earlier=None):
  """Construction time and op count of the optimizer's part of the graph.

  `earlier`: {name: GraphRunner} already built for the same model (by
  small_graph): their op counts are reused, their build times are not (the
  first configuration built in a process pays one-off costs).
  """
  samples = {name: ([], []) for name in configs}
  ops = {}

  def add(name, runner):
    samples[name][0].append(runner.build_s)
    samples[name][1].append(runner.build_cpu_s)
    ops[name] = runner.ops

  for name, runner in (earlier or {}).items():
    if name in configs:
      ops[name] = runner.ops
  names = list(configs)
  for r in range(args.build_rounds):
    order = names[r % len(names):] + names[:r % len(names)]
    for name in order:
      # Each build starts from a collected heap: the graphs built before it
      # would otherwise be scanned by whichever build the collector's full
      # pass happens to land in.
      gc.collect()
      add(name, GraphRunner(model_fn, inner_fn, configs[name], threads,
                            session=False))
  rows = stats.summarise(samples)
  for name in rows:
    rows[name]["ops"] = ops[name]
    rows[name]["added_ops"] = ops[name] - ops["bare"]
  return rows
