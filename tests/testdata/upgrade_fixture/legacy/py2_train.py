# A Python 2 file: it does not parse under Python 3, so contrib-mp-upgrade
# must copy it unchanged and report it.
import tensorflow as tf

manager = tf.contrib.mixed_precision.FixedLossScaleManager(128)
print "loss scale manager:", manager
