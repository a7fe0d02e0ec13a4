# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Opt-in runtime alias: `tf.contrib.mixed_precision` resolves to this package.

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
