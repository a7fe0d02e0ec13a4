# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Parameter-server training with loss scaling on a local TF1 cluster.

One PS and two workers, each a `tf.distribute.Server` in this process on a
loopback port the OS picked; each worker trains in its own thread with its
own graph (between-graph replication), as separate machines would.
`replica_device_setter` puts the variables (a linear model and an
embedding), the loss-scale state included, on the PS. Worker 0 is the
chief. Worker 1's batch is NaN on its third step (step 2).

`--order sync` trains with `SyncReplicasOptimizer(LossScaleOptimizer(SGD))`;
`--order async` with `LossScaleOptimizer(SGD)`, each worker applying its own
gradients. `--no-loss-scale` leaves `LossScaleOptimizer` out (the controls).

The workers run in lockstep, so every run is deterministic: in sync mode
both compute step k and wait for each other before step k+1; in async mode
worker 0 applies step k, then worker 1. After each update the chief reads
the state from the PS and records it. `--runs` trains several clusters one
after another, each fresh. With `--train-dir` the chief checkpoints every
`--save-steps` global steps and restores from the latest checkpoint on
start; `--kill-after-step K` SIGKILLs the process (PS, chief and all) after
step K, as a crashed chief machine would.

Writes one JSON object to `--out`, {run name: run record}.

Usage: python ps_train.py --out FILE [--runs sync,async,sync-unscaled]
         [--steps 8] [--train-dir DIR --save-steps 2 --kill-after-step K]
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading

import numpy as np
import tensorflow as tf

import contrib_mixed_precision as cmp


NUM_WORKERS = 2
NAN_WORKER, NAN_STEP = 1, 2
MANAGER_ARGS = dict(init_loss_scale=2**8, incr_every_n_steps=3,
                    decr_every_n_nan_or_inf=1, incr_ratio=2, decr_ratio=0.5)
# A stalled run fails here instead of hanging (old code stalled the tokens).
OP_TIMEOUT_MS = 30000


def batch(task, step):
  """Worker `task`'s batch at `step`: NaN for worker 1 at step 2.

  Returns the features, the embedding ids (the same for both workers, one
  of them twice) and the targets.
  """
  x = (np.arange(12, dtype=np.float32).reshape(4, 3) / 20 + task / 2) * (
      1 + step / 10)
  if (task, step) == (NAN_WORKER, NAN_STEP):
    x[0, 0] = np.nan
  ids = np.array([step % 6, step % 6, (step + 1) % 6, 5], np.int32)
  return x.astype(np.float32), ids, np.ones([4, 2], np.float32)


def free_ports(n):
  sockets = [socket.socket() for _ in range(n)]
  for s in sockets:
    s.bind(("127.0.0.1", 0))
  ports = [s.getsockname()[1] for s in sockets]
  for s in sockets:
    s.close()
  return ports


def build(task, cluster, order, loss_scaling):
  """Builds worker `task`'s graph; returns what its training loop needs."""
  with tf.compat.v1.device(tf.compat.v1.train.replica_device_setter(
      worker_device="/job:worker/task:%d" % task, cluster=cluster)):
    global_step = tf.compat.v1.train.get_or_create_global_step()
    x = tf.compat.v1.placeholder(tf.float32, [4, 3], name="x")
    ids = tf.compat.v1.placeholder(tf.int32, [4], name="ids")
    y = tf.compat.v1.placeholder(tf.float32, [4, 2], name="y")
    w = tf.compat.v1.get_variable(
        "w", initializer=np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
    b = tf.compat.v1.get_variable("b", initializer=np.zeros(2, np.float32))
    # An embedding: its gradient is IndexedSlices (a sparse accumulator in
    # SyncReplicasOptimizer).
    emb = tf.compat.v1.get_variable(
        "emb",
        initializer=np.linspace(-0.5, 0.5, 12, dtype=np.float32).reshape(6, 2))
    loss = tf.reduce_mean(tf.square(
        tf.matmul(x, w) + b + tf.gather(emb, ids) - y))

    opt = tf.compat.v1.train.GradientDescentOptimizer(0.1)
    manager = None
    if loss_scaling:
      manager = cmp.ExponentialUpdateLossScaleManager(**MANAGER_ARGS)
      opt = cmp.LossScaleOptimizer(opt, manager)
    hooks = []
    if order == "sync":
      opt = tf.compat.v1.train.SyncReplicasOptimizer(
          opt, replicas_to_aggregate=NUM_WORKERS,
          total_num_replicas=NUM_WORKERS)
      # No initial tokens: no worker can run ahead of the first aggregate.
      hooks.append(opt.make_session_run_hook(is_chief=task == 0,
                                             num_tokens=0))
    train_op = opt.minimize(loss, global_step=global_step)
  state = {"global_step": global_step, "w": w, "b": b, "emb": emb}
  if manager is not None:
    state.update(zip(("loss_scale", "good_steps", "bad_steps"),
                     manager.variables()))
  return train_op, (x, ids, y), hooks, state


def run_worker(task, cluster, server, args, lockstep, chief_ready, out):
  """Trains worker `task` for `args.steps` steps; the chief records `out`."""
  is_chief = task == 0
  with tf.Graph().as_default():
    train_op, inputs, hooks, state = build(task, cluster, args.order,
                                           args.loss_scaling)
    # Where the update's lock ended up (the graph's MutexV2 ops).
    mutexes = [op.device for op in tf.compat.v1.get_default_graph()
               .get_operations() if op.type == "MutexV2"]
    config = tf.compat.v1.ConfigProto(
        operation_timeout_in_ms=OP_TIMEOUT_MS,
        device_filters=["/job:ps", "/job:worker/task:%d" % task])
    if not is_chief:
      chief_ready.wait()  # The chief initialises (or restores) the model.
    with tf.compat.v1.train.MonitoredTrainingSession(
        master=server.target, is_chief=is_chief,
        checkpoint_dir=args.train_dir if is_chief else None,
        save_checkpoint_steps=args.save_steps, save_checkpoint_secs=None,
        save_summaries_steps=None, save_summaries_secs=None,
        log_step_count_steps=None, stop_grace_period_secs=1, config=config,
        hooks=hooks) as sess:
      # Observation only: a plain session that reads the PS.
      reader = tf.compat.v1.Session(server.target, config=config)
      if is_chief:
        out["first_step"] = int(reader.run(state["global_step"]))
        out["devices"] = {k: v.device for k, v in state.items()}
        out["mutex_devices"] = mutexes
        chief_ready.set()
      first_step = out["first_step"]
      turns = [None] if args.order == "sync" else range(NUM_WORKERS)
      for step in range(first_step, args.steps):
        for turn in turns:
          if turn in (None, task):
            feed = dict(zip(inputs, batch(task, step)))
            sess.run(train_op, feed_dict=feed)
          lockstep.wait()
          if is_chief:
            values = reader.run(state)
            out["records"].append(dict(
                step=step, worker=turn,
                **{k: np.asarray(v).tolist() for k, v in values.items()}))
          lockstep.wait()
        if step == args.kill_after_step:
          os.kill(os.getpid(), signal.SIGKILL)


def train(args):
  """Trains one fresh local cluster; returns the chief's record."""
  for attempt in range(3):
    ps_port, *worker_ports = free_ports(1 + NUM_WORKERS)
    cluster = tf.train.ClusterSpec({
        "ps": ["127.0.0.1:%d" % ps_port],
        "worker": ["127.0.0.1:%d" % p for p in worker_ports]})
    try:
      tf.distribute.Server(cluster, job_name="ps", task_index=0)
      servers = [tf.distribute.Server(cluster, job_name="worker",
                                      task_index=i)
                 for i in range(NUM_WORKERS)]
      break
    except tf.errors.UnknownError:
      # Another process took a port between the pick and the bind.
      if attempt == 2:
        raise
  # A failed worker breaks the barrier, so its peer fails too, not hangs.
  lockstep = threading.Barrier(NUM_WORKERS, timeout=OP_TIMEOUT_MS / 1000)
  chief_ready = threading.Event()
  out = {"records": [], "errors": []}

  def target(task):
    try:
      run_worker(task, cluster, servers[task], args, lockstep, chief_ready,
                 out)
    except Exception as e:  # pylint: disable=broad-except
      out["errors"].append("worker %d: %s: %s" % (task, type(e).__name__, e))
      lockstep.abort()
      chief_ready.set()

  threads = [threading.Thread(target=target, args=(i,), daemon=True)
             for i in range(NUM_WORKERS)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(timeout=4 * OP_TIMEOUT_MS / 1000)
    if t.is_alive():
      out["errors"].append("a worker thread did not finish")
  return out


def main(argv):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--runs", default="sync",
                      help="comma-separated: sync, async, sync-unscaled, "
                      "async-unscaled")
  parser.add_argument("--steps", type=int, default=8)
  parser.add_argument("--train-dir", default=None)
  parser.add_argument("--save-steps", type=int, default=None)
  parser.add_argument("--kill-after-step", type=int, default=-1)
  args = parser.parse_args(argv)

  tf.compat.v1.disable_v2_behavior()
  results = {}
  for run in args.runs.split(","):
    args.order, _, unscaled = run.partition("-")
    args.loss_scaling = not unscaled
    results[run] = train(args)
  with open(args.out, "w") as f:
    json.dump(results, f)
  # In-process servers cannot be shut down; do not wait for them.
  sys.stdout.flush()
  os._exit(0)  # pylint: disable=protected-access


if __name__ == "__main__":
  main(sys.argv[1:])
