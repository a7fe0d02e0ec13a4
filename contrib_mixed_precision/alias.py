# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Opt-in runtime alias: legacy mixed-precision names resolve on TF 2.15+.

`tf.contrib.mixed_precision` resolves to this package, and TF 2.0-2.8's
removed experimental names (`tf.train.experimental.DynamicLossScale`,
`tf.keras.mixed_precision.experimental`, ...) come back, each as what
`contrib-mp-upgrade` converts it to.

This is a migration aid for code that cannot be edited (vendored, generated,
or owned by someone else). Code you can edit should be converted once with
the `contrib-mp-upgrade` command instead: an alias that patches TensorFlow's
module namespace is a crutch, not a way of life.

```python
import contrib_mixed_precision
contrib_mixed_precision.install_alias()

import legacy_trainer  # uses tf.contrib.mixed_precision; now it imports
```

Nothing happens on `import contrib_mixed_precision`: only an explicit
`install_alias()` call touches `sys.modules` or TensorFlow's modules.
"""

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

_MP = "tensorflow.contrib.mixed_precision"

# The names TF 1.15's `tf.contrib.mixed_precision` exported, exactly.
_TF115_NAMES = ("LossScaleManager", "FixedLossScaleManager",
                "ExponentialUpdateLossScaleManager", "LossScaleOptimizer")


class _ContribAlias(types.ModuleType):
  """A stand-in `tensorflow.contrib` that holds only `mixed_precision`."""

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    raise AttributeError(
        "`tf.contrib.{0}` does not exist: TensorFlow 2 removed `tf.contrib`, "
        "and `contrib_mixed_precision.install_alias()` aliases only "
        "`tf.contrib.mixed_precision`. Migrate `tf.contrib.{0}` separately "
        "(see the TensorFlow 2 migration guide and `tf_upgrade_v2`).".format(
            name))


class _MixedPrecisionAlias(types.ModuleType):
  """`tensorflow.contrib.mixed_precision`: this package under its old name.

  A module of its own rather than the package object, because TF 1.15 code
  also reaches `tf.contrib.mixed_precision.python.loss_scale_manager`, and
  the package must not grow a `python` attribute. Every other attribute is
  the package's own object, so classes compare identical.
  """

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    package = sys.modules["contrib_mixed_precision"]
    try:
      return getattr(package, name)
    except AttributeError:
      raise AttributeError(
          "module {!r} (an alias of `contrib_mixed_precision`) has no "
          "attribute {!r}. TF 1.15 exported {}.".format(
              _MP, name, ", ".join(_TF115_NAMES))) from None


class _AliasLoader(importlib.abc.Loader):
  """The loader of the modules `install_alias()` builds, named in their specs.

  The import system asks a module's spec and loader for `find_spec`,
  `pkgutil.find_loader`, `importlib.reload` and `inspect.getfile`; a module
  without them makes those calls raise. Loading one of these modules again
  (a reload, or an import after it left `sys.modules`) hands back the same
  object, its exports refreshed from the package's modules.
  """

  def __init__(self):
    self._modules = {}  # Canonical name -> (module, refresh function).

  def add(self, module, refresh=None) -> None:
    """Gives `module` a spec naming this loader; `refresh()` on reload."""
    name = module.__name__
    spec = importlib.machinery.ModuleSpec(name, self, origin=__file__,
                                          is_package=True)
    spec.has_location = True  # So `__file__` names this file, as on reload.
    module.__spec__ = spec
    module.__loader__ = self
    module.__package__ = name
    module.__path__ = spec.submodule_search_locations  # Empty: a package.
    module.__file__ = __file__
    self._modules[name] = (module, refresh)

  def spec_for(self, name):
    entry = self._modules.get(name)
    return entry[0].__spec__ if entry else None

  def create_module(self, spec):
    return self._modules[spec.name][0]

  def exec_module(self, module):
    refresh = self._modules[module.__spec__.name][1]
    if refresh is not None:
      refresh()


class _AliasFinder(importlib.abc.MetaPathFinder):
  """Finds the alias modules (by their canonical names), and nothing else."""

  def __init__(self, loader: _AliasLoader):
    self._loader = loader

  def find_spec(self, fullname, path=None, target=None):
    del path, target  # Only the name decides.
    return self._loader.spec_for(fullname)


def _is_ours(module) -> bool:
  return getattr(module, "__contrib_mixed_precision_alias__", False)


def _real_contrib(tf):
  """The real `tensorflow.contrib` module, or None (always None on TF 2)."""
  existing = sys.modules.get("tensorflow.contrib")
  if existing is None:
    existing = tf.__dict__.get("contrib")
  if existing is not None and not _is_ours(existing):
    return existing
  return None


# TF 2.0-2.8's loss scales, exported today as `tf.compat.v1.mixed_precision`.
_TF2X_LOSS_SCALES = ("LossScale", "FixedLossScale", "DynamicLossScale")


def _keras_loss_scale_optimizer():
  """This package's Keras optimizer, looked up when first used."""
  package = sys.modules["contrib_mixed_precision"]
  try:
    return package.KerasLossScaleOptimizer
  except AttributeError:
    raise AttributeError(
        "TF 2.x's Keras `LossScaleOptimizer` is served by "
        "`contrib_mixed_precision.KerasLossScaleOptimizer`, which this "
        "installation of contrib_mixed_precision does not have. Upgrade "
        "contrib_mixed_precision.") from None


def _enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
  """TF 2.0-2.8's `tf.train.experimental.enable_mixed_precision_graph_rewrite`.

  A `tf.compat.v1` optimizer goes to TF's own v1 function, which is TF
  2.0's code. A Keras optimizer is wrapped in this package's
  `KerasLossScaleOptimizer` (TF 2.0's numbers; today's TF function refuses
  today's Keras optimizers), and Grappler's float16 rewrite is turned on as
  TF 2.x's function did; it casts only on a GPU.
  """
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  if isinstance(opt, tf.compat.v1.train.Optimizer):
    return tf.compat.v1.mixed_precision.enable_mixed_precision_graph_rewrite(
        opt, loss_scale)
  wrapped = _keras_loss_scale_optimizer()(opt, loss_scale)
  tf.config.optimizer.set_experimental_options({"auto_mixed_precision": True})
  return wrapped


def _disable_mixed_precision_graph_rewrite():
  """TF 2.0-2.8's `disable_mixed_precision_graph_rewrite`: the rewrite off."""
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  tf.config.optimizer.set_experimental_options({"auto_mixed_precision": False})


class _KerasExperimentalAlias(types.ModuleType):
  """`tf.keras.mixed_precision.experimental` of TF 2.0-2.8, on today's Keras."""

  def __getattr__(self, name):
    if name == "LossScaleOptimizer":
      return _keras_loss_scale_optimizer()
    raise AttributeError(
        "module {!r} (TF 2.0-2.8's, restored by "
        "`contrib_mixed_precision.install_alias()`) has no attribute {!r}. "
        "It has Policy, set_policy, global_policy, get_layer_policy and "
        "LossScaleOptimizer.".format(self.__name__, name))


def _keras_experimental(mixed_precision):
  """The stand-in `experimental` module over today's Keras mixed precision."""
  module = _KerasExperimentalAlias(
      "tensorflow.keras.mixed_precision.experimental",
      "TF 2.0-2.8's `tf.keras.mixed_precision.experimental`, restored by "
      "`contrib_mixed_precision.install_alias()`.")

  def policy(name, loss_scale="auto"):
    """TF 2.x's `Policy(name, loss_scale)`: today's Policy, and a warning.

    TF 2.1-2.8's `compile` wrapped the optimizer in a LossScaleOptimizer
    with the policy's loss scale, and left it alone for `loss_scale=None`.
    Today's `compile` wraps it in Keras' own dynamic LossScaleOptimizer
    for every `mixed_float16` policy, whatever `loss_scale` said: each
    `loss_scale` it would get other numbers from is warned about.
    """
    if loss_scale is None and name == "mixed_float16":
      warnings.warn(
          "`Policy('mixed_float16', loss_scale=None)`: TF 2.x's `compile` "
          "did not scale the loss with this policy, but today's `compile` "
          "wraps the optimizer in Keras' dynamic LossScaleOptimizer, which "
          "scales the loss and skips non-finite steps. To train as TF 2.x "
          "did, compile with "
          "`contrib_mixed_precision.KerasLossScaleOptimizer(optimizer, 1)`: "
          "a fixed scale of 1 scales nothing and skips no step, and "
          "`compile` does not wrap it again.", stacklevel=2)
    elif loss_scale not in ("auto", None):
      warnings.warn(
          "`Policy({!r}, loss_scale={!r})`: today's Keras Policy has no loss "
          "scale, so `compile` will not use this one. Wrap the optimizer the "
          "model is compiled with: "
          "`contrib_mixed_precision.KerasLossScaleOptimizer(optimizer, "
          "loss_scale)` (add `skipped_steps_advance_iterations=True` for "
          "code written for TF 2.3 or later, whose skipped steps advanced "
          "`iterations`).".format(name, loss_scale), stacklevel=2)
    return mixed_precision.Policy(name)

  module.Policy = policy
  module.set_policy = mixed_precision.set_global_policy
  module.global_policy = mixed_precision.global_policy
  module.get_layer_policy = lambda layer: layer.dtype_policy
  module.__contrib_mixed_precision_alias__ = True
  return module


def _install_tf2x(tf) -> None:
  """Puts TF 2.0-2.8's removed mixed-precision names back (idempotent)."""
  v1 = tf.compat.v1.mixed_precision
  modules = [tf.train.experimental, tf.compat.v2.train.experimental]
  for name in ("tensorflow.train.experimental",
               "tensorflow.compat.v2.train.experimental"):
    # Importing an API module by name makes another module object (and
    # rebinds the attribute): `from tensorflow.train.experimental import X`
    # reads that one.
    modules.append(importlib.import_module(name))
  modules += [tf.train.experimental, tf.compat.v2.train.experimental]
  for experimental in modules:
    for name in _TF2X_LOSS_SCALES:
      setattr(experimental, name, getattr(v1, name))
    experimental.enable_mixed_precision_graph_rewrite = (
        _enable_mixed_precision_graph_rewrite)
    experimental.disable_mixed_precision_graph_rewrite = (
        _disable_mixed_precision_graph_rewrite)
  if not _is_ours(sys.modules.get("tensorflow.mixed_precision")):
    top = types.ModuleType(
        "tensorflow.mixed_precision",
        "TF 2.1-2.8's `tf.mixed_precision`, restored by "
        "`contrib_mixed_precision.install_alias()`.")
    experimental = types.ModuleType(
        "tensorflow.mixed_precision.experimental",
        "TF 2.1-2.8's `tf.mixed_precision.experimental`, restored by "
        "`contrib_mixed_precision.install_alias()`.")
    for name in _TF2X_LOSS_SCALES:
      setattr(experimental, name, getattr(v1, name))
    top.experimental = experimental
    top.__contrib_mixed_precision_alias__ = True
    experimental.__contrib_mixed_precision_alias__ = True
    for module in (top, experimental):
      sys.modules[module.__name__] = module
      sys.modules[module.__name__.replace("tensorflow.",
                                          "tensorflow.compat.v2.", 1)] = (
                                              module)
    tf.mixed_precision = top
    tf.compat.v2.mixed_precision = top
  try:
    keras_mp = tf.keras.mixed_precision
    # Importing it by name gives another module object on TF 2.16+ (and
    # rebinds `tf.keras.mixed_precision`): each must hold `experimental`.
    modules = [keras_mp,
               importlib.import_module("tensorflow.keras.mixed_precision"),
               tf.keras.mixed_precision]
  except (AttributeError, ImportError):
    return  # No Keras in this environment: nothing of it to restore.
  experimental = sys.modules.get(
      "tensorflow.keras.mixed_precision.experimental")
  if not _is_ours(experimental):
    experimental = _keras_experimental(keras_mp)
    sys.modules["tensorflow.keras.mixed_precision.experimental"] = experimental
  for module in modules:
    module.experimental = experimental


def install_alias() -> None:
  """Makes every TF 1.15 way of reaching `tf.contrib.mixed_precision` work.

  Legacy code that cannot be edited reaches the API in five ways; after this
  call each resolves to this package:

  * `tf.contrib.mixed_precision.X` and `tf.compat.v1.contrib.mixed_precision.X`
    (attribute access on the `tensorflow` module, whatever it is named);
  * `from tensorflow.contrib.mixed_precision import X`;
  * `from tensorflow.contrib import mixed_precision`;
  * `import tensorflow.contrib.mixed_precision as m`;
  * `tensorflow.contrib.mixed_precision.python.loss_scale_manager` and
    `.loss_scale_optimizer`, in `import` and `from` forms.

  It registers real module objects in `sys.modules`, each with a spec and a
  loader (so `importlib.util.find_spec`, `pkgutil.find_loader`,
  `importlib.reload` and `inspect.getfile` answer as for any module), adds a
  finder for them to `sys.meta_path`, and sets `contrib` on the
  `tensorflow` and `tensorflow.compat.v1` modules. The stand-in
  `tf.contrib` holds only `mixed_precision`: any other `tf.contrib.X`
  raises an AttributeError that says so. If a real `tensorflow.contrib`
  exists (it never does on TensorFlow 2), only its `mixed_precision`
  attribute is set; its other attributes are left alone.

  TF 2.0-2.8's removed names come back too, as `contrib-mp-upgrade`
  converts them:

  * `tf.train.experimental.{LossScale, FixedLossScale, DynamicLossScale}`
    (also through `tf.compat.v2`) and `tf.mixed_precision.experimental.*`
    are TF's `tf.compat.v1.mixed_precision` classes, the very ones TF 2.0
    exported;
  * `tf.train.experimental.enable_mixed_precision_graph_rewrite(opt,
    loss_scale)` hands a `tf.compat.v1` optimizer to TF's v1 function, and
    wraps a Keras one in `KerasLossScaleOptimizer` (turning Grappler's
    float16 rewrite on, as TF 2.x did; it casts only on a GPU);
  * `tf.keras.mixed_precision.experimental`: `Policy` (its `loss_scale` is
    not used by today's Keras, and a warning says so and what to compile
    with instead; for `loss_scale=None`, a fixed scale of 1), `set_policy`,
    `global_policy`, `get_layer_policy` and `LossScaleOptimizer`, which is
    this package's `KerasLossScaleOptimizer`.

  Call it once, before the legacy code is imported; calling it again does
  nothing. It is a migration aid: prefer converting code you own with the
  `contrib-mp-upgrade` command.

  TF 1.15's real package paths, `tensorflow_core.contrib.mixed_precision...`
  (which some model zoos import directly), are *not* aliased. Serving them
  would mean faking a `tensorflow_core` module, and code commonly tests for
  that module to detect TensorFlow 1.x (`try: import tensorflow_core`), so a
  fake one would send it down its TF 1 path. Convert such files with
  `contrib-mp-upgrade`, which rewrites every `tensorflow_core` form.

  ```python
  import contrib_mixed_precision
  contrib_mixed_precision.install_alias()

  import tensorflow.compat.v1 as tf
  opt = tf.contrib.mixed_precision.LossScaleOptimizer(
      tf.train.AdamOptimizer(1e-3),
      tf.contrib.mixed_precision.FixedLossScaleManager(128))
  ```

  Raises:
    ImportError: TensorFlow or this package cannot be imported.
  """
  tf = importlib.import_module("tensorflow")
  importlib.import_module("contrib_mixed_precision")
  lsm = importlib.import_module("contrib_mixed_precision.loss_scale_manager")
  lso = importlib.import_module("contrib_mixed_precision.loss_scale_optimizer")

  _install_tf2x(tf)
  existing = sys.modules.get(_MP)
  if existing is not None and _is_ours(existing):
    return  # Already installed: idempotent.

  loader = _AliasLoader()
  python = types.ModuleType(
      _MP + ".python",
      "Alias of TF 1.15's `{}.python`, installed by "
      "`contrib_mixed_precision.install_alias()`.".format(_MP))
  python.__contrib_mixed_precision_alias__ = True

  mixed_precision = _MixedPrecisionAlias(
      _MP,
      "Alias of `contrib_mixed_precision`, installed by "
      "`contrib_mixed_precision.install_alias()`.")
  mixed_precision.__all__ = list(_TF115_NAMES)
  mixed_precision.python = python
  mixed_precision.__contrib_mixed_precision_alias__ = True

  def refresh():
    """Exports the package's current objects (again, after a reload)."""
    lsm_now = sys.modules.get(lsm.__name__, lsm)
    lso_now = sys.modules.get(lso.__name__, lso)
    python.loss_scale_manager = lsm_now
    python.loss_scale_optimizer = lso_now
    # Taken from the TF 1.15 module names, which always hold them.
    for name in _TF115_NAMES[:-1]:
      setattr(mixed_precision, name, getattr(lsm_now, name))
    mixed_precision.LossScaleOptimizer = lso_now.LossScaleOptimizer
    mixed_precision.loss_scale_manager = lsm_now
    mixed_precision.loss_scale_optimizer = lso_now

  refresh()
  loader.add(python, refresh)
  loader.add(mixed_precision, refresh)

  contrib = _real_contrib(tf)
  if contrib is None:
    contrib = _ContribAlias(
        "tensorflow.contrib",
        "Stand-in for `tf.contrib`, which TensorFlow 2 removed; it holds only "
        "`mixed_precision`, installed by "
        "`contrib_mixed_precision.install_alias()`.")
    contrib.__contrib_mixed_precision_alias__ = True
    loader.add(contrib)
  # The only attribute set on a real `tensorflow.contrib`.
  contrib.mixed_precision = mixed_precision

  modules = {
      "tensorflow.contrib": contrib,
      _MP: mixed_precision,
      _MP + ".python": python,
      _MP + ".python.loss_scale_manager": lsm,
      _MP + ".python.loss_scale_optimizer": lso,
  }
  for name, module in modules.items():
    sys.modules[name] = module
    # `import tensorflow.compat.v1.contrib.mixed_precision` works too.
    sys.modules[name.replace("tensorflow.", "tensorflow.compat.v1.", 1)] = (
        module)
  # First, so that it answers before the path finders search TensorFlow's
  # directory; it answers only for the modules above.
  sys.meta_path.insert(0, _AliasFinder(loader))
  tf.contrib = contrib
  # Importing `tensorflow.compat.v1` by name replaces the `tf.compat.v1`
  # wrapper object, so import it first and set `contrib` on both.
  compat_v1 = importlib.import_module("tensorflow.compat.v1")
  compat_v1.contrib = contrib
  tf.compat.v1.contrib = contrib
