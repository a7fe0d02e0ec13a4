# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The demo runs the installed package, and says so when there is none.

Issue 43, item 15: `scripts/train_mixed_precision.py` put its clone first on
`sys.path`, so the quick start's demo showed the clone's source, not the
package its first command installed. It now imports the installed package
only; run from a clone without one, it stops with the install command.
(tests/demo_test.py runs the demo itself, in the full suites.)
"""

import os
import subprocess
import sys
import tempfile

from absl.testing import absltest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRIPT = os.path.join(_REPO, "scripts", "train_mixed_precision.py")


class DemoWithoutThePackageTest(absltest.TestCase):

  def test_a_clone_without_an_install_gets_the_install_command(self):
    with tempfile.TemporaryDirectory() as root:
      # A fresh virtualenv: nothing installed, as after `git clone`.
      venv = os.path.join(root, "venv")
      subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv],
                     check=True, capture_output=True, timeout=120)
      python = os.path.join(venv, "bin", "python")
      env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
      # Run from the clone's root, as the README says: the clone's
      # contrib_mixed_precision/ is right there, and must not be used.
      self.assertTrue(os.path.isdir(
          os.path.join(_REPO, "contrib_mixed_precision")))
      proc = subprocess.run([python, _SCRIPT, "--fast", "--output_dir",
                             os.path.join(root, "out")],
                            cwd=_REPO, env=env, capture_output=True,
                            text=True, timeout=120)
    self.assertEqual(proc.returncode, 1, proc.stderr)
    self.assertNotIn("Traceback", proc.stderr)
    self.assertIn("contrib_mixed_precision is not installed", proc.stderr)
    self.assertIn("python -m pip install '.[tensorflow-cpu,demo]'",
                  proc.stderr)
    self.assertFalse(os.path.exists(os.path.join(root, "out")))


if __name__ == "__main__":
  absltest.main()
