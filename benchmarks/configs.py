# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The configurations a case times: each name's optimizer around the inner one.

The package's (`lso_exp`, `lso_exp_sparse`, `lso_fixed`), TF's own
(`tf_mp`), the floors of `benchmarks/floors.py`, and with `--variants` the
prototypes of `benchmarks/variants.py`.
"""

import tensorflow as tf

import contrib_mixed_precision as cmp
from benchmarks import floors

BASE_CONFIGS = ("bare", "barrier", "unscale_floor", "tf115", "lso_exp",
                "lso_fixed", "tf_mp")
# Configurations timed only on some models: the embedding's alone has an
# IndexedSlices gradient, which the sparse opt-in keeps sparse.
MODEL_CONFIGS = {"emb": ("lso_exp_sparse", "tf115_check"),
                 "embgd": ("lso_exp_sparse",), "embmom": ("lso_exp_sparse",)}


def all_configs():
  """Every configuration's name, in the table's order."""
  names = list(BASE_CONFIGS)
  for extra in MODEL_CONFIGS.values():
    names.extend(n for n in extra if n not in names)
  return names


def _variants():
  # Imported only when a prototype is timed: they reach into the package's
  # modules, which an older tree timed by `benchmarks.pair` may not have.
  from benchmarks import variants  # pylint: disable=g-import-not-at-top
  return variants


def optimizer_factories(variant_names):
  """name -> callable(inner_optimizer) -> optimizer.

  Args:
    variant_names: None, "all", or a comma-separated list of
      `benchmarks/variants.py`'s prototypes to time too.

  Returns:
    (factories, variants): every configuration's factory, and the named
    prototypes' factories.

  Raises:
    SystemExit: A named prototype does not exist.
  """
  init, never = floors.INIT_SCALE, floors.NEVER
  factories = {
      "bare": lambda inner: inner,
      "barrier": floors.BarrierOptimizer,
      "unscale_floor": floors.UnscaleFloorOptimizer,
      "tf115": floors.tf115_optimizer,
      "lso_exp": lambda inner: cmp.LossScaleOptimizer(
          inner, cmp.ExponentialUpdateLossScaleManager(init, never)),
      "lso_exp_sparse": lambda inner: cmp.LossScaleOptimizer(
          inner, cmp.ExponentialUpdateLossScaleManager(init, never),
          keep_sparse_gradients=True),
      "lso_fixed": lambda inner: cmp.LossScaleOptimizer(
          inner, cmp.FixedLossScaleManager(init)),
      "tf_mp": lambda inner: (
          tf.compat.v1.mixed_precision.MixedPrecisionLossScaleOptimizer(
              inner, tf.compat.v1.mixed_precision.DynamicLossScale(
                  initial_loss_scale=init, increment_period=never))),
      "tf115_check": lambda inner: _variants().VARIANTS["tf115_check"](
          inner),
  }
  variants = {}
  if variant_names:
    module = _variants()
    wanted = (list(module.VARIANTS) if variant_names == "all" else
              [n for n in variant_names.split(",") if n])
    for name in wanted:
      if name not in module.VARIANTS:
        raise SystemExit("unknown variant {!r}; known: {}".format(
            name, ", ".join(module.VARIANTS)))
      variants[name] = module.VARIANTS[name]
  return factories, variants
