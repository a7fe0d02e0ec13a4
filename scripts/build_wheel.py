# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Builds the package's wheel from the repository's tracked files only.

noxfile.py builds the wheel once per run of scripts/run_tests.sh and installs
it in every environment. The build reads a staging copy of the tree, and that
copy holds exactly the files git tracks (their working-copy contents, so an
uncommitted edit is tested), nothing else:
- no untracked tree: a quick start's `.venv` inside the clone is 1.7 GB
  (19,560 files) against a 205 KB wheel, and copying it took minutes;
- no stray local file: a module that is not `git add`ed would be missing
  from a release, so it must be missing from the wheel the tests install.
  The build names such files in the package directories, so that the
  ImportError a test then meets has its explanation beside it.

Outside a git checkout (an unpacked archive) it stages the build's own
inputs instead: setup.py, pyproject.toml, README.md, LICENSE and the two
packages' Python files.

Standard library only; the interpreter that runs it needs setuptools>=77 and
wheel (requirements/nox.txt has them).

  python scripts/build_wheel.py OUTDIR [--repo DIR] [--stage-only]
      # prints the wheel's path (or, with --stage-only, the staging tree's)
"""

import argparse
import os
import shutil
import subprocess
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What setup.py packages and reads: the untracked files under these are
# reported, and without git these are staged.
PACKAGES = ("contrib_mixed_precision", "contrib_mp_upgrade")
BUILD_INPUTS = ("setup.py", "pyproject.toml", "README.md", "LICENSE")


def _git(repo, *args):
  """`git -C repo args`; its NUL-separated output as a list, or None."""
  try:
    out = subprocess.run(["git", "-C", repo] + list(args), check=True,
                         capture_output=True).stdout
  except (OSError, subprocess.CalledProcessError):
    return None
  return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def source_files(repo=_REPO):
  """The repository-relative files a wheel build may read.

  In a git checkout: the tracked files (`git ls-files --cached`: committed
  or `git add`ed) that exist in the working copy as regular files. git
  lists them from its index and never walks an untracked directory.

  Returns:
    (files, from_git): the sorted paths, and whether git listed them.
  """
  tracked = _git(repo, "ls-files", "-z", "--cached")
  if tracked is not None:
    files = [f for f in tracked
             if os.path.isfile(os.path.join(repo, f))
             and not os.path.islink(os.path.join(repo, f))]
    return sorted(set(files)), True
  files = [f for f in BUILD_INPUTS if os.path.isfile(os.path.join(repo, f))]
  for package in PACKAGES:
    for directory, dirs, names in os.walk(os.path.join(repo, package)):
      dirs[:] = [d for d in dirs if d != "__pycache__"]
      files += [os.path.relpath(os.path.join(directory, n), repo)
                for n in names if n.endswith(".py")]
  return sorted(files), False


def untracked_package_files(repo=_REPO):
  """Files under the packages that git does not track (and does not ignore).

  Only the packages and setup.py's inputs are asked about, so git never
  walks a virtualenv elsewhere in the clone.
  """
  found = _git(repo, "ls-files", "-z", "--others", "--exclude-standard",
               "--", *PACKAGES, *BUILD_INPUTS)
  return sorted(found or [])


def stage(repo, files, dest):
  """Copies `files` (repository-relative) from `repo` into `dest`."""
  for f in files:
    target = os.path.join(dest, f)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy2(os.path.join(repo, f), target)


def build(outdir, repo=_REPO, python=sys.executable, log=print):
  """Stages the tracked files and builds the wheel into `outdir`.

  Args:
    outdir: an existing directory; the staging tree goes under it too.
    repo: the repository.
    python: the interpreter that runs `pip wheel` (with setuptools, wheel).
    log: called with each line to tell the user.

  Returns:
    The wheel's path.

  Raises:
    RuntimeError: if pip builds no wheel.
  """
  files, from_git = source_files(repo)
  if not from_git:
    log("not a git checkout: building from setup.py's inputs ({} "
        "files)".format(len(files)))
  left_out = untracked_package_files(repo)
  if left_out:
    log("left out of the wheel, because git does not track them (`git add` "
        "them to test them): {}".format(", ".join(left_out)))
  src = os.path.join(outdir, "src")
  stage(repo, files, src)
  log("building the wheel from {} tracked files".format(len(files)))
  # --no-build-isolation: the build needs nothing but setuptools and wheel,
  # which `python` has; an isolated build would download them.
  subprocess.run([python, "-m", "pip", "wheel", "-q", "--no-deps",
                  "--no-build-isolation", "-w", outdir, src], check=True)
  wheels = sorted(n for n in os.listdir(outdir)
                  if n.startswith("contrib_mixed_precision-")
                  and n.endswith(".whl"))
  if not wheels:
    raise RuntimeError("pip wheel built no contrib_mixed_precision wheel in "
                       "{}; see its output above.".format(outdir))
  return os.path.join(outdir, wheels[0])


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("outdir", help="where the wheel goes (created)")
  parser.add_argument("--repo", default=_REPO,
                      help="the repository (default: this script's)")
  parser.add_argument("--stage-only", action="store_true",
                      help="only stage the files, into OUTDIR/src")
  args = parser.parse_args(argv)
  os.makedirs(args.outdir, exist_ok=True)
  log = lambda line: print("[build_wheel] " + line, file=sys.stderr)
  if args.stage_only:
    files, _ = source_files(args.repo)
    stage(args.repo, files, os.path.join(args.outdir, "src"))
    print(os.path.join(args.outdir, "src"))
    return 0
  print(build(args.outdir, repo=args.repo, log=log))
  return 0


if __name__ == "__main__":
  sys.exit(main())
