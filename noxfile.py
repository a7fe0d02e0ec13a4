# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""The test matrix as nox sessions.

Run it with `scripts/run_tests.sh`, which installs nox (requirements/nox.txt)
into a cached virtualenv and translates its options into the variables below.

Sessions:
  tests(NAME)   one per environment of requirements/environments.toml on the
                host's Python: a virtualenv from requirements/NAME.txt, the
                package installed from a wheel built once per run, then
                pytest (its suite: scripts/ci_matrix.py) from an empty
                directory, so a packaging mistake fails the run.
  chroot_tests(NAME)
                the same for an environment on another Python: in a Debian
                chroot that scripts/chroot_env.sh builds (debootstrap) and
                caches, with the same wheel and the repository's tests.
  bazel         `bazel build //...`, then `bazel test` on every target but
                the tests `bazel_suite` excludes, with the TensorFlow of
                `bazel_env` first on PATH.

Virtualenvs live under $CMP_CACHE_DIR/nox/, outside the clone, and are reused
until their requirements file or the interpreter changes; chroots live under
$CMP_CACHE_DIR/chroots/, until their lock file or the code of
scripts/chroot_env.sh (not its comments) changes.

Environment variables (scripts/run_tests.sh sets them):
  CMP_CACHE_DIR       cache root (default: ~/.cache/contrib_mixed_precision)
  CMP_ENVS            comma-separated environments to run (default: all)
  CMP_QUICK=1         run the core suite in each (`run_tests.sh --quick`)
  CMP_SETUP_ONLY=1    create or refresh the virtualenvs; run no tests
  CMP_VENV_PATH_FILE  write the selected session's virtualenv path there
  CMP_SUMMARY_FILE    append one result line per session there
"""

import atexit
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree

import nox

# Not resolve(): under Bazel this file is a symlink into the source tree.
REPO = pathlib.Path(os.path.abspath(__file__)).parent
sys.path.insert(0, str(REPO / "scripts"))
import build_wheel  # pylint: disable=g-import-not-at-top,wrong-import-position  # noqa: E402
import ci_matrix  # pylint: disable=g-import-not-at-top,wrong-import-position  # noqa: E402
import uv_env  # pylint: disable=g-import-not-at-top,wrong-import-position  # noqa: E402

MATRIX = ci_matrix.load(str(REPO))
CACHE = pathlib.Path(os.environ.get("CMP_CACHE_DIR") or
                     "~/.cache/contrib_mixed_precision").expanduser()

nox.options.envdir = str(CACHE / "nox")
nox.options.default_venv_backend = "venv"
nox.options.reuse_venv = "yes"

if "{}.{}".format(*sys.version_info[:2]) != MATRIX.python:
  sys.exit("run_tests: the matrix is built with Python {} "
           "(requirements/environments.toml), but nox runs on {}. Set PYTHON "
           "to a Python {} for scripts/run_tests.sh.".format(
               MATRIX.python, sys.version.split()[0], MATRIX.python))

_HOST_ENVS = [e for e in MATRIX.environments if not e.debian]
_CHROOT_ENVS = [e for e in MATRIX.environments if e.debian]
_SESSION_OF = {e.name: "{}({})".format(
    "chroot_tests" if e.debian else "tests", e.name)
               for e in MATRIX.environments}
_SESSION_OF["bazel"] = "bazel"
if os.environ.get("CMP_ENVS"):
  _unknown = [n for n in os.environ["CMP_ENVS"].split(",")
              if n not in _SESSION_OF]
  if _unknown:
    sys.exit("run_tests: unknown environment(s) {}; choose from {}.".format(
        ", ".join(_unknown), ", ".join(_SESSION_OF)))
  nox.options.sessions = [_SESSION_OF[n]
                          for n in os.environ["CMP_ENVS"].split(",")]

# pip's own complaint about the one dependency the locks leave out on purpose:
# tf-keras asks for `tensorflow`, and tensorflow-cpu provides that module.
_EXPECTED_PIP_CHECK = re.compile(
    r"^tf-keras \S+ requires tensorflow, which is not installed\.$")


def _summarize(line):
  path = os.environ.get("CMP_SUMMARY_FILE")
  if path:
    with open(path, "a", encoding="utf-8") as f:
      f.write(line + "\n")


# How `_prepare_venv` installs a lock; part of the virtualenv's key, so that a
# change to it rebuilds the cached virtualenvs.
_INSTALL_RECIPE = b"uv pip install --no-deps --compile-bytecode"

_UV_ENV = []  # Read from pip's configuration once per run.


def uv_install_env():
  """The variables uv installs with: pip's index, proxy and certificates.

  uv reads neither pip.conf nor PIP_* variables; scripts/uv_env.py maps
  what `pip config list` (this interpreter's pip, the one that installed
  nox) reports onto uv's variables, so that uv works wherever pip does.
  """
  if not _UV_ENV:
    _UV_ENV.append(dict(uv_env.uv_environment(uv_env.pip_config()),
                        UV_CACHE_DIR=str(CACHE / "uv")))
  return dict(_UV_ENV[0])


def _requirements_key(env):
  """What a virtualenv is bound to: its lock file, the interpreter, and how
  the lock is installed."""
  digest = hashlib.sha256((REPO / env.requirements).read_bytes())
  digest.update(sys.version.encode())
  digest.update(_INSTALL_RECIPE)
  return digest.hexdigest()[:16]


def _prepare_venv(session, env):
  """Brings the session's virtualenv to `env`'s requirements.

  nox reuses the virtualenv as long as the interpreter is the same; a marker
  in it records which lock file it was built from, and a changed (or
  half-installed) one is rebuilt from scratch, so no stale package survives.
  """
  venv = pathlib.Path(session.virtualenv.location)
  marker = venv / ".cmp-requirements"
  key = _requirements_key(env)
  state = marker.read_text().strip() if marker.exists() else None
  if state != key:
    if state is not None:
      session.log("{} changed since {} was built; rebuilding it".format(
          env.requirements, venv))
      shutil.rmtree(venv)
      session.virtualenv.create()
    marker.write_text("installing\n")
    # A complete lock: every package is listed, nothing else is resolved.
    # uv (from requirements/nox.txt, beside this interpreter) installs it,
    # faster than pip, seven times per CI run. `--compile-bytecode`, as pip
    # does by default: where PYTHONDONTWRITEBYTECODE is set (CI machines),
    # an import never writes a .pyc, and without them every process that
    # imports TensorFlow compiles its Python again (an import took 20 s, not
    # 6, and the tf215 suite twice as long).
    session.run(str(pathlib.Path(sys.executable).with_name("uv")), "pip",
                "install", "--no-deps", "--compile-bytecode", "--python",
                str(venv / "bin/python"), "-r", str(REPO / env.requirements),
                external=True, env=uv_install_env())
    out = session.run("python", "-m", "pip", "check", silent=True,
                      success_codes=[0, 1])
    broken = [l for l in out.splitlines()
              if l.strip() and not l.startswith(("WARNING", "No broken"))
              and not _EXPECTED_PIP_CHECK.match(l)]
    if broken:
      session.error("{} is not a complete lock:\n  {}".format(
          env.requirements, "\n  ".join(broken)))
    marker.write_text(key + "\n")
  # Idempotent and fast when its work is done, so it also reaches venvs made
  # before the script (or a new version of it) existed.
  if env.extra_setup:
    session.run("bash", str(REPO / env.extra_setup), str(venv),
                external=True)
  if os.environ.get("CMP_VENV_PATH_FILE"):
    pathlib.Path(os.environ["CMP_VENV_PATH_FILE"]).write_text(str(venv))
  return venv


_WHEEL = []  # Built at most once per nox run, by the first session needing it.


def _install_wheel(session):
  """Builds the package wheel (once per run) and installs it."""
  session.install("--force-reinstall", "--no-deps", _build_wheel(session))


def _build_wheel(session):
  """Builds the package wheel, once per run; returns its path.

  From the tracked files only (scripts/build_wheel.py): an untracked tree
  in the clone, such as a quick start's `.venv`, is never copied.
  """
  if not _WHEEL:
    out = pathlib.Path(tempfile.mkdtemp(prefix="cmp-wheel-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    # The runner's own interpreter has setuptools and wheel (nox.txt).
    _WHEEL.append(build_wheel.build(str(out), repo=str(REPO),
                                    python=sys.executable, log=session.log))
  return str(_WHEEL[0])


def pytest_args(env, posargs):
  """The pytest arguments (after `pytest`) for `env` and the user's posargs.

  Test paths in `posargs` (tests/x_test.py, tests/x_test.py::Case) are
  relative to the repository, but pytest runs elsewhere: they are made
  absolute. Without any, the whole tests/ directory runs, less the files
  `env` excludes, so a new test file is in every suite; or, for a suite
  of `only` its environment's `include`, those files.
  """
  targets, args = [], []
  for a in posargs:
    path = a.split("::")[0]
    if not a.startswith("-") and not os.path.isabs(a) and (
        REPO / path).exists():
      targets.append(str(REPO / a))
    elif os.path.isabs(a) and os.path.exists(path):
      targets.append(a)
    else:
      args.append(a)
  if not targets and os.environ.get("CMP_QUICK") == "1":
    # `run_tests.sh --quick`: the core suite, whatever `env`'s own is.
    targets = [str(REPO / "tests")]
    args = ["--ignore=" + str(REPO / t)
            for t in MATRIX.suite_exclude[ci_matrix.QUICK_SUITE]] + args
  elif not targets and env.only:
    targets = [str(REPO / t) for t in env.include]
  elif not targets:
    targets = [str(REPO / "tests")]
    args = ["--ignore=" + str(REPO / t) for t in env.exclude] + args
  # One pytest worker per core (pytest-xdist): most tests are bound by
  # Python, TF imports and subprocesses, not by TF's own thread pools, and the
  # matrix has seven environments to get through. `--dist loadscope` keeps a
  # test class on one worker, so its setUpClass (a training run) runs once.
  # A later `-n 0` in posargs turns it off.
  return ["-c", str(REPO / "pytest.ini"), "--rootdir", str(REPO),
          "-p", "no:cacheprovider", "--durations=10",
          "-n", "auto", "--dist", "loadscope"] + targets + args


def fuzz_settings(env):
  """tests/upgrade_fuzz_test.py's rounds and seed in environment `env`.

  Every environment whose suite runs the fuzz test (it needs no TensorFlow)
  runs one round of 40 files, with a seed of its own, so that each tries
  different trees (issue 43). The test's defaults, three rounds of 100
  files, cost over seven minutes of a full suite's CPU time, a fifth of a
  chroot's run. A value set by the user wins.
  """
  names = [e.name for e in MATRIX.environments] + ["bazel"]
  settings = {"CMP_FUZZ_ROUNDS": "1", "CMP_FUZZ_FILES": "40",
              "CMP_FUZZ_SEED": str(20261125 + 1000 * names.index(env.name))}
  return {k: os.environ.get(k, v) for k, v in settings.items()}


def _junit_counts(junit):
  """'N passed, M failed, ...' from pytest's JUnit XML; None if absent."""
  try:
    suite = ElementTree.parse(junit).getroot()
  except (OSError, ElementTree.ParseError):
    return None
  if suite.tag == "testsuites":
    suite = suite[0]
  n = {k: int(suite.get(k, 0))
       for k in ("tests", "failures", "errors", "skipped")}
  if n["tests"] == 0:
    return "no tests ran"
  passed = n["tests"] - n["failures"] - n["errors"] - n["skipped"]
  counts = [(passed, "passed"), (n["failures"], "failed"),
            (n["errors"], "errors"), (n["skipped"], "skipped")]
  return ", ".join("{} {}".format(v, k) for v, k in counts
                   if v or k == "passed")


def _label(env):
  """The environment as the summary names it."""
  return ci_matrix.label(MATRIX, env.name)


def _failed(error):
  """The summary's word for a session that raised `error`."""
  return "INTERRUPTED" if isinstance(error, KeyboardInterrupt) else "FAIL"


@nox.session
@nox.parametrize("env", [nox.param(e, id=e.name, tags=[e.name])
                         for e in _HOST_ENVS])
def tests(session, env):
  """pytest against the installed wheel, in one TensorFlow environment."""
  start = time.monotonic()
  label = _label(env)
  status = "FAIL (setup failed; see above)"
  try:
    venv = _prepare_venv(session, env)
    if os.environ.get("CMP_SETUP_ONLY") == "1":
      status = str(venv)
      return
    _install_wheel(session)
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix="cmp-pytest-"))
    junit = run_dir / "junit.xml"
    # From an empty directory: `import contrib_mixed_precision` must resolve
    # to the installed wheel, never to the source tree.
    session.chdir(run_dir)
    try:
      session.run(
          "python", "-m", "pytest", "--junitxml=" + str(junit),
          *pytest_args(env, session.posargs),
          env=dict(fuzz_settings(env), CMP_TEST_ENV=env.name,
                   CMP_EXPECT_INSTALLED="1"))
      status = "PASS"
    except BaseException as e:
      status = _failed(e)
      raise
    finally:
      session.chdir(REPO)
      counts = _junit_counts(junit) or "pytest did not finish"
      status = "{} ({})".format(status, counts)
      shutil.rmtree(run_dir, ignore_errors=True)
  finally:
    if isinstance(sys.exc_info()[1], KeyboardInterrupt) and (
        status.startswith("FAIL (setup")):
      status = "INTERRUPTED (during setup)"
    _summarize("{}: {} [{:.0f}s]".format(label, status,
                                         time.monotonic() - start))


_CHROOT_ENV_SH = REPO / "scripts" / "chroot_env.sh"
# Passed into a chroot when set here: how the tests behave under CI.
_PASSED_INTO_CHROOT = ("CI", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED")


def _chroot_run(session, root, args, run_env=(), chdir=None):
  """Runs `args` in chroot `root`, the repository mounted at its path."""
  command = ["bash", str(_CHROOT_ENV_SH), "run", root, "--bind", str(REPO)]
  if chdir:
    command += ["--chdir", str(chdir)]
  for k in _PASSED_INTO_CHROOT:
    if k in os.environ:
      command += ["--env", "{}={}".format(k, os.environ[k])]
  for k, v in run_env:
    command += ["--env", "{}={}".format(k, v)]
  session.run(*command, "--", *args, external=True)


@nox.session(venv_backend="none")
@nox.parametrize("env", [nox.param(e, id=e.name, tags=[e.name])
                         for e in _CHROOT_ENVS])
def chroot_tests(session, env):
  """pytest against the installed wheel, in a chroot with another Python."""
  start = time.monotonic()
  label = _label(env)
  status = "FAIL (setup failed; see above)"
  try:
    missing = ci_matrix.missing_prerequisite(MATRIX, env.name)
    if missing:
      status = "FAIL ({}; to run it: {})".format(*missing)
      session.error("{} {}; to run it: {}".format(env.name, *missing))
    if not shutil.which("debootstrap", path=os.environ.get("PATH", "") +
                        ":/usr/sbin:/sbin"):
      # Root, on a Debian machine (else `missing` said so): install it.
      session.run("bash", str(REPO / "scripts" / "install_system_deps.sh"),
                  external=True)
    # The uv of requirements/nox.txt installs the lock, as for the host, and
    # with pip's index and certificates (scripts/chroot_env.sh passes the
    # UV_* variables into the chroot).
    build_env = dict(os.environ, CMP_CACHE_DIR=str(CACHE),
                     CMP_UV=str(pathlib.Path(sys.executable).with_name("uv")),
                     **uv_install_env())
    session.log("chroot for {}: Debian {}, Python {}".format(
        env.name, env.debian, env.python))
    proc = subprocess.run(
        ["bash", str(_CHROOT_ENV_SH), "build", env.name, env.debian,
         env.python, str(REPO / env.requirements)],
        env=build_env, stdout=subprocess.PIPE, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout.strip():
      session.error("scripts/chroot_env.sh build {} failed (exit status "
                    "{}); see above.".format(env.name, proc.returncode))
    root = proc.stdout.strip().splitlines()[-1]
    if os.environ.get("CMP_VENV_PATH_FILE"):
      pathlib.Path(os.environ["CMP_VENV_PATH_FILE"]).write_text(root)
    if os.environ.get("CMP_SETUP_ONLY") == "1":
      status = root
      return
    wheel = _build_wheel(session)
    # The wheel lies in the temporary directory, which the chroot shares.
    _chroot_run(session, root, ["python", "-m", "pip", "install", "-q",
                                "--no-index", "--force-reinstall",
                                "--no-deps", wheel])
    run_dir = pathlib.Path(tempfile.mkdtemp(prefix="cmp-pytest-"))
    junit = run_dir / "junit.xml"
    try:
      _chroot_run(
          session, root,
          ["python", "-m", "pytest", "--junitxml=" + str(junit),
           *pytest_args(env, session.posargs)],
          run_env=[("CMP_TEST_ENV", env.name), ("CMP_EXPECT_INSTALLED", "1"),
                   *fuzz_settings(env).items()],
          chdir=run_dir)
      status = "PASS"
    except BaseException as e:
      status = _failed(e)
      raise
    finally:
      counts = _junit_counts(junit) or "pytest did not finish"
      status = "{} ({})".format(status, counts)
      shutil.rmtree(run_dir, ignore_errors=True)
  finally:
    if isinstance(sys.exc_info()[1], KeyboardInterrupt) and (
        status.startswith("FAIL (setup")):
      status = "INTERRUPTED (during setup)"
    _summarize("{}: {} [{:.0f}s]".format(label, status,
                                         time.monotonic() - start))


def bazel_targets(matrix):
  """`bazel test` arguments: every target, less the excluded tests'."""
  return ["--", "//..."] + ["-//:" + os.path.splitext(os.path.basename(t))[0]
                            for t in matrix.bazel_exclude]


@nox.session(tags=["bazel"])
def bazel(session):
  """Bazel's targets, with the TensorFlow of `bazel_env` first on PATH."""
  start = time.monotonic()
  env = MATRIX.get(MATRIX.bazel_env)
  label = ci_matrix.label(MATRIX, "bazel")
  status = "FAIL (setup failed; see above)"
  try:
    venv = _prepare_venv(session, env)
    if os.environ.get("CMP_SETUP_ONLY") == "1":
      status = str(venv)
      return
    # As before the move to nox: the wheel is installed too, and the
    # runfiles copy of the package must win over it (see .bazelrc).
    _install_wheel(session)
    if shutil.which("bazel") is None:
      session.run("bash", str(REPO / "scripts" / "install_system_deps.sh"),
                  external=True)
    if shutil.which("bazel") is None:
      reason, enable = ci_matrix.missing_prerequisite(MATRIX, "bazel") or (
          "`bazel` is not installed", "sudo scripts/install_system_deps.sh")
      status = "FAIL ({}; to run it: {})".format(reason, enable)
      session.error("{}, and scripts/install_system_deps.sh did not install "
                    "it; to run it: {}".format(reason, enable))
    # Bazel's autodetecting Python toolchain runs the first `python3` on
    # PATH, and .bazelrc passes PATH through to the tests.
    run_env = dict(os.environ, VIRTUAL_ENV=str(venv),
                   PATH=str(venv / "bin") + os.pathsep + os.environ["PATH"])
    session.log("bazel build //... && bazel test {} (Python: {})".format(
        " ".join(bazel_targets(MATRIX)[1:]), venv / "bin/python"))
    executed, rc = None, 0
    fuzz = ["--test_env={}={}".format(k, v) for k, v in
            fuzz_settings(env).items()]
    for command in (["build", "//..."],
                    ["test"] + fuzz + bazel_targets(MATRIX)):
      proc = subprocess.Popen(["bazel"] + command, cwd=REPO, env=run_env,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
      for line in proc.stdout:
        if not line.startswith(("INFO", "Loading", "Analyzing")):
          sys.stdout.write(line)
          sys.stdout.flush()
        if line.startswith("Executed "):
          executed = line.strip().rstrip(".")
      rc = proc.wait()
      if rc != 0:
        break
    status = "{} ({})".format("PASS" if rc == 0 else "FAIL",
                              executed or "exit status {}".format(rc))
    if rc != 0:
      session.error("bazel {} failed (exit status {})".format(command[0], rc))
  finally:
    if isinstance(sys.exc_info()[1], KeyboardInterrupt) and (
        status.startswith("FAIL (setup")):
      status = "INTERRUPTED (during setup)"
    _summarize("{}: {} [{:.0f}s]".format(label, status,
                                         time.monotonic() - start))
