# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""End to end: TF 1.15 checkpoints restore, and fp32 checkpoints warm-start.

`tests/programs/tf115_checkpoint.py` writes, without this package, a
checkpoint with exactly the names and dtypes TF 1.15's contrib optimizer
around Adam wrote (`cond/beta1_power`, `loss_scale` float32, `good_steps`
and `bad_steps` int32, ...), restores it into a graph built with this
package through a default `Saver`, and trains on. The expected next values
come from NumPy: TF1's Adam update and `policy_reference`.

The reverse: an fp32 checkpoint has no loss-scale keys, so a default
`Saver` fails with "Key bad_steps not found in checkpoint"
(bert-multi-gpu#19). The two documented warm starts (docs/training_loops.md)
are tested: a `Saver` whose `var_list` leaves out `manager.variables()`
(and whatever else the checkpoint lacks), and BERT's `init_from_checkpoint`.
"""

import json
import os
import sys
import tempfile

import numpy as np
import tensorflow as tf

import policy_reference
import program_util

sys.path.insert(0, program_util.PROGRAMS_DIR)
import tf115_checkpoint as program  # pylint: disable=g-import-not-at-top,wrong-import-position

_LOSS_SCALE_KEYS = ("loss_scale", "good_steps", "bad_steps")


def _run(*args):
  program_util.run_program("tf115_checkpoint.py", *args)


def _run_json(*args):
  out = os.path.join(tempfile.mkdtemp(), "out.json")
  _run(*(args + ("--out", out)))
  with open(out) as f:
    return json.load(f)


def _adam_step(state, lr=program.LEARNING_RATE, beta1=0.9, beta2=0.999,
               epsilon=1e-8):
  """TF1 AdamOptimizer's dense update, in float64, from a state dict."""
  w = np.array(state["dense/kernel"], np.float64)
  b = np.array(state["dense/bias"], np.float64)
  x, y = program.X.astype(np.float64), program.Y.astype(np.float64)
  residual = x @ w + b - y
  grads = {"dense/kernel": 2.0 / len(x) * x.T @ residual,
           "dense/bias": 2.0 / len(x) * residual.sum(axis=0)}
  beta1_power = float(state["cond/beta1_power"])
  beta2_power = float(state["cond/beta2_power"])
  lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
  new = dict(state)
  for name, g in grads.items():
    m = beta1 * np.array(state[name + "/Adam"]) + (1 - beta1) * g
    v = beta2 * np.array(state[name + "/Adam_1"]) + (1 - beta2) * g * g
    new[name] = np.array(state[name]) - lr_t * m / (np.sqrt(v) + epsilon)
    new[name + "/Adam"], new[name + "/Adam_1"] = m, v
  new["cond/beta1_power"] = beta1_power * beta1
  new["cond/beta2_power"] = beta2_power * beta2
  new["global_step"] = state["global_step"] + 1
  return new


class TF115CheckpointTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    root = tempfile.mkdtemp()
    cls.tf115_prefix = os.path.join(root, "tf115", "model.ckpt")
    cls.fp32_prefix = os.path.join(root, "fp32", "model.ckpt")
    _run("write-tf115", "--prefix", cls.tf115_prefix, "--fp32-prefix",
         cls.fp32_prefix)
    cls.restored = _run_json("restore", "--prefix", cls.tf115_prefix)
    cls.warm_starts = _run_json("warm-start", "--prefix", cls.fp32_prefix)

  def test_written_checkpoint_has_tf115_layout(self):
    dtypes = {name: tf.train.load_checkpoint(self.tf115_prefix)
              .get_variable_to_dtype_map()[name].name
              for name, _ in tf.train.list_variables(self.tf115_prefix)}
    self.assertEqual(dtypes, {
        "dense/kernel": "float32", "dense/bias": "float32",
        "global_step": "int64", "dense/kernel/Adam": "float32",
        "dense/kernel/Adam_1": "float32", "dense/bias/Adam": "float32",
        "dense/bias/Adam_1": "float32", "cond/beta1_power": "float32",
        "cond/beta2_power": "float32", "loss_scale": "float32",
        "good_steps": "int32", "bad_steps": "int32"})

  def test_package_graph_has_exactly_the_tf115_variables(self):
    expected = {name: np.asarray(value).dtype.name
                for name, value in program.TF115_STATE.items()}
    self.assertEqual(self.restored["variables"], expected)

  def test_default_saver_restores_every_value(self):
    for name, value in program.TF115_STATE.items():
      self.assertAllEqual(self.restored["restored"][name], value, msg=name)

  def test_training_continues_from_saved_loss_scale_state(self):
    flags = [s["finite"] for s in self.restored["steps"]]
    self.assertEqual(flags, [True, False, False])
    expected = policy_reference.exponential_policy(
        flags, init_loss_scale=1024.0, incr_every_n_steps=1000,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5,
        good=999, bad=1)
    observed = [tuple(s["state"][k] for k in _LOSS_SCALE_KEYS)
                for s in self.restored["steps"]]
    self.assertEqual(observed, expected)
    # Spelled out: the 1000th good step doubles the saved scale and clears
    # the saved bad step; two NaN steps then halve it.
    self.assertEqual(observed, [(2048.0, 0, 0), (2048.0, 0, 1),
                                (1024.0, 0, 0)])

  def test_adam_continues_from_saved_slots_and_powers(self):
    expected = _adam_step(
        {k: np.asarray(v).tolist() for k, v in program.TF115_STATE.items()})
    after = self.restored["steps"][0]["state"]
    for name in ("dense/kernel", "dense/bias", "dense/kernel/Adam",
                 "dense/kernel/Adam_1", "dense/bias/Adam", "dense/bias/Adam_1",
                 "cond/beta1_power", "cond/beta2_power"):
      self.assertAllClose(after[name], expected[name], rtol=1e-5, atol=1e-7,
                          msg=name)
    self.assertEqual(after["global_step"], 1235)
    # The NaN steps changed nothing but the loss-scale state.
    for step in self.restored["steps"][1:]:
      for name, value in after.items():
        if name not in _LOSS_SCALE_KEYS:
          self.assertEqual(step["state"][name], value, msg=name)

  def test_default_saver_on_fp32_checkpoint_fails_on_loss_scale_keys(self):
    result = self.warm_starts["default"]
    self.assertIn("NotFoundError", result["error"])
    self.assertRegex(result["error"],
                     r"Key (bad_steps|good_steps|loss_scale|cond/beta\d_power) "
                     r"not found in checkpoint")

  def _check_warm_start(self, result, restored_names):
    fp32 = program.fp32_state()
    restored = result["restored"]
    for name in restored_names:
      self.assertAllEqual(restored[name], fp32[name], msg=name)
    # The loss-scale state starts at the manager's initial values.
    init = float(program.MANAGER_ARGS["init_loss_scale"])
    self.assertEqual([restored[k] for k in _LOSS_SCALE_KEYS], [init, 0, 0])
    # And training proceeds from there.
    step = result["steps"][0]
    self.assertTrue(step["finite"])
    self.assertEqual([step["state"][k] for k in _LOSS_SCALE_KEYS],
                     [init, 1, 0])
    self.assertNotAllClose(step["state"]["dense/kernel"],
                           restored["dense/kernel"])
    self.assertEqual(step["state"]["global_step"],
                     restored["global_step"] + 1)

  def test_warm_start_with_saver_leaving_out_manager_variables(self):
    result = self.warm_starts["saver"]
    names = ["dense/bias", "dense/bias/Adam", "dense/bias/Adam_1",
             "dense/kernel", "dense/kernel/Adam", "dense/kernel/Adam_1",
             "global_step"]
    self.assertEqual(result["restored_names"], names)
    self._check_warm_start(result, names)

  def test_warm_start_with_init_from_checkpoint(self):
    result = self.warm_starts["init_from_checkpoint"]
    self._check_warm_start(result, ["dense/kernel", "dense/bias"])
    # Only the mapped (trainable) variables came from the checkpoint.
    self.assertEqual(result["restored"]["global_step"], 0)
    self.assertAllEqual(result["restored"]["dense/kernel/Adam"],
                        [[0.0], [0.0], [0.0]])


if __name__ == "__main__":
  tf.test.main()
