"""A custom training loop: scaled steps inside `strategy.run`."""
import tensorflow as tf


def run_customized_training_loop(strategy, model_fn, loss_fn, train_input_fn,
                                 total_steps, steps_per_loop=1,
                                 custom_callbacks=None):
  """Trains `total_steps` steps, `steps_per_loop` per host call."""
  with strategy.scope():
    model = model_fn()
    optimizer = model.optimizer
    callbacks = tf.keras.callbacks.CallbackList(
        callbacks=custom_callbacks, model=model)
    training_vars = model.trainable_variables
    iterator = iter(strategy.experimental_distribute_dataset(
        train_input_fn()))

    def _replicated_step(inputs):
      features, labels = inputs
      with tf.GradientTape() as tape:
        outputs = model(features, training=True)
        loss = loss_fn(labels, outputs)
      if isinstance(optimizer, tf.keras.mixed_precision.LossScaleOptimizer):
        with tape:
          scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_grads = tape.gradient(scaled_loss, training_vars)
        grads = optimizer.get_unscaled_gradients(scaled_grads)
      else:
        grads = tape.gradient(loss, training_vars)
      optimizer.apply_gradients(zip(grads, training_vars))

    @tf.function
    def train_steps(iterator, steps):
      for _ in tf.range(steps):
        strategy.run(_replicated_step, args=(next(iterator),))

    def train_single_step(iterator):
      strategy.run(_replicated_step, args=(next(iterator),))

    train_single_step = tf.function(train_single_step)

    current_step = int(optimizer.iterations.numpy())
    while current_step < total_steps:
      callbacks.on_batch_begin(current_step)
      steps = min(steps_per_loop, total_steps - current_step)
      if tf.config.list_physical_devices('GPU'):
        for _ in range(steps):
          train_single_step(iterator)
      else:
        train_steps(iterator, tf.convert_to_tensor(steps, dtype=tf.int32))
      current_step += steps
      callbacks.on_batch_end(current_step - 1)
  return model
