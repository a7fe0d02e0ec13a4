# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Style 4: `import tensorflow.contrib.mixed_precision as m`."""
import os, sys
import tensorflow.compat.v1 as tf
import tensorflow.contrib.mixed_precision as mp_lib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import common  # pylint: disable=g-import-not-at-top

tf.disable_v2_behavior()

x, y, loss = common.build()
manager = mp_lib.ExponentialUpdateLossScaleManager(init_loss_scale=2**32,
                                                   incr_every_n_steps=1000,
                                                   decr_every_n_nan_or_inf=2,
                                                   decr_ratio=0.5)
opt = mp_lib.LossScaleOptimizer(
    opt=tf.train.GradientDescentOptimizer(common.LEARNING_RATE),
    loss_scale_manager=manager)
train_op = opt.minimize(loss)
# Bad steps accumulate non-consecutively: the second one lowers the scale.
common.train(x, y, loss, train_op, steps=10, bad_steps=(3, 6),
             loss_scale=manager.get_loss_scale())
