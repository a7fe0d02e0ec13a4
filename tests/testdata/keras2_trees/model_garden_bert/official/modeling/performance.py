"""Mixed-precision set-up shared by the trainers."""
import tensorflow as tf


def configure_optimizer(optimizer, use_float16=False, loss_scale=None):
  """Wraps `optimizer` for float16: a number is a fixed loss scale."""
  if use_float16:
    if loss_scale in (None, 'dynamic'):
      optimizer = tf.keras.mixed_precision.LossScaleOptimizer(optimizer)
    else:
      optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
          optimizer, dynamic=False, initial_scale=loss_scale)
  return optimizer


def set_mixed_precision_policy(dtype):
  """Sets the global Keras policy for `dtype`."""
  if dtype == tf.float16:
    tf.keras.mixed_precision.set_global_policy('mixed_float16')
  elif dtype == tf.float32:
    tf.keras.mixed_precision.set_global_policy('float32')
  else:
    raise ValueError('Unexpected dtype: %s' % dtype)
