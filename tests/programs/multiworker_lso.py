# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""One worker of a 2-worker MultiWorkerMirroredStrategy run, for the tests.

A TF2 custom training loop: a `tf.function` step calls `strategy.run`, and
each replica computes gradients with `LossScaleOptimizer` around a TF1
`MomentumOptimizer` and applies them. On the steps listed in
`--poison-steps`, only the replica with global id 1 (on worker 1) feeds a
NaN into its loss, so only its gradients are non-finite.

TF_CONFIG must be set by the caller. Writes a JSON record to `--out`: for
each step, the finite flag the optimizer decided, the loss scale and
counters after the step, and the hex bytes of every model variable.

Usage: TF_CONFIG=... python multiworker_lso.py --out FILE --steps N
         --poison-steps 2,3
"""

import argparse
import json
import sys

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--steps", type=int, default=6)
  parser.add_argument("--poison-steps", default="",
                      help="comma-separated 0-based steps")
  parser.add_argument("--timeout", type=float, default=60.0,
                      help="collective timeout in seconds")
  args = parser.parse_args(argv)
  poison = set(int(s) for s in args.poison_steps.split(",") if s)

  strategy = tf.distribute.MultiWorkerMirroredStrategy(
      communication_options=tf.distribute.experimental.CommunicationOptions(
          timeout_seconds=args.timeout))
  task_id = strategy.cluster_resolver.task_id

  with strategy.scope():
    # Deterministic, worker-independent initial values: MWMS also broadcasts
    # worker 0's initial values, but the test compares bytes either way.
    w = tf.Variable(np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(
        np.float32), name="w")
    b = tf.Variable(np.zeros([2], np.float32), name="b")
    manager = cmp.ExponentialUpdateLossScaleManager(
        init_loss_scale=2.0**8, incr_every_n_steps=2,
        decr_every_n_nan_or_inf=2, incr_ratio=2, decr_ratio=0.5)
    opt = cmp.LossScaleOptimizer(
        tf.compat.v1.train.MomentumOptimizer(0.1, momentum=0.9), manager)

  # Worker-dependent data: the replicas' gradients differ, so the all-reduce
  # really matters.
  x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0 +
                  task_id)
  y = tf.constant(np.ones([4, 2], np.float32))

  @tf.function
  def train_step(poisoned):

    def replica_fn(poisoned):
      replica_id = tf.distribute.get_replica_context().replica_id_in_sync_group
      bad = tf.logical_and(poisoned, tf.equal(replica_id, 1))
      # A factor, not a term: an added NaN constant has a zero gradient.
      factor = tf.where(bad, tf.constant(float("nan")), 1.0)

      def loss_fn():
        pred = tf.matmul(x, w) + b
        # TF2 strategies sum replica gradients (a TF1 optimizer scales the
        # loss by 1/replicas only under Estimator): average them, the TF2 way.
        return (tf.reduce_mean(tf.square(pred - y)) * factor /
                strategy.num_replicas_in_sync)

      grads_and_vars = opt.compute_gradients(loss_fn, var_list=[w, b])
      train_op = opt.apply_gradients(grads_and_vars)
      with tf.control_dependencies([train_op] if train_op is not None else []):
        return tf.identity(opt.finite_grads)

    return strategy.run(replica_fn, args=(poisoned,))

  records = []
  for step in range(args.steps):
    finite = train_step(tf.constant(step in poison))
    finite = strategy.experimental_local_results(finite)[0]
    scale_vars = manager.variables()
    records.append({
        "step": step,
        "finite": bool(finite.numpy()),
        "loss_scale": float(scale_vars[0].numpy()),
        "good_steps": int(scale_vars[1].numpy()),
        "bad_steps": int(scale_vars[2].numpy()),
        "weights": {v.name: v.numpy().tobytes().hex() for v in (w, b)},
        "slots": {v.name: opt.get_slot(v, "momentum").numpy().tobytes().hex()
                  for v in (w, b)},
    })
  with open(args.out, "w") as f:
    json.dump({"task_id": task_id, "tf_version": tf.__version__,
               "num_replicas": strategy.num_replicas_in_sync,
               "records": records}, f)
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
