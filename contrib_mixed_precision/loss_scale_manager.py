# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The TF1 side: TF 1.15's `tf.contrib.mixed_precision` loss-scale managers.

A manager answers two questions for `LossScaleOptimizer`: what the loss scale
is now (`get_loss_scale`) and how it changes given whether this step's
gradients were finite (`update_loss_scale`). Each built-in manager adapts a
TF2 `tf.compat.v1.mixed_precision.LossScale` object, public as
`manager.loss_scale`:

* `FixedLossScaleManager` holds a `FixedLossScale`;
* `ExponentialUpdateLossScaleManager` holds an `ExponentialUpdateLossScale`
  (TF 1.15's exact policy, see `loss_scale.py`);
* `LossScaleManager.from_loss_scale(x)` wraps any other `LossScale`, a number
  or `"dynamic"`.

In graph mode and inside `tf.function`, `update_loss_scale` returns an op; in
eager mode it runs at once and returns None.
"""

import abc
import contextlib
import logging
import numbers
from typing import List, Union

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import loss_scale as loss_scale_lib
from contrib_mixed_precision import replica_consensus
from contrib_mixed_precision import step_inputs

_LossScale = tf.compat.v1.mixed_precision.LossScale


@contextlib.contextmanager
def _quiet_tf_deprecations():
  """Hides TF's deprecation notice for TF2 loss scales we build internally.

  Building a `FixedLossScaleManager` makes a `FixedLossScale`, whose
  constructor logs "deprecated, use Keras" once per process. The user never
  called it, and this package exists precisely for code that cannot move to
  Keras, so the notice would only mislead.
  """
  logger = tf.get_logger()
  level = logger.level
  logger.setLevel(logging.ERROR)
  try:
    yield
  finally:
    logger.setLevel(level)


def _op_or_none(op):
  """Graph mode and `tf.function` return an op; eager mode returns None."""
  if tf.executing_eagerly() or op is None:
    return None
  if isinstance(op, tf.Operation):
    return op
  return tf.group(op)


class LossScaleManager(metaclass=abc.ABCMeta):
  """Abstract loss-scale manager, as in TF 1.15's `tf.contrib.mixed_precision`.

  Why it exists: `LossScaleOptimizer` drives any manager through these two
  methods, so a training script can swap policies, and legacy code can keep
  its own subclasses. A subclass that implements only the two abstract
  methods works with `LossScaleOptimizer` unchanged.

  Example (TF1 graph mode):

  ```python
  class HalvingManager(LossScaleManager):
    def __init__(self):
      self._scale = tf.compat.v1.Variable(1024., trainable=False)
    def get_loss_scale(self):
      return self._scale
    def update_loss_scale(self, finite_grads):
      return tf.cond(finite_grads, tf.no_op,
                     lambda: self._scale.assign(self._scale / 2).op)

  opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(), HalvingManager())
  ```
  """

  @abc.abstractmethod
  def get_loss_scale(self):
    """Returns the loss scale as a scalar float32 tensor (or variable)."""

  @abc.abstractmethod
  def update_loss_scale(self, finite_grads):
    """Updates the loss scale from whether this step's grads were finite.

    Args:
      finite_grads: A Python bool or scalar bool tensor.

    Returns:
      An op that updates the scale in graph mode or `tf.function`; None in
      eager mode, where the update has already run.
    """

  def variables(self) -> List[tf.Variable]:
    """The manager's state variables in the current graph (none here)."""
    return []

  @staticmethod
  def from_loss_scale(
      loss_scale: Union[_LossScale, "LossScaleManager", float, int, str]
  ) -> "LossScaleManager":
    """Wraps a TF2 `LossScale` (or an identifier) as a TF1 manager.

    The manager follows the wrapped object's own policy: a
    `tf.compat.v1.mixed_precision.DynamicLossScale` keeps TF2's dynamic
    policy, a user `LossScale` subclass keeps its own.

    Example:

    ```python
    manager = LossScaleManager.from_loss_scale(
        tf.compat.v1.mixed_precision.DynamicLossScale(initial_loss_scale=2**15))
    opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(), manager)
    ```

    Args:
      loss_scale: A `tf.compat.v1.mixed_precision.LossScale`, a manager
        (returned as is), a number >= 1 (a `FixedLossScaleManager`), or the
        string "dynamic" (TF2's default `DynamicLossScale`).

    Returns:
      A `LossScaleManager`.

    Raises:
      TypeError: If `loss_scale` is none of the above.
      ValueError: If it is a number below 1, NaN, or too large for float32,
        or a TF `FixedLossScale` or `DynamicLossScale` built with a value
        the managers refuse (TF's constructors accept NaN, infinities and
        a multiplier or period of 0): the same rule and message as the
        managers' arguments.
    """
    if isinstance(loss_scale, LossScaleManager):
      return loss_scale
    _check_tf_loss_scale(loss_scale)
    if isinstance(loss_scale, loss_scale_lib.ExponentialUpdateLossScale):
      return ExponentialUpdateLossScaleManager._wrap(loss_scale)  # pylint: disable=protected-access
    if isinstance(loss_scale, tf.compat.v1.mixed_precision.FixedLossScale):
      return FixedLossScaleManager._wrap(loss_scale)  # pylint: disable=protected-access
    if isinstance(loss_scale, _LossScale):
      return _LossScaleAdapter(loss_scale)
    what = ("a tf.compat.v1.mixed_precision.LossScale, a LossScaleManager, "
            "a number >= 1 or the string 'dynamic'")
    if isinstance(loss_scale, str):
      if loss_scale == "dynamic":
        with _quiet_tf_deprecations():
          dynamic = tf.compat.v1.mixed_precision.DynamicLossScale()
        return _LossScaleAdapter(dynamic)
      raise _validation.invalid(
          TypeError, "loss_scale", what, loss_scale,
          "'dynamic' is the only string; pass a number for a fixed scale.")
    if isinstance(loss_scale, numbers.Real) and not isinstance(
        loss_scale, (bool, np.bool_)):
      return FixedLossScaleManager(loss_scale)
    raise _validation.invalid(
        TypeError, "loss_scale", what, loss_scale,
        _validation.hint_for(loss_scale) or
        "Pass a number such as 2**15, 'dynamic', or a LossScale object.")


_INT64_MAX = 2**63 - 1


def _check_tf_loss_scale(loss_scale) -> None:
  """Holds a TF `FixedLossScale`/`DynamicLossScale` to the managers' rule.

  TensorFlow's constructors check little: `FixedLossScale(nan)` skips every
  step, `DynamicLossScale(multiplier=0.)` zeroes the scale. Each value is
  checked as the same number given to a manager is (contract 7), named as
  in the manager's message, and the message says which object held it.
  `ExponentialUpdateLossScale` validates itself; a user `LossScale`
  subclass defines its own configuration.
  """
  if isinstance(loss_scale, loss_scale_lib.ExponentialUpdateLossScale):
    # Validated when built; registered as a `DynamicLossScale` (for TF's own
    # optimizer), but with a configuration of its own.
    return
  if isinstance(loss_scale, tf.compat.v1.mixed_precision.FixedLossScale):
    config = loss_scale.get_config()
    source = " It is the value of FixedLossScale({!r}).".format(
        config["loss_scale_value"])
    _validation.check_float32(
        "loss_scale", config["loss_scale_value"], 1.0,
        hint="Pass a number such as 2**15; 1 means no scaling." + source)
  elif isinstance(loss_scale, tf.compat.v1.mixed_precision.DynamicLossScale):
    config = loss_scale.get_config()
    source = " It is the `{{}}` of DynamicLossScale({}).".format(", ".join(
        "{}={!r}".format(k, v) for k, v in sorted(config.items())))
    _validation.check_float32(
        "initial_loss_scale", config["initial_loss_scale"],
        _validation.FLOAT32_TINY,
        hint="Pass a value in that range, such as 2**15." +
        source.format("initial_loss_scale"))
    _validation.check_int(
        "increment_period", config["increment_period"], 1, _INT64_MAX,
        hint="Pass a count of steps, such as 2000." +
        source.format("increment_period"))
    _validation.check_float32(
        "multiplier", config["multiplier"], 1.0,
        hint="Pass a factor > 1, such as 2 (1 never changes the scale)." +
        source.format("multiplier"))


def _scale_tensor(loss_scale) -> tf.Tensor:
  """The fixed scale as a float32 tensor of the current context."""
  return tf.convert_to_tensor(float(loss_scale), dtype=tf.float32)


def _reachable(tensor) -> bool:
  """Whether `tensor` can be used in the current context.

  An eager tensor, eagerly or inside a `tf.function` (which captures it);
  a graph tensor, in its graph or in a function built inside it.
  """
  if not tf.is_symbolic_tensor(tensor):
    return tf.executing_eagerly() or _tf_compat.is_building_function()
  graph = tf.compat.v1.get_default_graph()
  while graph is not None:
    if graph is tensor.graph:
      return True
    graph = getattr(graph, "outer_graph", None)
  return False


class FixedLossScaleManager(LossScaleManager):
  """Loss scale that never changes, as in TF 1.15.

  Why it exists: with a known safe scale there is nothing to adapt. Unlike
  TF's `MixedPrecisionLossScaleOptimizer` with a `FixedLossScale`,
  `LossScaleOptimizer` still skips a step whose gradients are not finite, so
  a NaN never reaches the model.

  Example (TF1 graph mode):

  ```python
  manager = FixedLossScaleManager(5000)
  opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(), manager)
  train_op = opt.minimize(loss)
  ```
  """

  def __init__(self, loss_scale: Union[int, float]):
    """Creates the manager.

    Args:
      loss_scale: The fixed scale, a Python or NumPy number whose float32
        value is in [1, float32 max].

    Raises:
      TypeError: If `loss_scale` is not a Python or NumPy real number (bools,
        strings, arrays and tensors included).
      ValueError: If it is below 1, NaN, or does not fit a finite float32
        (1e39, 10**400).
    """
    value = _validation.check_float32(
        "loss_scale", loss_scale, 1.0,
        hint="Pass a number such as 2**15; 1 means no scaling.")
    # TF 1.15 kept the number itself in `_loss_scale`; subclasses read it.
    self._loss_scale = loss_scale
    self._scale_tensor = _scale_tensor(loss_scale)
    with _quiet_tf_deprecations():
      self._loss_scale_object = tf.compat.v1.mixed_precision.FixedLossScale(
          value)

  @classmethod
  def _wrap(cls, fixed_loss_scale) -> "FixedLossScaleManager":
    manager = cls.__new__(cls)
    manager._loss_scale = fixed_loss_scale.get_config()["loss_scale_value"]  # pylint: disable=protected-access
    manager._loss_scale_object = fixed_loss_scale  # pylint: disable=protected-access
    manager._scale_tensor = _scale_tensor(manager._loss_scale)  # pylint: disable=protected-access
    return manager

  @property
  def loss_scale(self):
    """The adapted `tf.compat.v1.mixed_precision.FixedLossScale`."""
    return self._loss_scale_object

  def get_loss_scale(self) -> tf.Tensor:
    """Returns the fixed scale as a scalar float32 tensor.

    The tensor the constructor made, as TF 1.15 returned it, wherever that
    tensor can be used: in its own graph, or captured into a `tf.function`
    (an eager one always is). Grappler folds a constant made inside a
    function into the gradients' constant multiplies, and a captured
    tensor it does not, so the two give other bits. Elsewhere (another
    graph, where TF 1.15 failed: Estimator rebuilds graphs) a constant of
    that graph.
    """
    tensor = getattr(self, "_scale_tensor", None)
    if tensor is not None and _reachable(tensor):
      return tensor
    return tf.convert_to_tensor(float(self._loss_scale), dtype=tf.float32)

  def update_loss_scale(self, finite_grads):
    """A fixed scale has nothing to update: a no-op in graph mode."""
    step_inputs.finite_flag(finite_grads,
                            "FixedLossScaleManager.update_loss_scale")
    return None if tf.executing_eagerly() else tf.no_op()

  def __repr__(self):
    return "FixedLossScaleManager({})".format(self._loss_scale)


class _StateAttr(object):
  """TF 1.15 attribute of the exponential manager, read from its LossScale.

  A non-data descriptor: a subclass that assigns the attribute itself (as
  TF 1.15 subclasses that skip `super().__init__()` do) stores a plain
  instance attribute, which then takes precedence, and the base class's
  methods work from it.
  """

  def __init__(self, getter, name):
    self._getter = getter
    self._name = name

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    loss_scale = obj.__dict__.get("_loss_scale_object")
    if loss_scale is None:
      raise AttributeError(
          "{} has no attribute {!r}: a subclass that does not call "
          "ExponentialUpdateLossScaleManager.__init__ must set it itself "
          "(TF 1.15 subclasses set _loss_scale, _num_good_steps, "
          "_num_bad_steps, _incr_every_n_steps, _decr_every_n_nan_or_inf, "
          "_incr_ratio and _decr_ratio).".format(
              type(obj).__name__, self._name))
    return self._getter(loss_scale)


class ExponentialUpdateLossScaleManager(LossScaleManager):
  """Loss scale that grows after good steps and shrinks after bad ones.

  Exactly TF 1.15's policy: every `incr_every_n_steps` consecutive finite
  steps the scale is multiplied by `incr_ratio` (unless that overflows
  float32); every `decr_every_n_nan_or_inf` non-finite steps, consecutive or
  not, it is multiplied by `decr_ratio`, but never below 1. Both counters
  reset whenever the scale changes.

  Why it exists: TF2's `DynamicLossScale` shrinks on every bad step and uses
  one factor both ways, so its trajectory differs from TF 1.15's. This
  manager reproduces TF 1.15's step for step, with the same state variables
  (`loss_scale`, `good_steps`, `bad_steps`), so TF 1.15 checkpoints restore.

  One step, one update: the update reads the three variables and writes
  them back while holding a lock of this state, so no update is lost when
  one train op runs from several threads of one `Session` (Hogwild, A3C),
  when several threads call one `tf.function` or step eagerly, or when one
  manager serves several optimizers (a GAN's generator and discriminator)
  that run in one `session.run`. In a graph or a function the lock is a
  mutex of the state (TF1 cond and while bodies and control-flow-v2
  branches included), colocated with the state, so that under
  `replica_device_setter` it sits on the parameter server with it; eagerly
  it is a Python lock; inside `tf.function(jit_compile=True)` it is XLA's
  own lock on the variables it updates. With several optimizers:

  * Runs of one optimizer at a time follow TF 1.15's policy step for step,
    and a run of one optimizer runs nothing of the other: not its
    gradients, not its update, not its input pipeline.
  * When both steps run in one `session.run`, the state afterwards is that
    of both updates applied one after the other, in either order: which
    goes first is not fixed. The result is deterministic only where the two
    orders agree (they do for the scale, except when one update grows or
    shrinks it).

  Why the order is not fixed: a session runs exactly the ops its fetches
  reach through data and control edges. An edge from one optimizer's
  update to the other's would make every run of the first alone also run
  the second's update, and so its gradients and inputs; "wait for the
  other update only if it runs in this step" has no dataflow form. Fixing
  the order would take per-run bookkeeping consulted by every update and
  every read of the scale, for every manager, since nothing tells the
  first optimizer's update, when it is built, that a second will share the
  manager. In a GAN whose losses read each other's weights, a co-run is
  unordered in TF1 anyway: one model's forward pass may read the other's
  weights before or after their update. Under `tf.function` the updates
  run in program order.

  Example (TF1 graph mode, as NVIDIA's BERT writes it):

  ```python
  manager = ExponentialUpdateLossScaleManager(
      init_loss_scale=2**32, incr_every_n_steps=1000,
      decr_every_n_nan_or_inf=2, decr_ratio=0.5)
  opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-4), manager)
  ```
  """

  # TF 1.15's attribute names, kept because subclasses read (or set) them.
  _loss_scale = _StateAttr(lambda ls: ls.state().loss_scale, "_loss_scale")
  _num_good_steps = _StateAttr(lambda ls: ls.state().good_steps,
                               "_num_good_steps")
  _num_bad_steps = _StateAttr(lambda ls: ls.state().bad_steps,
                              "_num_bad_steps")
  _incr_every_n_steps = _StateAttr(lambda ls: ls.incr_every_n_steps,
                                   "_incr_every_n_steps")
  _decr_every_n_nan_or_inf = _StateAttr(lambda ls: ls.decr_every_n_nan_or_inf,
                                        "_decr_every_n_nan_or_inf")
  _incr_ratio = _StateAttr(lambda ls: ls.incr_ratio, "_incr_ratio")
  _decr_ratio = _StateAttr(lambda ls: ls.decr_ratio, "_decr_ratio")

  def __init__(self,
               init_loss_scale: Union[int, float],
               incr_every_n_steps: int,
               decr_every_n_nan_or_inf: int = 2,
               incr_ratio: Union[int, float] = 2,
               decr_ratio: float = 0.8):
    """Creates the manager and its state variables in the current graph.

    Args:
      init_loss_scale: The starting scale, a Python or NumPy number whose
        float32 value is in [2**-126, float32 max] (TF 1.15 code often uses
        2**32; smaller, subnormal, values would be flushed to zero).
      incr_every_n_steps: Grow after this many consecutive finite steps; a
        Python or NumPy int in [1, 2**31 - 1] (the counters are int32, as in
        TF 1.15, whose graph construction failed beyond).
      decr_every_n_nan_or_inf: Shrink after this many non-finite steps; a
        Python or NumPy int in [1, 2**31 - 1].
      incr_ratio: The growth factor, a number in [1, float32 max] as a
        float32.
      decr_ratio: The shrink factor, a number in [2**-126, 1] as a float32.

    Raises:
      TypeError: If a count is not a Python or NumPy integer, or a scale or
        ratio is not a Python or NumPy real number (bools, strings, arrays
        and tensors included).
      ValueError: If an argument is outside the range given above (NaN,
        infinities and numbers float32 cannot hold included; 10**400 too).
    """
    self._loss_scale_object = loss_scale_lib.ExponentialUpdateLossScale(
        init_loss_scale, incr_every_n_steps, decr_every_n_nan_or_inf,
        incr_ratio, decr_ratio)

  @classmethod
  def _wrap(cls, exponential_loss_scale):
    manager = cls.__new__(cls)
    manager._loss_scale_object = exponential_loss_scale  # pylint: disable=protected-access
    return manager

  @property
  def loss_scale(self) -> loss_scale_lib.ExponentialUpdateLossScale:
    """The adapted `ExponentialUpdateLossScale` (the TF2 side)."""
    return self._loss_scale_object

  def _reset_stats(self):
    """Zeroes both step counters (TF 1.15 API, used by subclasses)."""
    ops = [self._num_good_steps.assign(0, read_value=False),
           self._num_bad_steps.assign(0, read_value=False)]
    return None if tf.executing_eagerly() else tf.group(*ops)

  def get_loss_scale(self):
    """Returns the loss-scale variable of the current graph, as TF 1.15 did."""
    return self._loss_scale

  def update_loss_scale(self, finite_grads):
    """Applies one step of the policy.

    Args:
      finite_grads: A Python bool or scalar bool tensor: whether this step's
        gradients were all finite. Under a `tf.distribute` strategy, called
        in a replica context, the step counts as finite only if it is finite
        on every replica, and the state moves once.

    Returns:
      The update op in graph mode or `tf.function`; None in eager mode.

    Raises:
      TypeError: If `finite_grads` is not a bool or a scalar bool tensor.
    """
    flag = step_inputs.finite_flag(
        finite_grads, "ExponentialUpdateLossScaleManager.update_loss_scale")

    def update(f):
      return loss_scale_lib.exponential_update(
          f, self._loss_scale, self._num_good_steps, self._num_bad_steps,
          self._incr_every_n_steps, self._decr_every_n_nan_or_inf,
          self._incr_ratio, self._decr_ratio)

    # TF 1.15 built this update as a `tf.cond`, which took the name scope
    # `cond` (uniquified). Taking it here too keeps the scope names of later
    # conds, and so the `cond_N/beta1_power` variable names of a second
    # LossScaleOptimizer in the same scope, as TF 1.15 wrote them.
    scope = (contextlib.nullcontext() if tf.executing_eagerly() else
             tf.compat.v1.name_scope(None, default_name="cond"))
    with scope:
      return _op_or_none(
          replica_consensus.run_once_across_replicas(update, flag))

  def variables(self) -> List[tf.Variable]:
    """`[loss_scale, good_steps, bad_steps]` of the current graph."""
    return [self._loss_scale, self._num_good_steps, self._num_bad_steps]

  def __repr__(self):
    if "_loss_scale_object" in self.__dict__:
      return "ExponentialUpdateLossScaleManager wrapping {!r}".format(
          self._loss_scale_object)
    return object.__repr__(self)


class _LossScaleAdapter(LossScaleManager):
  """A manager that follows any TF2 `LossScale` object's own policy."""

  def __init__(self, loss_scale: _LossScale):
    self._loss_scale_object = loss_scale

  @property
  def loss_scale(self) -> _LossScale:
    """The adapted TF2 `LossScale`."""
    return self._loss_scale_object

  def get_loss_scale(self) -> tf.Tensor:
    return tf.cast(self._loss_scale_object(), tf.float32)

  def update_loss_scale(self, finite_grads):
    flag = step_inputs.finite_flag(finite_grads,
                                   "LossScaleManager.update_loss_scale")

    def update(f):
      # `LossScale.update` judges gradients, not a flag: one scalar that is
      # NaN exactly when the step was not finite makes it see the flag.
      proxy_grad = tf.where(f, tf.constant(0.0), tf.constant(float("nan")))
      update_op, _ = self._loss_scale_object.update([proxy_grad])
      return update_op

    return _op_or_none(replica_consensus.run_once_across_replicas(update, flag))

  def variables(self) -> List[tf.Variable]:
    return _tf_compat.loss_scale_weights(self._loss_scale_object)

  def __repr__(self):
    return "LossScaleManager.from_loss_scale({!r})".format(
        self._loss_scale_object)
