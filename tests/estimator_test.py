# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""End to end: Estimator programs train with the LSO built in `model_fn`.

`tests/programs/estimator_train.py` runs in its own process, once with the
manager built inside `model_fn` and once with one manager built outside and
shared by every `train()` call. Each run trains one model directory with
two `train()` calls (the second restores the first's checkpoint) and another
with one uninterrupted call; the split run must match the uninterrupted one
step for step, and the loss-scale trajectory must match
`policy_reference.exponential_policy` fed with the observed finite flags.

Estimator ships with TensorFlow only up to 2.15 (`tensorflow_estimator`);
elsewhere these tests are skipped.
"""

import gc
import importlib.util
import json
import os
import tempfile

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
import policy_reference
import program_util

_STEPS = 10
_MANAGER_ARGS = dict(init_loss_scale=2**18, incr_every_n_steps=3,
                     decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
_STATE_KEYS = ("step", "finite", "loss_scale", "good_steps", "bad_steps",
               "global_step")
_HAS_ESTIMATOR = importlib.util.find_spec("tensorflow_estimator") is not None
_NO_ESTIMATOR = (
    "tensorflow_estimator is not installed: tf.estimator exists only up to "
    "TF 2.15, and this is TF {}.".format(tf.__version__))
_results = {}


def _train(manager, distribute="none"):
  key = (manager, distribute)
  if key not in _results:
    out = os.path.join(tempfile.mkdtemp(), "estimator.json")
    program_util.run_program("estimator_train.py", "--out", out,
                             "--manager", manager, "--distribute",
                             distribute, "--steps", str(_STEPS))
    with open(out) as f:
      _results[key] = json.load(f)
  return _results[key]


@parameterized.named_parameters(("manager_inside_model_fn", "inside"),
                                ("manager_shared_across_train_calls",
                                 "outside"))
class EstimatorTrainingTest(tf.test.TestCase, parameterized.TestCase):

  def setUp(self):
    super().setUp()
    if not _HAS_ESTIMATOR:
      self.skipTest(_NO_ESTIMATOR)

  def test_second_train_call_continues_from_checkpoint(self, manager):
    first, second = _train(manager)["split"]
    saved = first["checkpoint"]
    self.assertEqual(saved["global_step"], _STEPS)
    last = first["records"][-1]
    self.assertEqual(
        [saved["loss_scale"], saved["good_steps"], saved["bad_steps"]],
        [last["loss_scale"], last["good_steps"], last["bad_steps"]])
    # The second call's first step starts from the saved state: its
    # counters moved on by exactly one step.
    nxt = second["records"][0]
    self.assertEqual(nxt["step"], _STEPS)
    expected = policy_reference.exponential_policy(
        [nxt["finite"]], init_loss_scale=saved["loss_scale"],
        incr_every_n_steps=3, decr_every_n_nan_or_inf=2, incr_ratio=2,
        decr_ratio=0.5, good=saved["good_steps"], bad=saved["bad_steps"])
    self.assertEqual(
        [(nxt["loss_scale"], nxt["good_steps"], nxt["bad_steps"])], expected)
    self.assertEqual(second["checkpoint"]["global_step"], 2 * _STEPS)

  def test_split_training_equals_uninterrupted(self, manager):
    result = _train(manager)
    split = [r for run in result["split"] for r in run["records"]]
    (whole,) = result["whole"]
    self.assertEqual([[r[k] for k in _STATE_KEYS] for r in split],
                     [[r[k] for k in _STATE_KEYS] for r in whole["records"]])
    for a, b in zip(split, whole["records"]):
      self.assertAllClose(a["w"], b["w"], rtol=1e-6)
    final_split = dict(result["split"][-1]["checkpoint"])
    final_whole = dict(whole["checkpoint"])
    self.assertAllClose(final_split.pop("model/w"), final_whole.pop("model/w"),
                        rtol=1e-6)
    self.assertEqual(final_split, final_whole)

  def test_trajectory_matches_reference_policy(self, manager):
    (whole,) = _train(manager)["whole"]
    records = whole["records"]
    flags = [r["finite"] for r in records]
    expected = policy_reference.exponential_policy(flags, **_MANAGER_ARGS)
    self.assertEqual(
        [(r["loss_scale"], r["good_steps"], r["bad_steps"]) for r in records],
        expected)
    # 2**18 overflows float16 first; later the scale grows back into
    # overflow, so skips happen in the middle too.
    self.assertFalse(flags[0])
    self.assertIn(False, flags[flags.index(True):])
    self.assertEqual(records[-1]["global_step"], sum(flags))

  def test_checkpoint_names_and_dtypes(self, manager):
    (whole,) = _train(manager)["whole"]
    self.assertEqual(whole["checkpoint"]["dtypes"], {
        "model/w": "float32", "model/w/Adam": "float32",
        "model/w/Adam_1": "float32", "cond/beta1_power": "float32",
        "cond/beta2_power": "float32", "global_step": "int64",
        "loss_scale": "float32", "good_steps": "int32",
        "bad_steps": "int32"})


class EstimatorMirroredTest(tf.test.TestCase):
  """`train_distribute=MirroredStrategy` over two logical CPUs."""

  def setUp(self):
    super().setUp()
    if not _HAS_ESTIMATOR:
      self.skipTest(_NO_ESTIMATOR)

  def test_split_training_equals_uninterrupted(self):
    result = _train("inside", "mirrored")
    split = [r for run in result["split"] for r in run["records"]]
    (whole,) = result["whole"]
    self.assertEqual([[r[k] for k in _STATE_KEYS] for r in split],
                     [[r[k] for k in _STATE_KEYS] for r in whole["records"]])
    flags = [r["finite"] for r in whole["records"]]
    expected = policy_reference.exponential_policy(flags, **_MANAGER_ARGS)
    self.assertEqual(
        [(r["loss_scale"], r["good_steps"], r["bad_steps"])
         for r in whole["records"]], expected)
    self.assertEqual(whole["checkpoint"]["global_step"], 2 * _STEPS)


class EstimatorGraphLifetimeTest(tf.test.TestCase):
  """Estimator builds a graph per `train()`: none may outlive its call."""

  def setUp(self):
    super().setUp()
    if not _HAS_ESTIMATOR:
      self.skipTest(_NO_ESTIMATOR)

  def test_repeated_train_calls_leave_no_graph_alive(self):
    # The manager is built in `model_fn`, with each graph.

    def model_fn(features, labels, mode):
      w = tf.compat.v1.get_variable("w", initializer=tf.ones([3, 1]))
      loss = tf.reduce_mean(tf.square(tf.matmul(features, w) - labels))
      manager = mp.ExponentialUpdateLossScaleManager(2**10, 2)
      opt = mp.LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-3),
                                  manager)
      train_op = opt.minimize(
          loss, global_step=tf.compat.v1.train.get_global_step())
      return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

    def input_fn():
      x, y = np.ones([4, 3], np.float32), np.ones([4, 1], np.float32)
      return tf.data.Dataset.from_tensors((x, y)).repeat()

    def graphs_alive():
      gc.collect()
      return sum(isinstance(o, tf.Graph) for o in gc.get_objects())

    estimator = tf.estimator.Estimator(model_fn,
                                       model_dir=tempfile.mkdtemp())
    estimator.train(input_fn, steps=1)
    before = graphs_alive()
    for _ in range(8):
      estimator.train(input_fn, steps=1)
    self.assertEqual(before, graphs_alive())
    self.assertEqual(9, estimator.get_variable_value("global_step"))


if __name__ == "__main__":
  tf.test.main()
