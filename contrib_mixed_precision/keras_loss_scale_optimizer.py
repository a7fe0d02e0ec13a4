# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""A Keras `LossScaleOptimizer` for every loss-scale policy legacy code had.

TF 2.0 to 2.8's `tf.keras.mixed_precision.experimental.LossScaleOptimizer`
took a TF2 `LossScale` (any `DynamicLossScale` multiplier, a scale that
never drops below 1, a fixed scale that applies non-finite steps),
`'dynamic'` or a number, and did not advance `iterations` on a skipped
step. None of today's Keras classes (Keras 3, tf-keras, Keras 2.15) keeps
those numbers (docs/design.md, contract 16). `KerasLossScaleOptimizer` does, and
it also takes this package's TF 1.15 managers, so Estimator and Session code
that moves to `Model.fit` keeps TF 1.15's policy.

It is an instance of the Keras `LossScaleOptimizer` of the Keras its inner
optimizer belongs to, so that Keras' `compile` accepts it and, under a
`mixed_float16` policy, does not wrap it a second time.
"""

import sys
import threading
from typing import Any, List, Optional
import weakref

import numpy as np
import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import keras_lso_saving as saving
from contrib_mixed_precision import loss_scale_manager as manager_lib
from contrib_mixed_precision import replica_consensus
from contrib_mixed_precision import skip_decision

_FixedLossScale = tf.compat.v1.mixed_precision.FixedLossScale

_LOSS_SCALE_KINDS = (
    "a tf.compat.v1.mixed_precision.LossScale (DynamicLossScale, "
    "FixedLossScale), the string 'dynamic', a number >= 1, or a "
    "contrib_mixed_precision LossScaleManager")


class _KeepWhole(object):
  """Carries values through `call_for_each_replica` without unwrapping.

  A strategy hands each replica its own component of a mirrored variable;
  the inner Keras optimizer wants the mirrored variables themselves.
  """

  def __init__(self, value):
    self.value = value


class _LossScaleValue(object):
  """What `optimizer.loss_scale` returns: the current scale, both ways.

  TF 2.0 to 2.3 returned the `LossScale` object, so logging code calls it:
  `float(optimizer.loss_scale())`. TF 2.4+ returned the scale as a tensor:
  `float(optimizer.loss_scale)`, `optimizer.loss_scale.numpy()`,
  `tf.summary.scalar('loss_scale', optimizer.loss_scale)`. This object
  answers all of them. Other attributes are the wrapped `LossScale`'s (or
  manager's): `optimizer.loss_scale.get_config()`.
  """

  def __init__(self, optimizer):
    self._optimizer = optimizer

  def __call__(self) -> tf.Tensor:
    """The current scale, a scalar float32 tensor (TF 2.0's `loss_scale()`)."""
    return self._optimizer._current_scale()  # pylint: disable=protected-access

  # What TF 2.4+'s tensor answered.
  dtype = tf.float32
  shape = tf.TensorShape([])

  def numpy(self):
    return self().numpy()

  def __array__(self, dtype=None, copy=None):
    del copy  # A new array either way.
    return np.asarray(self().numpy(), dtype=dtype)

  def __float__(self):
    return float(self())

  def __int__(self):
    return int(float(self()))

  def __format__(self, spec):
    return format(float(self()), spec)

  def __mul__(self, other):
    return self() * other

  def __rmul__(self, other):
    return other * self()

  def __truediv__(self, other):
    return self() / other

  def __rtruediv__(self, other):
    return other / self()

  def __add__(self, other):
    return self() + other

  def __radd__(self, other):
    return other + self()

  def __sub__(self, other):
    return self() - other

  def __rsub__(self, other):
    return other - self()

  def __neg__(self):
    return -self()

  def __lt__(self, other):
    return self() < other

  def __le__(self, other):
    return self() <= other

  def __gt__(self, other):
    return self() > other

  def __ge__(self, other):
    return self() >= other

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    optimizer = self.__dict__["_optimizer"]
    return getattr(optimizer._loss_scale_source(), name)  # pylint: disable=protected-access

  def __repr__(self):
    try:
      value = float(self)
    except (TypeError, ValueError, tf.errors.OpError):  # A graph tensor.
      value = "(symbolic)"
    return "<loss_scale {} of {!r}>".format(
        value, self._optimizer._loss_scale_source())  # pylint: disable=protected-access


tf.register_tensor_conversion_function(
    _LossScaleValue,
    lambda value, dtype=None, name=None, as_ref=False: tf.cast(
        value(), dtype or tf.float32))


class _CallableList(list):
  """A list that calling returns itself.

  TF 2.x's `optimizer.variables()` was a method (Horovod's
  `broadcast_variables(opt.variables(), 0)`); Keras 3's is a property.
  """

  def __call__(self):
    return self


class _ScaleLossCalls(object):
  """The steps in which Keras 3's `scale_loss` was called and not yet applied.

  Keras 3's `fit` calls `scale_loss`, then `apply_gradients` on the scaled
  gradients, which must unscale them; TF 2.x code calls `apply_gradients`
  on gradients it unscaled itself (or never scaled), which must not be. A
  step is one trace of a `tf.function` (the graph being traced, cond and
  loop branches included), or eager execution, in one thread (`tf.distribute`
  runs each replica in a thread of its own). Python runs a trace once, and
  every call of the function replays what it built, so a mark made and
  taken within one trace holds for every call; a mark is never read from
  another trace.

  A mark that no `apply` took (`scale_loss` in one `tf.function`, the apply
  in another, or eagerly) stays while that function's graph lives: it
  tells an apply with no mark of its own that the gradients it is given may
  be scaled ones, and the apply refuses to guess.
  """

  _LOCK = threading.Lock()

  def __init__(self):
    self._graphs = weakref.WeakKeyDictionary()  # Graph -> set of threads.
    self._eager = set()  # Threads.

  def _threads(self, create):
    if tf.executing_eagerly():
      return self._eager
    graph = _tf_compat.step_graph()
    if create:
      return self._graphs.setdefault(graph, set())
    return self._graphs.get(graph, set())

  def mark(self) -> None:
    """`scale_loss` was called in this step."""
    with self._LOCK:
      self._threads(create=True).add(threading.get_ident())

  def clear(self) -> None:
    """`get_unscaled_gradients` was called: the caller unscales this step."""
    with self._LOCK:
      self._threads(create=False).discard(threading.get_ident())

  def take(self) -> bool:
    """Whether this step called `scale_loss` since its last apply."""
    with self._LOCK:
      threads = self._threads(create=False)
      marked = threading.get_ident() in threads
      threads.discard(threading.get_ident())
      return marked

  def pending_elsewhere(self) -> bool:
    """Whether a `scale_loss` of another step still waits for its apply."""
    with self._LOCK:
      return bool(self._eager) or any(self._graphs.values())

  def __deepcopy__(self, memo):
    del memo  # A copied optimizer starts with no step under way.
    return _ScaleLossCalls()


def _refuse_optimizer(optimizer):
  """Raises the TypeError for an `optimizer` that is not a Keras optimizer."""
  if isinstance(optimizer, tf.compat.v1.train.Optimizer):
    hint = ("A tf.compat.v1.train optimizer takes "
            "`contrib_mixed_precision.LossScaleOptimizer(opt, manager)`; for "
            "Keras' `fit`, pass a Keras optimizer here instead (for example "
            "`tf.keras.optimizers.SGD`).")
  else:
    hint = "Pass an optimizer such as `tf.keras.optimizers.SGD(0.1)`."
  raise _validation.invalid(
      TypeError, "optimizer",
      "a Keras optimizer (Keras 3, tf-keras or Keras 2.15)", optimizer, hint)


def _flavour_class(optimizer):
  """The subclass for `optimizer`'s Keras: its base is that Keras' LSO."""
  keras = saving.keras_package(optimizer)
  if keras is None:
    _refuse_optimizer(optimizer)
  bases = _tf_compat.keras_loss_scale_optimizer_bases(keras)
  if isinstance(optimizer, bases.wrapper_classes):
    raise _validation.invalid(
        TypeError, "optimizer", "an optimizer without loss scaling",
        optimizer,
        "It is already a LossScaleOptimizer: pass its `inner_optimizer` "
        "instead, so that the loss is scaled once.")
  if bases.keras3 is not None and isinstance(optimizer,
                                             bases.keras3_optimizer):
    mixin, base = _Keras3, bases.keras3
  elif bases.legacy is not None and isinstance(optimizer,
                                               bases.legacy_optimizer):
    mixin, base = _Keras2Legacy, bases.legacy
  elif bases.v3 is not None and isinstance(optimizer, bases.v3_optimizer):
    mixin, base = _Keras2, bases.v3
  else:
    _refuse_optimizer(optimizer)
  return _class(mixin, base, keras)


def _class(mixin, base, keras):
  """The class of `mixin` on `base`, made once and registered with `keras`.

  Each is named `KerasLossScaleOptimizer`, in this module: Keras writes
  that name into a saved model, and Keras 2 (tf-keras, 2.15) finds it in
  the module at load time, even when nothing registered it in that
  process. Keras 3 looks only in its registry (`saving.register`).
  """
  key = (mixin, base)
  if key not in _CLASSES:
    _CLASSES[key] = type(
        "KerasLossScaleOptimizer", (mixin, base),
        {"__module__": __name__, "__qualname__": "KerasLossScaleOptimizer"})
    saving.register(_CLASSES[key], keras)
  return _CLASSES[key]


_CLASSES = {}


def _register_imported_kerases():
  """Makes and registers the classes of every Keras imported so far.

  `load_model` finds a class only in the registry, and a script may load a
  model before it builds any optimizer. `import tensorflow` has already
  imported the Keras `tf.keras` is (`tf_keras` under TF_USE_LEGACY_KERAS=1);
  a Keras imported later has its classes registered when its first
  optimizer is wrapped.
  """
  for name in ("keras", "tf_keras"):
    keras = sys.modules.get(name)
    if keras is None or not hasattr(keras, "saving"):
      continue
    bases = _tf_compat.keras_loss_scale_optimizer_bases(keras)
    for mixin, base in ((_Keras3, bases.keras3),
                        (_Keras2Legacy, bases.legacy), (_Keras2, bases.v3)):
      if base is not None:
        _class(mixin, base, keras)


class KerasLossScaleOptimizer(object):
  """A Keras optimizer that scales the loss with a TF 2.0 or TF 1.15 policy.

  Loss scaling multiplies the loss by a scale before differentiation, so
  that small float16 gradients do not underflow, and divides the gradients
  by it before they are applied. Whether a step with NaN or Inf gradients
  is skipped, and how the scale moves, is the policy of `loss_scale`:

  * a `tf.compat.v1.mixed_precision.DynamicLossScale` (any multiplier), or
    `'dynamic'` (TF 2.0's default, `DynamicLossScale()`: 2**15, doubled
    after 2000 finite steps): a non-finite step is skipped and the scale
    becomes `max(scale / multiplier, 1)`, as in TF 2.0;
  * a `tf.compat.v1.mixed_precision.FixedLossScale`, or a number: the scale
    never changes and no step is skipped (a non-finite step is applied, as
    in TF 2.0);
  * a `FixedLossScaleManager` or `ExponentialUpdateLossScaleManager` of this
    package (or any `LossScaleManager`): TF 1.15's policy, the same
    trajectory as `contrib_mixed_precision.LossScaleOptimizer` on the same
    gradients; every non-finite step is skipped.

  Why it exists: TF 2.0's `tf.keras.mixed_precision.experimental.
  LossScaleOptimizer` is gone, and today's Keras optimizers have no floor of
  1, no multiplier but 2, no fixed scale that applies a NaN step, and (in
  tf-keras) advance `iterations` on skipped steps. This class keeps TF 2.0's
  numbers under Keras 3, tf-keras and Keras 2.15. It is an instance of that
  Keras' own `LossScaleOptimizer` class, so `Model.compile` accepts it and
  does not wrap it again under a `mixed_float16` policy.

  Example (Keras `fit`, TF 2.0's spelling made to run today):

  ```python
  opt = contrib_mixed_precision.KerasLossScaleOptimizer(
      tf.keras.optimizers.SGD(0.1),
      tf.compat.v1.mixed_precision.DynamicLossScale(
          initial_loss_scale=2**15, increment_period=1000, multiplier=4.))
  model.compile(optimizer=opt, loss="mse")
  model.fit(x, y)
  print(float(opt.loss_scale()))
  ```

  A custom loop uses TF 2.x's `get_scaled_loss` and `get_unscaled_gradients`
  (then `apply_gradients` takes unscaled gradients), or, under Keras 3,
  `scale_loss` (then `apply_gradients` in the same `tf.function`, or the
  same eager step, takes the scaled gradients and unscales them, as Keras
  3's own class does). Whether an apply unscales is decided per step, never
  by state of another `tf.function` trace (see `apply_gradients`).

  TF 2.4-2.15's Keras 2 API is answered under every Keras, as Keras 2's
  `LossScaleOptimizer` answered it: `loss_scale` (usable as the float32
  tensor it was), `dynamic`, `initial_scale` (a float), `dynamic_growth_steps`
  (an int, None for a fixed scale), `dynamic_counter` (the int64 variable,
  None for a fixed scale), `inner_optimizer`, `iterations`, `learning_rate`,
  `get_scaled_loss`, `get_unscaled_gradients`, `apply_gradients` and
  `minimize`. With a `DynamicLossScale(initial, growth_steps, 2)` or a
  `FixedLossScale(x)` and `skipped_steps_advance_iterations=True`, it keeps
  Keras 2's numbers (`LossScaleOptimizer(opt, initial_scale=initial,
  dynamic_growth_steps=growth_steps)`, `dynamic=False, initial_scale=x`),
  and a `tf.train.Checkpoint` of either restores the other's scale, counter
  and `iterations`.

  Checkpoints: the loss scale is the checkpoint dependency `loss_scale`, and
  the inner optimizer `base_optimizer`, as TF 2.0 to 2.2 named them, so a
  `tf.train.Checkpoint` that TF 2.x's experimental optimizer wrote restores
  the scale (`loss_scale/current_loss_scale`, `loss_scale/good_steps`).
  """

  def __new__(cls, optimizer=None, *args, **kwargs):
    del args, kwargs  # `__init__` takes them.
    if cls is KerasLossScaleOptimizer:
      cls = _flavour_class(optimizer)
    return super(KerasLossScaleOptimizer, cls).__new__(cls)

  def __init__(self, optimizer, loss_scale="dynamic", *,
               skipped_steps_advance_iterations: bool = False):
    """Wraps `optimizer`.

    Args:
      optimizer: The Keras optimizer that applies the unscaled gradients:
        a Keras 3 optimizer, a tf-keras or Keras 2.15 one (legacy ones
        included).
      loss_scale: A `tf.compat.v1.mixed_precision.LossScale` (a
        `DynamicLossScale` with any multiplier; a `FixedLossScale`),
        `'dynamic'` (TF 2.0's default `DynamicLossScale()`), a number >= 1
        (a fixed scale, as TF 2.0 took it), or a `LossScaleManager` of this
        package (TF 1.15's policy).
      skipped_steps_advance_iterations: Keyword-only. False (default): a
        skipped step leaves `iterations` alone, as TF 2.0 to 2.2 did, so a
        learning-rate schedule sees the steps applied. True: it advances
        `iterations`, as TF 2.3 and later did.

    Raises:
      TypeError: If `optimizer` is not a Keras optimizer, or is already a
        LossScaleOptimizer; if `loss_scale` is none of the kinds above (a
        string other than 'dynamic' included); if
        `skipped_steps_advance_iterations` is not a bool.
      ValueError: If `loss_scale` is a number below 1, NaN or too large for
        float32, or a TF `LossScale` built with such a value.
    """
    advance = _validation.check_bool("skipped_steps_advance_iterations",
                                     skipped_steps_advance_iterations)
    if isinstance(loss_scale, manager_lib.LossScaleManager):
      manager = loss_scale
      tf2_loss_scale = None
    else:
      if loss_scale is None:
        raise _validation.invalid(
            TypeError, "loss_scale", _LOSS_SCALE_KINDS, loss_scale,
            "Pass 'dynamic' for TF 2.0's dynamic loss scale.")
      manager = manager_lib.LossScaleManager.from_loss_scale(loss_scale)
      tf2_loss_scale = manager.loss_scale
    # Keras 3's own `__init__` stores its default `initial_scale` and
    # `dynamic_growth_steps`, which ours answer from `loss_scale`.
    object.__setattr__(self, "_cmp_in_keras_init", True)
    try:
      self._init_keras(optimizer)
    finally:
      object.__setattr__(self, "_cmp_in_keras_init", False)
    own = {
        "_cmp_manager": manager,
        # The TF2 object the scale is read from, as TF 2.0 read it; None for
        # a TF 1.15 manager, which is read through `get_loss_scale()`.
        "_cmp_tf2_loss_scale": tf2_loss_scale,
        # TF 2.0's FixedLossScale applied every step; TF 1.15's managers
        # skip every non-finite one.
        "_cmp_skips": not isinstance(tf2_loss_scale, _FixedLossScale),
        "_cmp_advance_on_skip": advance,
        "_cmp_loss_scale_argument": loss_scale,
        "_cmp_scale_loss_calls": _ScaleLossCalls(),
    }
    for name, value in own.items():
      # Plain attributes: Keras' trackers must not add checkpoint names.
      object.__setattr__(self, name, value)
    source = self._loss_scale_source()
    if isinstance(source, tf.compat.v1.mixed_precision.LossScale):
      # TF 2.0-2.2's name for it (a user's manager has no state to save).
      _tf_compat.track_trackable(self, source, "loss_scale")

  # -- Flavour hooks (defined by each Keras' subclass) ----------------------

  def _init_keras(self, optimizer):
    raise NotImplementedError

  def _keras_inner(self):
    raise NotImplementedError

  def _inner_apply(self, grads, variables, options):
    raise NotImplementedError

  # -- The loss scale -------------------------------------------------------

  def _loss_scale_source(self):
    """The TF2 `LossScale` behind the scale, or the manager if it has none."""
    source = self._cmp_tf2_loss_scale
    if source is None:
      source = getattr(self._cmp_manager, "loss_scale", None)
    return self._cmp_manager if source is None else source

  def _current_scale(self) -> tf.Tensor:
    """The current loss scale, a scalar float32 tensor.

    Read from the TF2 object as TF 2.0's optimizer read it
    (`loss_scale()`), or from the manager as TF 1.15's did.
    """
    if self._cmp_tf2_loss_scale is not None:
      return tf.convert_to_tensor(self._cmp_tf2_loss_scale())
    return tf.cast(self._cmp_manager.get_loss_scale(), tf.float32)

  @property
  def loss_scale(self) -> _LossScaleValue:
    """The current scale: call it (TF 2.0-2.3) or use it as a number (2.4+).

    `float(opt.loss_scale())`, `float(opt.loss_scale)`,
    `opt.loss_scale.numpy()` and `tf.convert_to_tensor(opt.loss_scale)` all
    give the scale the next step will use.
    """
    return _LossScaleValue(self)

  @property
  def loss_scale_manager(self):
    """The `LossScaleManager` that holds the policy (an adapter for TF2's)."""
    return self._cmp_manager

  @property
  def dynamic(self) -> bool:
    """Whether the scale can change (False for a fixed scale)."""
    return not isinstance(self._loss_scale_source(),
                          (_FixedLossScale, manager_lib.FixedLossScaleManager))

  @property
  def skipped_steps_advance_iterations(self) -> bool:
    return self._cmp_advance_on_skip

  def _loss_scale_config(self):
    source = self._loss_scale_source()
    if isinstance(source, manager_lib.LossScaleManager):
      return {}  # A user's manager: no configuration to read.
    return source.get_config()

  @property
  def initial_scale(self) -> Optional[float]:
    """The scale training started from, a float (Keras 2's attribute).

    For a dynamic scale its initial value, for a fixed one its value; None
    for a user's `LossScaleManager` subclass, which has no configuration.
    """
    config = self._loss_scale_config()
    for key in ("initial_loss_scale", "loss_scale_value", "init_loss_scale"):
      if key in config:
        return float(config[key])
    return None

  @initial_scale.setter
  def initial_scale(self, value):
    self._refuse_assignment("initial_scale", value)

  @property
  def dynamic_growth_steps(self) -> Optional[int]:
    """After how many finite steps a dynamic scale grows (Keras 2's).

    None for a fixed scale (and a user's `LossScaleManager` subclass).
    """
    config = self._loss_scale_config()
    for key in ("increment_period", "incr_every_n_steps"):
      if key in config:
        return int(config[key])
    return None

  @dynamic_growth_steps.setter
  def dynamic_growth_steps(self, value):
    self._refuse_assignment("dynamic_growth_steps", value)

  def _refuse_assignment(self, name, value):
    if self.__dict__.get("_cmp_in_keras_init"):
      return  # Keras 3's `__init__` storing its defaults: ours are read.
    raise AttributeError(
        "`{}` of a KerasLossScaleOptimizer is read from its loss scale "
        "({!r}) and cannot be set (received {!r}). Build a new "
        "KerasLossScaleOptimizer with the loss scale you want.".format(
            name, self._loss_scale_source(), value))

  @property
  def dynamic_counter(self) -> Optional[tf.Variable]:
    """The count of finite steps since the scale last changed (Keras 2's).

    The int64 variable itself (`good_steps`), as Keras 2 returned it: for
    a `DynamicLossScale`, and for an `ExponentialUpdateLossScaleManager`
    (its good-step count). None for a fixed scale, as in Keras 2.
    """
    source = self._loss_scale_source()
    if isinstance(source, tf.compat.v1.mixed_precision.DynamicLossScale):
      return _tf_compat.loss_scale_weight(source, "good_steps")
    if isinstance(self._cmp_manager,
                  manager_lib.ExponentialUpdateLossScaleManager):
      return self._cmp_manager.variables()[1]
    return None

  def get_scaled_loss(self, loss):
    """`loss` times the loss scale, cast to the loss's dtype (TF 2.x API).

    Args:
      loss: A tensor, or a callable returning one (then a callable).

    Returns:
      The scaled loss, or a callable returning it.
    """
    if callable(loss):
      user_loss = loss

      def scaled():
        value = user_loss()
        return value * tf.cast(self._current_scale(), value.dtype)

      return scaled
    loss = tf.convert_to_tensor(loss)
    return loss * tf.cast(self._current_scale(), loss.dtype)

  def get_unscaled_gradients(self, grads) -> List[Any]:
    """Each gradient times `1 / scale` cast to its dtype (TF 2.x API).

    `apply_gradients` then takes the gradients as they are, as in Keras 2:
    it never unscales unless Keras 3's `scale_loss` was called in the same
    step (see `apply_gradients`). A `scale_loss` earlier in this step is
    taken back: the caller unscales.

    Args:
      grads: Gradients; None stays None, an `IndexedSlices` has its values
        multiplied.

    Returns:
      A list the length of `grads`.
    """
    self._cmp_scale_loss_calls.clear()
    return self._unscale(grads)

  def _unscale(self, grads) -> List[Any]:
    grads = list(grads)
    if not any(g is not None for g in grads):
      return grads
    # TF 2.0: one reciprocal of the float32 scale, cast per gradient.
    reciprocal = 1. / self._current_scale()
    result = []
    for g in grads:
      if g is None:
        result.append(None)
      elif isinstance(g, tf.IndexedSlices):
        result.append(tf.IndexedSlices(
            g.values * tf.cast(reciprocal, g.values.dtype), g.indices,
            g.dense_shape))
      else:
        g = tf.convert_to_tensor(g)
        result.append(g * tf.cast(reciprocal, g.dtype))
    return result

  # -- The step -------------------------------------------------------------

  def _loss_scale_step(self, grads, variables, options=None):
    """Applies unscaled `grads` unless the policy skips; updates the scale.

    Under a `tf.distribute` strategy (a replica context) the replicas agree
    first: one non-finite replica skips the step on all of them, and the
    scale moves once.
    """
    grads = list(grads)
    variables = list(variables)
    if replica_consensus.in_replica_context_of_strategy():
      return tf.distribute.get_replica_context().merge_call(
          self._cross_replica_step,
          args=(grads, _KeepWhole(variables), _KeepWhole(options)))
    is_finite = skip_decision.all_finite(grads)
    return self._apply_or_skip(
        is_finite, lambda: self._inner_apply(grads, variables, options))

  def _cross_replica_step(self, strategy, grads, variables, options):
    checked = [g for g in grads if g is not None]
    is_finite = replica_consensus.cross_replica_all_finite(strategy, checked)

    def apply_fn():
      return strategy.extended.call_for_each_replica(
          lambda g, v, o: self._inner_apply(g, v.value, o.value),
          args=(grads, variables, options))

    return self._apply_or_skip(is_finite, apply_fn)

  def _apply_or_skip(self, is_finite, apply_fn):
    manager = self._cmp_manager
    if not self._cmp_skips:
      # TF 2.0's FixedLossScale: every step applies, NaN or not.
      apply_fn()
      return manager.update_loss_scale(is_finite)
    iterations = self.iterations
    advance = self._cmp_advance_on_skip
    if tf.executing_eagerly():
      if bool(is_finite):
        apply_fn()
      elif advance:
        iterations.assign_add(1)
      manager.update_loss_scale(is_finite)
      return None

    def skip_fn():
      if advance:
        iterations.assign_add(1)
      return tf.no_op()

    def applied():
      apply_fn()
      return tf.no_op()

    maybe_apply = tf.cond(is_finite, applied, skip_fn)
    update = manager.update_loss_scale(is_finite)
    return tf.group([op for op in (maybe_apply, update) if op is not None])

  # -- Configuration --------------------------------------------------------

  def get_config(self):
    """The inner optimizer's and the loss scale's configuration.

    Raises:
      NotImplementedError: For a user `LossScaleManager` subclass, which
        has no configuration.
    """
    return {
        "optimizer": saving.serialize_optimizer(self._keras_inner()),
        "loss_scale": saving.loss_scale_config(
            self._cmp_loss_scale_argument),
        "skipped_steps_advance_iterations": self._cmp_advance_on_skip,
    }

  @classmethod
  def from_config(cls, config, custom_objects=None):
    config = dict(config)
    optimizer = saving.deserialize_optimizer(config.pop("optimizer"),
                                             custom_objects)
    loss_scale = saving.loss_scale_from_config(config.pop("loss_scale"))
    return KerasLossScaleOptimizer(optimizer, loss_scale, **config)

  def save_own_variables(self, store):
    """Keras' entries of a `.keras` file, then the loss scale's state."""
    super().save_own_variables(store)
    saving.save_state(store, self._cmp_manager)

  def load_own_variables(self, store):
    keras_entries, loss_scale_values = saving.split_state(store)
    super().load_own_variables(keras_entries)
    saving.load_state(loss_scale_values, self._cmp_manager,
                      getattr(self, "name", None))

  def __repr__(self):
    return "KerasLossScaleOptimizer({!r}, {!r})".format(
        self._keras_inner(), self._loss_scale_source())


class _Keras3(KerasLossScaleOptimizer):
  """Under Keras 3: a `keras.optimizers.LossScaleOptimizer`.

  Keras 3's `fit` scales the loss with `scale_loss` and hands
  `apply_gradients` the scaled gradients, which it unscales; TF 2.x code
  (Keras 2's API) hands it gradients it unscaled itself, which it applies
  as they are. Which one a call is, the step decides (`_ScaleLossCalls`).
  """

  def _init_keras(self, optimizer):
    # The base class's own scale and counter are never built (`build`).
    super(KerasLossScaleOptimizer, self).__init__(  # pylint: disable=bad-super-call
        optimizer, name=None)
    _tf_compat.track_trackable(self, optimizer, "base_optimizer")
    _tf_compat.checkpoint_keras3_wrapper_as_keras2(self, optimizer)

  def _keras_inner(self):
    return self.inner_optimizer

  def build(self, var_list):
    self.inner_optimizer.build(var_list)
    # Keras' `Optimizer.build`, not its LossScaleOptimizer's (which would
    # make a scale variable of its own).
    keras_lso = _tf_compat.keras_loss_scale_optimizer_bases(
        saving.keras_package(self.inner_optimizer)).keras3
    super(keras_lso, self).build(var_list)  # pylint: disable=bad-super-call

  def scale_loss(self, loss):
    """`loss` times the scale, for Keras 3's `fit` (or a Keras 3 loop).

    The next `apply_gradients` (or `apply`) of the same step (the same
    `tf.function` trace, or eagerly, the same thread) unscales the
    gradients it is given, as Keras 3's own `LossScaleOptimizer` does.
    """
    scaled = self.get_scaled_loss(loss)
    self._cmp_scale_loss_calls.mark()
    return scaled

  @property
  def dynamic_scale(self) -> tf.Tensor:
    """Keras 3's name for the current scale."""
    return self._current_scale()

  def apply_gradients(self, grads_and_vars, name=None,
                      experimental_aggregate_gradients=True, *,
                      skip_gradients_aggregation=False):
    """Applies the gradients unless the policy skips the step.

    Whether it unscales them is decided by what the caller did in this
    step (this `tf.function` trace, or eagerly, this thread), never by
    state of another trace:

    * after Keras 3's `scale_loss` in this step (Keras 3's `fit`), the
      gradients are scaled: it unscales them, as Keras 3's own class does;
    * otherwise (TF 2.x's API: `get_unscaled_gradients` first, in this
      step or another, or no scaling at all), it applies them as they are,
      as Keras 2's `LossScaleOptimizer` did;
    * if no `scale_loss` of this step is known but one of another step
      still waits for its apply, the gradients may be either: it refuses.

    TF 2.x code passes `name` (positionally, too: `apply_gradients(gv,
    name)`); Keras 3's own signature has no room for it, and it only named
    a scope. Keras 3 always aggregates across replicas, so under a
    strategy of more than one replica `experimental_aggregate_gradients=
    False` (TF 2.4-2.10) or `skip_gradients_aggregation=True` (Keras
    2.11-2.15), gradients the caller already all-reduced, cannot be kept
    and are refused; with one replica there is nothing to aggregate, and
    they are taken, as Keras 2 took them.

    Raises:
      NotImplementedError: For `experimental_aggregate_gradients=False` or
        `skip_gradients_aggregation=True` under more than one replica.
      ValueError: If it cannot tell whether the gradients are scaled (the
        last case above).
    """
    del name  # Only ever a name scope.
    for argument, value, keeps in (
        ("experimental_aggregate_gradients",
         experimental_aggregate_gradients, True),
        ("skip_gradients_aggregation", skip_gradients_aggregation, False)):
      if (bool(value) != keeps and
          tf.distribute.get_strategy().num_replicas_in_sync > 1):
        raise _validation.invalid(
            NotImplementedError, argument, str(keeps), value,
            "Keras 3 aggregates gradients across replicas itself: pass the "
            "replicas' own gradients, not all-reduced ones.")
    return super().apply_gradients(grads_and_vars)

  @property
  def variables(self):
    """Keras 3's list of variables, callable as TF 2.x's `variables()`."""
    return _CallableList(super().variables)

  def apply(self, grads, trainable_variables=None):
    """Keras 3's `apply`: unscales as `apply_gradients` says, then applies.

    Raises:
      ValueError: As `apply_gradients`.
    """
    calls = self._cmp_scale_loss_calls
    unscale = calls.take()
    if not unscale and calls.pending_elsewhere():
      raise ValueError(
          "KerasLossScaleOptimizer cannot tell whether the gradients given "
          "to `apply_gradients` are scaled. Keras 3's `scale_loss` was "
          "called in another `tf.function` (or another eager step) whose "
          "gradients were not applied there, so these may be those scaled "
          "gradients (which need unscaling) or gradients already unscaled "
          "by `get_unscaled_gradients` (which must not be unscaled again). "
          "Call `scale_loss` and `apply_gradients` in the same "
          "`tf.function` (or eager step), or use TF 2.x's API throughout: "
          "`get_scaled_loss`, `get_unscaled_gradients`, then "
          "`apply_gradients`, which applies the gradients as they are.")
    self._apply_step(list(grads), trainable_variables, unscale)

  def _apply_step(self, grads, trainable_variables, unscale):
    if not self.built:
      with tf.init_scope():
        self.build(trainable_variables)
      self.built = True
    if trainable_variables is None:
      trainable_variables = self._trainable_variables
    if unscale:
      grads = self._unscale(grads)
    self._loss_scale_step(grads, trainable_variables)

  def compute_gradients(self, loss, var_list, tape=None):
    """Keras 2's `compute_gradients`: the unscaled gradients of `loss`.

    The loss is scaled (inside `tape`), differentiated and the gradients
    unscaled, as Keras 2's `LossScaleOptimizer` did.

    Args:
      loss: A tensor computed under `tape`, or a callable returning one.
      var_list: The variables, or a callable returning them.
      tape: The `tf.GradientTape` the tensor `loss` was computed under.

    Returns:
      A list of (unscaled gradient, variable) pairs.

    Raises:
      ValueError: If `loss` is a tensor and `tape` is None.
    """
    return self._compute_unscaled(loss, var_list, None, tape)

  def _compute_unscaled(self, loss, var_list, grad_loss, tape):
    if not callable(loss) and tape is None:
      raise _validation.invalid(
          ValueError, "tape", "the tf.GradientTape that computed `loss`",
          tape, "A tensor `loss` needs the tape it was computed under: "
          "`minimize(loss, var_list, tape=tape)`, or pass a callable "
          "`loss`.")
    tape = tf.GradientTape() if tape is None else tape
    with tape:
      if callable(loss):
        loss = loss()
      if callable(var_list):
        var_list = var_list()
      scaled = self.get_scaled_loss(loss)
    var_list = list(var_list)
    grads = tape.gradient(scaled, var_list, grad_loss)
    return list(zip(self._unscale(grads), var_list))

  def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
    """Keras 2's `minimize`: scales, unscales and applies in one call.

    Keras 3's optimizers have no `minimize`; TF 2.x code calls it in a
    custom `train_step` (`minimize(loss, vars, tape=tape)`) or a loop. The
    gradients are unscaled here and applied as they are, as in Keras 2.
    Keras 2's new optimizers took the tape third
    (`minimize(loss, var_list, tape)`), its legacy ones `grad_loss`: a
    `tf.GradientTape` third is the tape.

    Args:
      loss: A tensor computed under `tape`, or a callable returning one.
      var_list: The variables, or a callable returning them.
      grad_loss: Optional, the gradient of the loss (legacy optimizers).
      name: Unused (it only named a scope).
      tape: The `tf.GradientTape` the tensor `loss` was computed under.

    Returns:
      The inner optimizer's `iterations`.

    Raises:
      ValueError: If `loss` is a tensor and `tape` is None.
    """
    del name  # Only ever a name scope.
    if tape is None and isinstance(grad_loss, tf.GradientTape):
      tape, grad_loss = grad_loss, None
    grads_and_vars = self._compute_unscaled(loss, var_list, grad_loss, tape)
    grads_and_vars = [(g, v) for g, v in grads_and_vars if g is not None]
    self._apply_step([g for g, _ in grads_and_vars],
                     [v for _, v in grads_and_vars], unscale=False)
    return self.iterations

  def stateless_apply(self, optimizer_variables, grads, trainable_variables):
    raise NotImplementedError(
        "KerasLossScaleOptimizer runs on the TensorFlow backend only; "
        "`stateless_apply` is for JAX.")

  def _inner_apply(self, grads, variables, options):
    del options
    self.inner_optimizer.apply(list(grads), list(variables))

class _Keras2Common(KerasLossScaleOptimizer):
  """What the tf-keras / Keras 2.15 subclasses share."""

  def _init_keras(self, optimizer):
    # A fixed scale of 1 makes no state there: the scale is ours.
    super(KerasLossScaleOptimizer, self).__init__(  # pylint: disable=bad-super-call
        optimizer, dynamic=False, initial_scale=1.0)

  def _keras_inner(self):
    return self.inner_optimizer

  def _apply_keras2(self, grads_and_vars, options):
    grads_and_vars = [
        (g, v) for g, v in grads_and_vars if g is not None]
    if not grads_and_vars:
      return self.inner_optimizer.apply_gradients([], **options)
    if tf.distribute.in_cross_replica_context():
      raise ValueError("apply_gradients() must be called in a replica "
                       "context.")
    grads = [g for g, _ in grads_and_vars]
    variables = [v for _, v in grads_and_vars]
    return self._loss_scale_step(grads, variables, options)

class _Keras2Legacy(_Keras2Common):
  """Under tf-keras / Keras 2.15, wrapping a legacy (OptimizerV2) optimizer."""

  def apply_gradients(self, grads_and_vars, name=None,
                      experimental_aggregate_gradients=True):
    """Applies unscaled gradients unless the policy skips the step."""
    grads_and_vars = list(grads_and_vars)
    # The inner optimizer's variables, outside any cond branch.
    _tf_compat.create_keras_legacy_optimizer_weights(
        self.inner_optimizer, [v for g, v in grads_and_vars if g is not None])
    return self._apply_keras2(
        grads_and_vars,
        {"name": name,
         "experimental_aggregate_gradients": experimental_aggregate_gradients})

  def _inner_apply(self, grads, variables, options):
    # `name` positionally, as TF 2.x's wrapper passed it on: an inner
    # optimizer whose `apply_gradients` takes another second argument
    # (`clip_norm`, in BERT-style AdamWeightDecay) got the caller's there.
    return self.inner_optimizer.apply_gradients(
        list(zip(grads, variables)), options["name"],
        experimental_aggregate_gradients=options[
            "experimental_aggregate_gradients"])


class _Keras2(_Keras2Common):
  """Under tf-keras / Keras 2.15, wrapping a (new) `Optimizer`."""

  def apply_gradients(self, grads_and_vars, name=None,
                      skip_gradients_aggregation=False, **kwargs):
    """Applies unscaled gradients unless the policy skips the step.

    Keras 2's signature, whose second argument is `name`, as in TF 2.x: a
    positional second argument must never become
    `skip_gradients_aggregation` (replicas would each apply their own
    gradients).
    """
    grads_and_vars = list(grads_and_vars)
    with tf.init_scope():
      # The inner optimizer's variables, outside any cond branch.
      self.inner_optimizer.build([v for _, v in grads_and_vars])
    options = dict(kwargs)
    options["skip_gradients_aggregation"] = skip_gradients_aggregation
    options["name"] = name
    # None, as Keras 2's LossScaleOptimizer returns for these optimizers: a
    # `tf.function` may return what `apply_gradients` returned.
    self._apply_keras2(grads_and_vars, options)

  def _inner_apply(self, grads, variables, options):
    options = dict(options)
    name = options.pop("name")
    # `name` positionally, as TF 2.x's wrapper passed it on (see
    # `_Keras2Legacy._inner_apply`).
    return self.inner_optimizer.apply_gradients(list(zip(grads, variables)),
                                                name, **options)


_register_imported_kerases()
