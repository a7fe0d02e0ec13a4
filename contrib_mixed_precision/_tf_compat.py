# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TensorFlow version checks and the only private TensorFlow use.

Importing this module checks the installed TensorFlow against the supported
range in `version.py`:

* no TensorFlow: ImportError with an install hint;
* older than the range: ImportError naming both versions;
* newer than the range: one warning, then carry on.

Every private TensorFlow attribute this package touches is reached through a
function below, each with the reason it cannot use public API. The test
`tests/tf_compat_test.py` exercises each one, so a TensorFlow release that
moves them fails loudly there instead of silently elsewhere.

One reliance on TensorFlow's internals is a behaviour, not an attribute, so
it lives where it acts: `LossScaleOptimizer.__dir__` hides `get_slot_names`,
because TF's object-based checkpointing asks every object with
`"get_slot_names" in dir(obj)` for slot variables, and the inner optimizer
already reports them (its checkpoint test fails if TF changes this).
"""

import collections
import contextlib
import sys
import warnings

from packaging import version as _version

from contrib_mixed_precision import version as _cmp_version

_INSTALL_HINT = (
    "Install a supported TensorFlow, for example "
    "`pip install 'contrib_mixed_precision[tensorflow-cpu]'` or "
    "`pip install 'tensorflow{range}'`.")


def _check_tensorflow(tf_version: str) -> None:
  """Raises or warns when `tf_version` is outside the supported range."""
  found = _version.parse(tf_version)
  low = _version.parse(_cmp_version.MIN_TF_VERSION)
  high = _version.parse(_cmp_version.MAX_TF_VERSION)
  hint = _INSTALL_HINT.format(range=_cmp_version.TF_REQUIREMENT_RANGE)
  # Compare release tuples so that 2.15.0rc1 or 2.15.0.post1 count as 2.15.0.
  if found.release < low.release:
    raise ImportError(
        "contrib_mixed_precision {} requires TensorFlow >= {}, but TensorFlow "
        "{} is installed. {}".format(_cmp_version.__version__,
                                     _cmp_version.MIN_TF_VERSION, tf_version,
                                     hint))
  if found.release >= high.release:
    warnings.warn(
        "contrib_mixed_precision {} is tested with TensorFlow >= {} and < {}; "
        "TensorFlow {} is installed. It will probably work, but if it does "
        "not, please report it.".format(_cmp_version.__version__,
                                        _cmp_version.MIN_TF_VERSION,
                                        _cmp_version.MAX_TF_VERSION,
                                        tf_version),
        UserWarning,
        stacklevel=3)


try:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
except ImportError as e:
  raise ImportError(
      "contrib_mixed_precision needs TensorFlow, which could not be imported "
      "({}). {}".format(
          e, _INSTALL_HINT.format(range=_cmp_version.TF_REQUIREMENT_RANGE))
  ) from e

if not isinstance(getattr(tf, "__version__", None), str):
  # `tensorflow` and `tensorflow-cpu` (or tf-keras's dependency beside
  # `tensorflow-cpu`) install into one directory: uninstalling one of them
  # removes files the other needs, and leaves a `tensorflow` that imports
  # but is empty.
  raise ImportError(
      "contrib_mixed_precision needs TensorFlow, but the `tensorflow` "
      "imported from {} is broken: it has no `__version__`. This happens "
      "when two TensorFlow distributions (`tensorflow` and "
      "`tensorflow-cpu`) were installed and one was uninstalled: they share "
      "that directory. Reinstall the one you use, for example `pip install "
      "--force-reinstall 'tensorflow-cpu{range}'` (see `pip list | grep "
      "-i tensorflow`).".format(
          ", ".join(getattr(tf, "__path__", None) or
                    [getattr(tf, "__file__", None) or "?"]),
          range=_cmp_version.TF_REQUIREMENT_RANGE))

_check_tensorflow(tf.__version__)


# ---------------------------------------------------------------------------
# Private TensorFlow use. Keep every such access in this section.
# ---------------------------------------------------------------------------


def graph_key(graph=None):
  """The key `tf.compat.v1.mixed_precision.LossScale` files weights under.

  Why private: `LossScale` keeps its per-graph weights in `self._weights`,
  keyed by `(name, Graph._graph_key)`, and its checkpoint methods look them up
  that way. A `tf.function` body graph shares its outer graph's key, which is
  exactly the sharing we need. There is no public accessor.

  Args:
    graph: A `tf.Graph`, or None for the current default graph. In eager mode
      (and with graph None) the key is None, as `LossScale` uses.
  """
  if graph is None:
    if tf.executing_eagerly():
      return None
    graph = tf.compat.v1.get_default_graph()
  return graph._graph_key  # pylint: disable=protected-access


def register_loss_scale_weight(loss_scale, name, variable, key):
  """Files `variable` as the LossScale weight `name` for graph `key`.

  Why private: `LossScale._add_weight` would do this, but it always creates a
  resource variable, and TF 1.15's managers made the context's default kind
  (ref variables under `disable_v2_behavior()`, where legacy hooks fetch
  `'loss_scale:0'` for the value). So we create the variable ourselves and
  register it where the base class's `_trackable_children` and
  `_lookup_dependency` (object-based checkpointing) find it, and apply any
  restore that `tf.train.Checkpoint.restore` deferred until it exists.
  """
  weights = loss_scale._weights  # pylint: disable=protected-access
  if weights.get((name, key)) is not None:
    raise RuntimeError(
        "Loss-scale weight {!r} already exists for this graph.".format(name))
  weights[(name, key)] = variable
  loss_scale._handle_deferred_dependencies(  # pylint: disable=protected-access
      name=name, trackable=variable)


def is_building_function(graph=None) -> bool:
  """True inside a `tf.function` (FuncGraph) body being traced.

  Why private-ish: `Graph.building_function` is a public attribute of the
  Graph class but is not in the documented API surface.
  """
  if graph is None:
    graph = tf.compat.v1.get_default_graph()
  return bool(getattr(graph, "building_function", False))


def can_feed_any_tensor(graph) -> bool:
  """Whether running `graph` may replace any of its tensors by a fed value.

  True for a TF1-style graph (`Session.run(feed_dict=...)`), and for the
  graph of `tf.compat.v1.wrap_function` or `WrappedGraph`, whose
  `WrappedFunction.prune(feeds, fetches)` feeds any tensor; False for a
  `tf.function`'s graph, which is run only through its inputs.

  Why private: a wrapped function's graph is a plain `FuncGraph`, and no
  public API tells it from a `tf.function`'s; TF names it
  `wrapped_function...` (`wrapped_function_graph` for `WrappedGraph`), in
  every version from 2.15 on.
  """
  if not is_building_function(graph):
    return True
  return str(getattr(graph, "name", "")).startswith("wrapped_function")


def loss_scale_weights(loss_scale):
  """The weights a TF `LossScale` holds for the current graph, by name order.

  Why private: `LossScale` exposes its weights only to the checkpointing
  machinery (`_weights`, keyed by `(name, graph key)`); `variables()` of a
  manager wrapping e.g. a `DynamicLossScale` needs them too.
  """
  with tf.init_scope():
    key = graph_key()
  weights = loss_scale._weights  # pylint: disable=protected-access
  return [v for (name, k), v in sorted(weights.items(), key=lambda i: i[0][0])
          if k == key]


def loss_scale_weight(loss_scale, name):
  """The weight `name` a TF `LossScale` holds for the current graph, or None.

  Why private: as `loss_scale_weights`; Keras 2's `dynamic_counter` is the
  `DynamicLossScale`'s `good_steps` variable itself, and `LossScale` has
  no public accessor for it.
  """
  with tf.init_scope():
    key = graph_key()
  return loss_scale._weights.get((name, key))  # pylint: disable=protected-access


def step_graph(graph=None):
  """The graph of the `tf.function` being traced, above any cond or loop.

  AutoGraph builds a `tf.cond` branch or a `tf.while_loop` body as a
  graph of its own, inside the function's. Keras 3's `scale_loss` and the
  `apply` that follows it belong to one step wherever in that function
  they are called; a nested `tf.function` is another trace, and stays
  apart.

  Why private: the branch and body graphs are `ControlFlowFuncGraph`s
  (`tensorflow.python.ops.control_flow_v2_func_graphs`, TF 2.15 to 2.21),
  and their link to the enclosing graph is `FuncGraph.outer_graph`; no
  public API tells them from a `tf.function`'s graph.

  Args:
    graph: A graph, or None for the current default graph.
  """
  from tensorflow.python.ops import control_flow_v2_func_graphs  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  if graph is None:
    graph = tf.compat.v1.get_default_graph()
  while (isinstance(graph, control_flow_v2_func_graphs.ControlFlowFuncGraph)
         and getattr(graph, "outer_graph", None) is not None):
    graph = graph.outer_graph
  return graph


def track_trackable(parent, child, name):
  """Makes `child` a named checkpoint dependency of `parent`.

  Why private: `tf.compat.v1.train.Optimizer` is a plain `Trackable`, not an
  `AutoTrackable`, so attribute assignment does not track; TF's own
  `MixedPrecisionLossScaleOptimizer` calls `_track_trackable` the same way,
  and using the same names keeps checkpoints interchangeable with it.
  """
  return parent._track_trackable(child, name, overwrite=True)  # pylint: disable=protected-access


def checkpoint_keras3_wrapper_as_keras2(wrapper, inner) -> None:
  """Gives a Keras 3 LossScaleOptimizer Keras 2's checkpoint names.

  Keras 2's LossScaleOptimizer writes a `tf.train.Checkpoint` as its inner
  optimizer does (`optimizer/_iterations`, `optimizer/_learning_rate`, its
  slots under `optimizer/_variables/N`), beside `optimizer/loss_scale`.
  Keras 3's base class made an `_iterations` and a `_learning_rate` of the
  wrapper's own, which nothing reads, under those names and in its
  `_variables`. Here those names lead to the inner optimizer's
  `_iterations` and `_learning_rate`, and `_variables` to nothing: Keras
  2's `iterations` and learning rate then restore into the inner
  optimizer, a checkpoint written here never gives Keras 2 a learning rate
  of 0, and Keras 2's slots (numbered otherwise than Keras 3's) are left
  unrestored instead of failing on a shape. The Python attributes do not
  change, nor `wrapper.variables` (a `.keras` file's contents).

  Why private: `_track_trackable` (see `track_trackable`) and
  `tf.__internal__.tracking.Trackable`, the base class of what can be a
  checkpoint dependency; Keras 3's variables are such objects, not
  `tf.Variable`s.
  """
  trackable = tf.__internal__.tracking.Trackable
  for name in ("_iterations", "_learning_rate"):
    value = getattr(inner, name, None)
    if isinstance(value, trackable):
      track_trackable(wrapper, value, name)
  track_trackable(wrapper, trackable(), "_variables")


def in_control_flow_context(graph=None) -> bool:
  """True while building inside a TF1 control-flow context (cond or while).

  Why private: `Graph._get_control_flow_context()` is the only way to tell
  that ops are being built inside a v1 `tf.cond`/`tf.while_loop` body, where
  raw Switch/Merge ops must not be added outside that context's bookkeeping.
  """
  if graph is None:
    graph = tf.compat.v1.get_default_graph()
  return graph._get_control_flow_context() is not None  # pylint: disable=protected-access


def outermost_graph(graph=None):
  """The graph that `tf.init_scope()` lifts into: the outermost non-function.

  Why private: `FuncGraph.outer_graph` is an attribute of a class outside
  the public API. In eager mode it is the only way to reach that graph (the
  global default graph) while a `tf.function` or a `tf.cond` branch is being
  traced: inside `tf.init_scope()` there, `get_default_graph()` still
  returns the function's graph.
  """
  if graph is None:
    graph = tf.compat.v1.get_default_graph()
  while getattr(graph, "outer_graph", None) is not None:
    graph = graph.outer_graph
  return graph


def in_xla_context(graph=None) -> bool:
  """True while tracing ops that XLA will compile (`jit_compile=True`).

  Why private: `tf.function(jit_compile=True)` marks its graph with an XLA
  control-flow context, which only `control_flow_util` can see. The
  loss-scale update must not take a mutex there (XLA has no kernel for one)
  and needs none: XLA's launch holds the locks of the resource variables
  it updates while it runs the compiled function.
  """
  from tensorflow.python.ops import control_flow_util  # pylint: disable=g-import-not-at-top,g-direct-tensorflow-import
  if graph is None:
    graph = tf.compat.v1.get_default_graph()
  return bool(control_flow_util.GraphOrParentsInXlaContext(graph))


def called_from_keras_tf_optimizer(max_depth: int = 8) -> bool:
  """True if a Keras 2 `TFOptimizer.apply_gradients` is on the call stack.

  Keras 2 (TF 2.15's `tf.keras`, and tf-keras) wraps a v1 optimizer passed
  to `model.compile` in its `TFOptimizer`. In eager mode and in `fit`'s
  `tf.function` its `minimize` differentiates the loss itself and hands only
  the gradients over, through `TFOptimizer.apply_gradients`; in graph mode
  Keras calls the v1 optimizer's `compute_gradients` and `apply_gradients`
  directly instead.

  Why private: no public API tells a v1 optimizer who called it, and
  `TFOptimizer` is not public; this reads the callers' frames
  (`sys._getframe`) for a method `apply_gradients` of a class named
  `TFOptimizer` from a Keras module.

  Args:
    max_depth: How many callers to look through (wrappers such as Horovod's
      sit in between).
  """
  frame = sys._getframe(1)  # pylint: disable=protected-access
  for _ in range(max_depth):
    frame = frame.f_back
    if frame is None:
      return False
    # AutoGraph renames the functions it converts (`tf__apply_gradients`):
    # some TF versions convert Keras' code inside `fit`'s tf.function.
    if frame.f_code.co_name not in ("apply_gradients", "tf__apply_gradients"):
      continue
    caller = frame.f_locals.get("self")
    cls = type(caller)
    if cls.__name__ == "TFOptimizer" and "keras" in cls.__module__:
      return True
  return False


class KerasBases(collections.namedtuple("KerasBases", [
    "keras3", "keras3_optimizer", "legacy", "legacy_optimizer", "v3",
    "v3_optimizer", "wrapper_classes"])):
  """One Keras package's LossScaleOptimizer classes and optimizer bases.

  Under Keras 3, `keras3` is `keras.optimizers.LossScaleOptimizer` and
  `keras3_optimizer` its `Optimizer`; under Keras 2 (tf-keras, Keras 2.15),
  `legacy` and `v3` are the LossScaleOptimizer subclasses for legacy
  (`OptimizerV2`) and new optimizers. Absent classes are None.
  """


def keras_loss_scale_optimizer_bases(keras) -> KerasBases:
  """The classes a Keras optimizer of the package `keras` must extend.

  Why private: Keras 2 (tf-keras, and TF 2.15's Keras) exports only
  `BaseLossScaleOptimizer` (as `keras.mixed_precision.LossScaleOptimizer`),
  whose metaclass builds one of two unexported subclasses, one per optimizer
  family. `Model.compile` wraps any optimizer that is not a
  `BaseLossScaleOptimizer` under a `mixed_float16` policy, and the inner
  optimizer's family decides which subclass applies its gradients, so this
  package's optimizer must extend the unexported class itself. They live in
  the module that defines `BaseLossScaleOptimizer`, under the names
  `LossScaleOptimizer` and `LossScaleOptimizerV3`, in Keras 2.15 and every
  tf-keras from 2.15 to 2.21.

  Args:
    keras: The imported `keras` or `tf_keras` package.
  """
  public = keras.mixed_precision.LossScaleOptimizer
  major = int(str(getattr(keras, "__version__", "3")).split(".")[0])
  if major >= 3:
    return KerasBases(public, keras.optimizers.Optimizer, None, None, None,
                      None, (public,))
  module = sys.modules[public.__module__]
  legacy = getattr(module, "LossScaleOptimizer", None)
  v3 = getattr(module, "LossScaleOptimizerV3", None)
  return KerasBases(None, None, legacy, keras.optimizers.legacy.Optimizer,
                    v3, keras.optimizers.Optimizer, (public,))


def create_keras_legacy_optimizer_weights(optimizer, var_list) -> None:
  """Creates a Keras 2 legacy (`OptimizerV2`) optimizer's variables now.

  Why private: `OptimizerV2` creates its `iterations`, hyperparameters and
  slots inside its `apply_gradients`, and a `KerasLossScaleOptimizer` calls
  that inside the branch of the cond that skips non-finite steps. Under a
  `tf.distribute` strategy in a `tf.function`, variables first created in
  a cond branch fail to initialise (their initial value is a placeholder of
  the branch). `_create_all_weights(var_list)` is the method `OptimizerV2`
  itself calls to create them (Keras 2.15, tf-keras 2.15 to 2.21), and
  Keras' own LossScaleOptimizer delegates it the same way.
  """
  with tf.init_scope():
    optimizer._create_all_weights(var_list)  # pylint: disable=protected-access


def v1_optimizer_tensor(opt, name: str):
  """A `tf.compat.v1.train` optimizer's hyperparameter tensor `name`.

  `name` is the hyperparameter as its constructor spells it
  (`"learning_rate"`, `"l1_regularization_strength"`,
  `"l2_regularization_strength"`); the tensor is what `_prepare()` made
  of it, in the graph where `apply_gradients` runs.

  Why private: the dense kernels read `_<name>_tensor` (set by
  `_prepare()`), and the exact update by rows (`sparse_rows.py`) must
  read the very same tensor; `get_config` has no v1 equivalent.

  Args:
    opt: A `tf.compat.v1.train.Optimizer` whose `_prepare()` has run.
    name: The hyperparameter's constructor argument name.

  Returns:
    The tensor (before `_prepare()` it is None, or absent).

  Raises:
    AttributeError: `opt` has no such tensor (TF moved it, `opt` has no
      hyperparameter `name`, or `_prepare()` has not run).
  """
  attribute = "_{}_tensor".format(name)
  if not hasattr(opt, attribute):
    raise AttributeError(
        "{} has no `{}` (the tensor of its `{}`): TensorFlow {} may have "
        "moved it. Instead, pass an optimizer with a `{}` argument, or "
        "report this.".format(type(opt).__name__, attribute, name,
                              tf.__version__, name))
  return getattr(opt, attribute)


def v1_optimizer_use_locking(opt) -> bool:
  """A `tf.compat.v1.train` optimizer's `use_locking` constructor argument.

  Why private: v1 optimizers keep it only as `_use_locking`, and the exact
  update by rows (`sparse_rows.py`) locks its scatters as the dense kernel
  it replaces would.
  """
  return opt._use_locking  # pylint: disable=protected-access


# The per-variable dense updates of a `tf.compat.v1.train.Optimizer`: of a
# resource variable, and of a ref variable.
V1_DENSE_APPLY_METHODS = ("_resource_apply_dense", "_apply_dense")

_MISSING = object()


@contextlib.contextmanager
def patched_dense_apply(opt, make_replacement):
  """While entered, `opt`'s per-variable dense updates are replaced.

  For each method in `V1_DENSE_APPLY_METHODS`, `make_replacement(original)`
  gives the function `opt` calls instead (with the original's arguments,
  `grad, var`); `original` is the bound method it replaces. On exit the
  instance is as it was, including when it had its own attribute.

  Why private: `apply_gradients` has no public hook for the update of one
  variable; `_resource_apply_dense` and `_apply_dense` are the methods its
  per-variable processors call (TF 2.15 to 2.21). The caller holds any
  lock needed against other threads applying through `opt`.

  Args:
    opt: A `tf.compat.v1.train.Optimizer`.
    make_replacement: `original -> replacement`, called once per method.

  Yields:
    None.
  """
  before = {}
  for method in V1_DENSE_APPLY_METHODS:
    replacement = make_replacement(getattr(opt, method))
    before[method] = opt.__dict__.get(method, _MISSING)
    setattr(opt, method, replacement)
  try:
    yield
  finally:
    for method, value in before.items():
      if value is _MISSING:
        delattr(opt, method)
      else:
        setattr(opt, method, value)
