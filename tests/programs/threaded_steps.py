# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One train op run from a pool of threads, as Hogwild and A3C scripts do.

Usage: threaded_steps.py MODE THREADS STEPS

MODE is `graph` (one Session, every thread runs the same train op), `tf1`
(the same under `disable_v2_behavior()`: ref variables), `xla_session` (the
train step is a `tf.function(jit_compile=True)` called from the graph and
run through one Session), `function` (every thread calls one
`tf.function`), `xla_function` (the same, with `jit_compile=True`), or
`eager` (every thread calls `minimize`).

For each manager (exponential, fixed) and each kind of step (every step
finite, every step NaN) it runs THREADS x STEPS steps of
`LossScaleOptimizer(SGD(1.0, use_locking=True))` on `loss = w * x`, and
prints one JSON line: the model weight and the loss-scale state afterwards,
per case. With x = 1 every applied step lowers `w` by exactly 1.
"""

import json
import sys
import threading

MODE, THREADS, STEPS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position  # noqa: E402

if MODE == "tf1":
  tf.compat.v1.disable_v2_behavior()

import contrib_mixed_precision as cmp  # pylint: disable=g-import-not-at-top,wrong-import-position  # noqa: E402

# Grow (or shrink) every THREADS * STEPS / 16 steps: the whole run moves the
# scale 16 times, from 1 to 2**16 (or from 2**20 to 2**4).
EVERY = THREADS * STEPS // 16
EXPONENTIAL = dict(incr_every_n_steps=EVERY, decr_every_n_nan_or_inf=EVERY,
                   decr_ratio=0.5)


def make_manager(kind, finite):
  if kind == "fixed":
    return cmp.FixedLossScaleManager(1024)
  return cmp.ExponentialUpdateLossScaleManager(
      1 if finite else 2**20, **EXPONENTIAL)


def in_threads(step):
  errors = []

  def work():
    try:
      for _ in range(STEPS):
        step()
    except Exception as e:  # pylint: disable=broad-except
      errors.append(repr(e))

  threads = [threading.Thread(target=work) for _ in range(THREADS)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(timeout=300)
    if t.is_alive():
      raise RuntimeError("a training thread did not finish in 300 s")
  if errors:
    raise RuntimeError(errors[0])


def state_of(manager):
  return manager.variables() if hasattr(manager, "variables") else []


def run_graph(kind, finite):
  with tf.Graph().as_default():
    w = tf.compat.v1.Variable(0.0, name="w")
    x = tf.constant(1.0 if finite else float("nan"))
    manager = make_manager(kind, finite)
    opt = cmp.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(1.0, use_locking=True),
        manager)
    if MODE == "xla_session":

      @tf.function(jit_compile=True)
      def train_step():
        grads_and_vars = opt.compute_gradients(w * x, var_list=[w])
        opt.apply_gradients(grads_and_vars)
        return tf.constant(0)

      train = train_step()
    else:
      train = opt.minimize(w * x)
    fetch = [w] + state_of(manager)
    with tf.compat.v1.Session() as sess:
      sess.run(tf.compat.v1.global_variables_initializer())
      in_threads(lambda: sess.run(train))
      return [float(v) for v in sess.run(fetch)]


def run_eager(kind, finite):
  w = tf.Variable(0.0, name="w")
  x = tf.constant(1.0 if finite else float("nan"))
  manager = make_manager(kind, finite)
  opt = cmp.LossScaleOptimizer(
      tf.compat.v1.train.GradientDescentOptimizer(1.0, use_locking=True),
      manager)

  def step():
    opt.minimize(lambda: w * x, var_list=[w])

  if MODE in ("function", "xla_function"):
    step = tf.function(step, jit_compile=MODE == "xla_function")
    step.get_concrete_function()  # Traced before the threads start.
  in_threads(step)
  return [float(v.numpy()) for v in [w] + state_of(manager)]


def main():
  run = (run_eager if MODE in ("function", "xla_function", "eager") else
         run_graph)
  results = {}
  for kind in ("exponential", "fixed"):
    for finite in (True, False):
      results["{}_{}".format(kind, "finite" if finite else "nan")] = run(
          kind, finite)
  print(json.dumps(results))


if __name__ == "__main__":
  main()
