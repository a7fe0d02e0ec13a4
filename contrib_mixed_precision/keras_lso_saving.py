# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""How a `KerasLossScaleOptimizer` is written down: config, `.keras` state.

Keras saves an optimizer twice over: its configuration (`get_config`, which
`load_model` hands back to the registered class's `from_config`), and, in a
`.keras` file, its variables (`save_own_variables`). This module holds the
package's side of both:

* the configuration of the inner optimizer (by the Keras package that made
  it) and of the loss scale (a TF `LossScale`, a number, `'dynamic'` or a
  built-in TF 1.15 manager);
* the loss scale's state in a `.keras` file, beside Keras' own entries,
  so that a loaded model resumes the scale where training left it, as it
  does from a `tf.train.Checkpoint`;
* the registration with each Keras package's serialization, without which
  Keras 3's `load_model` cannot find the class (it is made per Keras at
  run time).
"""

import importlib
import sys
import warnings

import tensorflow as tf

from contrib_mixed_precision import loss_scale_manager as manager_lib

# The Keras serialization package name of the registered classes.
REGISTERED_PACKAGE = "contrib_mixed_precision"
# The `.keras` entries of the loss scale's state, `<prefix>0`, `<prefix>1`,
# after Keras' own "0", "1", ...
_STATE_PREFIX = "contrib_mixed_precision_loss_scale_"


def keras_package(optimizer):
  """The Keras package (`keras` or `tf_keras`) `optimizer`'s class is from."""
  for klass in type(optimizer).__mro__:
    root = klass.__module__.split(".")[0]
    if root in ("keras", "tf_keras") and root in sys.modules:
      return sys.modules[root]
  return None


def register(cls, keras):
  """Registers `cls` with `keras`' serialization, under its own name.

  Every class of one Keras package has the same name: whichever the
  registry holds, its `from_config` builds the class the inner optimizer
  needs.
  """
  keras.saving.register_keras_serializable(package=REGISTERED_PACKAGE)(cls)


def serialize_optimizer(optimizer):
  keras = keras_package(optimizer)
  return {"keras": keras.__name__,
          "config": keras.optimizers.serialize(optimizer)}


def deserialize_optimizer(config, custom_objects):
  """The inner optimizer, by the Keras package that serialized it."""
  if not isinstance(config, dict) or "keras" not in config:
    return config  # An optimizer object given in place of its config.
  keras = importlib.import_module(config["keras"])
  return keras.optimizers.deserialize(config["config"],
                                      custom_objects=custom_objects)


_LOSS_SCALE_CLASSES = {
    "DynamicLossScale": tf.compat.v1.mixed_precision.DynamicLossScale,
    "FixedLossScale": tf.compat.v1.mixed_precision.FixedLossScale,
}


def loss_scale_config(loss_scale):
  """The configuration of a `KerasLossScaleOptimizer`'s `loss_scale`."""
  if isinstance(loss_scale, (str, int, float)):
    return loss_scale
  if isinstance(loss_scale, tf.compat.v1.mixed_precision.LossScale):
    return {"class_name": type(loss_scale).__name__,
            "config": loss_scale.get_config()}
  if isinstance(loss_scale, manager_lib.FixedLossScaleManager):
    return {"class_name": "FixedLossScaleManager",
            "config": {"loss_scale": loss_scale._loss_scale}}  # pylint: disable=protected-access
  if isinstance(loss_scale, manager_lib.ExponentialUpdateLossScaleManager):
    return {"class_name": "ExponentialUpdateLossScaleManager",
            "config": loss_scale.loss_scale.get_config()}
  raise NotImplementedError(
      "KerasLossScaleOptimizer.get_config cannot describe the loss scale "
      "{!r}: only TF's DynamicLossScale and FixedLossScale, numbers, "
      "'dynamic' and this package's built-in managers have a "
      "configuration.".format(loss_scale))


def loss_scale_from_config(config):
  """The `loss_scale` argument `loss_scale_config` described."""
  if not isinstance(config, dict):
    return config
  import contrib_mixed_precision  # pylint: disable=g-import-not-at-top
  name, kwargs = config["class_name"], config["config"]
  if name in _LOSS_SCALE_CLASSES:
    return _LOSS_SCALE_CLASSES[name](**kwargs)
  if name in ("FixedLossScaleManager", "ExponentialUpdateLossScaleManager",
              "ExponentialUpdateLossScale"):
    return getattr(contrib_mixed_precision, name)(**kwargs)
  raise ValueError("Unknown loss scale class {!r} in the configuration of a "
                   "KerasLossScaleOptimizer.".format(name))


def save_state(store, manager):
  """Writes the loss scale's variables into a `.keras` store, by index."""
  for i, variable in enumerate(manager.variables()):
    store[_STATE_PREFIX + str(i)] = variable.numpy()


def split_state(store):
  """(Keras' own entries of `store`, as a dict; the loss scale's)."""
  keras_entries, own = {}, {}
  for key in store.keys():
    if key.startswith(_STATE_PREFIX):
      own[int(key[len(_STATE_PREFIX):])] = store[key]
    else:
      keras_entries[key] = store[key]
  return keras_entries, [own[i] for i in sorted(own)]


def load_state(values, manager, name):
  """Restores the values `split_state` returned into `manager`'s variables.

  A file without them (saved before this package wrote them, or by Keras'
  own optimizer) leaves the scale as constructed, and says so, as Keras
  says when it skips an optimizer's variables.
  """
  variables = manager.variables()
  if len(values) != len(variables):
    warnings.warn(
        "Not restoring the loss scale of optimizer {!r}: it has {} "
        "variables, and the file holds {}. The scale starts from its "
        "initial value.".format(name, len(variables), len(values)),
        stacklevel=3)
    return
  for variable, value in zip(variables, values):
    variable.assign(value)
