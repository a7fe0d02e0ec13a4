# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The TF2 side: TF 1.15's exponential loss-scale policy as a `LossScale`.

TF 2.x ships `tf.compat.v1.mixed_precision.DynamicLossScale`, but its policy
differs from TF 1.15's `ExponentialUpdateLossScaleManager` (one multiplier for
both directions, a decrease on every bad step, int64 counters). This module
implements the contrib policy exactly, as a complete `LossScale` subclass, so
both the TF1 managers (`loss_scale_manager.py`) and TF2-style code that drives
a `LossScale` directly share one implementation. Whether a step is finite is
decided in `skip_decision.py`.
"""

import contextlib
import threading
from typing import Any, Dict, Optional, Tuple

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import replica_consensus
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import step_inputs

_LossScaleBase = tf.compat.v1.mixed_precision.LossScale


# ---------------------------------------------------------------------------
# The policy.
# ---------------------------------------------------------------------------


def unique_name_as_in_graph(name: str) -> str:
  """The full name graph mode gives `name`, in graph and eager mode alike.

  Call inside `tf.init_scope()`, where variables are created. A graph
  uniquifies the names of its ops (`loss_scale`, `loss_scale_1`, ...); eager
  mode does not, so two objects would both create `loss_scale`, and a
  name-based checkpoint written in graph mode could not restore into them.
  In eager mode this takes the name from the uniquifier of the global
  default graph (the graph eager code would have built), with the current
  eager name scope in front, so eager names follow graph mode's, numbered in
  creation order; `tf.compat.v1.reset_default_graph()` starts them again.

  Args:
    name: A name relative to the current name scope.

  Returns:
    The full name, current name scope included, marked as used.
  """
  graph = _tf_compat.outermost_graph()
  if tf.executing_eagerly():
    prefix = tf.get_current_name_scope()
    return graph.unique_name("/".join(p for p in (prefix, name) if p))
  # A graph puts its current name scope in front itself.
  return graph.unique_name(name)


# The update's lock lives on the `loss_scale` variable it guards, so it lives
# exactly as long as the state does: no table outside the graph keeps the
# graph alive.
_MUTEX_ATTR = "_contrib_mp_update_mutex"
_PYTHON_LOCK_ATTR = "_contrib_mp_update_lock"
# Serializes the creation of those locks (not the updates themselves).
_LOCK_CREATION = threading.Lock()


def _python_lock(loss_scale) -> threading.Lock:
  """The lock eager updates of `loss_scale`'s state hold, created once."""
  lock = getattr(loss_scale, _PYTHON_LOCK_ATTR, None)
  if lock is None:
    with _LOCK_CREATION:
      lock = getattr(loss_scale, _PYTHON_LOCK_ATTR, None)
      if lock is None:
        lock = threading.Lock()
        setattr(loss_scale, _PYTHON_LOCK_ATTR, lock)
  return lock


def _state_mutex(loss_scale):
  """The `MutexV2` resource of `loss_scale`'s state, created once per graph.

  It is built where the variable lives (`tf.init_scope()`: the outermost
  graph, or eager mode for a `tf.function` over eager variables), colocated
  with it, so that under `replica_device_setter` it sits on the variable's
  parameter server. In a graph it is shared by name: every worker's graph of
  one cluster builds the same `loss_scale` variable, and so locks the same
  mutex on the parameter server. A bare `MutexV2`, not a
  `tf.CriticalSection`: that adds a graph collection which cannot be
  serialized, and every `Saver.save` would warn about it.
  """
  mutex = getattr(loss_scale, _MUTEX_ATTR, None)
  if mutex is not None:
    return mutex
  with _LOCK_CREATION, tf.init_scope():
    mutex = getattr(loss_scale, _MUTEX_ATTR, None)
    if mutex is None:
      if tf.executing_eagerly():
        # One resource per state: eager kernels with equal attributes may
        # be shared, so the name must be unique.
        shared_name = "loss_scale_update_lock_{}".format(id(loss_scale))
      else:
        shared_name = loss_scale.op.name + "/update_lock"
      with _colocated_with(loss_scale):
        mutex = tf.raw_ops.MutexV2(shared_name=shared_name,
                                   name="loss_scale_update_lock")
      setattr(loss_scale, _MUTEX_ATTR, mutex)
  return mutex


def _colocated_with(op_or_variable):
  """A context that places the ops built in it with `op_or_variable`.

  `tf.compat.v1.colocate_with` does the same, but it is deprecated, and
  TensorFlow logs so on the first use: every graph-mode run printed it.
  The graph's own `colocate_with` is not; in eager mode (a variable under
  `init_scope`) the device is what places ops.
  """
  if tf.executing_eagerly():
    return tf.device(op_or_variable.device)
  return tf.compat.v1.get_default_graph().colocate_with(op_or_variable)


def _update_is_atomic_as_built() -> bool:
  """True when the ops about to be built need no lock to update atomically.

  * Under a `tf.distribute` strategy, whose `merge_call` runs the update once
    for all replicas.
  * Inside an XLA cluster (`tf.function(jit_compile=True)`): XLA has no
    kernel for a mutex, and it needs none. TF's XLA launch holds the locks
    of every resource variable the compiled function uses while it runs it.
  """
  return (tf.distribute.has_strategy() or
          _tf_compat.in_xla_context())


def _cond_of_ops(pred, true_fn, false_fn):
  """`tf.cond(pred, true_fn, false_fn)` for branches that build only ops.

  Returns an op that completes once the taken branch has. In a plain graph
  it is one Switch on `pred`: each branch's ops take a pivot (an output of
  the Switch) as a control input, so the executor marks the untaken
  branch's ops dead and runs none of them, and a Merge joins the two.
  That is TF 1.15's `tf.cond` at run time, without a Switch for every
  tensor the branches read (`loss_scale_optimizer._skip_unless` does the
  same for the skip). Where that is not allowed
  (`skip_decision.single_switch_allowed`), it is a `tf.cond`.
  """
  if not skip_decision.single_switch_allowed():
    return tf.cond(pred, lambda: tf.group(true_fn()),
                   lambda: tf.group(false_fn()))
  switch_false, switch_true = tf.raw_ops.Switch(data=pred, pred=pred)
  joined = []
  for output, branch in ((switch_false, false_fn), (switch_true, true_fn)):
    pivot = tf.identity(output)
    with tf.control_dependencies([pivot]):
      ops = branch()
    with tf.control_dependencies(ops):
      joined.append(tf.identity(pivot))
  return tf.raw_ops.Merge(inputs=joined).output.op


def exponential_update(is_finite, loss_scale, good_steps, bad_steps,
                       incr_every_n_steps, decr_every_n_nan_or_inf,
                       incr_ratio, decr_ratio):
  """Applies TF 1.15's exponential policy to the three state variables.

  TF 1.15 nested three `tf.cond`s. Here a finite step that does not grow
  the scale (most steps) reads and writes `good_steps` only; any other step
  computes the whole next state with `tf.where` from all three values, each
  read once before any of them is written.

  The read-modify-write is atomic: one step, one update, whoever runs it.
  Steps of one train op run from several threads of one `Session` (Hogwild,
  A3C), two optimizers sharing the state in one `session.run`, several
  threads calling one `tf.function`, or several eager threads: each update
  holds the state's lock from its reads to its writes, so none is lost.
  In a graph or a function the lock is a `MutexV2` of the state, taken once
  the step's flag is known (so it is never held while gradients are
  computed, and nothing else is awaited while it is held: no deadlock). In
  eager mode it is a Python lock.

  Args:
    is_finite: Scalar bool: whether this step's gradients were all finite.
    loss_scale: float32 variable.
    good_steps: int32 variable: consecutive finite steps.
    bad_steps: int32 variable: non-finite steps since the last scale change.
    incr_every_n_steps: Grow after this many consecutive finite steps.
    decr_every_n_nan_or_inf: Shrink after this many non-finite steps.
    incr_ratio: Growth factor.
    decr_ratio: Shrink factor.

  Returns:
    The grouped update op in graph mode or `tf.function`; None in eager mode,
    where the variables have already been updated.
  """
  if tf.executing_eagerly():
    with _python_lock(loss_scale):
      _exponential_update_eagerly(bool(is_finite), loss_scale, good_steps,
                                  bad_steps, incr_every_n_steps,
                                  decr_every_n_nan_or_inf, incr_ratio,
                                  decr_ratio)
    return None
  is_finite = tf.convert_to_tensor(is_finite, dtype=tf.bool)

  def step():
    """Builds one update: reads, then writes, under one lock if any."""
    good = tf.identity(good_steps)
    # Most steps are finite and not due to grow (`good + 1 < n`): they only
    # count themselves. Only those steps skip the rest of the policy, so the
    # other ops (two more reads, the scalar policy, two more writes) do not
    # run on them. The counts are Python ints: `n - 1` costs no op.
    just_count = tf.logical_and(is_finite, good < incr_every_n_steps - 1)

    def count():
      # Under the state's lock (or in one XLA launch, or once per step under
      # a strategy), an add in place is the read and write of `good + 1`.
      return [good_steps.assign_add(1, read_value=False)]

    def policy():
      """TF 1.15's whole policy, from all three values read before any write."""
      good_plus_one = good + 1
      scale = tf.identity(loss_scale)
      bad = tf.identity(bad_steps)
      bad_plus_one = bad + 1
      grow = tf.logical_and(is_finite, good_plus_one >= incr_every_n_steps)
      shrink = tf.logical_and(tf.logical_not(is_finite),
                              bad_plus_one >= decr_every_n_nan_or_inf)
      grown = scale * incr_ratio
      shrunk = tf.maximum(1.0, scale * decr_ratio)
      # Growth that would overflow float32 keeps the scale but still resets
      # both counters, as TF 1.15 did.
      new_scale = tf.where(
          tf.logical_and(grow, tf.math.is_finite(grown)), grown,
          tf.where(shrink, shrunk, scale))
      zero = tf.zeros_like(good)
      new_good = tf.where(tf.logical_and(is_finite, tf.logical_not(grow)),
                          good_plus_one, zero)
      # Bad steps accumulate non-consecutively: a good step does not clear
      # them.
      new_bad = tf.where(
          is_finite, tf.where(grow, zero, bad),
          tf.where(shrink, zero, bad_plus_one))
      with tf.control_dependencies([new_scale, new_good, new_bad]):
        return [
            loss_scale.assign(new_scale, read_value=False),
            good_steps.assign(new_good, read_value=False),
            bad_steps.assign(new_bad, read_value=False),
        ]

    return [_cond_of_ops(just_count, count, policy)]

  if _update_is_atomic_as_built():
    return tf.group(*step(), name="update_loss_scale")
  mutex = _state_mutex(loss_scale)

  def with_the_mutex():
    # The lock tensor cannot cross devices (it cannot be serialized), so
    # both ends of the lock sit with the mutex: on the parameter server, if
    # it is. An eager mutex (captured by a function) has no op to follow.
    if tf.is_symbolic_tensor(mutex):
      return _colocated_with(mutex.op)
    return contextlib.nullcontext()

  with with_the_mutex(), tf.control_dependencies([is_finite]):
    lock = tf.raw_ops.MutexLock(mutex=mutex)
  with tf.control_dependencies([lock]):
    writes = step()
  with with_the_mutex(), tf.control_dependencies(writes):
    released = tf.raw_ops.ConsumeMutexLock(mutex_lock=lock)
  return tf.group(writes, released, name="update_loss_scale")


def _exponential_update_eagerly(is_finite, loss_scale, good_steps, bad_steps,
                                incr_every_n_steps, decr_every_n_nan_or_inf,
                                incr_ratio, decr_ratio):
  """`exponential_update` in eager mode: the same policy, computed in Python.

  Each eager op is a Python dispatch, and the graph form runs about twenty
  of them. Here a finite step that does not grow the scale reads and writes
  `good_steps` only. The arithmetic is float32, as in the graph form, and an
  overflowing growth is detected without a NumPy overflow warning (which
  `np.seterr(over="raise")` would turn into an error).
  """
  if is_finite:
    good = int(good_steps.numpy()) + 1
    if good < incr_every_n_steps:
      good_steps.assign(good, read_value=False)
      return
    with np.errstate(over="ignore"):
      grown = np.float32(loss_scale.numpy()) * np.float32(incr_ratio)
    # Growth that would overflow float32 keeps the scale but still resets
    # both counters, as TF 1.15 did.
    if np.isfinite(grown):
      loss_scale.assign(grown, read_value=False)
    good_steps.assign(0, read_value=False)
    bad_steps.assign(0, read_value=False)
    return
  bad = int(bad_steps.numpy()) + 1
  # Bad steps accumulate non-consecutively: only a scale change resets them.
  if bad < decr_every_n_nan_or_inf:
    bad_steps.assign(bad, read_value=False)
  else:
    shrunk = np.maximum(
        np.float32(1.0),
        np.float32(loss_scale.numpy()) * np.float32(decr_ratio))
    loss_scale.assign(shrunk, read_value=False)
    bad_steps.assign(0, read_value=False)
  good_steps.assign(0, read_value=False)


class _State(object):
  """The three state variables of one graph (or of eager mode)."""

  __slots__ = ("loss_scale", "good_steps", "bad_steps")

  def __init__(self, loss_scale, good_steps, bad_steps):
    self.loss_scale = loss_scale
    self.good_steps = good_steps
    self.bad_steps = bad_steps


class ExponentialUpdateLossScale(_LossScaleBase):
  """TF 1.15's `ExponentialUpdateLossScaleManager` policy, as a TF2 LossScale.

  Every `incr_every_n_steps` consecutive steps with finite gradients the scale
  is multiplied by `incr_ratio` (unless that overflows float32). Every
  `decr_every_n_nan_or_inf` steps with non-finite gradients, consecutive or
  not, it is multiplied by `decr_ratio`, never going below 1. Both step
  counters reset whenever the scale changes (or would have grown).

  Why this exists: `tf.compat.v1.mixed_precision.DynamicLossScale` uses one
  multiplier for both directions and shrinks on every bad step, so it cannot
  reproduce a TF 1.15 loss-scale trajectory. This class can, and it is a
  complete `LossScale`: TF2-style code can call `update(grads)`, serialize it
  with `get_config()`, and checkpoint it with `tf.train.Checkpoint`.

  State: three non-trainable variables named `loss_scale` (float32),
  `good_steps` (int32) and `bad_steps` (int32), of the context's default
  variable kind, in GLOBAL_VARIABLES. They are created in the graph (or
  eager context) current at construction, and again, lazily, in any other
  graph the object is used in: Estimator builds a new graph per `train()`.

  Example (TF1 graph mode):

  ```python
  loss_scale = ExponentialUpdateLossScale(2**15, incr_every_n_steps=1000)
  scaled_loss = loss * loss_scale()
  grads = [g / loss_scale() for g in tf.gradients(scaled_loss, var_list)]
  update_op, should_apply = loss_scale.update(grads)
  ```
  """

  def __init__(self,
               init_loss_scale: float,
               incr_every_n_steps: int,
               decr_every_n_nan_or_inf: int = 2,
               incr_ratio: float = 2,
               decr_ratio: float = 0.8):
    """Creates the loss scale and its state in the current graph.

    Args:
      init_loss_scale: The starting scale: a Python or NumPy number whose
        float32 value is in [2**-126, float32 max] (the variable is float32,
        and TensorFlow flushes smaller, subnormal, values to zero, so the
        scale would become 0 on its first growth).
      incr_every_n_steps: Grow the scale after this many consecutive steps
        with finite gradients; a Python or NumPy int in [1, 2**31 - 1]: the
        counters are int32 (TF 1.15 failed at graph construction beyond).
      decr_every_n_nan_or_inf: Shrink the scale after this many steps with
        NaN or Inf gradients (not necessarily consecutive); a Python or
        NumPy int in [1, 2**31 - 1].
      incr_ratio: The growth factor, a number in [1, float32 max] as a
        float32.
      decr_ratio: The shrink factor, a number in [2**-126, 1] as a float32.

    Raises:
      TypeError: If a count is not a Python or NumPy integer, or a scale or
        ratio is not a Python or NumPy real number (bools, strings, arrays
        and tensors included).
      ValueError: If an argument is outside the range given above (NaN,
        infinities and numbers float32 cannot hold included).
    """
    super().__init__()
    check = _validation
    self._init_loss_scale = check.check_float32(
        "init_loss_scale", init_loss_scale, check.FLOAT32_TINY,
        hint="Pass a positive number such as 2**15.")
    # The counters are int32, as in TF 1.15 (whose graph construction failed
    # on larger counts): a count they cannot reach would mean "never".
    self._incr_every_n_steps = check.check_int(
        "incr_every_n_steps", incr_every_n_steps,
        hint=("Pass a count in that range; to never grow the scale, use "
              "FixedLossScaleManager."))
    self._decr_every_n_nan_or_inf = check.check_int(
        "decr_every_n_nan_or_inf", decr_every_n_nan_or_inf)
    self._incr_ratio = check.check_float32("incr_ratio", incr_ratio, 1.0)
    self._decr_ratio = check.check_float32(
        "decr_ratio", decr_ratio, check.FLOAT32_TINY, maximum=1.0,
        hint="Pass a factor such as 0.5 (TF 1.15's default is 0.8).")
    self._states: Dict[Optional[str], _State] = {}
    self.state()

  @property
  def init_loss_scale(self) -> float:
    return self._init_loss_scale

  @property
  def incr_every_n_steps(self) -> int:
    return self._incr_every_n_steps

  @property
  def decr_every_n_nan_or_inf(self) -> int:
    return self._decr_every_n_nan_or_inf

  @property
  def incr_ratio(self) -> float:
    return self._incr_ratio

  @property
  def decr_ratio(self) -> float:
    return self._decr_ratio

  def state(self) -> _State:
    """The state variables of the current graph, created on first use.

    Creation is lifted out of any `tf.function` body or control-flow branch
    (`tf.init_scope`), into the outermost graph or eager context, keeping the
    current name scope.
    """
    if tf.executing_eagerly():
      # Nothing to lift out of: an eager step looks its state up several
      # times, and `tf.init_scope` is a context manager to enter each time.
      state = self._states.get(_tf_compat.graph_key())
      if state is not None:
        return state
    with tf.init_scope():
      key = _tf_compat.graph_key()
      state = self._states.get(key)
      if state is None:
        state = self._create_state(key)
        self._states[key] = state
    return state

  def _create_state(self, key) -> _State:

    # Graph mode uniquifies the names itself; eager mode is given the same.
    prefix = tf.get_current_name_scope()
    eager = tf.executing_eagerly()

    def make(name, value, dtype):
      variable_name = name
      if eager:
        variable_name = unique_name_as_in_graph(name)
        if prefix:
          variable_name = variable_name[len(prefix) + 1:]
      variable = tf.compat.v1.Variable(
          tf.constant(value, dtype=dtype),
          name=variable_name,
          trainable=False,
          dtype=dtype,
          # Under a tf.distribute strategy the variables are mirrored; every
          # replica agrees on the flag first, so the first replica's value
          # is everyone's.
          synchronization=tf.VariableSynchronization.ON_WRITE,
          aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
      _tf_compat.register_loss_scale_weight(self, name, variable, key)
      return variable

    return _State(
        make("loss_scale", self._init_loss_scale, tf.float32),
        make("good_steps", 0, tf.int32),
        make("bad_steps", 0, tf.int32))

  def variables(self):
    """The state variables of the current graph: scale, good, bad steps."""
    state = self.state()
    return [state.loss_scale, state.good_steps, state.bad_steps]

  def __call__(self) -> tf.Tensor:
    """Returns the current loss scale as a scalar float32 tensor."""
    return tf.convert_to_tensor(self.state().loss_scale)

  def update_from_finite(self, is_finite):
    """Updates the state from this step's finiteness flag.

    Args:
      is_finite: A Python bool or scalar bool tensor.

    Returns:
      The update op in graph mode or `tf.function`; None in eager mode.

    Raises:
      TypeError: If `is_finite` is not a bool or a scalar bool tensor.
    """
    is_finite = step_inputs.finite_flag(
        is_finite, "ExponentialUpdateLossScale.update_from_finite",
        "is_finite")
    state = self.state()
    return replica_consensus.run_once_across_replicas(
        lambda flag: exponential_update(
            flag, state.loss_scale, state.good_steps, state.bad_steps,
            self._incr_every_n_steps, self._decr_every_n_nan_or_inf,
            self._incr_ratio, self._decr_ratio), is_finite)

  def update(self, grads) -> Tuple[Optional[tf.Operation], Any]:
    """Updates the loss scale from (unscaled) gradients.

    Args:
      grads: A nested structure of gradients: tensors, IndexedSlices
        (checked through their values), or Python or NumPy numbers and
        arrays (converted, as TF's own `LossScale.update` does). None entries
        are ignored. Under a
        `tf.distribute` strategy, call it in the cross-replica context with
        per-replica gradients, or in a replica context: either way every
        replica must be finite for the step to count as finite.

    Returns:
      `(update_op, should_apply_gradients)`: the op is None in eager mode;
      `should_apply_gradients` is a scalar bool tensor.

    Raises:
      TypeError: If a gradient is neither None, a tensor, IndexedSlices, nor
        convertible to a tensor.
      ValueError: If `grads` hold per-replica values but no strategy is in
        scope.
    """
    grads = tf.nest.flatten(grads)
    if not tf.distribute.has_strategy() and any(
        isinstance(g, tf.distribute.DistributedValues) for g in grads):
      raise ValueError(
          "`grads` passed to ExponentialUpdateLossScale.update() hold "
          "per-replica values, but no tf.distribute strategy is in scope, so "
          "the replicas cannot agree on whether the step was finite. Call "
          "update() inside `with strategy.scope():`.")
    grads = [
        step_inputs.as_gradient(g, "grads[{}]".format(i))
        for i, g in enumerate(grads)
    ]
    if (tf.distribute.has_strategy() and
        tf.distribute.in_cross_replica_context()):
      is_finite = replica_consensus.cross_replica_all_finite(
          tf.distribute.get_strategy(), grads)
    else:
      is_finite = replica_consensus.replica_consensus(
          skip_decision.all_finite(grads))
    return self.update_from_finite(is_finite), is_finite

  def get_config(self) -> Dict[str, Any]:
    return {
        "init_loss_scale": self._init_loss_scale,
        "incr_every_n_steps": self._incr_every_n_steps,
        "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
        "incr_ratio": self._incr_ratio,
        "decr_ratio": self._decr_ratio,
    }

  def __repr__(self):
    return ("ExponentialUpdateLossScale(init_loss_scale={}, "
            "incr_every_n_steps={}, decr_every_n_nan_or_inf={}, "
            "incr_ratio={}, decr_ratio={})").format(
                self._init_loss_scale, self._incr_every_n_steps,
                self._decr_every_n_nan_or_inf, self._incr_ratio,
                self._decr_ratio)

  # -- TF's and Keras' own consumers ------------------------------------------

  @property
  def multiplier(self):
    # Keras 2 converts a DynamicLossScale (which this class is registered as,
    # below) into its own LossScaleOptimizer by reading `multiplier`. One
    # multiplier for both directions cannot follow this policy, so refuse
    # there; `hasattr(x, "multiplier")` stays False.
    raise AttributeError(
        "ExponentialUpdateLossScale has no `multiplier`: Keras' "
        "LossScaleOptimizer grows and shrinks the scale by one multiplier and "
        "cannot follow the contrib policy. To keep the policy, wrap a "
        "tf.compat.v1.train optimizer in "
        "`contrib_mixed_precision.LossScaleOptimizer(opt, "
        "ExponentialUpdateLossScaleManager(...))`; for a Keras optimizer, use "
        "`tf.keras.mixed_precision.LossScaleOptimizer` and its own dynamic "
        "policy.")


# TF's `MixedPrecisionLossScaleOptimizer` (also built by
# `enable_mixed_precision_graph_rewrite`) drives a scale through
# `update(grads)`, and skips non-finite steps, only when it is an instance of
# `DynamicLossScale`; any other LossScale it treats as a fixed scale. This
# class implements that interface with the contrib policy, so register it as
# a virtual subclass (public `abc` API: LossScale's metaclass is ABCMeta).
tf.compat.v1.mixed_precision.DynamicLossScale.register(
    ExponentialUpdateLossScale)
