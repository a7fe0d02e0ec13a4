# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15's `tf.contrib.mixed_precision.LossScaleOptimizer`, on TF 2.x.

`compute_gradients` scales the loss by the manager's loss scale and returns
unscaled gradients; `apply_gradients` applies them only when every gradient
is finite, and updates the manager on every call. Between the two, user code
(clipping, all-reduce) sees ordinary, unscaled gradients.
"""

import threading
import weakref
from typing import Any, Iterable, List, Optional, Tuple

import tensorflow as tf

from contrib_mixed_precision import _tf_compat
from contrib_mixed_precision import _validation
from contrib_mixed_precision import graph_keys
from contrib_mixed_precision import loss_scale_manager as manager_lib
from contrib_mixed_precision import replica_consensus
from contrib_mixed_precision import skip_decision
from contrib_mixed_precision import sparse_rows
from contrib_mixed_precision import step_inputs
from contrib_mixed_precision import step_scale
from contrib_mixed_precision import sync_replicas
from contrib_mixed_precision import unscale

_V1Optimizer = tf.compat.v1.train.Optimizer
# Re-exported: it lived here before the contract module existed.
GraphKeys = graph_keys.GraphKeys


def _min_loss_scale(manager) -> float:
  """The lowest scale `manager` can reach (see `GraphKeys.MIN_LOSS_SCALE`)."""
  if isinstance(manager, manager_lib.FixedLossScaleManager):
    # TF 1.15's attribute, which subclasses that skip `__init__` set too.
    return float(manager._loss_scale)  # pylint: disable=protected-access
  return 1.0


def _manager_cond_scopes(manager) -> int:
  """How many `cond` name scopes one update of `manager` takes in a graph.

  TF 1.15's exponential manager built its update as a `tf.cond`, and this
  package's takes the scope too (`ExponentialUpdateLossScaleManager`); a
  fixed scale's update is a no-op. For any other manager, 0.
  """
  update = getattr(type(manager), "update_loss_scale", None)
  exponential = manager_lib.ExponentialUpdateLossScaleManager
  return 1 if update is exponential.update_loss_scale else 0


def _optimizer_name(opt) -> str:
  """`opt.get_name()`, or its class name for wrappers that cannot answer."""
  try:
    name = opt.get_name()
  except AttributeError:
    name = None
  return name or type(opt).__name__


def _variable_dtype(var) -> Optional[tf.DType]:
  """`var`'s dtype (a ref variable's base dtype), or None if it has none."""
  try:
    return tf.as_dtype(var.dtype).base_dtype
  except (AttributeError, TypeError):
    return None


def _as_op(result):
  """An inner `apply_gradients` result as one op (for a cond branch)."""
  if result is None:
    return tf.no_op()
  if isinstance(result, tf.Operation):
    return result
  if isinstance(result, tf.Tensor):
    return result.op
  return tf.group(result)


def _skip_unless(is_finite, apply_fn, cond_scope):
  """Builds `apply_fn()` so that its ops run only when `is_finite` is True.

  Returns an op that completes on every step, applied or skipped. Whatever
  `apply_fn` builds is built under the absolute name scope `cond_scope`, so
  variables it creates are named as TF 1.15 named them (`cond/beta1_power`).

  In a plain TF1-style graph this is one Switch on the flag: every op
  `apply_fn` builds takes the Switch's true output as a control input, so on
  a skipped step the executor marks them all dead and runs none of them, and
  a Merge makes the result live again. That is what TF 1.15's `tf.cond` did
  at run time, without routing every captured gradient, variable and
  hyperparameter through a Switch of its own: for a model with hundreds of
  variables the lowered `tf.cond` costs more per step and far more to build.

  Everywhere else it is a `tf.cond` (see
  `skip_decision.single_switch_allowed`).
  """
  if not skip_decision.single_switch_allowed():

    def apply_branch():
      # A cond_v2 branch is a function graph with a fresh name scope.
      with tf.compat.v1.name_scope(cond_scope):
        return _as_op(apply_fn())

    return tf.cond(is_finite, apply_branch, tf.no_op,
                   name=cond_scope.rstrip("/"))

  with tf.compat.v1.name_scope(cond_scope):
    skip, apply = tf.raw_ops.Switch(data=is_finite, pred=is_finite)
    pivot = tf.identity(apply, name="switch_t")
    # Variable creation inside `apply_fn` runs under `tf.init_scope()`, which
    # clears these control dependencies: initializers are never gated.
    with tf.control_dependencies([pivot]):
      applied = _as_op(apply_fn())
    with tf.control_dependencies([applied]):
      applied_pivot = tf.identity(pivot, name="applied")
    return tf.raw_ops.Merge(inputs=[skip, applied_pivot]).output.op


_KERAS_UNSCALED_MESSAGE = (
    "LossScaleOptimizer.apply_gradients was called by Keras' TFOptimizer, "
    "the wrapper `model.compile` puts around a tf.compat.v1.train optimizer. "
    "In eager mode and in `fit`'s tf.function, Keras differentiates the "
    "unscaled loss itself and passes only the gradients on, so the loss "
    "would never be scaled and float16 gradients would underflow. To train "
    "with `fit` and keep this manager's TF 1.15 policy, compile with "
    "`contrib_mixed_precision.KerasLossScaleOptimizer(opt, manager)`, where "
    "`opt` is the matching Keras optimizer (for example "
    "`tf.keras.optimizers.SGD(lr)` for GradientDescentOptimizer(lr)) and "
    "`manager` this LossScaleOptimizer's manager. Or run the Keras program "
    "in graph mode, calling `tf.compat.v1.disable_eager_execution()` at its "
    "start (Keras then calls `compute_gradients`, which scales the loss) "
    "(docs/migration.md, \"Keras\").")


def _file_unobserved_step(optimizer_name):
  """Notes, in the outermost graph, a step whose tensors cannot be fetched.

  An observer (`LossScaleHook`) reads the note to say what it cannot see.
  Nothing is filed when the outermost context is eager: no session runs it.
  """
  where = ("a tf.function or control-flow-v2 tf.cond branch"
           if _tf_compat.is_building_function() else
           "a TF1 tf.cond or tf.while_loop body")
  with tf.init_scope():
    if not tf.executing_eagerly():
      tf.compat.v1.add_to_collection(
          GraphKeys.UNOBSERVED_STEPS,
          "LossScaleOptimizer {!r} built inside {}".format(
              optimizer_name, where))


class _ScopeRegistry(object):
  """Which `cond` scope each LossScaleOptimizer applies in, per graph.

  Kept outside the optimizers (which then pickle as plain ones do) and weak
  on both the graphs and the optimizers. Eager mode's graph is the global
  default one, so `tf.compat.v1.reset_default_graph()` starts again at
  `cond`.
  """

  def __init__(self):
    self._lock = threading.Lock()
    # graph -> {name scope: [next index, WeakKeyDictionary(optimizer -> name)]}
    self._graphs = weakref.WeakKeyDictionary()

  def scope(self, graph, prefix, optimizer, width):
    """`optimizer`'s `cond` name under `prefix`, taking `width` if new."""
    with self._lock:
      entry = self._graphs.setdefault(graph, {}).setdefault(
          prefix, [0, weakref.WeakKeyDictionary()])
      names = entry[1]
      if optimizer not in names:
        index = entry[0]
        names[optimizer] = "cond_{}".format(index) if index else "cond"
        entry[0] += width
      return names[optimizer]


_SCOPES = _ScopeRegistry()


class LossScaleOptimizer(_V1Optimizer):
  """An optimizer that applies loss scaling, as TF 1.15's contrib one did.

  Loss scaling multiplies the loss by a scale before differentiation, so that
  small float16 gradients do not underflow, and divides the gradients by it
  afterwards. A step whose gradients contain NaN or Inf is skipped entirely:
  the model, the optimizer's slots and `global_step` stay as they were, and
  the manager lowers the scale.

  Why it exists: TF 2.x has no `tf.contrib`, and TF's own
  `tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer` differs in
  behaviour (a fixed scale does not skip NaN steps; a different policy) and
  in variable names. This class is TF 1.15's optimizer, with its crashes on
  None gradients and under `MirroredStrategy` fixed.

  Example (TF1 graph mode):

  ```python
  manager = ExponentialUpdateLossScaleManager(2**32, 1000, decr_ratio=0.5)
  opt = LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-4), manager)
  grads_and_vars = opt.compute_gradients(loss)
  grads, tvars = zip(*grads_and_vars)
  grads, _ = tf.clip_by_global_norm(grads, 1.0)
  train_op = opt.apply_gradients(zip(grads, tvars), global_step)
  ```
  """

  def __init__(self,
               opt: _V1Optimizer,
               loss_scale_manager,
               *,
               advance_global_step_on_skip: bool = False,
               xla_unscale: bool = False,
               keep_sparse_gradients: bool = False):
    """Wraps `opt`.

    Args:
      opt: The `tf.compat.v1.train.Optimizer` that applies the unscaled
        gradients (a Horovod `DistributedOptimizer` included).
      loss_scale_manager: A `LossScaleManager`, or a TF2
        `tf.compat.v1.mixed_precision.LossScale` (adapted through
        `LossScaleManager.from_loss_scale`).
      advance_global_step_on_skip: Keyword-only, default False (TF 1.15's
        behaviour). When True and `apply_gradients` gets a `global_step`,
        a skipped step still increments it, so step-based hooks such as
        `StopAtStepHook` count skipped steps too.
      xla_unscale: Keyword-only, default False. When True, eagerly,
        `compute_gradients` unscales each dense floating gradient and
        checks it for NaN and Inf in one XLA-compiled pass (`jit_compile`),
        which reads every element once instead of twice, and
        `apply_gradients` uses that check for the gradients it gets back
        unchanged. The numbers and the skip decision are TF 1.15's. It
        changes nothing in a TF1 graph, where a Session may feed the
        gradients values the check never saw, nor in a `tf.function`,
        where Grappler regroups TF 1.15's multiplies with the backprop's
        and an XLA call would keep them apart (one bit off TF 1.15; XLA's
        auto-clustering fuses there on a GPU). Off by default: on a CPU,
        TF's own kernels were faster in every case measured
        (docs/performance.md); on a GPU it saves a read of every gradient
        element, and needs a working XLA GPU compiler.
      keep_sparse_gradients: Keyword-only, default False. By default an
        `IndexedSlices` gradient (an embedding's) is made dense when it is
        unscaled, as TF 1.15 made it, so the inner optimizer takes its
        dense update and every number is TF 1.15's. When True it stays
        sparse: only its values are unscaled (duplicate rows are checked by
        their sums), which saves the dense table-sized gradient per step,
        but is a different training run wherever the inner optimizer's
        sparse update differs from its dense one, and it differs for every
        `tf.compat.v1.train` optimizer but one (measured against TF 1.15
        by tests/keep_sparse_gradients_test.py). Differs for: Adadelta,
        Adagrad, AdagradDA, Adam, Ftrl, Momentum, ProximalAdagrad,
        ProximalGradientDescent and RMSProp. Their dense update moves,
        decays or re-rounds the rows a batch did not touch (momentum,
        moments, accumulators, Ftrl's and the proximal optimizers'
        regularization), and the sparse one leaves them: on a [10, 4]
        embedding after 4 steps, Ftrl and AdagradDA were off by up to 0.95
        (their dense update sets every row no step has touched to 0),
        Momentum(0.1, 0.9) by 0.48, RMSProp(0.1, momentum=0.5) by 0.15;
        Adagrad, Adadelta and Adam in the last bits or in their slots
        only. Same as TF 1.15 only when no id repeats within a step:
        GradientDescent. With repeated ids it differs in the last bit, in
        float16 and float32 alike (TF 1.15 unscaled the summed rows). See
        docs/migration.md. The default is exact and, for GradientDescent,
        Adagrad and the proximal ones without regularization (a zero
        gradient leaves a row as it was), updates only the touched rows
        itself (`sparse_rows`), in `minimize` and wherever the gradients
        `compute_gradients` returned come back unchanged outside a Session
        graph; so the opt-in saves little there (docs/performance.md,
        "Embeddings by their touched rows").

    Raises:
      TypeError: If `opt` is not a `tf.compat.v1.train.Optimizer`,
        `loss_scale_manager` is neither a manager nor a `LossScale`, or
        `advance_global_step_on_skip`, `xla_unscale` or
        `keep_sparse_gradients` is not a bool (a string "False" would
        otherwise count as True).
    """
    # Set before anything else: subclasses may define __getattr__ forwarding
    # to `_opt`, which must never find it missing.
    self._opt = opt
    if not isinstance(opt, _V1Optimizer):
      hint = ""
      if isinstance(opt, tf.Module) or "keras" in type(opt).__module__:
        hint = (" For a Keras optimizer use "
                "`contrib_mixed_precision.KerasLossScaleOptimizer(opt, "
                "loss_scale_manager)` instead, which keeps the manager's "
                "policy in Keras.")
      raise TypeError(
          "`opt` must be a tf.compat.v1.train.Optimizer, but got {!r} of type "
          "{}.{}".format(opt, type(opt).__name__, hint))
    sync_replicas.refuse_wrapping_sync_replicas(opt)
    if isinstance(loss_scale_manager, tf.compat.v1.mixed_precision.LossScale):
      loss_scale_manager = manager_lib.LossScaleManager.from_loss_scale(
          loss_scale_manager)
    if not isinstance(loss_scale_manager, manager_lib.LossScaleManager):
      raise TypeError(
          "`loss_scale_manager` must be a LossScaleManager (e.g. "
          "ExponentialUpdateLossScaleManager) or a "
          "tf.compat.v1.mixed_precision.LossScale, but got {!r} of type "
          "{}.".format(loss_scale_manager, type(loss_scale_manager).__name__))
    self._loss_scale_manager = loss_scale_manager
    self._advance_global_step_on_skip = _validation.check_bool(
        "advance_global_step_on_skip", advance_global_step_on_skip)
    self._xla_unscale = _validation.check_bool("xla_unscale", xla_unscale)
    self._keep_sparse_gradients = _validation.check_bool(
        "keep_sparse_gradients", keep_sparse_gradients)
    # Some wrappers never call `Optimizer.__init__`: no `_use_locking`, and
    # the `get_name()` they inherit fails for lack of `_name`.
    super().__init__(
        use_locking=bool(getattr(opt, "_use_locking", False)),
        name=_optimizer_name(opt))
    # Same dependency names as TF's MixedPrecisionLossScaleOptimizer, so
    # `tf.train.Checkpoint(optimizer=lso)` saves the inner optimizer's and
    # the manager's state.
    _tf_compat.track_trackable(self, opt, "base_optimizer")
    loss_scale_object = getattr(loss_scale_manager, "loss_scale", None)
    if isinstance(loss_scale_object, tf.compat.v1.mixed_precision.LossScale):
      _tf_compat.track_trackable(self, loss_scale_object, "loss_scale")
    # The last step's decision and the scale that step used (read before
    # the manager's update, in every mode), for observability (GraphKeys).
    self.finite_grads = None
    self.loss_scale = None

  # -- Delegation ----------------------------------------------------------

  def get_name(self) -> str:
    return _optimizer_name(self._opt)

  def get_slot(self, var, name):
    return self._opt.get_slot(var, name)

  def get_slot_names(self) -> List[str]:
    return self._opt.get_slot_names()

  def __dir__(self):
    # Object-based checkpointing asks every object that lists
    # `get_slot_names` in `dir()` for its slots. The inner optimizer is
    # tracked as `base_optimizer` and already owns (and restores) them, so
    # reporting the same variables here too makes `tf.train.Checkpoint` fail
    # with "A slot variable was re-used as a dependency". Hidden from `dir()`
    # only; calling `lso.get_slot_names()` works as before.
    return [n for n in super().__dir__() if n != "get_slot_names"]

  def variables(self) -> List[tf.Variable]:
    """The inner optimizer's variables, then the manager's state variables."""
    inner = getattr(self._opt, "variables", None)
    result = list(inner()) if callable(inner) else []
    manager_variables = getattr(self._loss_scale_manager, "variables", None)
    if callable(manager_variables):
      seen = set(id(v) for v in result)
      result.extend(v for v in manager_variables() if id(v) not in seen)
    return result

  # -- Gradients ----------------------------------------------------------

  def minimize(self, loss, global_step=None, var_list=None,
               gate_gradients=_V1Optimizer.GATE_OP, aggregation_method=None,
               colocate_gradients_with_ops=False, name=None, grad_loss=None):
    """`compute_gradients`, then `apply_gradients`, as TF1's `minimize`.

    The gradients it computes are never seen, nor fed, by anyone else, so
    in a TF1-style graph too an embedding's dense gradient is checked, and
    where that is exact applied, by its touched rows (`sparse_rows`).
    """
    with sparse_rows.inside_minimize():
      return super().minimize(
          loss, global_step=global_step, var_list=var_list,
          gate_gradients=gate_gradients,
          aggregation_method=aggregation_method,
          colocate_gradients_with_ops=colocate_gradients_with_ops,
          name=name, grad_loss=grad_loss)

  def compute_gradients(self,
                        loss,
                        var_list=None,
                        gate_gradients=_V1Optimizer.GATE_OP,
                        aggregation_method=None,
                        colocate_gradients_with_ops=False,
                        grad_loss=None) -> List[Tuple[Any, tf.Variable]]:
    """Computes unscaled gradients of the scaled loss.

    As TF 1.15 did: the loss is multiplied by the loss scale cast to the
    loss's dtype, the inner optimizer's `compute_gradients` differentiates
    it (all six arguments forwarded), and each gradient is multiplied by
    the reciprocal of the scale (taken in the scale's dtype) cast to that
    gradient's dtype. A trainable scale variable is differentiated too, in
    every mode, as TF 1.15 differentiated it.

    Args:
      loss: A scalar tensor, or a callable returning one (required in eager
        mode).
      var_list: See `tf.compat.v1.train.Optimizer.compute_gradients`.
      gate_gradients: Same.
      aggregation_method: Same.
      colocate_gradients_with_ops: Same.
      grad_loss: Same.

    Returns:
      A list of `(gradient, variable)` pairs in `var_list` order; a None
      gradient stays None, and an `IndexedSlices` gradient is made dense,
      as in TF 1.15 (sparse with `keep_sparse_gradients=True`).

    Raises:
      TypeError: If the manager's scale is a bool.
      ValueError: If the manager's scale is known to be unusable when the
        step is built: not a scalar, 0, negative, NaN, infinite, or 0 or
        infinite as float32 (`step_scale`). A graph value that is only
        known when the step runs fails it with `InvalidArgumentError`
        before anything is applied.
    """
    scale = step_scale.read(self._loss_scale_manager.get_loss_scale(),
                            self._loss_scale_manager)
    grads_and_vars = self._opt.compute_gradients(
        unscale.scaled_loss(loss, scale.for_loss()),
        var_list=var_list,
        gate_gradients=gate_gradients,
        aggregation_method=aggregation_method,
        colocate_gradients_with_ops=colocate_gradients_with_ops,
        grad_loss=grad_loss)
    return self._down_scale(grads_and_vars, scale.value)

  def _down_scale(self, grads_vars, loss_scale):
    """Divides each gradient by `loss_scale` (TF 1.15 API, kept for subclasses).

    In eager mode, for `skip_decision.EAGER_COMPILE_MIN_GRADIENTS`
    gradients or more, the multiplies and the finiteness check run as one
    compiled function, and so they do in every mode with `xla_unscale`
    (see `unscale.unscale`).

    Args:
      grads_vars: `(gradient, variable)` pairs.
      loss_scale: The scalar floating scale the loss was multiplied by.

    Returns:
      A list of `(gradient * (1 / loss_scale), variable)` pairs; None stays
      None, and an `IndexedSlices` is made dense as TF 1.15 made it (kept
      sparse with `keep_sparse_gradients=True`).
    """
    grads_vars = list(grads_vars)
    grads = [g for g, _ in grads_vars if g is not None]
    if not grads:
      return grads_vars
    unscaled = iter(unscale.unscale(
        grads, loss_scale, xla=getattr(self, "_xla_unscale", False),
        keep_sparse=getattr(self, "_keep_sparse_gradients", False)))
    return [(None if g is None else next(unscaled), v) for g, v in grads_vars]

  # -- Applying ------------------------------------------------------------

  def apply_gradients(self, grads_and_vars: Iterable[Tuple[Any, Any]],
                      global_step=None, name: Optional[str] = None):
    """Applies the gradients if all are finite, and updates the loss scale.

    Args:
      grads_and_vars: Any iterable of `(gradient, variable)` pairs (a `zip`
        included), read once. None gradients are passed through to the inner
        optimizer and ignored by the finiteness check. A gradient that is a
        Python or NumPy number, array or list is converted to a tensor of
        its variable's dtype, as the variable will hold it.
      global_step: Passed to the inner optimizer, which increments it when it
        applies. A skipped step leaves it alone (unless the optimizer was
        built with `advance_global_step_on_skip=True`), except inside
        `SyncReplicasOptimizer`, where a skipped aggregate advances it too,
        so that the sync tokens stay fresh (see `sync_replicas.py`).
      name: Passed to the inner optimizer.

    Returns:
      In graph mode or `tf.function`, an op that applies (or skips) the step
      and updates the loss scale. In eager mode, None: it has run.

    Raises:
      TypeError: If an element of `grads_and_vars` is not a pair, or a
        gradient is neither None, a tensor, IndexedSlices, nor numbers
        convertible to its variable's dtype.
      RuntimeError: If Keras' eager `fit` calls it: Keras computed the
        gradients of the unscaled loss (see `_KERAS_UNSCALED_MESSAGE`).
    """
    if _tf_compat.called_from_keras_tf_optimizer():
      raise RuntimeError(_KERAS_UNSCALED_MESSAGE)
    grads_and_vars = tuple(grads_and_vars)
    for i, pair in enumerate(grads_and_vars):
      if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError(
            "`grads_and_vars` must contain (gradient, variable) pairs, but "
            "element {} is {!r}.".format(i, pair))
    # Numbers, arrays and lists become tensors once, of the variable's dtype,
    # for both the check and the inner optimizer.
    grads_and_vars = tuple(
        (step_inputs.as_gradient(g, "grads_and_vars[{}][0]".format(i),
                                  _variable_dtype(v)), v)
        for i, (g, v) in enumerate(grads_and_vars))
    # An embedding's dense gradient from `compute_gradients`, handed back
    # as it was, is checked by its touched rows, and applied by them where
    # that is the dense update (`sparse_rows`).
    forms = {}
    for g, _ in grads_and_vars:
      form = sparse_rows.lookup(g)
      if form is not None:
        forms[id(g)] = form
    is_finite = skip_decision.all_finite(sparse_rows.substitute_check(
        [g for g, _ in grads_and_vars]))
    if replica_consensus.in_replica_context_of_strategy():
      # One decision for all replicas: any non-finite replica skips them all.
      agreed = replica_consensus.replica_consensus(is_finite)
      return tf.distribute.get_replica_context().merge_call(
          self._merged_apply, args=(grads_and_vars, global_step, name, agreed))

    def apply_fn():
      pairs, by_identity = sparse_rows.for_inner(grads_and_vars, forms)
      with sparse_rows.exact_updates(self._opt, by_identity):
        return self._opt.apply_gradients(pairs, global_step, name)

    return self._apply_or_skip(
        is_finite, apply_fn, global_step,
        advance_on_skip=self._advance_on_skip(grads_and_vars))

  def _advance_on_skip(self, grads_and_vars) -> bool:
    """Whether a skipped step must still advance `global_step`.

    Inside `SyncReplicasOptimizer` (the gradients were taken out of its
    accumulators) it must: the takes have moved the accumulators' clock on,
    and the tokens the chief fills in next carry `global_step`. Left behind,
    every later gradient would be dropped as stale and training would stall.
    """
    return (self._advance_global_step_on_skip or
            sync_replicas.aggregated_by_accumulators(
                [g for g, _ in grads_and_vars]))

  def _distributed_apply(self, distribution, grads_and_vars, global_step=None,
                         name=None):
    """`apply_gradients` for callers already in a cross-replica context."""
    grads_and_vars = tuple(grads_and_vars)
    is_finite = replica_consensus.cross_replica_all_finite(
        distribution, [g for g, _ in grads_and_vars])
    return self._merged_apply(distribution, grads_and_vars, global_step, name,
                              is_finite)

  def _merged_apply(self, distribution, grads_and_vars, global_step, name,
                    is_finite):
    """The cross-replica half of a distributed `apply_gradients`."""
    # After consensus every replica holds the same flag.
    is_finite = distribution.experimental_local_results(is_finite)[0]

    def apply_fn():
      # The inner (TF1) optimizer expects a replica context, where it does
      # its own gradient all-reduce.
      return distribution.group(
          distribution.extended.call_for_each_replica(
              self._opt.apply_gradients,
              args=(grads_and_vars, global_step, name)))

    return self._apply_or_skip(is_finite, apply_fn, global_step)

  def _apply_or_skip(self, is_finite, apply_fn, global_step,
                     advance_on_skip=None):
    """Runs `apply_fn` only if `is_finite`; always updates the manager.

    A skip advances `global_step` when `advance_on_skip` is True (None: as
    the optimizer was built, `advance_global_step_on_skip`).
    """
    if advance_on_skip is None:
      advance_on_skip = self._advance_global_step_on_skip
    # This step's scale, read before the manager's update below, in every
    # mode: `opt.loss_scale` is the scale the step used, never the next.
    scale = step_scale.read(self._loss_scale_manager.get_loss_scale(),
                            self._loss_scale_manager)
    if scale.checked_at_run_time:
      # The read's check holds the whole step back, not only the update
      # below: gradients that did not come through this step's
      # `compute_gradients` (fed, a tape's) have not waited for it.
      with tf.control_dependencies([scale.value]):
        is_finite = tf.identity(is_finite)
    loss_scale = tf.cast(scale.value, tf.float32)
    self.finite_grads = is_finite
    self.loss_scale = loss_scale
    if tf.executing_eagerly():
      finite = bool(is_finite)
      # Taken on every call, used when the inner optimizer creates its
      # variables (the first finite step).
      cond_scope = self._variables_cond_scope()
      if finite:
        with tf.name_scope(cond_scope):
          apply_fn()
      self._loss_scale_manager.update_loss_scale(is_finite)
      if not finite:
        self._maybe_advance_global_step(global_step)
      return None

    # Observers fetch this step's tensors from outside, which a function
    # body or a TF1 cond/while body does not allow (a dead branch has no
    # value to fetch).
    observable = not (_tf_compat.is_building_function() or
                      _tf_compat.in_control_flow_context())
    # TF 1.15 built the inner apply inside a `tf.cond`, so the inner
    # optimizer's non-slot variables live in that cond's name scope (Adam's
    # `cond/beta1_power`), and TF 1.15 checkpoints hold those names. Control
    # flow v2 builds branches in a function graph with a fresh name scope,
    # so open the scope here and re-enter it inside the branch.
    cond_scope = self._variables_cond_scope()

    maybe_apply = _skip_unless(is_finite, apply_fn, cond_scope)
    # The update waits for the read: a fetch of the scale with the train op
    # sees this step's scale.
    with tf.control_dependencies([loss_scale]):
      update_op = self._loss_scale_manager.update_loss_scale(is_finite)
    ops = [maybe_apply]
    if update_op is not None:
      ops.append(update_op)
    if advance_on_skip and global_step is not None:
      with tf.control_dependencies([maybe_apply]):
        ops.append(
            tf.cond(is_finite, tf.no_op,
                    lambda: _as_op(_advance_global_step(global_step)),
                    name="advance_global_step_on_skip"))
    step_op = tf.group(*ops)
    if observable:
      # All four together, once the step is built: one entry per optimizer.
      for key, value in (
          (GraphKeys.FINITE_GRADS, is_finite),
          (GraphKeys.LOSS_SCALE, loss_scale),
          (GraphKeys.MIN_LOSS_SCALE,
           tf.constant(_min_loss_scale(self._loss_scale_manager), tf.float32,
                       name="min_loss_scale")),
          (GraphKeys.STEP_OPS, step_op)):
        tf.compat.v1.add_to_collection(key, value)
    else:
      _file_unobserved_step(self.get_name())
    return step_op

  def _variables_cond_scope(self) -> str:
    """The absolute name scope of the inner apply, the same in every mode.

    The inner optimizer names its non-slot variables there (Adam's
    `cond/beta1_power`). TF 1.15 built the inner apply in a `tf.cond`, which
    the graph named `cond`, `cond_1`, ... after whatever else it held, so
    the names changed with any other `tf.cond` in the graph, and eager mode
    (whose conds take no names) could not follow them.

    Here the names depend only on the LossScaleOptimizers applied in the
    same outermost graph and name scope (see `_ScopeRegistry`): the first
    takes `cond`, and each next one the index after the previous one's apply
    and its exponential manager's update, which TF 1.15 also built as a
    `cond`. A graph holding only these optimizers is named as in TF 1.15
    (`cond`, then `cond_2` after an exponential manager, `cond_1` after a
    fixed one). Other conds, dynamic adapters' updates included, take no
    index. Inside an outer `tf.cond` the name is under that cond's scope
    (`cond/cond/beta1_power`) in graph mode and in `tf.function`, with
    control flow v1 or v2 alike; an eager `tf.cond` opens no scope, so there
    it is `cond/beta1_power`.
    """
    graph = _tf_compat.outermost_graph()
    # `tf.init_scope()` carries the current graph's name scope over to the
    # outermost context: the whole scope in eager mode and plain graphs.
    with tf.init_scope():
      eager = tf.executing_eagerly()
      prefix = tf.get_current_name_scope()
    if not eager and graph is not tf.compat.v1.get_default_graph():
      # Building a function graph (a `tf.function`, or a control-flow-v2
      # branch, whose own scope starts empty) inside a graph: the outer
      # graph's scope comes first (`cond` while a v2 cond builds a branch).
      prefix = "/".join(p for p in (graph.get_name_scope(), prefix) if p)
    name = _SCOPES.scope(graph, prefix, self,
                         1 + _manager_cond_scopes(self._loss_scale_manager))
    full = "/".join(p for p in (prefix, name) if p)
    if not tf.executing_eagerly() and graph is tf.compat.v1.get_default_graph():
      # Keep later conds of the graph out of the scope when it is still free.
      # (`unique_name` puts the current name scope, `prefix`, in front.)
      if graph.unique_name(name, mark_as_used=False) == full:
        graph.unique_name(name, mark_as_used=True)
    return full + "/"

  def _maybe_advance_global_step(self, global_step):
    if self._advance_global_step_on_skip and global_step is not None:
      return _advance_global_step(global_step)
    return None


def _advance_global_step(global_step):
  """Adds one to `global_step`, as an applied step's inner optimizer does."""
  return global_step.assign_add(
      tf.ones([], dtype=global_step.dtype.base_dtype), use_locking=True,
      read_value=False)
