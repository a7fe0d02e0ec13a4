# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""An independent pure-Python model of TF 1.15's exponential policy.

Written from TF 1.15's description as plain branches over NumPy float32
scalars (TF 1.15 multiplied a float32 variable by Python ratios), so tests
can compare the package's branch-free TensorFlow implementation with it.
Also the NumPy reference training of the multi-process tests. No TensorFlow
here.
"""

import numpy as np


def exponential_policy(flags, init_loss_scale, incr_every_n_steps,
                       decr_every_n_nan_or_inf=2, incr_ratio=2,
                       decr_ratio=0.8, good=0, bad=0):
  """Returns [(scale, good_steps, bad_steps)] after each flag of `flags`."""
  scale = np.float32(init_loss_scale)
  out = []
  with np.errstate(over="ignore"):
    for finite in flags:
      if finite:
        if good + 1 >= incr_every_n_steps:
          grown = np.float32(scale * np.float32(incr_ratio))
          if np.isfinite(grown):
            scale = grown
          good, bad = 0, 0
        else:
          good += 1
      else:
        if bad + 1 >= decr_every_n_nan_or_inf:
          scale = max(np.float32(1.0),
                      np.float32(scale * np.float32(decr_ratio)))
          good, bad = 0, 0
        else:
          bad += 1
          good = 0
      out.append((float(scale), good, bad))
  return out


def dynamic_policy(flags, initial_loss_scale, increment_period, multiplier):
  """TF2's DynamicLossScale policy, for checking the adapter follows it."""
  scale = np.float32(initial_loss_scale)
  good = 0
  out = []
  for finite in flags:
    if finite:
      if good + 1 >= increment_period:
        grown = np.float32(scale * np.float32(multiplier))
        if np.isfinite(grown):
          scale = grown
        good = 0
      else:
        good += 1
    else:
      scale = max(np.float32(1.0), np.float32(scale / np.float32(multiplier)))
      good = 0
    out.append(float(scale))
  return out


def data_parallel_momentum_sgd(finite_flags, num_workers):
  """Weights after each step of the Horovod and multi-worker programs.

  Momentum SGD (lr 0.1, momentum 0.9) on the workers' mean gradient of a
  3x2 linear model with bias and squared error, worker k's batch being
  `arange(12).reshape(4, 3) / 10 + k` with all-ones targets, starting from
  `linspace(-1, 1, 6)` weights and zero bias. A step whose flag is False is
  skipped entirely.

  Returns:
    [(w, b)] after each flag, as float64 NumPy arrays.
  """
  w = np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(np.float64)
  b = np.zeros([2])
  acc_w, acc_b = np.zeros_like(w), np.zeros_like(b)
  y = np.ones([4, 2])
  out = []
  for finite in finite_flags:
    if finite:
      grads_w, grads_b = [], []
      for worker in range(num_workers):
        x = np.arange(12, dtype=np.float64).reshape(4, 3) / 10.0 + worker
        residual = x @ w + b - y
        grads_w.append(2.0 / residual.size * x.T @ residual)
        grads_b.append(2.0 / residual.size * residual.sum(axis=0))
      acc_w = 0.9 * acc_w + np.mean(grads_w, axis=0)
      acc_b = 0.9 * acc_b + np.mean(grads_b, axis=0)
      w = w - 0.1 * acc_w
      b = b - 0.1 * acc_b
    out.append((w.copy(), b.copy()))
  return out


def parameter_server_sgd(sync, skips_nan, steps, num_workers=2,
                         nan_at=(1, 2), embedding=False):
  """Every update of the parameter-server programs, replayed in NumPy.

  Plain SGD (lr 0.1) on a 3x2 linear model with bias and squared error,
  starting from `linspace(-1, 1, 6)` weights and zero bias. Worker k's batch
  at step s is `(arange(12).reshape(4, 3) / 20 + k / 2) * (1 + s / 10)`
  with all-ones targets; worker `nan_at[0]`'s batch at step `nan_at[1]` has
  a NaN in its first element.

  Args:
    sync: True for synchronous training: one update per step, of the
      workers' mean gradient, and `global_step` moves on by one every step,
      applied or skipped. False for asynchronous training: worker 0 applies
      its own gradient, then worker 1, and `global_step` counts applied
      updates only.
    skips_nan: Whether a non-finite update is skipped (loss scaling) rather
      than applied (no loss scaling: the NaN reaches the model).
    steps: How many steps.
    num_workers: How many workers.
    nan_at: (worker, step) of the NaN batch.
    embedding: Whether the model adds the rows of a 6x2 embedding, starting
      at `linspace(-0.5, 0.5, 12)`, at ids `[s % 6, s % 6, (s + 1) % 6, 5]`
      (both workers alike) to its prediction; its gradient adds each
      example's residual gradient to its id's row (twice for the repeated
      id).

  Returns:
    One dict per update: `step`, `worker` (None in sync mode), `finite`,
    `global_step`, `w`, `b` (and `emb`) after it (float64 arrays).
  """
  w = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
  b = np.zeros([2])
  emb = np.linspace(-0.5, 0.5, 12).reshape(6, 2)
  y = np.ones([4, 2])
  global_step = 0
  out = []

  def grads(worker, step):
    x = (np.arange(12, dtype=np.float64).reshape(4, 3) / 20 + worker / 2) * (
        1 + step / 10)
    if (worker, step) == tuple(nan_at):
      x[0, 0] = np.nan
    ids = [step % 6, step % 6, (step + 1) % 6, 5]
    residual = x @ w + b - y
    if embedding:
      residual = residual + emb[ids]
    g_emb = np.zeros_like(emb)
    np.add.at(g_emb, ids, 2.0 / residual.size * residual)
    return (2.0 / residual.size * x.T @ residual,
            2.0 / residual.size * residual.sum(axis=0), g_emb)

  for step in range(steps):
    if sync:
      per_worker = [grads(k, step) for k in range(num_workers)]
      # Both workers touch the same rows: the sparse accumulator's
      # per-row mean is the mean.
      updates = [(None,) + tuple(np.mean([g[i] for g in per_worker], axis=0)
                                 for i in range(3))]
    else:
      # Each worker reads the weights its predecessor just updated.
      updates = ((k, None, None, None) for k in range(num_workers))
    for worker, g_w, g_b, g_emb in updates:
      if worker is not None:
        g_w, g_b, g_emb = grads(worker, step)
      finite = bool(np.all(np.isfinite(g_w)) and np.all(np.isfinite(g_b)) and
                    (not embedding or np.all(np.isfinite(g_emb))))
      if finite or not skips_nan:
        w = w - 0.1 * g_w
        b = b - 0.1 * g_b
        if embedding:
          emb = emb - 0.1 * g_emb
      if finite or not skips_nan or sync:
        global_step += 1
      record = {"step": step, "worker": worker, "finite": finite,
                "global_step": global_step, "w": w.copy(), "b": b.copy()}
      if embedding:
        record["emb"] = emb.copy()
      out.append(record)
  return out
