# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A TF 2.4-2.15 Keras mixed-precision program, as written or as converted.

The program is written against Keras 2's `LossScaleOptimizer` API. With
SIDE `reference` it builds `tf.keras.mixed_precision.LossScaleOptimizer`
itself: run under tf-keras (`TF_USE_LEGACY_KERAS=1`) or Keras 2.15, that is
the user's unmodified program, the judge (docs/design.md, contract 17).
With SIDE `converted` it builds what `contrib-mp-upgrade` writes in its
place, `contrib_mixed_precision.KerasLossScaleOptimizer(opt, <TF's
DynamicLossScale or FixedLossScale>, skipped_steps_advance_iterations=True)`,
and runs under whatever Keras `tf.keras` is (Keras 3 on TF 2.16+).

Prints one JSON line: for each FORM/STYLE, the optimizer's Keras 2
attributes, and after every step the scale, `iterations`,
`dynamic_counter` and the weights' bytes (or the error that stopped it).
Each FORM/STYLE trains its own optimizer and model, in this one process.

Usage: python keras2_lso_api.py SIDE FORMS STYLES
  SIDE: reference or converted.
  FORMS: how the optimizer is built (`FORMS`), comma-separated.
  STYLES: how the program trains (`STYLES`), comma-separated.
"""

import json
import sys

import numpy as np
import tensorflow as tf

LR = 0.1
# None: a finite batch; 'inf' / 'nan' poison one input.
POISON = [None, None, "inf", None, "nan", None, None, None, "nan", "inf",
          None, None]
# Enough bad steps to take a scale of 4 to its floor of 1, and keep it there.
FLOOR_POISON = [None, "nan", "inf", "nan", "nan", None, None, None, "inf",
                None, None, None]

# FORM: (Keras 2's keyword arguments, the converter's loss scale, poison).
FORMS = {
    "default": ({}, lambda: tf.compat.v1.mixed_precision.DynamicLossScale(
        2.**15, 2000, multiplier=2.), POISON),
    "fixed": ({"dynamic": False, "initial_scale": 128},
              lambda: tf.compat.v1.mixed_precision.FixedLossScale(128),
              POISON),
    "floor": ({"initial_scale": 4, "dynamic_growth_steps": 3},
              lambda: tf.compat.v1.mixed_precision.DynamicLossScale(
                  4, 3, multiplier=2.), FLOOR_POISON),
}


def make_optimizer(side, form):
  inner = tf.keras.optimizers.SGD(LR)
  kwargs, converted, _ = FORMS[form]
  if side == "reference":
    return tf.keras.mixed_precision.LossScaleOptimizer(inner, **kwargs)
  import contrib_mixed_precision  # pylint: disable=g-import-not-at-top
  return contrib_mixed_precision.KerasLossScaleOptimizer(
      inner, converted(), skipped_steps_advance_iterations=True)


def batches(poison):
  rng = np.random.RandomState(5)
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


W0 = np.random.RandomState(3).uniform(-1, 1, [3, 1]).astype(np.float32)


def loss_of(w, x, y):
  """Mixed precision: the model in float16, the loss in float32."""
  pred = tf.matmul(tf.cast(x, tf.float16), tf.cast(w, tf.float16))
  return tf.reduce_mean(tf.square(tf.cast(pred, tf.float32) - y))


def state(opt, weights):
  try:
    counter = opt.dynamic_counter
  except AttributeError as e:  # Reported, so that the run goes on.
    counter = e
  if isinstance(counter, Exception):
    counter = type(counter).__name__
  elif counter is not None:
    counter = int(counter.numpy())
  return [float(opt.loss_scale),
          int(opt.iterations.numpy()),
          counter,
          [_bits(tf.keras.backend.get_value(v)) for v in weights]]


def _bits(value):
  """The value's bytes, every NaN written as one NaN.

  A NaN's sign is the inner optimizer's (Keras 3's SGD subtracts `lr * g`,
  Keras 2's adds `-g * lr`), not the loss scale's.
  """
  value = np.array(value)
  value[np.isnan(value)] = np.nan
  return value.tobytes().hex()


# -- Custom loops on a variable ----------------------------------------------


def scaled_grads(opt, w, x, y):
  with tf.GradientTape() as tape:
    loss = loss_of(w, x, y)
    scaled = opt.get_scaled_loss(loss)
  return opt.get_unscaled_gradients(tape.gradient(scaled, [w]))


def loop_eager(opt, w, data, record):
  for x, y in data:
    opt.apply_gradients(zip(scaled_grads(opt, w, x, y), [w]))
    record()


def loop_skip_aggregation(opt, w, data, record):
  # Keras 2.11+'s keyword, on one device (nothing to aggregate): TF
  # 2.11-2.15 loops that all-reduce themselves pass it everywhere.
  for x, y in data:
    opt.apply_gradients(zip(scaled_grads(opt, w, x, y), [w]),
                        skip_gradients_aggregation=True)
    record()


def loop_function(opt, w, data, record):
  @tf.function
  def step(x, y):
    opt.apply_gradients(zip(scaled_grads(opt, w, x, y), [w]))

  for x, y in data:
    step(tf.constant(x), tf.constant(y))
    record()


def loop_split_eager_apply(opt, w, data, record):
  # Gradients computed (and unscaled) in a tf.function, applied eagerly.
  compute = tf.function(lambda x, y: scaled_grads(opt, w, x, y))
  for x, y in data:
    grads = compute(tf.constant(x), tf.constant(y))
    opt.apply_gradients(zip(grads, [w]))
    record()


def loop_split_functions(opt, w, data, record):
  compute = tf.function(lambda x, y: scaled_grads(opt, w, x, y))

  @tf.function
  def apply(grads):
    opt.apply_gradients(zip(grads, [w]))

  for x, y in data:
    apply(compute(tf.constant(x), tf.constant(y)))
    record()


def loop_accumulate(opt, w, data, record):
  # Gradient accumulation: unscaled in one tf.function per micro-batch,
  # summed, applied every 2 micro-batches in another (the last one eagerly).
  compute = tf.function(lambda x, y: scaled_grads(opt, w, x, y))
  apply = tf.function(lambda g: opt.apply_gradients([(g, w)]))
  total = None
  for i, (x, y) in enumerate(data):
    grad = compute(tf.constant(x), tf.constant(y))[0]
    total = grad if total is None else total + grad
    if i % 2 == 1:
      if i == len(data) - 1:
        opt.apply_gradients([(total, w)])
      else:
        apply(total)
      total = None
    record()


def loop_retrace(opt, w, data, record):
  # A Python argument retraces the step: one trace per value, each reused.
  @tf.function
  def step(x, y, half):
    if half:
      x, y = x[:2], y[:2]
    opt.apply_gradients(zip(scaled_grads(opt, w, x, y), [w]))

  for i, (x, y) in enumerate(data):
    step(tf.constant(x), tf.constant(y), i % 3 == 0)
    record()


def loop_minimize_callable(opt, w, data, record):
  @tf.function
  def step(x, y):
    opt.minimize(lambda: loss_of(w, x, y), [w])

  for x, y in data:
    step(tf.constant(x), tf.constant(y))
    record()


def loop_minimize_tape(opt, w, data, record):
  for x, y in data:
    with tf.GradientTape() as tape:
      loss = loss_of(w, x, y)
    opt.minimize(loss, [w], tape=tape)
    record()


def run_loop(style, opt, data):
  w = tf.Variable(W0)
  steps = []
  LOOPS[style](opt, w, data, lambda: steps.append(state(opt, [w])))
  return steps


LOOPS = {
    "eager": loop_eager,
    "function": loop_function,
    "split_eager_apply": loop_split_eager_apply,
    "split_functions": loop_split_functions,
    "accumulate": loop_accumulate,
    "retrace": loop_retrace,
    "minimize_callable": loop_minimize_callable,
    "minimize_tape": loop_minimize_tape,
    "skip_aggregation": loop_skip_aggregation,
}


# -- Keras models: compile / fit ---------------------------------------------


class K2TrainStep(tf.keras.Sequential):
  """TF 2.4's mixed precision guide's `train_step`, Keras 2 API."""

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      pred = self(x, training=True)
      loss = tf.reduce_mean(tf.square(tf.cast(pred, tf.float32) - y))
      scaled = self.optimizer.get_scaled_loss(loss)
    grads = tape.gradient(scaled, self.trainable_variables)
    grads = self.optimizer.get_unscaled_gradients(grads)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    return {"loss": loss}


class MinimizeTrainStep(tf.keras.Sequential):
  """A `train_step` that hands the tape to Keras 2's `minimize`."""

  def train_step(self, data):
    x, y = data
    with tf.GradientTape() as tape:
      pred = self(x, training=True)
      loss = tf.reduce_mean(tf.square(tf.cast(pred, tf.float32) - y))
    self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
    return {"loss": loss}


def fit_loss(y_true, y_pred):
  # Keras 3 hands `y_true` over in the model's float16, Keras 2 in float32:
  # float16 either way, so that only the optimizers differ.
  y_true = tf.cast(tf.cast(y_true, tf.float16), tf.float32)
  return tf.square(tf.cast(y_pred, tf.float32) - y_true)


def run_fit(style, opt, data):
  tf.keras.mixed_precision.set_global_policy("mixed_float16")
  model_class = {"train_step": K2TrainStep,
                 "train_step_minimize": MinimizeTrainStep}.get(
                     style, tf.keras.Sequential)
  layer = tf.keras.layers.Dense(
      1, use_bias=False, kernel_initializer=tf.keras.initializers.Constant(W0))
  model = model_class([tf.keras.Input([3]), layer])
  tf.keras.mixed_precision.set_global_policy("float32")
  if style == "inspect_then_fit":
    # A notebook user looks at the gradients once, eagerly, applies nothing.
    x, y = data[0]
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(fit_loss(y, model(x)))
      scaled = opt.get_scaled_loss(loss)
    opt.get_unscaled_gradients(tape.gradient(scaled, model.trainable_weights))
  model.compile(optimizer=opt, loss=fit_loss,
                run_eagerly=(style == "fit_eagerly"))
  steps = []

  class Record(tf.keras.callbacks.Callback):

    def on_train_batch_end(self, batch, logs=None):
      del batch, logs
      steps.append(state(opt, [layer.kernel]))

  fitted = data[:6] if style == "fit_then_split" else data
  model.fit(np.concatenate([x for x, _ in fitted]),
            np.concatenate([y for _, y in fitted]), batch_size=4, epochs=1,
            shuffle=False, verbose=0, callbacks=[Record()])
  if style == "fit_then_split":
    # Then a custom loop: gradients unscaled in a tf.function, applied
    # eagerly.
    @tf.function
    def compute(x, y):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(fit_loss(y, model(x)))
        scaled = opt.get_scaled_loss(loss)
      return opt.get_unscaled_gradients(
          tape.gradient(scaled, model.trainable_weights))

    for x, y in data[6:]:
      grads = compute(tf.constant(x), tf.constant(y))
      opt.apply_gradients(zip(grads, model.trainable_weights))
      steps.append(state(opt, [layer.kernel]))
  return steps


FIT_STYLES = ("fit", "fit_eagerly", "train_step", "train_step_minimize",
              "inspect_then_fit", "fit_then_split")
STYLES = tuple(LOOPS) + FIT_STYLES


def attributes(opt):
  """Keras 2's attributes, each as [type, value] or the error it raised."""
  readers = {
      "dynamic": lambda: opt.dynamic,
      "initial_scale": lambda: opt.initial_scale,
      "dynamic_growth_steps": lambda: opt.dynamic_growth_steps,
      "dynamic_counter": lambda: opt.dynamic_counter,
      "loss_scale": lambda: tf.convert_to_tensor(opt.loss_scale),
      "inner_optimizer": lambda: opt.inner_optimizer,
      "learning_rate": lambda: opt.learning_rate,
      "iterations": lambda: opt.iterations,
  }
  result = {}
  for name, read in readers.items():
    try:
      value = read()
    except Exception as e:  # pylint: disable=broad-except
      result[name] = ["raised", type(e).__name__]
      continue
    if isinstance(value, tf.keras.optimizers.Optimizer):
      value = ["optimizer", type(value).__name__]
    elif hasattr(value, "dtype") and hasattr(value, "numpy"):
      value = [tf.as_dtype(value.dtype).name, value.numpy().item()]
    else:
      value = [type(value).__name__, value]
    result[name] = value
  return result


def run(side, form, style):
  opt = make_optimizer(side, form)
  data = batches(FORMS[form][2])
  result = {"attributes": attributes(opt)}
  try:
    result["steps"] = (run_fit if style in FIT_STYLES else run_loop)(
        style, opt, data)
  except Exception as e:  # pylint: disable=broad-except
    result["error"] = "{}: {}".format(type(e).__name__, e)
  return result


def main(side, forms, styles):
  results = {}
  for form in forms.split(","):
    for style in styles.split(","):
      results[form + "/" + style] = run(side, form, style)
  print(json.dumps(results))


if __name__ == "__main__":
  main(*sys.argv[1:])
