"""Optimizer and the trainable detector of the fixture."""
import tensorflow as tf

import utils


def get_optimizer(params):
  """SGD with momentum, loss-scaled by hand when a scale is configured."""
  optimizer = tf.keras.optimizers.SGD(params['learning_rate'],
                                      momentum=params['momentum'])
  precision = utils.get_precision(params['strategy'],
                                  params['mixed_precision'])
  if precision == 'mixed_float16' and params['loss_scale']:
    optimizer = tf.keras.mixed_precision.LossScaleOptimizer(
        optimizer,
        initial_scale=params['loss_scale'])
  return optimizer


class DetNetTrain(tf.keras.Model):
  """One dense head; the step is written out as the detector's is."""

  def __init__(self, config, **kwargs):
    super().__init__(**kwargs)
    self.config = config
    self.head = tf.keras.layers.Dense(
        1, kernel_initializer=tf.keras.initializers.Constant(0.5),
        bias_initializer=tf.keras.initializers.Constant(-0.25))

  def call(self, inputs, training=False):
    return self.head(inputs)

  def train_step(self, data):
    images, labels = data
    with tf.GradientTape() as tape:
      outputs = tf.cast(self(images, training=True), tf.float32)
      total_loss = tf.reduce_mean(tf.square(outputs - labels))
      if isinstance(self.optimizer,
                    tf.keras.mixed_precision.LossScaleOptimizer):
        scaled_loss = self.optimizer.get_scaled_loss(total_loss)
        optimizer = self.optimizer.inner_optimizer
      else:
        scaled_loss = total_loss
        optimizer = self.optimizer
    logs = {'loss': total_loss, 'learning_rate': optimizer.learning_rate}
    trainable_vars = self.trainable_variables
    scaled_gradients = tape.gradient(scaled_loss, trainable_vars)
    if isinstance(self.optimizer,
                  tf.keras.mixed_precision.LossScaleOptimizer):
      gradients = self.optimizer.get_unscaled_gradients(scaled_gradients)
    else:
      gradients = scaled_gradients
    if self.config['clip_gradients_norm'] > 0:
      clip_norm = abs(self.config['clip_gradients_norm'])
      gradients = [tf.clip_by_norm(g, clip_norm) for g in gradients]
      gradients, _ = tf.clip_by_global_norm(gradients, clip_norm)
    self.optimizer.apply_gradients(zip(gradients, trainable_vars))
    return logs
