# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""`LossScaleOptimizer` under `MirroredStrategy` (docs/design.md contract 5).

TF 1.15's optimizer crashed under MirroredStrategy (tensorflow#25080). Here
two logical CPUs stand in for two GPUs, and replica 1's loss is multiplied by
NaN or Inf on some steps. Every replica must skip those steps together, the
weights must stay identical across replicas, and the loss scale must move
once per step, not once per replica.

Logical devices can only be configured before TensorFlow initialises its
runtime, so each scenario runs in a fresh Python process (this module, run
with `-c`), once per test class, and reports plain numbers as JSON.

The judge of the custom loop's numbers is TF 1.15's optimizer
(`tf115_harness`) on the same model without the strategy: one device, the
two replicas' losses summed into one (the v1 optimizer sums the replicas'
gradients), in a `tf.function` in this process.
"""

import importlib.util
import json
import os
import tempfile

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

from contrib_mixed_precision import loss_scale_manager as manager_lib
from contrib_mixed_precision import loss_scale as loss_scale_lib
from contrib_mixed_precision import loss_scale_optimizer as lso_lib

import forkserver
import tf115_harness as harness

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))

# Replica 1's loss multiplier per step; replica 0's is always 1.
_REPLICA1_FACTORS = [3.0, float("nan"), float("inf"), 3.0, 3.0]
_FINITE = [np.isfinite(f) for f in _REPLICA1_FACTORS]
_GRAD = np.array([2.0, 4.0])  # d(sum(w * [2, 4])) / dw
_LR = 0.5
_MOMENTUM = 0.9
# ExponentialUpdateLossScaleManager(64, incr_every_n_steps=2,
# decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5).
_INIT_SCALE = 64.0


def _expected_scales(finite_flags):
  """The contrib policy, one step per flag (not one per replica)."""
  scale, good, scales = _INIT_SCALE, 0, []
  for finite in finite_flags:
    if finite:
      good += 1
      if good >= 2:
        scale, good = scale * 2, 0
    else:
      scale, good = max(1.0, scale * 0.5), 0
    scales.append(scale)
  return scales


def _two_logical_cpus():
  cpu = tf.config.list_physical_devices("CPU")[0]
  tf.config.set_logical_device_configuration(
      cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
  return ["/cpu:0", "/cpu:1"]


def _replica_factor(bad):
  ctx = tf.distribute.get_replica_context()
  return tf.where(tf.equal(ctx.replica_id_in_sync_group, 1), bad, 1.0)


def _as_list(x):
  return np.asarray(x).tolist()


# ---------------------------------------------------------------------------
# Scenarios, run in a subprocess.
# ---------------------------------------------------------------------------


def strategy_run_scenario():
  """A TF2 custom loop: `strategy.run` inside a `tf.function`."""
  strategy = tf.distribute.MirroredStrategy(_two_logical_cpus())
  with strategy.scope():
    w = tf.Variable([1.0, -1.0], name="w")
    manager = manager_lib.ExponentialUpdateLossScaleManager(
        _INIT_SCALE, 2, 1, 2, 0.5)
    lso = lso_lib.LossScaleOptimizer(
        tf.compat.v1.train.MomentumOptimizer(_LR, _MOMENTUM), manager)
    global_step = tf.compat.v1.train.get_or_create_global_step()

  @tf.function
  def train_step(bad):

    def replica_fn():
      factor = _replica_factor(bad)
      grads_and_vars = lso.compute_gradients(
          lambda: tf.reduce_sum(w * _GRAD) * factor, var_list=[w])
      lso.apply_gradients(grads_and_vars, global_step)

    strategy.run(replica_fn)

  local = strategy.experimental_local_results
  steps = []
  for bad in _REPLICA1_FACTORS:
    train_step(tf.constant(bad))
    steps.append({
        "w": [_as_list(v) for v in local(w)],
        "momentum": [_as_list(v) for v in local(lso.get_slot(w, "momentum"))],
        "scale": [_as_list(v) for v in local(manager.get_loss_scale())],
        "good_steps": [_as_list(v) for v in local(manager._num_good_steps)],  # pylint: disable=protected-access
        "bad_steps": [_as_list(v) for v in local(manager._num_bad_steps)],  # pylint: disable=protected-access
        "global_step": [_as_list(v) for v in local(global_step)],
    })
  return {"steps": steps, "tf_version": tf.__version__}


def tf115_one_device_steps():
  """`strategy_run_scenario`'s model by TF 1.15's optimizer, on one device.

  TF 1.15 crashed under `MirroredStrategy` (tensorflow#25080): its judge is
  the same model without the strategy, whose loss is the sum of the two
  replicas' losses. Returns each step's state, as the scenario's replica.
  """
  lib = harness.Library(harness.ORACLE)
  w = tf.Variable([1.0, -1.0], name="w")
  manager = lib.ExponentialUpdateLossScaleManager(_INIT_SCALE, 2, 1, 2, 0.5)
  lso = lib.LossScaleOptimizer(
      tf.compat.v1.train.MomentumOptimizer(_LR, _MOMENTUM), manager)
  global_step = tf.Variable(0, dtype=tf.int64, trainable=False)

  @tf.function
  def train_step(bad):
    loss = lambda: (tf.reduce_sum(w * _GRAD) * 1.0 +
                    tf.reduce_sum(w * _GRAD) * bad)
    lso.apply_gradients(lso.compute_gradients(loss, var_list=[w]),
                        global_step)

  steps = []
  for bad in _REPLICA1_FACTORS:
    train_step(tf.constant(bad))
    scale, good, bad_steps = manager.variables()
    steps.append({
        "w": _as_list(w), "momentum": _as_list(lso.get_slot(w, "momentum")),
        "scale": _as_list(scale), "good_steps": _as_list(good),
        "bad_steps": _as_list(bad_steps),
        "global_step": _as_list(global_step)})
  return steps


def cross_replica_scenario():
  """Callers already in the cross-replica context.

  `LossScaleOptimizer._distributed_apply` (the v1 optimizer's entry point
  for cross-replica callers) and `ExponentialUpdateLossScale.update` with
  per-replica gradients, both fed by `strategy.run` in a `tf.function`.
  """
  strategy = tf.distribute.MirroredStrategy(_two_logical_cpus())
  with strategy.scope():
    w = tf.Variable([1.0, -1.0], name="w")
    lso = lso_lib.LossScaleOptimizer(
        tf.compat.v1.train.MomentumOptimizer(_LR, _MOMENTUM),
        manager_lib.ExponentialUpdateLossScaleManager(
            _INIT_SCALE, 2, 1, 2, 0.5))
    loss_scale = loss_scale_lib.ExponentialUpdateLossScale(
        _INIT_SCALE, 2, 1, 2, 0.5)

  @tf.function
  def train_step(bad):

    def replica_grads():
      return tf.constant(_GRAD, tf.float32) * _replica_factor(bad)

    grads = strategy.run(replica_grads)
    lso._distributed_apply(strategy, [(grads, w)])  # pylint: disable=protected-access
    with strategy.scope():
      _, should_apply = loss_scale.update([grads])
    return should_apply

  @tf.function
  def update_outside_scope():
    return loss_scale.update(
        [strategy.run(lambda: tf.constant(_GRAD, tf.float32))])[1]

  try:
    update_outside_scope()
    outside_scope_error = None
  except ValueError as e:
    outside_scope_error = str(e)

  local = strategy.experimental_local_results
  steps = []
  for bad in _REPLICA1_FACTORS:
    applied = train_step(tf.constant(bad))
    steps.append({
        "w": [_as_list(v) for v in local(w)],
        "momentum": [_as_list(v) for v in local(lso.get_slot(w, "momentum"))],
        "scale": [_as_list(v)
                  for v in local(lso._loss_scale_manager.get_loss_scale())],  # pylint: disable=protected-access
        "tf2_scale": [_as_list(v) for v in local(loss_scale.variables()[0])],
        "should_apply": bool(applied),
    })
  return {"steps": steps, "outside_scope_error": outside_scope_error}


def estimator_scenario(model_dir):
  """Estimator `train_distribute=MirroredStrategy`, manager in model_fn."""
  import tensorflow_estimator  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401
  devices = _two_logical_cpus()
  strategy = tf.distribute.MirroredStrategy(devices)

  def input_fn():
    # Element i goes to replica i % 2, so each step's pair carries the same
    # multiplier; only replica 1 applies it (see `_replica_factor`).
    bad = np.repeat(np.array(_REPLICA1_FACTORS, np.float32), 2)
    return tf.data.Dataset.from_tensor_slices(({"bad": bad}, bad))

  def model_fn(features, labels, mode):
    del labels
    w = tf.compat.v1.get_variable("w", initializer=[1.0, -1.0])
    loss = tf.reduce_sum(w * _GRAD) * _replica_factor(features["bad"])
    manager = manager_lib.ExponentialUpdateLossScaleManager(
        init_loss_scale=_INIT_SCALE, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=1, decr_ratio=0.5)
    lso = lso_lib.LossScaleOptimizer(
        tf.compat.v1.train.MomentumOptimizer(_LR, _MOMENTUM), manager)
    train_op = lso.minimize(loss, tf.compat.v1.train.get_global_step())
    # Estimator's NanTensorHook stops training on a NaN reported loss; the
    # poisoned steps are the point here, so report 0 for them.
    reported = tf.where(tf.math.is_finite(loss), loss, tf.zeros_like(loss))
    return tf.estimator.EstimatorSpec(mode, loss=reported, train_op=train_op)

  # Two replicas in one session deadlock on a 2-core machine with the
  # default inter-op pool; device_count repeats the logical devices for
  # the Estimator's own session.
  session_config = tf.compat.v1.ConfigProto(
      inter_op_parallelism_threads=8, device_count={"CPU": 2},
      allow_soft_placement=True)
  config = tf.estimator.RunConfig(
      model_dir=model_dir, train_distribute=strategy,
      session_config=session_config, save_checkpoints_steps=1000,
      save_checkpoints_secs=None, save_summary_steps=None,
      log_step_count_steps=1000)
  estimator = tf.estimator.Estimator(model_fn, config=config)
  # A finite dataset, not `steps=`: StopAtStepHook counts global_step,
  # which skipped steps do not advance.
  estimator.train(input_fn)
  names = sorted(name for name, _ in tf.train.list_variables(model_dir))
  return {
      "variables": names,
      "values": {n: _as_list(tf.train.load_variable(model_dir, n))
                 for n in names},
      "tf_version": tf.__version__,
  }


def _run_scenario(test, call):
  code = ("import json, sys\n"
          "sys.path.insert(0, {tests!r})\n"
          "import distribute_test as d\n"
          "print('RESULT=' + json.dumps(d.{call}))\n").format(
              tests=_TESTS_DIR, call=call)
  proc = forkserver.run_python(["-c", code], capture_output=True,
                               text=True, timeout=300, check=False)
  lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT=")]
  test.assertTrue(lines, "scenario {} failed (rc={}):\n{}".format(
      call, proc.returncode, proc.stderr[-6000:]))
  return json.loads(lines[-1][len("RESULT="):])


def _expected_weights(grad_scale):
  """Momentum SGD on the replica-reduced gradient, skipping bad steps.

  Args:
    grad_scale: The reduced gradient per unit of `_GRAD`, for replica
      multipliers 1 and 3: 4 for a sum over replicas, 2 for a mean.
  """
  w, accum, ws, accums = np.array([1.0, -1.0]), np.zeros(2), [], []
  for finite in _FINITE:
    if finite:
      accum = _MOMENTUM * accum + grad_scale * _GRAD
      w = w - _LR * accum
    ws.append(w.copy())
    accums.append(accum.copy())
  return ws, accums


# ---------------------------------------------------------------------------
# Tests.
# ---------------------------------------------------------------------------


class MirroredStrategyRunTest(tf.test.TestCase, parameterized.TestCase):
  """`strategy.run` in a `tf.function`, with a poisoned replica."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._result = None

  def _steps(self):
    if type(self)._result is None:
      type(self)._result = _run_scenario(self, "strategy_run_scenario()")
    return type(self)._result["steps"]

  def test_poisoned_replica_skips_every_replica(self):
    # Custom loops use the v1 optimizer's SUM reduction: 1 * g + 3 * g.
    expected_w, expected_accum = _expected_weights(grad_scale=4.0)
    for i, step in enumerate(self._steps()):
      for replica in range(2):
        self.assertAllClose(expected_w[i], step["w"][replica],
                            msg="step {} replica {}".format(i, replica))
        self.assertAllClose(expected_accum[i], step["momentum"][replica],
                            msg="step {} replica {}".format(i, replica))

  def test_weights_and_slots_identical_across_replicas(self):
    for step in self._steps():
      self.assertEqual(step["w"][0], step["w"][1])
      self.assertEqual(step["momentum"][0], step["momentum"][1])

  def test_loss_scale_moves_once_per_step(self):
    steps = self._steps()
    self.assertEqual(_expected_scales(_FINITE),
                     [s["scale"][0] for s in steps])
    # 64 -> 64 -> 32 -> 16 -> 16 -> 32: halving twice per bad step (once per
    # replica) would have given 16 after the NaN step.
    self.assertEqual([64.0, 32.0, 16.0, 16.0, 32.0],
                     [s["scale"][0] for s in steps])
    for step in steps:
      self.assertLen(set(step["scale"]), 1)
      self.assertLen(set(step["good_steps"]), 1)
      self.assertLen(set(step["bad_steps"]), 1)

  def test_global_step_counts_applied_steps_only(self):
    self.assertEqual(list(np.cumsum(_FINITE)),
                     [s["global_step"][0] for s in self._steps()])

  def test_every_replica_holds_tf115s_numbers(self):
    # TF 1.15's optimizer on one device, the replicas' losses summed: the
    # same floats on every replica after every step.
    for i, (step, want) in enumerate(zip(self._steps(),
                                         tf115_one_device_steps())):
      for name, value in want.items():
        self.assertEqual(step[name], [value, value],
                         msg="step {}, {}".format(i, name))


class CrossReplicaContextTest(tf.test.TestCase):
  """Callers in the cross-replica context, with a poisoned replica."""

  def test_distributed_apply_and_loss_scale_update(self):
    result = _run_scenario(self, "cross_replica_scenario()")
    self.assertIn("inside `with strategy.scope():`",
                  result["outside_scope_error"])
    steps = result["steps"]
    # The gradients are summed over the replicas: 1 * g + 3 * g.
    expected_w, expected_accum = _expected_weights(grad_scale=4.0)
    expected_scales = _expected_scales(_FINITE)
    for i, step in enumerate(steps):
      for replica in range(2):
        self.assertAllClose(expected_w[i], step["w"][replica])
        self.assertAllClose(expected_accum[i], step["momentum"][replica])
        self.assertEqual(expected_scales[i], step["scale"][replica])
        self.assertEqual(expected_scales[i], step["tf2_scale"][replica])
      self.assertEqual(_FINITE[i], step["should_apply"])


class EstimatorTrainDistributeTest(tf.test.TestCase):
  """Estimator `train_distribute=MirroredStrategy` (TF 2.15 and older)."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._result = None

  def setUp(self):
    super().setUp()
    if importlib.util.find_spec("tensorflow_estimator") is None:
      self.skipTest("tensorflow_estimator is not installed (it exists only "
                    "up to TF 2.15); Estimator train_distribute is not "
                    "testable with TF {}.".format(tf.__version__))

  def _result_values(self):
    if type(self)._result is None:
      model_dir = tempfile.mkdtemp(prefix="estimator_", dir=self.get_temp_dir())
      type(self)._result = _run_scenario(
          self, "estimator_scenario({!r})".format(model_dir))
    return type(self)._result

  def test_poisoned_replica_skips_every_replica(self):
    values = self._result_values()["values"]
    # Estimator scales each replica's loss by 1/2, so the reduced gradient
    # is the mean: (1 * g + 3 * g) / 2.
    expected_w, expected_accum = _expected_weights(grad_scale=2.0)
    self.assertAllClose(expected_w[-1], values["w"])
    self.assertAllClose(expected_accum[-1], values["w/Momentum"])
    self.assertEqual(int(np.sum(_FINITE)), values["global_step"])

  def test_loss_scale_moves_once_per_step(self):
    result = self._result_values()
    values = result["values"]
    self.assertEqual(_expected_scales(_FINITE)[-1], values["loss_scale"])
    self.assertEqual(0, values["good_steps"])
    self.assertEqual(0, values["bad_steps"])
    # One manager state for both replicas, even though model_fn (and so the
    # manager's constructor) ran once per replica.
    self.assertEqual(["bad_steps", "global_step", "good_steps", "loss_scale",
                      "w", "w/Momentum"], result["variables"])


if __name__ == "__main__":
  tf.test.main()
