# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 2.4-2.15 Keras 2 mixed-precision programs, written as their users did.

Each program prints, after every step of every case, the loss scale, the
step count (`iterations`) and the weights, one JSON line per case; the
unmodified program run under tf-keras (TF_USE_LEGACY_KERAS=1), which runs
the same `LossScaleOptimizer` code as TF 2.4-2.15, is the judge of the
converted one under Keras 3 (docs/design.md, contract 17). Shared by
tests/upgrade_keras2_test.py.

The inner optimizer is SGD with momentum 0.5: tf-keras' SGD keeps a
momentum slot even at momentum 0 (so `0 * -inf` makes a NaN once a fixed
scale applied an Inf step) where Keras 3's has none, a difference of the
inner optimizer, not of the loss scale.
"""

import json

import numpy as np

_PRELUDE = '''
import json
import sys

import tensorflow as tf
from tensorflow.keras import mixed_precision
from tensorflow.keras.mixed_precision import LossScaleOptimizer
import tensorflow.keras.mixed_precision as mp

INF, NAN = float("inf"), float("nan")
# The input `x` of `loss = sum(w * x)` per step; an Inf or NaN makes that
# step's gradients non-finite.
MIXED = [[1, 2], [.5, 1], [INF, 1], [1, 1], [NAN, 1], [NAN, .5], [2, 1],
         [1, 3], [1, 1], [INF, INF], [1, 1], [1, 1]]
TO_FLOOR = [[1, 1], [INF, 1], [NAN, 1], [INF, 1], [NAN, NAN], [1, .5],
            [1, 1], [1, 2], [INF, 1], [1, 1]]
# 18 overflowing steps take 2 ** 15 to its floor of 1, and stay there.
OVERFLOW = [[INF, 1]] * 9 + [[NAN, 1]] * 9 + [[1, 2], [.5, 1], [1, 1]]


def sgd():
  return tf.keras.optimizers.SGD(0.25, momentum=0.5)


def print_trace(name, trace):
  print(json.dumps({"case": name, "trace": trace}))
'''

# Custom loops with `get_scaled_loss`/`get_unscaled_gradients`, eager and in
# a `tf.function`, through every import style, fixed and dynamic; then
# `compile`/`fit` with the optimizer wrapped by hand.
CUSTOM = _PRELUDE + '''

def kernel():
  layer = tf.keras.layers.Dense(
      1, use_bias=False,
      kernel_initializer=tf.keras.initializers.Constant([[1.0], [-2.0]]))
  layer.build((1, 2))
  return layer.kernel


def custom_loop(name, opt, xs, compiled):
  w = kernel()

  def step(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(w[:, 0] * x)
      scaled = opt.get_scaled_loss(loss)
    grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
    opt.apply_gradients(zip(grads, [w]))

  if compiled:
    step = tf.function(step)
  trace = []
  for x in xs:
    step(tf.constant(x, tf.float32))
    trace.append([float(opt.loss_scale), int(opt.iterations)] +
                 [float(v) for v in w.numpy()[:, 0]])
  print_trace(name, trace)
  return opt


def attributes(opt):
  """Keras 2's attributes, each read alone (one missing is its own error)."""
  readers = {
      "dynamic": lambda: bool(opt.dynamic),
      "initial_scale": lambda: float(opt.initial_scale),
      "dynamic_growth_steps": lambda: opt.dynamic_growth_steps,
      "dynamic_counter": lambda: (None if opt.dynamic_counter is None else
                                  int(opt.dynamic_counter)),
      "loss_scale": lambda: float(opt.loss_scale),
      "inner_optimizer": lambda: type(opt.inner_optimizer).__name__,
  }
  found = {}
  for name, read in readers.items():
    try:
      found[name] = read()
    except Exception as e:  # pylint: disable=broad-except
      found[name] = "{}: {}".format(type(e).__name__, e)
  return found


attrs = {}
opt = custom_loop(
    "eager_to_floor",
    mp.LossScaleOptimizer(sgd(), initial_scale=4., dynamic_growth_steps=3),
    TO_FLOOR, compiled=False)
attrs["eager_to_floor"] = attributes(opt)
opt = custom_loop("function_positional",
                  LossScaleOptimizer(sgd(), True, 8., 2), MIXED,
                  compiled=True)
attrs["function_positional"] = attributes(opt)
opt = custom_loop(
    "fixed_eager",
    mixed_precision.LossScaleOptimizer(sgd(), dynamic=False,
                                       initial_scale=128),
    MIXED, compiled=False)
attrs["fixed_eager"] = attributes(opt)
custom_loop(
    "fixed_function",
    tf.keras.mixed_precision.LossScaleOptimizer(
        sgd(), dynamic=False, initial_scale=128.),
    MIXED, compiled=True)
opt = custom_loop("defaults_function",
                  tf.keras.mixed_precision.LossScaleOptimizer(sgd()),
                  OVERFLOW, compiled=True)
attrs["defaults_function"] = attributes(opt)


class Trace(tf.keras.callbacks.Callback):

  def __init__(self):
    super().__init__()
    self.trace = []

  def on_train_batch_end(self, batch, logs=None):
    opt = self.model.optimizer
    self.trace.append([float(opt.loss_scale), int(opt.iterations)] + [
        float(v) for v in self.model.layers[-1].kernel.numpy()[:, 0]])


def fit(name, optimizer, xs):
  inputs = tf.keras.Input(shape=(2,))
  outputs = tf.keras.layers.Dense(
      1, use_bias=False,
      kernel_initializer=tf.keras.initializers.Constant([[1.0], [-2.0]]))(
          inputs)
  model = tf.keras.Model(inputs, outputs)
  model.compile(optimizer=optimizer, loss="mse")
  trace = Trace()
  model.fit(tf.constant(xs, tf.float32), tf.zeros([len(xs), 1]),
            batch_size=1, epochs=1, shuffle=False, verbose=0,
            callbacks=[trace])
  print_trace(name, trace.trace)


fit("fit_wrapped",
    mp.LossScaleOptimizer(sgd(), initial_scale=8., dynamic_growth_steps=2),
    MIXED)
fit("fit_fixed",
    mixed_precision.LossScaleOptimizer(sgd(), dynamic=False,
                                       initial_scale=64.),
    MIXED)
print(json.dumps({"case": "attributes", "trace": attrs}))
'''


def traces(proc) -> dict:
  """`{case: array of rows}` from a program's stdout; `attributes` as is."""
  if proc.returncode != 0:
    raise AssertionError("The program failed (exit {}):\n{}\n{}".format(
        proc.returncode, proc.stdout, proc.stderr[-6000:]))
  found = {}
  for line in proc.stdout.splitlines():
    if line.startswith("{"):
      record = json.loads(line)
      trace = record["trace"]
      found[record["case"]] = (trace if isinstance(trace, dict) else
                               np.array(trace, dtype=np.float64))
  return found

# The model every `fit` program trains: one Dense kernel, `mse` to 0, one
# example per step, and a callback that prints the scale, `iterations`
# and the kernel after every step. READ_SCALE is how the program reads the
# scale (TF 2.0-2.3: `loss_scale()`; Keras 2: `loss_scale`).
_FIT = '''

class Trace(tf.keras.callbacks.Callback):

  def __init__(self):
    super().__init__()
    self.trace = []

  def on_train_batch_end(self, batch, logs=None):
    opt = self.model.optimizer
    self.trace.append([float(READ_SCALE), int(opt.iterations)] + [
        float(v) for v in self.model.layers[-1].kernel.numpy()[:, 0]])


def model_for(xs):
  inputs = tf.keras.Input(shape=(2,))
  outputs = tf.keras.layers.Dense(
      1, use_bias=False,
      kernel_initializer=tf.keras.initializers.Constant([[1.0], [-2.0]]))(
          inputs)
  return tf.keras.Model(inputs, outputs)


def fit(name, model, xs):
  trace = Trace()
  model.fit(tf.constant(xs, tf.float32), tf.zeros([len(xs), 1]),
            batch_size=1, epochs=1, shuffle=False, verbose=0,
            callbacks=[trace])
  print_trace(name, trace.trace)
'''

# Keras 2: `set_global_policy('mixed_float16')`, then `compile` wraps the
# optimizer itself (2 ** 15, 2000 steps, floor 1); an optimizer object
# and a string.
POLICY = _PRELUDE + _FIT.replace("READ_SCALE", "opt.loss_scale") + '''

mixed_precision.set_global_policy("mixed_float16")
model = model_for(OVERFLOW)
model.compile(optimizer=tf.keras.optimizers.SGD(0.25, momentum=0.5),
              loss="mse")
fit("compile_object", model, OVERFLOW)
opt = tf.keras.optimizers.Adam(0.125)
model = model_for(MIXED)
model.compile(optimizer=opt, loss="mse")
fit("compile_name", model, MIXED)
model = model_for(MIXED)
model.compile(optimizer="sgd", loss="mse")
fit("compile_string", model, MIXED)
'''

# TF 2.0-2.3 (kerasfit-style): a Policy with a loss scale of multiplier 4,
# `set_policy`, `compile`, `fit`, a callback reading `loss_scale()`, and
# the Policy's `should_cast_variables`. No Keras today runs it unconverted;
# the judge is TF's own DynamicLossScale driven with the same steps.
_TF20 = '''
import json
import sys

import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision

INF, NAN = float("inf"), float("nan")
MIXED = [[1, 2], [.5, 1], [INF, 1], [1, 1], [NAN, 1], [NAN, .5], [2, 1],
         [1, 3], [1, 1], [INF, INF], [1, 1], [1, 1]]
OVERFLOW = [[INF, 1]] * 9 + [[NAN, 1]] * 9 + [[1, 2], [.5, 1], [1, 1]]


def print_trace(name, trace):
  print(json.dumps({"case": name, "trace": trace}))
''' + _FIT.replace("READ_SCALE", "opt.loss_scale()")

TF20_POLICY = _TF20 + '''

policy = mixed_precision.Policy(
    "mixed_float16",
    loss_scale=tf.mixed_precision.experimental.DynamicLossScale(
        initial_loss_scale=8., increment_period=2, multiplier=4.))
mixed_precision.set_policy(policy)
print(json.dumps({"case": "should_cast_variables",
                  "trace": [[float(policy.should_cast_variables)]]}))


class MaskedDense(tf.keras.layers.Dense):
  """A layer copied from TF 2.0-2.3's Dense, private policy name and all."""

  def call(self, inputs):
    if not self._mixed_precision_policy.should_cast_variables:
      inputs = tf.cast(inputs, self.dtype)
    kernel = self.kernel * tf.ones_like(self.kernel)
    return tf.nn.bias_add(tf.matmul(inputs, kernel), self.bias)


masked, dense = MaskedDense(3), tf.keras.layers.Dense(3)
x = tf.reshape(tf.linspace(-1., 1., 8), (4, 2))
masked.build((None, 2))
dense.build((None, 2))
dense.set_weights([w * 3 for w in masked.get_weights()])
masked.set_weights(dense.get_weights())
print(json.dumps({"case": "layer_policy", "trace": [[
    float(masked(x).dtype == tf.float16),
    float(tf.reduce_all(masked(x) == dense(x)))]]}))
model = model_for(MIXED)
model.compile(optimizer=tf.keras.optimizers.SGD(0.25, momentum=0.5),
              loss="mse")
fit("multiplier_4", model, MIXED)
'''

# `set_policy` with a string: `compile` took TF 2.0's default dynamic scale.
TF20_STRING = _TF20 + '''

mixed_precision.set_policy("mixed_float16")
model = model_for(OVERFLOW)
model.compile(optimizer=tf.keras.optimizers.SGD(0.25, momentum=0.5),
              loss="mse")
fit("string", model, OVERFLOW)
'''

# `Policy(name_variable)`: the name is known only when the program runs.
TF20_NAME = _TF20 + '''

name = sys.argv[1] if len(sys.argv) > 1 else "mixed_float16"
mixed_precision.set_policy(mixed_precision.Policy(name))
model = model_for(OVERFLOW)
model.compile(optimizer=tf.keras.optimizers.SGD(0.25, momentum=0.5),
              loss="mse")
fit("name_variable", model, OVERFLOW)
'''
