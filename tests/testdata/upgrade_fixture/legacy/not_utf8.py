# Copyright 2026 The contrib_mixed_precision Authors. Apache-2.0.
"""Not UTF-8 and no coding line: Python 3 cannot read it.

It uses tf.contrib.mixed_precision, so the report must say loudly why it
was not converted: the next line holds a latin-1 byte.
café
"""
import tensorflow as tf

manager = tf.contrib.mixed_precision.FixedLossScaleManager(128)
