# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One task of an Estimator parameter-server cluster, for the tests.

`tf.estimator.train_and_evaluate` with the `TF_CONFIG` the caller sets: a
chief, one worker and one PS, one process each. `model_fn` builds
`LossScaleOptimizer(SGD)` with an `ExponentialUpdateLossScaleManager`; with
`--mode sync` it wraps that in `SyncReplicasOptimizer` and returns its hook.
Estimator's `replica_device_setter` puts the variables on the PS. The data
and the model are those of `ps_train.py` (the chief has worker 0's batches,
the worker worker 1's), except that the worker's third step overflows in
its gradients only, with a finite loss (see `overflow_in_backward`).

So that every run is deterministic, a hook keeps the two training tasks in
lockstep through queues on the PS: in sync mode both finish step k before
either starts step k+1; in async mode they take turns, chief first. The hook
records the state it reads from the PS after each step (global step,
weights, loss-scale state) and writes them as JSON to `--out` at the end,
with the chief's final checkpoint. The PS task serves until it is killed.

Usage: TF_CONFIG=... python ps_estimator.py --mode sync|async --model-dir D
         --out FILE --ready-file FILE [--max-steps N]
"""

import argparse
import json
import os
import sys
import time

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp

MANAGER_ARGS = dict(init_loss_scale=2**8, incr_every_n_steps=3,
                    decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5)
# Steps and the token queue fail after this; the lockstep waits, which cover
# the other process's start-up, get their own, longer timeout.
OP_TIMEOUT_MS = 8000
WAIT_MS = 120000


def batch(task, step):
  """ps_train.py's batches, and whether this one's gradients overflow."""
  x = (np.arange(12, dtype=np.float32).reshape(4, 3) / 20 + task / 2) * (
      1 + step / 10)
  features = {"x": x.astype(np.float32),
              "overflow": np.array((task, step) == (1, 2))}
  return features, np.ones([4, 2], np.float32)


@tf.custom_gradient
def overflow_in_backward(t, overflow):
  """Identity whose gradient is infinite where `overflow`.

  Estimator's `NanTensorHook` ends training on a non-finite *loss*; loss
  scaling is for the usual float16 case, gradients that overflow while the
  loss stays finite. This makes that case on a float32 model.
  """

  def grad(dy):
    return dy * tf.where(overflow, np.float32(np.inf), np.float32(1)), None

  return tf.identity(t), grad


class Lockstep(tf.compat.v1.train.SessionRunHook):
  """Keeps the chief (task 0) and the worker (task 1) in step; records."""

  def __init__(self, task, sync, state, ready_file):
    self._task = task
    self._ready_file = ready_file
    self._sync = sync
    self._state = state
    self.records = []

  def begin(self):
    def queue(task):
      with tf.compat.v1.device("/job:ps/task:0"):
        return tf.queue.FIFOQueue(100, tf.int32, shapes=[],
                                  shared_name="lockstep_%d" % task,
                                  name="lockstep_%d" % task)
    self._signal = queue(1 - self._task).enqueue(0)
    self._wait = queue(self._task).dequeue()
    self._options = tf.compat.v1.RunOptions(timeout_in_ms=WAIT_MS)

  def after_create_session(self, session, coord):
    del coord  # Unused.
    if self._task == 0:
      # The model is initialised: the worker may create its session.
      open(self._ready_file, "w").close()
    # Meet once before the first step, so that neither waits out its op
    # timeout while the other is still starting.
    session.run(self._signal)
    session.run(self._wait, options=self._options)

  def before_run(self, run_context):
    if not self._sync and (self._task == 1 or self.records):
      run_context.session.run(self._wait, options=self._options)

  def after_run(self, run_context, run_values):
    session = run_context.session
    if self._sync:
      session.run(self._signal)
      session.run(self._wait, options=self._options)
    values = session.run(self._state)
    self.records.append({k: np.asarray(v).tolist() for k, v in values.items()})
    if not self._sync:
      session.run(self._signal)


def make_model_fn(task, sync, is_chief, recorder, ready_file):

  def model_fn(features, labels, mode):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    w = tf.compat.v1.get_variable(
        "w", initializer=np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
    b = tf.compat.v1.get_variable("b", initializer=np.zeros(2, np.float32))
    pred = overflow_in_backward(tf.matmul(features["x"], w) + b,
                                features["overflow"])
    loss = tf.reduce_mean(tf.square(pred - labels))
    manager = cmp.ExponentialUpdateLossScaleManager(**MANAGER_ARGS)
    opt = cmp.LossScaleOptimizer(
        tf.compat.v1.train.GradientDescentOptimizer(0.1), manager)
    state = dict(zip(("loss_scale", "good_steps", "bad_steps"),
                     manager.variables()),
                 global_step=global_step, w=w, b=b)
    hooks = [Lockstep(task, sync, state, ready_file)]
    recorder.append(hooks[0])
    if sync:
      opt = tf.compat.v1.train.SyncReplicasOptimizer(
          opt, replicas_to_aggregate=2, total_num_replicas=2)
      hooks.append(opt.make_session_run_hook(is_chief, num_tokens=0))
    train_op = opt.minimize(loss, global_step=global_step)
    recorder.append({k: v.device for k, v in state.items()})
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      training_hooks=hooks)

  return model_fn


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--mode", choices=["sync", "async"], required=True)
  parser.add_argument("--model-dir", required=True)
  parser.add_argument("--out", required=True)
  parser.add_argument("--ready-file", required=True)
  parser.add_argument("--max-steps", type=int, default=6)
  args = parser.parse_args(argv)

  config = tf.estimator.RunConfig()
  # Estimator's own device filters (it sets them only when it builds the
  # session config): a session waits for no task beyond its own and the PS.
  session_config = tf.compat.v1.ConfigProto(
      operation_timeout_in_ms=OP_TIMEOUT_MS,
      device_filters=["/job:ps", "/job:%s/task:%d" % (config.task_type,
                                                       config.task_id)])
  config = config.replace(
      model_dir=args.model_dir, session_config=session_config,
      save_checkpoints_steps=1000, save_checkpoints_secs=None,
      save_summary_steps=None, log_step_count_steps=None,
      experimental_max_worker_delay_secs=0)
  task = 0 if config.task_type == "chief" else config.task_id + 1
  if config.task_type == "worker":
    # The worker's session waits for the chief's model, polling only every
    # 30 s; start it once the chief has initialised it.
    deadline = time.monotonic() + WAIT_MS / 1000
    while not os.path.exists(args.ready_file):
      if time.monotonic() > deadline:
        raise TimeoutError("the chief never became ready")
      time.sleep(0.1)

  def input_fn():
    features, labels = zip(*[batch(task, s)
                             for s in range(4 * args.max_steps)])
    return tf.data.Dataset.from_tensor_slices((
        {k: np.stack([f[k] for f in features]) for k in features[0]},
        np.stack(labels)))

  recorder = []
  estimator = tf.estimator.Estimator(
      make_model_fn(task, args.mode == "sync", config.is_chief, recorder,
                    args.ready_file),
      config=config)
  tf.estimator.train_and_evaluate(
      estimator,
      tf.estimator.TrainSpec(input_fn, max_steps=args.max_steps),
      tf.estimator.EvalSpec(input_fn, steps=1))
  result = {"task": task, "records": recorder[0].records,
            "devices": recorder[1]}
  if config.is_chief:
    reader = tf.train.load_checkpoint(args.model_dir)
    result["checkpoint"] = {
        name: reader.get_tensor(name).tolist()
        for name in ("global_step", "loss_scale", "good_steps", "bad_steps",
                     "w", "b")}
  with open(args.out, "w") as f:
    json.dump(result, f)


if __name__ == "__main__":
  main(sys.argv[1:])
