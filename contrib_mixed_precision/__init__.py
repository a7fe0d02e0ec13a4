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
"""

# Checks the installed TensorFlow first, with an install hint if it is
# missing or too old.
from contrib_mixed_precision import _tf_compat  # pylint: disable=unused-import
from contrib_mixed_precision.version import __version__
from contrib_mixed_precision.alias import install_alias
from contrib_mixed_precision.graph_keys import GraphKeys
from contrib_mixed_precision.hooks import LossScaleHook
from contrib_mixed_precision.hooks import LossScaleStuckError
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
    "LossScaleHook",
    "LossScaleManager",
    "LossScaleOptimizer",
    "LossScaleStuckError",
    "__version__",
    "install_alias",
]
