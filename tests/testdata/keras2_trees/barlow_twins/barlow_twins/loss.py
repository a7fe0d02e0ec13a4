import tensorflow as tf


def loss(z1, z2, _lambda, global_batch_size):
    """A small two-view loss: agreement plus a weighted spread term."""
    z1 = tf.cast(z1, tf.float32)
    z2 = tf.cast(z2, tf.float32)
    agree = tf.reduce_sum(tf.square(z1 - z2))
    spread = tf.reduce_sum(tf.square(z1 + z2 - 1.))
    return (agree + _lambda * spread) / global_batch_size
