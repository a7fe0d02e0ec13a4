"""Trains the reconstruction net under the mixed policy (a string)."""
import tensorflow as tf

from mrinet import compile as mri_compile
from mrinet import data, models, trace

tf.keras.mixed_precision.experimental.set_policy("mixed_float16")

x, y = data.load()
model = mri_compile.compile_model(models.build(), learning_rate=0.0625)
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0,
          callbacks=[trace.StepTrace("reconstruction")])
