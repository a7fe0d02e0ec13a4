"""Helpers shared by the training code."""


def get_precision(strategy, mixed_precision=False):
  """The Keras policy name for a strategy."""
  if not mixed_precision:
    return 'float32'
  return 'mixed_bfloat16' if strategy == 'tpu' else 'mixed_float16'
