"""A callback that prints the numbers of each step."""
import json

import numpy as np
import tensorflow as tf


class StepTrace(tf.keras.callbacks.Callback):

    def __init__(self, case):
        super().__init__()
        self.case = case

    def on_train_batch_end(self, batch, logs=None):
        opt = self.model.optimizer
        weights = [float(v) for w in self.model.get_weights()
                   for v in np.ravel(w)]
        print(json.dumps({
            "case": self.case, "step": batch,
            "scale": float(opt.loss_scale()).hex(),
            "iterations": int(opt.iterations.numpy()),
            "weights": [v.hex() for v in weights]}))
