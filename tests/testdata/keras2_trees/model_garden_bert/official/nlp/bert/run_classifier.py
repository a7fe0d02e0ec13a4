"""Fine-tunes the fixture classifier; prints each step's numbers.

Usage: python -m official.nlp.bert.run_classifier CASE..., where each CASE
is `dynamic` (the default loss scale) or `fixed` (a numeric one).
"""
import json
import sys

import numpy as np
import tensorflow as tf

from official.modeling import performance
from official.nlp.bert import model_training_utils

INF, NAN = float('inf'), float('nan')
FEATURES = {
    # Overflowing and NaN batches take 2 ** 15 down to its floor of 1.
    'dynamic': [[1., 2.], [.5, 1.], [INF, 1.], [1., 1.], [NAN, 1.],
                [2., 1.]] + [[INF, 1.]] * 9 + [[NAN, 1.]] * 9 + [
                    [1., 2.], [.5, 1.], [1., 1.]],
    # A fixed scale applies every step, the non-finite one included.
    'fixed': [[1., 2.], [.5, 1.], [2., 1.], [1., 3.], [1., 1.], [INF, 1.],
              [1., 1.]],
}


class StepTrace(tf.keras.callbacks.Callback):
  """Prints the loss scale, `iterations` and the weights after each loop."""

  def __init__(self, case):
    super().__init__()
    self.case = case

  def on_batch_end(self, batch, logs=None):
    opt = self.model.optimizer
    weights = [float(v) for w in self.model.get_weights()
               for v in np.ravel(w)]
    print(json.dumps({
        'case': self.case, 'step': batch,
        'scale': float(opt.loss_scale).hex(),
        'iterations': int(opt.iterations.numpy()),
        'weights': [v.hex() for v in weights]}))


def main(case):
  performance.set_mixed_precision_policy(tf.float16)
  features = np.array(FEATURES[case], np.float32)
  labels = np.ones((len(features), 1), np.float32)

  def model_fn():
    inputs = tf.keras.Input(shape=(2,))
    hidden = tf.keras.layers.Dense(
        1, kernel_initializer=tf.keras.initializers.Constant(0.5))(inputs)
    outputs = tf.keras.layers.Activation('linear', dtype='float32')(hidden)
    model = tf.keras.Model(inputs, outputs)
    optimizer = tf.keras.optimizers.SGD(0.125, momentum=0.5)
    model.optimizer = performance.configure_optimizer(
        optimizer, use_float16=True,
        loss_scale=None if case == 'dynamic' else 128)
    return model

  def loss_fn(labels, outputs):
    return tf.reduce_mean(tf.square(outputs - labels))

  def train_input_fn():
    return tf.data.Dataset.from_tensor_slices((features, labels)).batch(1)

  model_training_utils.run_customized_training_loop(
      strategy=tf.distribute.get_strategy(), model_fn=model_fn,
      loss_fn=loss_fn, train_input_fn=train_input_fn,
      total_steps=len(features), custom_callbacks=[StepTrace(case)])


if __name__ == '__main__':
  for name in sys.argv[1:]:
    main(name)
