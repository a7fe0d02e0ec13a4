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
"""Smoke test of scripts/benchmark.py: it runs and reports what it promises.

No timing is asserted: timings belong to the machine, not to the code.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import tensorflow as tf

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRIPT = os.path.join(_REPO, "scripts", "benchmark.py")
_CASES = ("mlp_graph", "mlp_graph_v1", "mlp_function", "mlp_eager",
          "small_graph", "small_build")
_CONFIGS = ("bare", "lso_exp", "lso_fixed", "tf_mp")


def _run(*args):
  env = dict(os.environ)
  # The installed package wins when there is one; the checkout otherwise.
  env["PYTHONPATH"] = os.pathsep.join(
      p for p in (env.get("PYTHONPATH"), _REPO) if p)
  env["TF_CPP_MIN_LOG_LEVEL"] = "2"
  return subprocess.run([sys.executable, _SCRIPT] + list(args), env=env,
                        capture_output=True, text=True, timeout=600,
                        check=False)


class BenchmarkTest(tf.test.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    if not os.path.exists(_SCRIPT):
      raise unittest.SkipTest("scripts/ is not shipped with this install")
    cls._tmp = tempfile.mkdtemp()
    cls._json_path = os.path.join(cls._tmp, "out.json")
    cls._result = _run("--quick", "--json", cls._json_path)

  def test_help(self):
    result = _run("--help")
    self.assertEqual(result.returncode, 0, result.stderr)
    self.assertIn("--quick", result.stdout)
    self.assertIn("--json", result.stdout)

  def test_quick_run_succeeds(self):
    self.assertEqual(self._result.returncode, 0, self._result.stderr[-3000:])

  def test_table_has_every_case_and_config(self):
    out = self._result.stdout
    self.assertIn("machine:", out)
    for case in _CASES:
      for config in _CONFIGS:
        self.assertRegex(out, r"(?m)^{}\s+{}\s".format(case, config))

  def test_json_structure(self):
    with open(self._json_path) as f:
      report = json.load(f)
    for key in ("date", "tensorflow", "cores", "intra_op_threads",
                "inter_op_threads"):
      self.assertIn(key, report["machine"])
    self.assertEqual(set(report["results"]), set(_CASES))
    for case, rows in report["results"].items():
      self.assertEqual(set(rows), set(_CONFIGS), case)
      self.assertEqual(rows["bare"]["ratio"], 1.0)
      for config, row in rows.items():
        self.assertGreater(row["median_ms"], 0.0, (case, config))
        self.assertGreater(row["ratio"], 0.0, (case, config))
        self.assertIn("cpu_ratio", row)
        if case != "small_build":
          # Every timed step must have applied: skipped steps do less work.
          self.assertEqual(row["skipped_steps"], 0, (case, config))
    for config in ("lso_exp", "lso_fixed", "tf_mp"):
      self.assertGreater(report["results"]["small_build"][config]["ops"],
                         0)


if __name__ == "__main__":
  tf.test.main()
