# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Under `tf.distribute`: one finiteness flag for all replicas, acted on once.

A step is applied only if every replica's gradients are finite, and its
loss-scale update runs once per step, not once per replica. In a replica
context the replicas agree on their flags (`replica_consensus`); in the
cross-replica context each replica's gradients are checked and the flags
reduced (`cross_replica_all_finite`). `run_once_across_replicas` runs a
state update once, with the agreed flag. Outside a strategy each is the
plain flag or call.
"""

import tensorflow as tf

from contrib_mixed_precision import skip_decision


def in_replica_context_of_strategy() -> bool:
  """True in a replica context of a non-default `tf.distribute` strategy."""
  return (tf.distribute.has_strategy() and
          tf.distribute.in_cross_replica_context() is False and
          tf.distribute.get_replica_context() is not None)


def replica_consensus(is_finite: tf.Tensor) -> tf.Tensor:
  """In a replica context: True only if `is_finite` holds on every replica.

  Outside a strategy (or with one replica) it returns `is_finite` unchanged.
  """
  if not in_replica_context_of_strategy():
    return is_finite
  ctx = tf.distribute.get_replica_context()
  if ctx.num_replicas_in_sync == 1:
    return is_finite

  # A merge_call and `strategy.reduce`, not `ctx.all_reduce`: in a TF1
  # graph (Estimator's `train_distribute`) the replica-context all-reduce of
  # the flag never completes, and its custom gradient walks back to the other
  # replicas' mirrored variables, which it fails to find by name
  # (`loss_scale/replica_1`). Booleans cannot be reduced, so this sums a
  # float flag instead.
  def merge_fn(strategy, flag):
    finite_count = strategy.reduce(tf.distribute.ReduceOp.SUM, flag,
                                   axis=None)
    return tf.greater_equal(finite_count, strategy.num_replicas_in_sync - 0.5)

  return ctx.merge_call(
      merge_fn, args=(tf.stop_gradient(tf.cast(is_finite, tf.float32)),))


def cross_replica_all_finite(strategy, grads) -> tf.Tensor:
  """In the cross-replica context: True only if every replica's grads are.

  Args:
    strategy: The current `tf.distribute.Strategy`.
    grads: Per-replica gradients (None entries ignored).
  """
  finite_flags = strategy.extended.call_for_each_replica(
      lambda *g: tf.cast(skip_decision.all_finite(g), tf.float32),
      args=tuple(grads))
  finite_count = strategy.reduce(tf.distribute.ReduceOp.SUM, finite_flags,
                                 axis=None)
  return tf.greater_equal(finite_count, strategy.num_replicas_in_sync - 0.5)


def run_once_across_replicas(fn, is_finite):
  """Runs `fn(is_finite)` once per step, whatever the distribution context.

  In a replica context of a strategy, each replica calls this; the flag is
  first agreed on across replicas and `fn` then runs once, in the
  cross-replica context (where assigning a mirrored or a plain variable
  updates it once, not once per replica).
  """
  if not in_replica_context_of_strategy():
    return fn(is_finite)
  agreed = replica_consensus(is_finite)

  def merge_fn(strategy, flag):
    return fn(strategy.experimental_local_results(flag)[0])

  return tf.distribute.get_replica_context().merge_call(
      merge_fn, args=(agreed,))
