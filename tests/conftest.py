# Copyright 2026 The contrib_mixed_precision Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
"""pytest configuration shared by all tests."""


def pytest_collection_modifyitems(config, items):
  # tf.test.TestCase defines a `test_session()` context manager, which pytest
  # collects and reports as a skipped "Not a test". Drop it, so that every
  # skip in the summary is a real one with a reason.
  del config
  items[:] = [item for item in items if item.name != "test_session"]
