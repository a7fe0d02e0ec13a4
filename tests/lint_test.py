# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The linter, as part of the test command: ruff finds nothing in the tree.

The house style is Google's Python style (2-space indents, 80 columns);
`pyproject.toml`'s `[tool.ruff]` says which checks run and why some are
off. ruff is pinned in the lock of the environment that runs this file
(requirements/tf221.txt).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ruff(*args, cwd=_REPO):
  return subprocess.run([sys.executable, "-m", "ruff", *args],
                        cwd=cwd, capture_output=True, text=True,
                        timeout=300)


class LintTest(unittest.TestCase):

  def test_the_tree_has_no_findings(self):
    proc = _ruff("check", "--no-cache", ".")
    self.assertEqual(
        proc.returncode, 0,
        "ruff found these; fix them, or mark a deliberate one with "
        "`# noqa: CODE` and a reason:\n" + proc.stdout + proc.stderr)

  def test_the_configuration_catches_what_the_style_forbids(self):
    # The configuration is live: each finding below is one the house style
    # forbids, and 2-space indents are not one.
    with tempfile.TemporaryDirectory() as root:
      shutil.copy(os.path.join(_REPO, "pyproject.toml"), root)
      with open(os.path.join(root, "bad.py"), "w") as f:
        f.write("import os\n\n\ndef f(x):\n  if x:\n    return x\n"
                "  return '" + "word " * 20 + "'\n")
      proc = _ruff("check", "--no-cache", "--output-format", "concise",
                   "bad.py", cwd=root)
    self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
    self.assertIn("F401", proc.stdout)
    self.assertIn("E501", proc.stdout)
    self.assertNotIn("E111", proc.stdout)


if __name__ == "__main__":
  unittest.main()
