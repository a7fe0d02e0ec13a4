# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Smoke test of scripts/benchmark.py: it runs and reports what it promises.

No timing is asserted: timings belong to the machine, not to the code.
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import tensorflow as tf

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRIPT = os.path.join(_REPO, "scripts", "benchmark.py")
# Every case the issue asks for: four model shapes, every mode, the build.
_CASES = tuple("{}_{}".format(model, mode)
               for model in ("mlp", "emb", "attn")
               for mode in ("graph", "graph_v1", "function", "eager")) + (
                   "small_graph", "small_build")
_CONFIGS = ("bare", "barrier", "lso_exp", "lso_fixed", "tf_mp")
# TF 1.15's densifying check, timed on the sparse-gradient cases.
_EXTRA_CONFIGS = {"emb": ("tf115_check",)}


def _configs(case):
  return _CONFIGS + _EXTRA_CONFIGS.get(case.split("_")[0], ())


def _run(*args):
  env = dict(os.environ)
  # The installed package wins when there is one; the checkout otherwise.
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (env.get("PYTHONPATH"), _REPO) if p)
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  return subprocess.run([sys.executable, _SCRIPT] + list(args), env=env,
                        capture_output=True, text=True, timeout=600,
                        check=False)


class BenchmarkTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    if not os.path.exists(_SCRIPT):
      raise unittest.SkipTest("scripts/ is not shipped with this install")
    cls._tmp = tempfile.mkdtemp()
    cls._json_path = os.path.join(cls._tmp, "out.json")
    cls._result = _run("--quick", "--json", cls._json_path)

  def test_help(self):
    result = _run("--help")
    self.assertEqual(result.returncode, 0, result.stderr)
    self.assertIn("--quick", result.stdout)
    self.assertIn("--json", result.stdout)

  def test_quick_run_succeeds(self):
    self.assertEqual(self._result.returncode, 0, self._result.stderr[-3000:])

  def test_table_has_every_case_and_config(self):
    out = self._result.stdout
    self.assertIn("machine:", out)
    for case in _CASES:
      for config in _configs(case):
        self.assertRegex(out, r"(?m)^{}\s+{}\s".format(case, config))
    # One goal line per timed case, and the load the figures were taken at.
    for case in _CASES:
      self.assertRegex(out, r"(?m)^{}\s+\S".format(case))
    self.assertIn("goals (lso_exp):", out)
    self.assertRegex(out, r"load at the end \d")

  def test_json_structure(self):
    with open(self._json_path) as f:
      report = json.load(f)
    for key in ("date", "tensorflow", "cores", "intra_op_threads",
                "inter_op_threads"):
      self.assertIn(key, report["machine"])
    self.assertIsNotNone(report["machine"]["load_average_end"])
    self.assertEqual(set(report["results"]), set(_CASES))
    self.assertEqual(set(report["settings"]["cases"]), set(_CASES))
    for case, rows in report["results"].items():
      self.assertEqual(set(rows), set(_configs(case)), case)
      self.assertEqual(rows["bare"]["ratio"], 1.0)
      for config, row in rows.items():
        for key in ("median_ms", "ratio", "cpu_median_ms", "cpu_ratio"):
          # Finite and positive: a sane ratio, whatever the machine's speed.
          self.assertTrue(math.isfinite(row[key]), (case, config, key))
          self.assertGreater(row[key], 0.0, (case, config, key))
        if case != "small_build":
          # Every timed step must have applied: skipped steps do less work.
          self.assertEqual(row["skipped_steps"], 0, (case, config))
          self.assertTrue(math.isfinite(row["points_over_barrier"]))
      if case != "small_build":
        self.assertEqual(rows["barrier"]["points_over_barrier"], 0.0)
    for config in ("lso_exp", "lso_fixed", "tf_mp"):
      self.assertGreater(report["results"]["small_build"][config]["ops"],
                         0)
    # The barrier adds one NoOp to the bare graph, and nothing else.
    for case in ("mlp_graph", "emb_graph", "attn_graph", "small_graph"):
      rows = report["results"][case]
      self.assertEqual(rows["barrier"]["ops"], rows["bare"]["ops"] + 1, case)

  def test_barrier_waits_for_every_gradient(self):
    # Run in this process: the barrier's apply ops must each depend, through
    # their control inputs, on one op that has every gradient as an input.
    sys.path.insert(0, os.path.dirname(_SCRIPT))
    try:
      import benchmark  # pylint: disable=g-import-not-at-top
    finally:
      sys.path.pop(0)
    with tf.Graph().as_default():
      variables, loss_fn = benchmark._model_fn("emb", quick=True)(
          np.random.default_rng(0))
      opt = benchmark.BarrierOptimizer(
          tf.compat.v1.train.AdagradOptimizer(0.1))
      grads_and_vars = opt.compute_gradients(loss_fn(), var_list=variables)
      self.assertIsInstance(grads_and_vars[0][0], tf.IndexedSlices)
      train_op = opt.apply_gradients(grads_and_vars)
      graph = tf.compat.v1.get_default_graph()
      barrier = graph.get_operation_by_name("all_gradients")
      gradient_ops = set()
      for g, _ in grads_and_vars:
        for t in ((g.values, g.indices) if isinstance(g, tf.IndexedSlices)
                  else (g,)):
          gradient_ops.add(t.op)
      self.assertEqual(set(barrier.control_inputs), gradient_ops)
      applies = [op for op in graph.get_operations()
                 if op.type.startswith("ResourceSparseApply") or
                 op.type.startswith("ResourceApply")]
      self.assertLen(applies, len(variables))
      for op in applies:
        self.assertIn(barrier, _control_ancestors(op), op.name)
      self.assertIsNotNone(train_op)


def _control_ancestors(op):
  """Every op `op` depends on, through data or control edges."""
  seen, stack = set(), [op]
  while stack:
    current = stack.pop()
    for parent in list(current.control_inputs) + [t.op for t in
                                                  current.inputs]:
      if parent not in seen:
        seen.add(parent)
        stack.append(parent)
  return seen


if __name__ == "__main__":
  tf.test.main()
