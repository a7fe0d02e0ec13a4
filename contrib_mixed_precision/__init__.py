# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""TF 1.15's `tf.contrib.mixed_precision`, restored on TensorFlow 2.x.

Legacy mixed-precision training code keeps its API, its loss-scale
trajectory and its checkpoints:

```python
import contrib_mixed_precision as mp

manager = mp.ExponentialUpdateLossScaleManager(2**32, 1000, decr_ratio=0.5)
opt = mp.LossScaleOptimizer(tf.compat.v1.train.AdamOptimizer(1e-4), manager)
```

For new code, prefer `tf.keras.mixed_precision.LossScaleOptimizer`.

The modules, in the order a training step's data flows through them:

* `loss_scale_manager`: the TF1 managers, each adapting a TF2 `LossScale`
  (`loss_scale`: TF 1.15's exponential policy as one) and giving the
  step its scale;
* `loss_scale_optimizer`: `LossScaleOptimizer`, which runs the step:
  * `step_scale`: this step's scale, read once, refused if unusable;
  * `unscale`: the loss scaled, the gradients unscaled as TF 1.15 did;
  * `step_inputs`: what callers hand `apply_gradients`, as tensors;
  * `skip_decision`: whether every update to be applied is finite, with
    `known_flags` (flags computed with the unscale, kept with their
    tensors) and `replica_consensus` (one decision across replicas);
  * `sync_replicas`: how the step meets `SyncReplicasOptimizer`;
* `graph_keys`, then `hooks`: what a step files for observers, and
  `LossScaleHook`, which reads it.

For Keras: `keras_loss_scale_optimizer`, `KerasLossScaleOptimizer`, a
Keras optimizer that runs a TF 2.0 `LossScale`, a number, `'dynamic'` or a
TF 1.15 manager with that policy's numbers in `fit` and custom loops; and
`keras_lso_saving`, how it is written into a Keras config and a `.keras`
file.

Beside the flow: `version` (the supported TensorFlow range), `_tf_compat`
(the only private TensorFlow use), `_validation` (one rule for arguments)
and `alias` (the opt-in `tf.contrib.mixed_precision` alias).
"""

# Checks the installed TensorFlow first, with an install hint if it is
# missing or too old.
from contrib_mixed_precision import _tf_compat  # pylint: disable=unused-import  # noqa: F401
from contrib_mixed_precision.version import __version__
from contrib_mixed_precision.alias import install_alias
from contrib_mixed_precision.graph_keys import GraphKeys
from contrib_mixed_precision.hooks import LossScaleHook
from contrib_mixed_precision.hooks import LossScaleStuckError
from contrib_mixed_precision.keras_loss_scale_optimizer import (
    KerasLossScaleOptimizer)
from contrib_mixed_precision.loss_scale import ExponentialUpdateLossScale
from contrib_mixed_precision.loss_scale_manager import (
    ExponentialUpdateLossScaleManager)
from contrib_mixed_precision.loss_scale_manager import FixedLossScaleManager
from contrib_mixed_precision.loss_scale_manager import LossScaleManager
from contrib_mixed_precision.loss_scale_optimizer import LossScaleOptimizer

__all__ = [
    "ExponentialUpdateLossScale",
    "ExponentialUpdateLossScaleManager",
    "FixedLossScaleManager",
    "GraphKeys",
    "KerasLossScaleOptimizer",
    "LossScaleHook",
    "LossScaleManager",
    "LossScaleOptimizer",
    "LossScaleStuckError",
    "__version__",
    "install_alias",
]
