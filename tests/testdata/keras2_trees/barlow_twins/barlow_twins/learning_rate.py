import tensorflow as tf


class WarmUpSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    """Linear warm-up to `base` over `warmup_steps`, then constant."""

    def __init__(self, base, warmup_steps):
        super().__init__()
        self.base = base
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        ramp = (step + 1.) / float(self.warmup_steps)
        return self.base * tf.minimum(ramp, 1.)

    def get_config(self):
        return {"base": self.base, "warmup_steps": self.warmup_steps}
