# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Tests for scripts/mutation_test.py's list of mutants (not the runs).

The runner is not part of CI (a run takes many minutes), but its mutants
are snippets of the modules: when a module changes, a snippet that no
longer occurs exactly once would silently stop mutating anything. This
checks the list against the modules as they are, and the runner's `--list`
and `--help`, without TensorFlow.
"""

import os
import runpy
import subprocess
import sys
import unittest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SCRIPT = os.path.join(_REPO, "scripts", "mutation_test.py")


class MutantListTest(unittest.TestCase):

  @classmethod
  def setUpClass(cls):
    cls.runner = runpy.run_path(_SCRIPT)

  def test_every_snippet_occurs_exactly_once(self):
    self.assertEqual([], self.runner["check_mutants"](_REPO))

  def test_the_check_notices_a_snippet_that_is_gone(self):
    mutant = self.runner["MUTANTS"][0]
    stale = mutant._replace(old=mutant.old + "\n# no longer here")
    check = self.runner["check_mutants"]
    check.__globals__["MUTANTS"] = (stale,)
    try:
      problems = check(_REPO)
    finally:
      check.__globals__["MUTANTS"] = self.runner["MUTANTS"]
    self.assertEqual(
        ["{}: its snippet occurs 0 times in {} (need 1)".format(
            mutant.id, mutant.file)], problems)

  def test_at_least_thirty_mutants_over_the_four_modules(self):
    scored = [m for m in self.runner["MUTANTS"]
              if m.file in self.runner["SCORED"]]
    self.assertGreaterEqual(len(scored), 30)
    self.assertEqual(set(self.runner["SCORED"]), {m.file for m in scored})

  def test_the_upgrade_commands_mutants_of_issue_43(self):
    # The seven plausible bugs of the commit, the rollback, the signals,
    # `--check` and the worker rule that every test passed (issue 43).
    upgrade = {m.id: m.file for m in self.runner["MUTANTS"]
               if m.file.startswith("contrib_mp_upgrade/")}
    self.assertEqual(
        {"C0{}".format(i) for i in range(1, 8)} - set(upgrade), set())
    self.assertLessEqual(
        {"signals.py", "commit.py", "check.py", "cli.py", "workers.py"},
        {f.split("/")[-1] for f in upgrade.values()})

  def test_the_upgrade_commands_mutants_of_issue_52(self):
    # Items 1-7 and 12-13, and more plausible bugs of each module: at least
    # three of every module of the round.
    upgrade = {m.id: m for m in self.runner["MUTANTS"]
               if m.file.startswith("contrib_mp_upgrade/")}
    for module, least in (("commit.py", 5), ("walk.py", 3),
                          ("workers.py", 3), ("signals.py", 3),
                          ("notebook.py", 5), ("blockers.py", 2)):
      found = [i for i, m in upgrade.items()
               if m.file.endswith("/" + module) and i.startswith("U")]
      self.assertGreaterEqual(len(found), least, (module, found))
    for i, m in upgrade.items():
      self.assertTrue(m.tests, i)

  def test_the_runtime_mutants_of_issue_52(self):
    # Items 8-11 of issue 52: a user's LossScale left unchecked (two ways),
    # a kept-sparse gradient without its dense_shape, the scale's read
    # racing the update, and a [None] scale refused when built.
    runtime = {m.id: m.file for m in self.runner["MUTANTS"]
               if m.id.startswith("Q")}
    self.assertEqual({"Q0{}".format(i) for i in range(1, 6)}, set(runtime))
    self.assertTrue(set(runtime.values()) <= set(self.runner["SCORED"]))

  def test_list_and_help_run_without_tensorflow(self):
    for flag in ("--list", "--help"):
      proc = subprocess.run(
          [sys.executable, "-X", "importtime", _SCRIPT, flag],
          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
          check=False)
      self.assertEqual(0, proc.returncode, proc.stderr.decode()[-2000:])
      self.assertNotIn(b"tensorflow", proc.stderr, msg=flag)
    out = proc.stdout.decode()
    self.assertIn("--only", out)
    self.assertIn("--python", out)


if __name__ == "__main__":
  unittest.main()
