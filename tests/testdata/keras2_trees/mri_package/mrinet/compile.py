"""Compiles a model the same way for every training script."""
import tensorflow as tf
from tensorflow.keras.mixed_precision import experimental as mixed_precision


def compile_model(model, learning_rate, loss="mse"):
    optimizer = tf.keras.optimizers.SGD(learning_rate, momentum=0.5)
    policy = mixed_precision.global_policy()
    if policy.should_cast_variables:
        # Mixed precision: scale the loss as the policy says.
        optimizer = mixed_precision.LossScaleOptimizer(
            optimizer, loss_scale=policy.loss_scale)
    model.compile(optimizer=optimizer, loss=loss)
    return model
