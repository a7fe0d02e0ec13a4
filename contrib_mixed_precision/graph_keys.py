# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The contract between `LossScaleOptimizer` and whatever observes it.

The optimizer files what each graph-mode step produced in these graph
collections; `LossScaleHook` (or user code) reads them. Neither side imports
the other: this module is all they share.
"""


class GraphKeys(object):
  """Graph collection keys under which `LossScaleOptimizer` files its tensors.

  Each `apply_gradients` call built in graph mode (outside `tf.function` and
  outside a TF1 `tf.cond`/`tf.while_loop` body, whose tensors cannot be
  fetched from outside) adds one entry to each, in the same order:

  * `FINITE_GRADS`: the scalar bool tensor that decides the step: True when
    every gradient was finite and the inner optimizer's update was applied.
  * `LOSS_SCALE`: the loss scale used for the step, a scalar float32 tensor.
    It is a copy taken before the manager updates the scale, so fetching it
    with the train op gives this step's scale, not the next one's.
  * `MIN_LOSS_SCALE`: a scalar float32 constant, the lowest scale the
    manager can reach: the scale itself for a `FixedLossScaleManager`, 1
    otherwise (TF 1.15's floor, and TF2's `DynamicLossScale`'s). A step
    skipped at this scale cannot be rescued by lowering it.
  * `STEP_OPS`: the op `apply_gradients` returned. A `session.run` executes
    this optimizer's step exactly when this op is among the ops it runs, and
    only then are the two tensors above computed anyway: an observer that
    fetches them in any other run would run the forward and backward pass
    (and pull a batch from the input pipeline) itself.

  An `apply_gradients` built where its tensors cannot be fetched from
  outside (in a TF1 `tf.cond` or `tf.while_loop` body, in a control-flow-v2
  `tf.cond` branch, or in a `tf.function`, as gradient accumulation does)
  files nothing above. It adds one string to the outermost graph's
  collection instead, so an observer can say what it cannot see:

  * `UNOBSERVED_STEPS`: a description of the step and where it was built.

  Nothing here creates a variable, so checkpoints are unchanged.
  """
  FINITE_GRADS = "contrib_mixed_precision_finite_grads"
  LOSS_SCALE = "contrib_mixed_precision_loss_scale"
  MIN_LOSS_SCALE = "contrib_mixed_precision_min_loss_scale"
  STEP_OPS = "contrib_mixed_precision_step_ops"
  UNOBSERVED_STEPS = "contrib_mixed_precision_unobserved_steps"
