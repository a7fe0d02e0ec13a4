"""Trains the segmentation net under the mixed policy (a Policy object)."""
from tensorflow.keras.mixed_precision import experimental as mixed_precision

from mrinet import compile as mri_compile
from mrinet import data, models, trace

policy = mixed_precision.Policy("mixed_float16")
mixed_precision.set_policy(policy)

x, y = data.load()
model = mri_compile.compile_model(models.build(), learning_rate=0.125)
model.fit(x, y, batch_size=1, epochs=1, shuffle=False, verbose=0,
          callbacks=[trace.StepTrace("segmentation")])
