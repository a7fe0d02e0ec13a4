# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""pytest configuration shared by all tests."""


def pytest_collection_modifyitems(config, items):
  # tf.test.TestCase defines a `test_session()` context manager, which pytest
  # collects and reports as a skipped "Not a test". Drop it, so that every
  # skip in the summary is a real one with a reason.
  del config
  items[:] = [item for item in items if item.name != "test_session"]
