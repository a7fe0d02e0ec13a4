# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""The TF2 side: TF 1.15's exponential loss-scale policy as a `LossScale`.

TF 2.x ships `tf.compat.v1.mixed_precision.DynamicLossScale`, but its policy
differs from TF 1.15's `ExponentialUpdateLossScaleManager` (one multiplier for
both directions, a decrease on every bad step, int64 counters). This module
implements the contrib policy exactly, as a complete `LossScale` subclass, so
both the TF1 managers (`loss_scale_manager.py`) and TF2-style code that drives
a `LossScale` directly share one implementation. Whether a step is finite is
decided in `skip_decision.py`.
"""

import weakref
from typing import Any, Dict, Optional, Tuple

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import skip_decision

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


def _needs_update_lock() -> bool:
  """True when this update may run concurrently with another of its state.

  (Whether it then takes the lock depends on whether the state is shared:
  see `_SharedStateLock`.)

  That is whenever the ops end up in a graph that a `session.run` executes
  in dataflow order: a TF1-style graph, a TF1 `tf.cond` or `tf.while_loop`
  body in it, a control-flow-v2 `tf.cond` branch in it (its `If` op runs
  beside others), or a `tf.function` called from it. Not in eager mode,
  nor in a `tf.function` called eagerly, which runs stateful ops in program
  order, nor under a `tf.distribute` strategy, whose `merge_call` runs the
  update once for all replicas.
  """
  if tf.distribute.has_strategy():
    return False
  with tf.init_scope():
    return not tf.executing_eagerly()


def exponential_update(is_finite, loss_scale, good_steps, bad_steps,
                       incr_every_n_steps, decr_every_n_nan_or_inf,
                       incr_ratio, decr_ratio):
  """Applies TF 1.15's exponential policy to the three state variables.

  TF 1.15 nested three `tf.cond`s; this computes the same next state with
  `tf.where`, so the update costs a dozen scalar ops and no control flow.
  All three values are read once, before any of them is written.

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
    _exponential_update_eagerly(bool(is_finite), loss_scale, good_steps,
                                bad_steps, incr_every_n_steps,
                                decr_every_n_nan_or_inf, incr_ratio,
                                decr_ratio)
    return None
  is_finite = tf.convert_to_tensor(is_finite, dtype=tf.bool)

  def step(read_ops=None):
    """Builds one update; appends the ops that read the state to `read_ops`."""
    graph = tf.compat.v1.get_default_graph()
    first_new_op = len(graph.get_operations()) if read_ops is not None else 0
    scale = tf.identity(loss_scale)
    good = tf.identity(good_steps)
    bad = tf.identity(bad_steps)
    if read_ops is not None:
      read_ops.extend(graph.get_operations()[first_new_op:])
    good_plus_one = good + 1
    bad_plus_one = bad + 1
    grow = tf.logical_and(is_finite, good_plus_one >= incr_every_n_steps)
    shrink = tf.logical_and(tf.logical_not(is_finite),
                            bad_plus_one >= decr_every_n_nan_or_inf)
    grown = scale * incr_ratio
    shrunk = tf.maximum(1.0, scale * decr_ratio)
    # Growth that would overflow float32 keeps the scale but still resets both
    # counters, as TF 1.15 did.
    new_scale = tf.where(
        tf.logical_and(grow, tf.math.is_finite(grown)), grown,
        tf.where(shrink, shrunk, scale))
    zero = tf.zeros_like(good)
    new_good = tf.where(tf.logical_and(is_finite, tf.logical_not(grow)),
                        good_plus_one, zero)
    # Bad steps accumulate non-consecutively: a good step does not clear them.
    new_bad = tf.where(
        is_finite, tf.where(grow, zero, bad),
        tf.where(shrink, zero, bad_plus_one))
    with tf.control_dependencies([new_scale, new_good, new_bad]):
      updates = [
          loss_scale.assign(new_scale, read_value=False),
          good_steps.assign(new_good, read_value=False),
          bad_steps.assign(new_bad, read_value=False),
      ]
    return updates

  if tf.executing_eagerly():
    step()
    return None
  if not _needs_update_lock():
    return tf.group(*step(), name="update_loss_scale")

  # Two optimizers sharing one manager may update it in the same
  # `session.run` (a GAN's `sess.run([train_d, train_g])`). Each update
  # reads all three variables and then writes them: unserialized, one
  # update could overwrite the other (TF 1.15 had this race). So updates
  # hold the state's mutex from their reads to their writes: see
  # `_SharedStateLock`.
  lock = _SharedStateLock.of(loss_scale)
  if lock.first_update_may_go_unlocked():
    read_ops = []
    writes = step(read_ops)
    done = tf.group(*writes, name="update_loss_scale")
    lock.set_first_update(read_ops, is_finite, writes, done)
    return done
  return lock.locked(step, is_finite)


class _SharedStateLock(object):
  """Serializes the updates of one state built in one graph, when needed.

  A mutex (`MutexV2`, as `tf.CriticalSection` builds underneath, without its
  graph collections: those cannot be serialized, so every `Saver.save` would
  log a warning about them) is held by an update from its reads to its
  writes. It is taken once the step's flag is known, not while the
  gradients that decide it are still being computed, and nothing else is
  waited for while it is held (the state's variables are the update's only
  other inputs), so it cannot deadlock. `ConsumeMutexLock` releases it after
  the three writes.

  Taking a mutex costs a thread hop per step, which only a shared state
  needs. So in a plain graph the first update of a state is built without
  it. Should a second update of the same state be built in that graph (a
  second optimizer on the same manager, or a second train op of the same
  optimizer), the first one is made to take the mutex too, by adding
  control inputs to its already-built read ops and to the op it returned:
  dependencies inside that one update, nothing that makes a run of one
  optimizer execute anything of the other. Updates built inside a
  `tf.function` or a cond or while body (whose ops cannot be changed
  afterwards) always take it.

  Build every train op before the first `session.run`: TF does not apply
  changes to ops a session has already run (it logs a warning), and that
  session would run the first update unlocked.
  """

  # Per outermost graph, per state variable.
  _locks = weakref.WeakKeyDictionary()

  @classmethod
  def of(cls, loss_scale) -> "_SharedStateLock":
    with tf.init_scope():
      graph = tf.compat.v1.get_default_graph()
    locks = cls._locks.setdefault(graph, {})
    key = loss_scale.ref()
    if key not in locks:
      locks[key] = cls()
    return locks[key]

  def __init__(self):
    self._mutex = None
    self._updates = 0
    self._first = None  # (read ops, flag, writes, returned op, name scope)

  def first_update_may_go_unlocked(self) -> bool:
    """True for the first update of the state, built in a plain graph."""
    return self._updates == 0 and not (
        _tf_compat.is_building_function() or
        _tf_compat.in_control_flow_context())

  def set_first_update(self, read_ops, is_finite, writes, done):
    self._updates += 1
    self._first = (read_ops, is_finite, writes, done,
                   tf.compat.v1.get_default_graph().get_name_scope())

  def locked(self, step, is_finite):
    """Builds `step()` holding the mutex; locks the first update too."""
    self._updates += 1
    if self._first is not None:
      read_ops, first_finite, first_writes, first_done, scope = self._first
      self._first = None
      # Built where the first update was: outside whatever control flow,
      # control dependencies or function the current one is built in.
      with tf.init_scope(), tf.compat.v1.name_scope(
          scope + "/" if scope else None):
        lock = self._lock(first_finite)
        for op in read_ops:
          _tf_compat.add_control_input(op, lock.op)
        with tf.control_dependencies(first_writes):
          released = tf.raw_ops.ConsumeMutexLock(mutex_lock=lock)
        _tf_compat.add_control_input(first_done, released)
    lock = self._lock(is_finite)
    with tf.control_dependencies([lock]):
      writes = step()
    with tf.control_dependencies(writes):
      released = tf.raw_ops.ConsumeMutexLock(mutex_lock=lock)
    return tf.group(writes, released, name="update_loss_scale")

  def _lock(self, is_finite):
    if self._mutex is None:
      # One resource in the outermost graph, outside any control flow or
      # control dependency; not a variable: neither saved nor initialized.
      with tf.init_scope():
        self._mutex = tf.raw_ops.MutexV2(name="loss_scale_update_lock")
    with tf.control_dependencies([is_finite]):
      return tf.raw_ops.MutexLock(mutex=self._mutex)


def _exponential_update_eagerly(is_finite, loss_scale, good_steps, bad_steps,
                                incr_every_n_steps, decr_every_n_nan_or_inf,
                                incr_ratio, decr_ratio):
  """`exponential_update` in eager mode: the same policy, computed in Python.

  Each eager op is a Python dispatch, and the graph form runs about twenty
  of them. Here a finite step that does not grow the scale reads and writes
  `good_steps` only. The arithmetic is float32, as in the graph form.
  """
  if is_finite:
    good = int(good_steps.numpy()) + 1
    if good < incr_every_n_steps:
      good_steps.assign(good, read_value=False)
      return
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
    """
    state = self.state()
    return skip_decision.run_once_across_replicas(
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
        skip_decision.as_gradient(g, "grads[{}]".format(i))
        for i, g in enumerate(grads)
    ]
    if tf.distribute.has_strategy() and tf.distribute.in_cross_replica_context():
      is_finite = skip_decision.cross_replica_all_finite(
          tf.distribute.get_strategy(), grads)
    else:
      is_finite = skip_decision.replica_consensus(
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

  # -- TF's and Keras' own consumers (issue 22, item 4) ---------------------

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
