# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The checks of `KerasLossScaleOptimizer`: references, loops, assertions.

Shared by tests/keras_loss_scale_optimizer_test.py (the core suite: the
default `tf.keras`) and tests/keras_loss_scale_optimizer_full_test.py (the
full suites: every other Keras here, and `MirroredStrategy`).

The judge of TF 2.0's policy is TF 2.0's own code, which TF still ships
unchanged: `tf.compat.v1.mixed_precision.DynamicLossScale` and
`FixedLossScale`, driven by `tf.compat.v1.mixed_precision.
MixedPrecisionLossScaleOptimizer` around `GradientDescentOptimizer`, in a
`tf.compat.v1.Session` on the same model and data. Keras' `SGD` applies
`lr * g` as the v1 optimizer does, so after every step the scale, the
step count (`iterations` against the judge's `global_step`) and the weights
must be equal, over a sequence with Inf and NaN steps. The judge of a TF
1.15 manager inside is TF 1.15's optimizer (`tf115_reference`), and the
package's own `LossScaleOptimizer` on the same gradients.

Every Keras this TensorFlow has runs: `tf.keras` (Keras 3 on TF 2.16+,
Keras 2.15 on TF 2.15), and tf-keras where it is installed, with its new
and its legacy optimizers.

TF 2.4-2.15's Keras 2 API (`Keras2ApiChecks`) has another judge: Keras 2
itself, running the user's program (tests/programs/keras2_lso_api.py) with
its own `LossScaleOptimizer` in a process of its own (docs/design.md,
contract 17).
"""

import functools
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

from absl.testing import parameterized
import numpy as np
import tensorflow as tf

import contrib_mixed_precision as mp
import program_util
import tf115_reference as tf115

_V1 = tf.compat.v1
_MP = tf.compat.v1.mixed_precision


def _is_keras3(keras):
  """Whether `keras` (`tf.keras` or `tf_keras`) is Keras 3.

  TF 2.15's `tf.keras` has no `__version__`: ask the package its optimizers
  come from.
  """
  package = sys.modules[keras.optimizers.SGD.__module__.split(".")[0]]
  return str(package.__version__).startswith("3")


def _kerases():
  """(name, Keras package, uses legacy optimizers) for each Keras here."""
  result = [("tf_keras_default", tf.keras, False)]
  if not _is_keras3(tf.keras):
    result.append(("tf_keras_default_legacy", tf.keras, True))
  elif importlib.util.find_spec("tf_keras") is not None:
    import tf_keras  # pylint: disable=g-import-not-at-top
    result.append(("tf_keras_package", tf_keras, False))
    result.append(("tf_keras_package_legacy", tf_keras, True))
  return result


_KERASES = _kerases()
# The default `tf.keras`, in the core suite; the others in the full suites.
CORE_KERASES = [_KERASES[0][0]]
OTHER_KERASES = [name for name, _, _ in _KERASES[1:]]
ALL_KERASES = CORE_KERASES + OTHER_KERASES



def named(names):
  """`named_parameters` for a test taking `keras_name`."""
  return [dict(testcase_name="_" + name, keras_name=name) for name in names]


def _keras(name):
  for n, keras, legacy in _KERASES:
    if n == name:
      return keras, legacy
  raise KeyError(name)


def _sgd(keras, legacy, lr):
  if legacy:
    return keras.optimizers.legacy.SGD(lr)
  return keras.optimizers.SGD(lr)


# -- The model and the data --------------------------------------------------

_LR = 0.1
_RNG = np.random.RandomState(42)
_W0 = _RNG.uniform(-1, 1, [3, 1]).astype(np.float32)


def _batches(poison):
  """One batch per entry: None is finite, 'inf' / 'nan' poison one input."""
  rng = np.random.RandomState(7)
  result = []
  for p in poison:
    x = rng.uniform(-1, 1, [4, 3]).astype(np.float32)
    y = rng.uniform(-1, 1, [4, 1]).astype(np.float32)
    if p == "inf":
      x[1, 2] = np.inf
    elif p == "nan":
      x[2, 0] = np.nan
    result.append((x, y))
  return result


def _loss(w, x, y):
  return tf.reduce_mean(tf.square(tf.matmul(x, w) - y))


# Steps 3, 5, 9 and 10 are not finite.
_POISON = [None, None, "inf", None, "nan", None, None, None, "nan", "inf",
           None, None]
# Enough bad steps in a row to take a small scale down to its floor of 1.
_FLOOR_POISON = [None, "nan", "inf", "nan", "nan", None, None, None, "inf",
                 None]


def loss_scale_kinds():
  return sorted(_loss_scales())


def _loss_scales():
  """Each TF2 loss-scale kind, as a factory (a graph owns its objects)."""
  return {
      "dynamic_m2": lambda: _MP.DynamicLossScale(
          initial_loss_scale=2.**10, increment_period=2, multiplier=2.),
      "dynamic_m4": lambda: _MP.DynamicLossScale(
          initial_loss_scale=2.**10, increment_period=2, multiplier=4.),
      "dynamic_floor": lambda: _MP.DynamicLossScale(
          initial_loss_scale=4., increment_period=3, multiplier=2.),
      "fixed": lambda: _MP.FixedLossScale(8.),
      "number": lambda: 8,
      "dynamic_string": lambda: "dynamic",
  }


def _reference_object(loss_scale):
  """What TF 2.0's experimental optimizer made of `loss_scale`."""
  if loss_scale == "dynamic":
    return _MP.DynamicLossScale()  # TF 2.0's `keras_loss_scale_module.get`.
  if isinstance(loss_scale, (int, float)):
    return _MP.FixedLossScale(loss_scale)
  return loss_scale


def _session_reference(make_loss_scale, batches, loss_fn=None, w0=_W0):
  """TF 2.0's code in a Session: scale, global_step and w after each step."""
  with tf.Graph().as_default():
    w = _V1.Variable(w0, name="w", use_resource=True)
    x = _V1.placeholder(tf.float32, [4, 3])
    y = _V1.placeholder(tf.float32, [4, 1])
    global_step = _V1.train.get_or_create_global_step()
    loss_scale = _reference_object(make_loss_scale())
    opt = _MP.MixedPrecisionLossScaleOptimizer(
        _V1.train.GradientDescentOptimizer(_LR), loss_scale)
    train_op = opt.minimize((loss_fn or _loss)(w, x, y),
                            global_step=global_step, var_list=[w])
    scale = loss_scale()
    with _V1.Session() as sess:
      sess.run(_V1.global_variables_initializer())
      steps = []
      for bx, by in batches:
        sess.run(train_op, {x: bx, y: by})
        s, g, wv = sess.run([scale, global_step, w])
        steps.append((float(s), int(g), wv))
  return steps


def _xla_reference(make_loss_scale, batches, loss_fn=None):
  """TF 2.0's code in one XLA-compiled `tf.function` per step.

  XLA compiles the model's own ops with other roundings than TF's kernels;
  under `jit_compile` the judge is compiled the same way: TF 2.0's
  optimizer, driven the same way, in `tf.function(jit_compile=True)`.
  """
  w = tf.Variable(_W0)
  global_step = tf.Variable(0, dtype=tf.int64)
  loss_scale = _reference_object(make_loss_scale())
  opt = _MP.MixedPrecisionLossScaleOptimizer(
      _V1.train.GradientDescentOptimizer(_LR), loss_scale)

  @tf.function(jit_compile=True)
  def step(x, y):
    opt.minimize(lambda: (loss_fn or _loss)(w, x, y), global_step=global_step,
                 var_list=[w])

  steps = []
  for bx, by in batches:
    step(tf.constant(bx), tf.constant(by))
    steps.append((float(loss_scale()), int(global_step.numpy()), w.numpy()))
  return steps


def _tf115_reference(make_manager, batches):
  """TF 1.15's optimizer and manager (`tf115_reference`) in a Session."""
  with tf.Graph().as_default():
    w = _V1.Variable(_W0, name="w", use_resource=True)
    x = _V1.placeholder(tf.float32, [4, 3])
    y = _V1.placeholder(tf.float32, [4, 1])
    global_step = _V1.train.get_or_create_global_step()
    manager = make_manager()
    opt = tf115.LossScaleOptimizer(
        _V1.train.GradientDescentOptimizer(_LR), manager)
    train_op = opt.minimize(_loss(w, x, y), global_step=global_step,
                            var_list=[w])
    scale = manager.get_loss_scale()
    with _V1.Session() as sess:
      sess.run(_V1.global_variables_initializer())
      steps = []
      for bx, by in batches:
        sess.run(train_op, {x: bx, y: by})
        s, g, wv = sess.run([scale, global_step, w])
        steps.append((float(s), int(g), wv))
  return steps


def _package_v1_steps(manager, batches):
  """The package's own (TF1) `LossScaleOptimizer`, eagerly."""
  w = tf.Variable(_W0)
  opt = mp.LossScaleOptimizer(_V1.train.GradientDescentOptimizer(_LR),
                              manager)
  global_step = tf.Variable(0, dtype=tf.int64)
  steps = []
  for bx, by in batches:
    grads_and_vars = opt.compute_gradients(lambda: _loss(w, bx, by), [w])  # noqa: B023
    opt.apply_gradients(grads_and_vars, global_step)
    steps.append((float(manager.get_loss_scale()), int(global_step.numpy()),
                  w.numpy()))
  return steps


def _custom_loop(opt, batches, mode, style):
  """Trains `_W0` with `opt` in a custom loop; the state after each step.

  `style` 'tf2': TF 2.x's `get_scaled_loss` / `get_unscaled_gradients`;
  'keras3': Keras 3's `scale_loss`, `apply_gradients` unscaling.
  """
  w = tf.Variable(_W0)

  def step(x, y):
    with tf.GradientTape() as tape:
      loss = _loss(w, x, y)
      if style == "tf2":
        scaled = opt.get_scaled_loss(loss)
      else:
        scaled = opt.scale_loss(loss)
    grads = tape.gradient(scaled, [w])
    if style == "tf2":
      grads = opt.get_unscaled_gradients(grads)
    opt.apply_gradients(zip(grads, [w]))

  if mode != "eager":
    step = tf.function(step, jit_compile=(mode == "jit"))
  steps = []
  for bx, by in batches:
    step(tf.constant(bx), tf.constant(by))
    steps.append((float(opt.loss_scale), int(opt.iterations.numpy()),
                  w.numpy()))
  return steps


class _Case(tf.test.TestCase, parameterized.TestCase):

  def assertSameSteps(self, expected, actual, advance=False, poison=None,
                      xla=False):
    """Scale, step count and weights equal after every step.

    With `xla`, the weights may differ in the last bits: XLA fuses the
    model's own ops with whatever surrounds them, and the optimizers around
    them differ; two replicas sum the gradient in another order (the
    policy, scale and steps must still be equal).
    """
    self.assertLen(actual, len(expected))
    skipped = 0
    for i, ((es, eg, ew), (s, g, w)) in enumerate(zip(expected, actual)):
      if advance and poison[i] is not None:
        skipped += 1
      self.assertEqual(es, s, "scale after step {}".format(i))
      self.assertEqual(eg + skipped, g, "steps after step {}".format(i))
      if xla:
        np.testing.assert_allclose(ew, w, rtol=1e-6, atol=1e-7,
                                   err_msg="w after step {}".format(i))
      else:
        # Exact equality: the same floats, NaN where the judge has NaN.
        np.testing.assert_array_equal(ew, w, "w after step {}".format(i))


class TF20PolicyChecks(_Case):
  """Each TF2 loss-scale kind against TF 2.0's optimizer in a Session."""

  def check_custom_loop_matches_tf20(self, keras_name, kind):
    keras, legacy = _keras(keras_name)
    make = _loss_scales()[kind]
    poison = _FLOOR_POISON if kind == "dynamic_floor" else _POISON
    batches = _batches(poison)
    expected = _session_reference(make, batches)
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
    self.assertSameSteps(expected,
                         _custom_loop(opt, batches, "function", "tf2"))
    scales = [s for s, _, _ in expected]
    if kind == "dynamic_floor":
      self.assertEqual(1.0, min(scales))  # It reached its floor...
      self.assertEqual(1.0, scales[4])  # ...and stayed there.
    if kind in ("fixed", "number"):
      # TF 2.0 applied the non-finite step: w is no longer finite.
      self.assertFalse(np.all(np.isfinite(expected[-1][2])))
    if kind == "dynamic_m4":
      self.assertIn(2.**10 * 4, scales)

  def check_every_mode_matches_tf20(self, keras_name, mode):
    keras, legacy = _keras(keras_name)
    make = _loss_scales()["dynamic_m4"]
    batches = _batches(_POISON)
    judge = _xla_reference if mode == "jit" else _session_reference
    expected = judge(make, batches)
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
    self.assertSameSteps(expected, _custom_loop(opt, batches, mode, "tf2"),
                         xla=(mode == "jit"))

  def check_skipped_steps_advance_iterations_as_tf23(self, keras_name):
    keras, legacy = _keras(keras_name)
    make = _loss_scales()["dynamic_m2"]
    batches = _batches(_POISON)
    expected = _session_reference(make, batches)
    opt = mp.KerasLossScaleOptimizer(
        _sgd(keras, legacy, _LR), make(),
        skipped_steps_advance_iterations=True)
    self.assertTrue(opt.skipped_steps_advance_iterations)
    self.assertSameSteps(expected,
                         _custom_loop(opt, batches, "function", "tf2"),
                         advance=True, poison=_POISON)

  def check_keras3_scale_loss_loop_matches_tf20(self):
    keras, legacy = _keras("tf_keras_default")
    if not _is_keras3(keras):
      self.assertFalse(hasattr(
          mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR)), "scale_loss"))
      return
    make = _loss_scales()["dynamic_m4"]
    batches = _batches(_POISON)
    expected = _session_reference(make, batches)
    for mode in ("eager", "function"):
      opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
      self.assertSameSteps(expected,
                           _custom_loop(opt, batches, mode, "keras3"))


class TF115ManagerChecks(_Case):
  """A TF 1.15 manager inside: TF 1.15's trajectory."""

  def check_manager_matches_tf115(self, keras_name, manager):
    keras, legacy = _keras(keras_name)
    batches = _batches(_FLOOR_POISON)
    if manager == "exponential":
      args = (2.**4, 2, 2, 2., 0.5)
      make_ours = lambda: mp.ExponentialUpdateLossScaleManager(*args)
      make_tf115 = lambda: tf115.ExponentialUpdateLossScaleManager(*args)
    else:
      make_ours = lambda: mp.FixedLossScaleManager(8)
      make_tf115 = lambda: tf115.FixedLossScaleManager(8)
    expected = _tf115_reference(make_tf115, batches)
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make_ours())
    self.assertSameSteps(expected,
                         _custom_loop(opt, batches, "function", "tf2"))
    self.assertSameSteps(_package_v1_steps(make_ours(), batches),
                         _custom_loop(mp.KerasLossScaleOptimizer(
                             _sgd(keras, legacy, _LR), make_ours()),
                                      batches, "eager", "tf2"))
    # TF 1.15 skipped every non-finite step, with a fixed scale too.
    self.assertTrue(np.all(np.isfinite(expected[-1][2])))


class FitChecks(_Case):
  """`compile` / `fit` with a `mixed_float16` policy."""

  def _fit(self, keras, legacy, loss_scale, mode, batches):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
      layer = keras.layers.Dense(
          1, use_bias=False,
          kernel_initializer=keras.initializers.Constant(_W0))
      model = keras.Sequential([keras.Input([3]), layer])
    finally:
      keras.mixed_precision.set_global_policy("float32")
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), loss_scale)

    def loss(y_true, y_pred):
      # Keras hands `y_true` over as float16 or float32: float16 either way.
      y_true = tf.cast(tf.cast(y_true, tf.float16), tf.float32)
      return tf.square(tf.cast(y_pred, tf.float32) - y_true)

    model.compile(optimizer=opt, loss=loss, run_eagerly=(mode == "eager"),
                  jit_compile=(mode == "jit"))
    # Not wrapped again in Keras' own LossScaleOptimizer.
    self.assertIs(opt, model.optimizer)
    steps = []

    class Record(keras.callbacks.Callback):

      def on_train_batch_end(self, batch, logs=None):
        del batch, logs
        steps.append((float(opt.loss_scale), int(opt.iterations.numpy()),
                      np.array(keras.backend.get_value(layer.kernel))))

    x = np.concatenate([bx for bx, _ in batches])
    y = np.concatenate([by for _, by in batches])
    model.fit(x, y, batch_size=4, epochs=1, shuffle=False, verbose=0,
              callbacks=[Record()])
    return steps

  def check_fit_mixed_float16_matches_tf20(self, keras_name, mode):
    keras, legacy = _keras(keras_name)
    batches = _batches(_POISON)
    make = _loss_scales()["dynamic_m4"]

    def reference_loss(w, x, y):
      pred = tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16))
      y = tf.cast(tf.cast(y, tf.float16), tf.float32)
      return tf.reduce_mean(tf.square(tf.cast(pred, tf.float32) - y))

    judge = _xla_reference if mode == "jit" else _session_reference
    expected = judge(make, batches, reference_loss)
    self.assertSameSteps(
        expected, self._fit(keras, legacy, make(), mode, batches),
        xla=(mode == "jit"))

  def check_keras_own_wrapper_is_not_ours(self):
    # The check above means something: Keras does wrap a plain optimizer.
    keras, legacy = _keras("tf_keras_default")
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
      model = keras.Sequential([keras.Input([3]), keras.layers.Dense(1)])
    finally:
      keras.mixed_precision.set_global_policy("float32")
    inner = _sgd(keras, legacy, _LR)
    model.compile(optimizer=inner, loss="mse")
    self.assertIsNot(inner, model.optimizer)
    self.assertIsInstance(model.optimizer,
                          keras.mixed_precision.LossScaleOptimizer)


class CheckpointChecks(_Case):

  def check_round_trip(self, keras_name, kind):
    keras, legacy = _keras(keras_name)
    if kind == "exponential":
      make = lambda: mp.ExponentialUpdateLossScaleManager(2.**4, 3, 1, 2., .5)
    else:
      make = lambda: _MP.DynamicLossScale(2.**4, 3, 4.)
    batches = _batches(_POISON)
    whole = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
    expected = _custom_loop(whole, batches, "eager", "tf2")
    first = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
    _custom_loop(first, batches[:5], "eager", "tf2")
    path = tf.train.Checkpoint(optimizer=first).save(
        os.path.join(self.get_temp_dir(), "ckpt"))
    second = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), make())
    status = tf.train.Checkpoint(optimizer=second).restore(path)
    status.assert_existing_objects_matched()
    self.assertEqual(expected[4][0], float(second.loss_scale))
    # The counters came back too: the rest continues the whole run's
    # trajectory (w restarts, so only the scale is compared).
    rest = _custom_loop(second, batches[5:], "eager", "tf2")
    self.assertEqual([s for s, _, _ in expected[5:]], [s for s, _, _ in rest])

  def check_restores_tf2x_experimental_checkpoint(self, keras_name):
    keras, legacy = _keras(keras_name)
    # TF 2.0-2.2's experimental optimizer saved its loss scale as the
    # dependency `loss_scale` of the optimizer, a DynamicLossScale holding
    # `current_loss_scale` (float32) and `good_steps` (int64), and the inner
    # optimizer as `base_optimizer`. Built here with those names.
    old_optimizer = tf.Module()
    old_optimizer.loss_scale = _MP.DynamicLossScale(256., 4, 2.)
    old_optimizer.base_optimizer = tf.Module()
    old_optimizer.base_optimizer.iter = tf.Variable(7, dtype=tf.int64)
    for _ in range(3):  # good_steps: 3 of the period of 4.
      old_optimizer.loss_scale.update([tf.constant(1.)])
    path = tf.train.Checkpoint(optimizer=old_optimizer).save(
        os.path.join(self.get_temp_dir(), "tf2x"))
    names = [n for n, _ in tf.train.list_variables(path)]
    self.assertIn("optimizer/loss_scale/current_loss_scale/"
                  ".ATTRIBUTES/VARIABLE_VALUE", names)
    self.assertIn("optimizer/loss_scale/good_steps/.ATTRIBUTES/"
                  "VARIABLE_VALUE", names)

    opt = mp.KerasLossScaleOptimizer(
        _sgd(keras, legacy, _LR), _MP.DynamicLossScale(2.**15, 4, 2.))
    status = tf.train.Checkpoint(optimizer=opt).restore(path)
    self.assertEqual(256., float(opt.loss_scale))
    self.assertEqual(256., float(opt.loss_scale()))
    del status
    # good_steps came back as 3: the next finite step completes the period.
    _custom_loop(opt, _batches([None]), "eager", "tf2")
    self.assertEqual(512., float(opt.loss_scale))


_KERAS_FILE_PROGRAM = "keras_lso_keras_file.py"


class KerasFileChecks(_Case):
  """A `.keras` file: saved by one process, loaded and resumed by another."""

  def check_keras_file_round_trip(self, keras_name):
    path = os.path.join(self.get_temp_dir(), "model.keras")
    saved, loaded = [json.loads(program_util.run_program(
        _KERAS_FILE_PROGRAM, mode, path, keras_name,
        timeout=240).strip().splitlines()[-1]) for mode in ("save", "load")]
    # The reference: TF's own DynamicLossScale driven by the same steps'
    # finiteness, and TF 2.0's `iterations`, which counted applied steps.
    steps = saved.pop("steps")
    reference = _MP.DynamicLossScale(2.**10, 3, 4.)
    for g in steps:
      reference.update([tf.constant(g)])
    self.assertEqual(
        {"scale": float(reference()),
         "loss_scale_variables": [float(reference()), _good_steps(reference)],
         "iterations": int(np.sum(np.isfinite(steps)))},
        saved)
    # As saved: the scale, its counter and Keras' `iterations`.
    self.assertEqual(saved, {k: loaded[k] for k in saved})
    self.assertStartsWith(loaded["class"], "Keras")
    resumed = []
    for g in loaded["steps"]:
      reference.update([tf.constant(g)])
      resumed.append(float(reference()))
    self.assertEqual(resumed, loaded["resumed"])


def _good_steps(loss_scale):
  """`DynamicLossScale`'s count of finite steps, from its checkpoint."""
  with tempfile.TemporaryDirectory() as directory:
    path = tf.train.Checkpoint(ls=loss_scale).write(
        os.path.join(directory, "ls"))
    return int(tf.train.load_variable(
        path, "ls/good_steps/.ATTRIBUTES/VARIABLE_VALUE"))


class ApiChecks(_Case):

  def check_apply_gradients_takes_tf2x_arguments(self, keras_name):
    # TF 2.x code calls `apply_gradients(gv, name)`, positionally too, and
    # `variables()`: the step must be applied exactly once, as plain SGD.
    keras, legacy = _keras(keras_name)
    for call in (lambda opt, gv: opt.apply_gradients(gv, "step"),
                 lambda opt, gv: opt.apply_gradients(gv, name="step"),
                 lambda opt, gv: opt.apply_gradients(
                     gv, experimental_aggregate_gradients=True)):
      w = tf.Variable([1.0, -2.0])
      # A scale of 1: Keras 3's `apply_gradients` takes scaled gradients
      # (after `scale_loss`), TF 2.x's unscaled ones.
      opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, 0.5),
                                       _MP.FixedLossScale(1.0))
      call(opt, [(tf.constant([0.25, 1.0]), w)])
      self.assertAllEqual([0.875, -2.5], w.numpy())
      self.assertEqual(1, int(opt.iterations))
      # TF 2.x's `opt.variables()` (Horovod's broadcast_variables).
      variables = opt.variables()
      self.assertIsInstance(variables, list)
      self.assertNotEmpty(variables)
      for v in variables:
        self.assertTrue(hasattr(v, "assign"), v)

  def check_second_argument_reaches_inner_positionally(self, keras_name):
    # BERT-style AdamWeightDecay: `apply_gradients(gv, clip_norm, name,
    # ...)`. TF 2.x's wrapper passed the caller's second argument on
    # positionally, so it reached `clip_norm`; so does this one.
    keras, legacy = _keras(keras_name)
    base = type(_sgd(keras, legacy, 0.5))
    seen = []

    class ClippingSGD(base):

      def apply_gradients(self, grads_and_vars, clip_norm=1.0, name=None,
                          *args, **kwargs):
        seen.append(clip_norm)
        return super().apply_gradients(grads_and_vars, name, *args, **kwargs)

    w = tf.Variable([1.0])
    opt = mp.KerasLossScaleOptimizer(ClippingSGD(0.5), 1.0)
    opt.apply_gradients([(tf.constant([1.0]), w)], 0.75)
    self.assertEqual([0.75], seen)
    self.assertAllEqual([0.5], w.numpy())


  def check_is_that_keras_optimizer(self, keras_name):
    keras, legacy = _keras(keras_name)
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR))
    self.assertIsInstance(opt, mp.KerasLossScaleOptimizer)
    self.assertIsInstance(opt, keras.mixed_precision.LossScaleOptimizer)
    base = (keras.optimizers.legacy.Optimizer if legacy else
            keras.optimizers.Optimizer)
    self.assertIsInstance(opt, base)
    # 'dynamic' is TF 2.0's DynamicLossScale() default.
    self.assertEqual(
        {"initial_loss_scale": 2.**15, "increment_period": 2000,
         "multiplier": 2.},
        opt.loss_scale.get_config())
    self.assertEqual(2.**15, float(opt.loss_scale()))
    self.assertEqual(2.**15, float(tf.convert_to_tensor(opt.loss_scale)))
    self.assertEqual(2.**15, opt.loss_scale.numpy())
    self.assertFalse(opt.skipped_steps_advance_iterations)
    # The configuration rebuilds the same policy around the same optimizer.
    for loss_scale in (_MP.DynamicLossScale(4., 3, 4.), 8,
                       mp.ExponentialUpdateLossScaleManager(16, 2)):
      opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), loss_scale,
                                       skipped_steps_advance_iterations=True)
      config = opt.get_config()
      clone = mp.KerasLossScaleOptimizer.from_config(config)
      self.assertIs(type(opt), type(clone))
      self.assertIs(type(opt.inner_optimizer), type(clone.inner_optimizer))
      self.assertEqual(config["loss_scale"], clone.get_config()["loss_scale"])
      self.assertTrue(clone.skipped_steps_advance_iterations)
      self.assertEqual(float(opt.loss_scale), float(clone.loss_scale))

  def check_bad_inputs_say_what_to_do(self):
    keras, legacy = _keras("tf_keras_default")
    sgd = lambda: _sgd(keras, legacy, _LR)
    with self.assertRaisesRegex(TypeError, r"`loss_scale`.*'Dynamic'.*"
                                r"'dynamic' is the only string"):
      mp.KerasLossScaleOptimizer(sgd(), "Dynamic")
    with self.assertRaisesRegex(ValueError, r"`loss_scale`.*-4"):
      mp.KerasLossScaleOptimizer(sgd(), -4)
    with self.assertRaisesRegex(TypeError, r"`loss_scale`.*object"):
      mp.KerasLossScaleOptimizer(sgd(), object())
    with self.assertRaisesRegex(TypeError, r"`loss_scale`.*None.*'dynamic'"):
      mp.KerasLossScaleOptimizer(sgd(), None)
    with self.assertRaisesRegex(TypeError,
                                r"`skipped_steps_advance_iterations`.*bool"):
      mp.KerasLossScaleOptimizer(sgd(), skipped_steps_advance_iterations="no")
    with self.assertRaisesRegex(
        TypeError, r"`optimizer`.*contrib_mixed_precision.LossScaleOptimizer"):
      mp.KerasLossScaleOptimizer(_V1.train.GradientDescentOptimizer(0.1))
    with self.assertRaisesRegex(TypeError, r"`optimizer`.*Keras optimizer"):
      mp.KerasLossScaleOptimizer("sgd")
    with self.assertRaisesRegex(TypeError, r"already a LossScaleOptimizer"):
      mp.KerasLossScaleOptimizer(mp.KerasLossScaleOptimizer(sgd()))
    with self.assertRaisesRegex(TypeError, r"already a LossScaleOptimizer"):
      mp.KerasLossScaleOptimizer(
          keras.mixed_precision.LossScaleOptimizer(sgd()))


_MIRRORED_PROGRAM = "keras_lso_mirrored.py"


class MirroredStrategyChecks(_Case):
  """`fit` under `MirroredStrategy` on 2 logical CPUs (a subprocess each)."""

  def check_fit_two_replicas_matches_tf20(self, keras_name, loop="fit"):
    keras, legacy = _keras(keras_name)
    del keras
    output = program_util.run_program(
        _MIRRORED_PROGRAM, keras_name.replace("_legacy", ""),
        "legacy" if legacy else "new", loop, timeout=240)
    result = json.loads(output.strip().splitlines()[-1])
    self.assertEqual(2, result["replicas"])
    poison = result["poison"]
    make = _loss_scales()["dynamic_m4"]
    batches = [(np.array(x, np.float32), np.array(y, np.float32))
               for x, y in result["batches"]]
    expected = _session_reference(
        make, batches, w0=np.array(result["w0"], np.float32))
    actual = [(s, g, np.array(w, np.float32)) for s, g, w in result["steps"]]
    self.assertEqual([p is not None for p in poison],
                     [not np.all(np.isfinite(x)) for x, _ in batches])
    # The replicas' gradients are summed in another order than one
    # device's: the weights may differ in the last bit.
    self.assertSameSteps(expected, actual, xla=True)
    # Both replicas hold the same weights.
    self.assertEqual(result["steps"][-1][2], result["replica_1_w"])



# -- Keras 2's API (TF 2.4-2.15), judged by Keras 2 itself -------------------

_API_PROGRAM = "keras2_lso_api.py"
_CHECKPOINT_PROGRAM = "keras2_lso_checkpoint.py"
API_FORMS = ("default", "fixed", "floor")
API_STYLES = ("eager", "function", "split_eager_apply", "split_functions",
              "accumulate", "retrace", "minimize_callable", "minimize_tape",
              "fit", "fit_eagerly", "train_step", "train_step_minimize",
              "inspect_then_fit", "fit_then_split", "skip_aggregation")


def _keras2_env(keras_name):
  """The environment in which `tf.keras` is Keras 2, or the Keras named.

  `keras_name` None: Keras 2, the judge (tf-keras on TF 2.16+, TF 2.15's
  own Keras); else the Keras the converted program runs under.
  """
  env = program_util.child_env()
  env.pop("TF_USE_LEGACY_KERAS", None)
  if keras_name is None:
    if _is_keras3(tf.keras):
      if importlib.util.find_spec("tf_keras") is None:
        return None
      env["TF_USE_LEGACY_KERAS"] = "1"
  elif keras_name == "tf_keras_package":
    env["TF_USE_LEGACY_KERAS"] = "1"
  return env


def _run_json(program, args, env, timeout=600):
  proc = subprocess.run(
      [sys.executable, program_util.program_path(program)] + list(args),
      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
      timeout=timeout, check=False)
  if proc.returncode != 0:
    raise AssertionError("{} {} failed ({}):\n{}".format(
        program, " ".join(args), proc.returncode,
        proc.stderr.decode("utf-8", "replace")[-6000:]))
  return json.loads(proc.stdout.decode().strip().splitlines()[-1])


@functools.lru_cache(maxsize=None)
def _keras2_api_runs(keras_name):
  """(Keras 2's results, the converted program's under `keras_name`).

  One process each runs every form and style (a process is ten seconds
  of TensorFlow start-up; the whole matrix, under a minute).
  """
  reference_env = _keras2_env(None)
  if reference_env is None:
    return None
  args = [",".join(API_FORMS), ",".join(API_STYLES)]
  return (_run_json(_API_PROGRAM, ["reference"] + args, reference_env),
          _run_json(_API_PROGRAM, ["converted"] + args,
                    _keras2_env(keras_name)))


class Keras2ApiChecks(_Case):
  """TF 2.4-2.15's Keras API, as converted, against Keras 2 itself.

  The judge is the program written for Keras 2's `LossScaleOptimizer`, run
  under Keras 2 (tf-keras, or TF 2.15's Keras) in a process of its own
  (docs/design.md, contract 17); the converted program builds
  `KerasLossScaleOptimizer(opt, DynamicLossScale(initial, growth, 2) or
  FixedLossScale(x), skipped_steps_advance_iterations=True)` instead.
  Scale, `iterations` and the weights' bits must be equal after every
  step, over Inf and NaN steps and a scale driven to its floor of 1.
  """

  def _runs(self, keras_name):
    runs = _keras2_api_runs(keras_name)
    if runs is None:
      self.skipTest("tf_keras is not installed: no Keras 2 to judge by")
    return runs

  def check_steps_match_keras2(self, keras_name, style):
    reference, converted = self._runs(keras_name)
    for form in API_FORMS:
      key = form + "/" + style
      expected, actual = reference[key], converted[key]
      self.assertNotIn("error", expected, key)
      self.assertNotIn("error", actual, key)
      self.assertLen(actual["steps"], len(expected["steps"]), key)
      for i, (e, a) in enumerate(zip(expected["steps"], actual["steps"])):
        # Scale, iterations, the weights' bits (the counter: see below).
        self.assertEqual((e[0], e[1], e[3]), (a[0], a[1], a[3]),
                         "{}, after step {}".format(key, i))
      scales = [s[0] for s in expected["steps"]]
      iterations = [s[1] for s in expected["steps"]]
      if form == "floor":
        self.assertEqual(1.0, min(scales), key)  # The floor was reached.
      if style != "accumulate":
        # Every step counted, skipped ones too (Keras 2's rule).
        self.assertEqual(list(range(1, len(iterations) + 1)), iterations,
                         key)

  def check_attributes_match_keras2(self, keras_name, form):
    reference, converted = self._runs(keras_name)
    for style in API_STYLES:
      key = form + "/" + style
      self.assertEqual(reference[key]["attributes"],
                       converted[key]["attributes"], key)
      self.assertEqual([s[2] for s in reference[key]["steps"]],
                       [s[2] for s in converted[key]["steps"]],
                       key + ": dynamic_counter after each step")
    attributes = reference[form + "/eager"]["attributes"]
    expected = {"default": (True, 2.**15, 2000), "fixed": (False, 128., None),
                "floor": (True, 4., 3)}[form]
    self.assertEqual(
        expected, tuple(attributes[name][1] for name in (
            "dynamic", "initial_scale", "dynamic_growth_steps")))

  def check_checkpoints_cross(self, keras_name):
    """Keras 2's checkpoint restores here and back, in fresh processes."""
    reference_env = _keras2_env(None)
    if reference_env is None:
      self.skipTest("tf_keras is not installed: no Keras 2 to judge by")
    ours_env = _keras2_env(keras_name)
    theirs, ours = (os.path.join(self.get_temp_dir(), d)
                    for d in ("keras2", "converted"))
    saved = _run_json(_CHECKPOINT_PROGRAM, ["reference", "save", theirs],
                      reference_env)
    self.assertEqual(saved, _run_json(
        _CHECKPOINT_PROGRAM, ["converted", "save", ours], ours_env))
    judge = _run_json(_CHECKPOINT_PROGRAM, ["reference", "restore", theirs],
                      reference_env)
    self.assertEqual(saved["saved"], judge["restored"])
    self.assertEqual(2.0, judge["restored"][0])  # A NaN step halved it.
    self.assertEqual(
        judge, _run_json(_CHECKPOINT_PROGRAM,
                         ["converted", "restore", theirs], ours_env))
    self.assertEqual(
        judge, _run_json(_CHECKPOINT_PROGRAM,
                         ["reference", "restore", ours], reference_env))


class Keras3StepChecks(_Case):
  """Under Keras 3: which apply unscales, decided per step."""

  def _opt(self):
    keras, legacy = _keras("tf_keras_default")
    if not _is_keras3(keras):
      self.skipTest("Keras 3 only (Keras 2 has no `scale_loss`)")
    return mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR),
                                      _MP.DynamicLossScale(2.**10, 2, 2.))

  def check_split_scale_loss_refuses(self):
    opt = self._opt()
    w = tf.Variable(_W0)
    x, y = _batches([None])[0]

    @tf.function
    def compute():
      with tf.GradientTape() as tape:
        scaled = opt.scale_loss(_loss(w, x, y))
      return tape.gradient(scaled, [w])

    grads = compute()
    # Keras 3's scaled gradients, or TF 2.x's unscaled ones? It cannot
    # tell: it refuses, and applies nothing.
    with self.assertRaisesRegex(
        ValueError, r"cannot tell whether the gradients.*`scale_loss`.*"
        r"same `tf.function`.*get_unscaled_gradients"):
      opt.apply_gradients(zip(grads, [w]))
    self.assertAllEqual(_W0, w.numpy())
    self.assertEqual(0, int(opt.iterations))
    self.assertEqual(2.**10, float(opt.loss_scale))
    # In one step, each way is known: applied once, unscaled once.
    for style in ("keras3", "tf2"):
      opt = self._opt()
      self.assertSameSteps(
          _session_reference(lambda: _MP.DynamicLossScale(2.**10, 2, 2.),
                             _batches(_POISON)),
          _custom_loop(opt, _batches(_POISON), "function", style))

  def check_scale_loss_then_apply_in_a_branch(self):
    # AutoGraph puts the apply in a cond branch's graph: still this step.
    opt = self._opt()
    w = tf.Variable(_W0)
    batches = _batches(_POISON)

    @tf.function
    def step(x, y, apply):
      with tf.GradientTape() as tape:
        scaled = opt.scale_loss(_loss(w, x, y))
      grads = tape.gradient(scaled, [w])
      if apply:  # A tensor: a tf.cond.
        opt.apply_gradients(zip(grads, [w]))

    steps = []
    for bx, by in batches:
      step(tf.constant(bx), tf.constant(by), tf.constant(True))
      steps.append((float(opt.loss_scale), int(opt.iterations.numpy()),
                    w.numpy()))
    self.assertSameSteps(
        _session_reference(lambda: _MP.DynamicLossScale(2.**10, 2, 2.),
                           batches), steps)

  def check_keras2_attributes_are_read_only(self):
    keras, legacy = _keras("tf_keras_default")
    opt = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR),
                                     _MP.DynamicLossScale(16., 5, 2.))
    for name in ("initial_scale", "dynamic_growth_steps"):
      with self.assertRaisesRegex(AttributeError,
                                  r"`{}`.*cannot be set".format(name)):
        setattr(opt, name, 3)
    self.assertEqual((16., 5), (opt.initial_scale, opt.dynamic_growth_steps))
    fixed = mp.KerasLossScaleOptimizer(_sgd(keras, legacy, _LR), 8)
    self.assertEqual((8., None, None, False),
                     (fixed.initial_scale, fixed.dynamic_growth_steps,
                      fixed.dynamic_counter, fixed.dynamic))
    # Used as the tensor Keras 2 returned.
    scale = opt.loss_scale
    self.assertEqual((tf.float32, tf.TensorShape([])),
                     (scale.dtype, scale.shape))
    self.assertEqual(np.float32(16.), np.asarray(scale))
    self.assertEqual("16.0", "{:.1f}".format(scale))
    self.assertEqual([17., 15.], [float(scale + 1), float(scale - 1)])
    self.assertTrue(bool(scale > 1.))
