"""Trains the fixture detector with `fit`; prints each step's numbers.

Usage: python -m tf2.train CASE..., where each CASE is `compile_wraps` (no loss
scale configured: `compile` wraps the optimizer under the policy) or
`hand_wrapped` (a configured initial scale).
"""
import json
import sys

import numpy as np
import tensorflow as tf

from tf2 import train_lib
import utils

INF, NAN = float('inf'), float('nan')
# One batch a step; a non-finite or huge input makes the step's float16
# gradients non-finite.
IMAGES = [[1., 2.], [.5, 1.], [INF, 1.], [1., 1.], [60000., 1.], [NAN, 1.],
          [2., 1.], [1., 3.]] + [[INF, 1.]] * 10 + [[NAN, 2.]] * 8 + [
              [1., 2.], [.5, .5], [1., 1.]]


class StepTrace(tf.keras.callbacks.Callback):
  """Prints the loss scale, `iterations` and the weights after each step."""

  def __init__(self, case):
    super().__init__()
    self.case = case

  def on_train_batch_end(self, batch, logs=None):
    opt = self.model.optimizer
    weights = [float(v) for w in self.model.get_weights()
               for v in np.ravel(w)]
    print(json.dumps({
        'case': self.case, 'step': batch,
        'scale': float(opt.loss_scale).hex(),
        'iterations': int(opt.iterations.numpy()),
        'weights': [v.hex() for v in weights]}))


def setup_model(model, config):
  """Builds and compiles the model."""
  model.build((None, 2))
  model.compile(
      steps_per_execution=config['steps_per_execution'],
      optimizer=train_lib.get_optimizer(config))
  return model


def main(case):
  config = {'strategy': 'gpus', 'mixed_precision': True,
            'learning_rate': 0.125, 'momentum': 0.5,
            'loss_scale': 2.**10 if case == 'hand_wrapped' else None,
            'clip_gradients_norm': 10.0, 'steps_per_execution': 1}
  # set mixed precision policy by keras api.
  precision = utils.get_precision(config['strategy'],
                                  config['mixed_precision'])
  policy = tf.keras.mixed_precision.Policy(precision)
  tf.keras.mixed_precision.set_global_policy(policy)
  model = setup_model(train_lib.DetNetTrain(config=config), config)
  images = np.array(IMAGES, np.float32)
  labels = np.ones((len(IMAGES), 1), np.float32)
  model.fit(images, labels, batch_size=1, epochs=1, shuffle=False,
            verbose=0, callbacks=[StepTrace(case)])


if __name__ == '__main__':
  for name in sys.argv[1:]:
    main(name)
